"""What a workload may add to its spec (spec/workloads/<name>.json) in the views: one
Plugin object.

Most of a workload is data in its spec. A workload that needs more for its report
section, its page graphs, its headline or its seed text defines a Plugin in
msgbench/views/workloads/<name>.py and lists it in msgbench/views/workloads/__init__.py; what it
needs to be planned and measured is its run-side plug-in (msgbench/running/workloads/).
Every field has a default, so a workload without a module (or a field it leaves out)
gets the generic behaviour.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from msgbench.core import spec, units
from msgbench.data import model
from msgbench.views import figures
from msgbench.views.workloads import generic


@dataclass(frozen=True)
class Column:
    """One figure of a headline: a metric's median, under a header, with its unit."""
    metric: str
    header: str
    show: Callable[[float], str]
    # A parameter the figure is a share of, said beside it: an open loop's achieved
    # rate against the requested `rate`.
    share_of: str = ""


@dataclass(frozen=True)
class Headline:
    """What a point's row in the terminal's table leads with: rows of one headline share
    a table, titled with what the figures are and which way is better."""
    title: str
    columns: tuple[Column, ...]


def primary_headline(workload: str, params: dict) -> Headline:
    """The spec's primary metric, with the unit its name carries."""
    metric = spec.workload(workload).primary_metric
    better = spec.workload(workload).metrics.get(metric, {}).get("better", "")
    title = f"{workload}: {metric}" + (f", {better} is better" if better in ("higher", "lower") else "")
    return Headline(title, (Column(metric, metric, lambda v: units.of_metric(metric, v)),))


def _no_seed_text(run: dict) -> None:
    return None


def _primary_judges(params: dict) -> tuple[str, ...]:
    return ()


def _no_page_graphs(data: model.WorkloadData) -> list[dict]:
    return []


def _primary_headline(params: dict) -> None:
    return None


def _no_ceilings(summary: dict, median, limits: dict) -> list:
    return []


@dataclass(frozen=True)
class Plugin:
    name: str
    # Where the workload's section comes in the report, the page and `show`
    # (the seeds' order: ring, fanin, socket, pubsub, chat); unknown workloads last.
    order: int = 99
    # section(data, ids): the report's pictures (figures.py descriptions).
    section: Callable[[model.WorkloadData, figures.Ids], list[dict]] = generic.build
    # seed_text(run): the run's points in the seed document's own text, or None.
    seed_text: Callable[[dict], str | None] = _no_seed_text
    # page_graphs(data): graphs the results page draws before the generic per-metric
    # ones, and the metrics those graphs already show (page_skips).
    page_graphs: Callable[[model.WorkloadData], list[dict]] = _no_page_graphs
    page_skips: frozenset = field(default_factory=frozenset)
    # judged_by(params): the metrics the Findings judge a scenario by, when users compare
    # it by others than the one its spec judges it by (spec.Workload.judged_metric; chat
    # realistic: latency p99 and the achieved send rate, where every target receives the
    # offered load); () = the spec's one.
    judged_by: Callable[[dict], tuple[str, ...]] = _primary_judges
    # headline(params): what the terminal's table shows of a point (round trip for
    # socket echo, MB/s for flow, ...), or None for the spec's primary metric.
    headline: Callable[[dict], Headline | None] = _primary_headline
    # ceilings(summary, median, limits): a point's figures that a machine limit (msgbench
    # limits) bounds, each (ceiling, its value, the limit's name, its value, unit); median(metric)
    # is the point's median, None if absent (the report's limits section, docs/limits.md).
    ceilings: Callable[[dict, Callable, dict], list] = _no_ceilings
