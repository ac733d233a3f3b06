"""A measurement that competed with other work on the machine says so."""

import os
import subprocess
import sys

from msgbench.cli import main
from msgbench.store import Store

BURN = "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end: pass\n"


def test_other_work_during_a_measurement_is_measured_and_warned_of(fake_targets, capsys):
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(os.cpu_count() or 1)]
    try:
        code = main(["run", "ring", "--target", "fake", "--variant", "slow", "-p", "n=10", "--repeat", "2",
                     "--warmup", "0", "--no-build"])
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert code == 0
    store = Store(fake_targets)
    run_id = store.runs()[0]["id"]
    shares = [m["worker"]["other_cpu_share"] for m in store.measurements(run_id)]
    assert all(share > 0.3 for share in shares), shares  # a burner per core, against a sleeping worker
    assert "machine busy" in capsys.readouterr().out  # counted in the table's summary of warnings
    assert main(["show", run_id, "--warnings"]) == 0  # and said in full in the list of them all
    out = capsys.readouterr().out
    assert "other work on the machine took up to" in out and "during 2 of 2 repetitions" in out
