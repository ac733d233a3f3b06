"""fanin (seed 000): send and receive throughput vs number of processes, one graph
per scenario, titled exactly as the Erlang/OTP page titles its graphs.
"""

from msgbench.formats import otp
from msgbench.report import figures, model

_SENDERS = "senders"


def build(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
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
