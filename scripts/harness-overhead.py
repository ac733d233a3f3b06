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

from msgbench import spec, stats, targets  # noqa: E402


def main() -> int:
    args = _parse_args()
    params = dict(_param(p) for p in args.param)
    full = spec.resolve_params(spec.workload(args.workload), params)
    target = targets.target(args.target)
    variant = next(v for v in target.variants_for(args.workload) if v.name == args.variant)
    by_hand, through = [], []
    for block in range(1, args.blocks + 1):
        hand = [_by_hand(target, variant, args.workload, full, args.metric) for _ in range(args.per_block + 1)][1:]
        harness = _through_msgbench(args, params)
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


def _param(text: str) -> tuple[str, object]:
    name, _, value = text.partition("=")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


def _by_hand(target, variant, workload: str, params: dict, metric: str) -> float:
    processes = spec.processes_needed(spec.workload(workload), params)
    process_limit = max(1024, int(processes * 1.1) + 1000)  # as the runner sets it
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


def _through_msgbench(args, params: dict) -> list[float]:
    argv = [sys.executable, "-m", "msgbench", "run", args.workload, "--no-build", "--target", args.target,
            "--variant", args.variant, "--repeat", str(args.per_block), "--warmup", "1", "--format", "json"]
    for name, value in params.items():
        argv += ["-p", f"{name}={json.dumps(value) if not isinstance(value, str) else value}"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True)
    run = json.loads(done.stdout)["runs"][0]
    return [float(m["metrics"][args.metric]) for m in run["measurements"] if not m["warmup"]]


def _fmt(value: float) -> str:
    return f"{value / 1e6:.3f}M"


if __name__ == "__main__":
    sys.exit(main())
