"""fanin (seed 000, the OTP suite's parallel signal send/receive), the run side: the
signal mix's command-line shorthand and check, and the suite's method.

The mix shorthand on the command line: `message:1` (100% messages of 1 word) or
`50%exit_signal:10+50%message:10`. With method=otp the suite took send and receive
throughput from separate benchmark runs; the harness does the same by running the
worker twice and taking send figures from the first, receive figures from the second.
"""

from msgbench.core.spec import ParamError
from msgbench.running.workloads.plugin import RunPlugin

RECEIVE_METRICS = ("receive_throughput_per_s", "receive_duration_ms", "drain_ms")


def parse_value(name: str, text: str):
    if name != "mix" or text.lstrip().startswith("["):
        return None
    mix = []
    for part in text.split("+"):
        share, _, rest = part.strip().rpartition("%")
        kind, _, size = rest.partition(":")
        try:
            percent = float(share) if share else 100.0
            mix.append({"percent": percent, "kind": kind.strip(), "size": int(size)})
        except ValueError:
            raise ParamError(
                f"mix = {text!r} cannot be read: write shares as PERCENT%KIND:SIZE joined by +, "
                "e.g. message:1 or 50%exit_signal:10+50%message:10"
            ) from None
    return mix


def check(params: dict) -> None:
    mix = params["mix"]
    total = sum(item["percent"] for item in mix)
    if abs(total - 100) > 1e-6:
        shares = " + ".join(f"{item['percent']:g}% {item['kind']}" for item in mix)
        raise ParamError(f"mix = {shares} adds to {total:g}%: the shares must add to 100%")
    kinds = [(item["kind"], item["size"]) for item in mix]
    if len(set(kinds)) < len(kinds):
        raise ParamError("mix lists the same kind and size twice: merge the shares")


def measure(params: dict, run_once):
    first = run_once(params)
    if params["method"] != "otp" or first.status != "ok":
        return first
    second = run_once(params)
    if second.status != "ok":
        return second
    for name in RECEIVE_METRICS:
        if name in second.metrics:
            first.metrics[name] = second.metrics[name]
    first.verify = {**first.verify, **{f"receive_run_{k}": v for k, v in second.verify.items()}}
    first.wall_s += second.wall_s
    return first


PLUGIN = RunPlugin(name="fanin", parse_value=parse_value, check=check, measure=measure)
