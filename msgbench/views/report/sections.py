"""A workload's section of the report: its plug-in's pictures (workloads/<name>.py,
the generic ones for a workload without a module), then every summary in a table.
"""

from msgbench.data import model
from msgbench.views import figures, workloads
from msgbench.views.report import capacity, limits
from msgbench.views.workloads import generic


def section(data: model.WorkloadData) -> dict:
    ids = figures.Ids(data.workload)
    # A chart of more series than a reader can tell apart becomes facets (figures.facets).
    items = [facet for item in workloads.plugin(data.workload).section(data, ids)
             for facet in figures.facets(item)]
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


def extra_sections(doc: dict) -> list[dict]:
    """Sections about the whole document rather than one workload: capacity searches, the limits."""
    return [s for s in (capacity.section(doc), limits.section(doc)) if s]
