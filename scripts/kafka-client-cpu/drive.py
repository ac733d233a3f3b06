"""Client CPU per message, franz-go against segmentio/kafka-go (docs/decisions.md, issue 34).

Starts the kafka service as a run does, then runs the Go program (main.go) once per client,
alternating, three times at 16 B and at 1 KiB. Usage, from the repository's root, after
`make -C targets/kafka build`:

    (cd scripts/kafka-client-cpu && go build -o /tmp/kafka-client-cpu .)
    .venv/bin/python scripts/kafka-client-cpu/drive.py /tmp/kafka-client-cpu
"""

import subprocess
import sys

from msgbench.running import services
from msgbench.workers import catalogue


def main(program: str) -> None:
    broker = services.Running(catalogue.spec("kafka"))
    broker.start()
    try:
        address = f"127.0.0.1:{broker.port}"
        topic = 0
        for size, count in [(16, 300_000), (1024, 200_000)]:
            for _ in range(3):
                for client in ("franz", "segmentio"):
                    topic += 1
                    out = subprocess.run([program, client, address, f"t{topic}", str(count), str(size)],
                                         capture_output=True, text=True, timeout=600, check=False)
                    print(out.stdout.strip() or out.stderr[-500:], flush=True)
    finally:
        broker.stop()


if __name__ == "__main__":
    main(sys.argv[1])
