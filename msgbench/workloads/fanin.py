"""fanin (seed 000, the OTP suite's parallel signal send/receive): the signal mix and
its command-line shorthand, the suite's method, and its pictures and text.

The mix shorthand on the command line: `message:1` (100% messages of 1 word) or
`50%exit_signal:10+50%message:10`. With method=otp the suite took send and receive
throughput from separate benchmark runs; the harness does the same by running the
worker twice and taking send figures from the first, receive figures from the second.
The pictures are the OTP page's: send and receive throughput vs number of processes,
one graph per scenario, titled exactly as the page titles its graphs, so that the
suite's own output and a msgbench run land on the same axes of the results page.
"""

from msgbench import figures, model, units
from msgbench.formats import otp
from msgbench.spec import ParamError
from msgbench.workloads.plugin import Column, Headline, Plugin

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



_SENDERS = "senders"


def section(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
    scenarios = model.group_by(data.entries, lambda e: otp.scenario_key(e.summary))
    items = []
    # Scenarios the OTP title cannot tell apart (method, memory limit) say so underneath.
    for entries, extra in zip(scenarios.values(), otp.title_extras(scenarios), strict=True):
        subtitle = model.describe_params(extra)
        for kind, title in otp.titles(entries[0].summary).items():
            metric = otp.METRICS[kind]
            items.append(figures.xy(
                ids.next(), title, subtitle=subtitle,
                note=f"{metric}: higher is better; error bars: min–max of the repetitions",
                x_label="# of Processes", y_label="Operations/Second", x_ticks_at_data=True,
                traces=model.series_traces(data, entries, metric,
                                           x_of=lambda e: e.params.get(_SENDERS))))
    return items


OTP_AXES = {"x_label": "# of Processes", "y_label": "Operations/Second", "better": "higher",
            "x_ticks": "data"}


def page_graphs(data: model.WorkloadData) -> list[dict]:
    """Send and receive throughput per scenario, keyed like the OTP page's graphs."""
    scenarios = model.group_by(data.entries, lambda e: otp.scenario_key(e.summary))
    graphs = []
    for entries, extra in zip(scenarios.values(), otp.title_extras(scenarios), strict=True):
        subtitle = model.describe_params(extra)
        for kind, title in otp.titles(entries[0].summary).items():
            series = model.series_traces(data, entries, otp.METRICS[kind],
                                         x_of=lambda e: e.params.get(_SENDERS))
            graphs.append({"key": "otp|" + otp.graph_key(title) + ("|" + subtitle if extra else ""),
                           "title": title, "subtitle": subtitle, "primary": True,
                           "series": series, **OTP_AXES})
    return graphs


def seed_text(run: dict) -> str:
    """The run's fanin points as the OTP suite prints them (otp.py)."""
    return otp.render({"runs": [run]})


HEADLINE = Headline("fanin: signals per second, received and sent, higher is better", (
    Column("receive_throughput_per_s", "received/s", units.number),
    Column("send_throughput_per_s", "sent/s", units.number),
))

PLUGIN = Plugin(
    name="fanin", headline=lambda params: HEADLINE, order=2, parse_value=parse_value, check=check, measure=measure,
    section=section, seed_text=seed_text, page_graphs=page_graphs,
    page_skips=frozenset(otp.METRICS.values()),
)
