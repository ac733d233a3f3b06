"""Each workload's pictures, one small module per workload, registered here.

A module has `build(data: model.WorkloadData, ids: figures.Ids) -> list[dict]`
returning figure and table descriptions (see figures.py). A workload without a
module gets the generic section: its primary metric against x, per scenario.
Adding a workload's pictures = one module + one line in BUILDERS.
"""

from collections.abc import Callable

from msgbench.report import figures, model
from msgbench.report.workloads import chat, fanin, generic, pubsub, ring, socket

Builder = Callable[[model.WorkloadData, figures.Ids], list[dict]]

BUILDERS: dict[str, Builder] = {
    "ring": ring.build,
    "fanin": fanin.build,
    "socket": socket.build,
    "pubsub": pubsub.build,
    "chat": chat.build,
}


def section(data: model.WorkloadData) -> dict:
    """The workload's section: its own pictures, then every summary in a table."""
    ids = figures.Ids(data.workload)
    build = BUILDERS.get(data.workload, generic.build)
    items = build(data, ids)
    wl = data.spec
    return {
        "id": ids.prefix,
        "workload": data.workload,
        "title": f"{data.workload}: {wl.title}" if wl else data.workload,
        "description": wl.description if wl else "",
        "seed": wl.seed if wl else "",
        "items": items,
        "summary_table": generic.summary_table(data, ids),
    }
