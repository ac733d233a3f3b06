#!/usr/bin/env python3
"""The harness's overhead: one worker run by hand vs the same worker run by msgbench.

By hand means what a user types: the target's own command line from its target.toml
(the process limit filled in as the runner fills it), the request on stdin, the result
line read from stdout. Through msgbench means `msgbench run ... --format json`. The two
alternate in blocks (hand, msgbench, hand, msgbench, ...) so drift on a shared machine
hits both alike; each block discards its first repetition as a warm-up on both sides.

    scripts/harness-overhead.py --target erlang -p n=100000 -p m=10 --blocks 3 --per-block 5

It prints each side's median, their ratio and a Mann-Whitney U test.
"""

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from msgbench import cli  # noqa: E402
from msgbench.core import spec  # noqa: E402
from msgbench.data import stats  # noqa: E402
from msgbench.running import runner  # noqa: E402
from msgbench.workers import targets  # noqa: E402


def main() -> int:
    args = _parse_args()
    wl = spec.workload(args.workload)
    given = [text.partition("=")[::2] for text in args.param]
    full = spec.resolve_params(wl, {name: cli.param_value(wl, name, text) for name, text in given})
    target = targets.target(args.target)
    variant = next(v for v in target.variants_for(args.workload) if v.name == args.variant)
    by_hand, through = [], []
    for block in range(1, args.blocks + 1):
        hand = [_by_hand(target, variant, args.workload, full, args.metric) for _ in range(args.per_block + 1)][1:]
        harness = _through_msgbench(args)
        print(f"block {block}: by hand {_fmt(statistics.median(hand))}, "
              f"msgbench {_fmt(statistics.median(harness))}", flush=True)
        by_hand += hand
        through += harness
    ratio = statistics.median(through) / statistics.median(by_hand)
    test = stats.mann_whitney(through, by_hand)
    verdict = "significant" if test.p_value < 0.05 else "not significant"
    print(f"{args.metric}: by hand median {_fmt(statistics.median(by_hand))} (n={len(by_hand)}), "
          f"msgbench median {_fmt(statistics.median(through))} (n={len(through)})")
    print(f"msgbench / by hand = {ratio:.3f}; Mann-Whitney p = {test.p_value:.2f} ({verdict})")
    return 0


def _parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", default="erlang")
    p.add_argument("--variant", default="default")
    p.add_argument("--workload", default="ring")
    p.add_argument("--metric", default="hops_per_s")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--blocks", type=int, default=3)
    p.add_argument("--per-block", type=int, default=5, help="measured repetitions per block and side")
    return p.parse_args()


def _by_hand(target, variant, workload: str, params: dict, metric: str) -> float:
    process_limit = runner.process_limit(spec.processes_needed(spec.workload(workload), params))
    request = {"workload": workload, "variant": variant.name, "params": params, "repetition": 1}
    done = subprocess.run(
        target.argv(variant, process_limit), cwd=target.folder, env=target.worker_env(variant),
        input=json.dumps(request) + "\n", capture_output=True, text=True, check=True,
    )
    for line in done.stdout.splitlines():
        message = json.loads(line)
        if message.get("type") == "result":
            return float(message["metrics"][metric])
    raise RuntimeError(f"no result line from the worker; stderr: {done.stderr[-500:]}")


def _through_msgbench(args) -> list[float]:
    argv = [sys.executable, "-m", "msgbench", "run", args.workload, "--no-build", "--target", args.target,
            "--variant", args.variant, "--repeat", str(args.per_block), "--warmup", "1", "--format", "json"]
    for text in args.param:
        argv += ["-p", text]  # as given: msgbench parses it as the by-hand side did
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True)
    run = json.loads(done.stdout)["runs"][0]
    return [float(m["metrics"][args.metric]) for m in run["measurements"] if not m["warmup"]]


def _fmt(value: float) -> str:
    return f"{value / 1e6:.3f}M"


if __name__ == "__main__":
    sys.exit(main())
