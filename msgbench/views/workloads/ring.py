"""ring (seed 004): creation time vs n, passing time vs n for each m, the seed's
n x m table, and a heatmap of hops per second over n x m.

The pictures read n and m from the params rather than from the sweep, so a run that
sweeps n at one m and a suite that sweeps m at one n draw the same way. Creation does
not depend on m, so creation points measured at several m are pooled.

In the seed's own text (seed_text): one measurement prints as the seed's
`ring_benchmark:start(N, M)` did; a run of several points adds the seed's two tables,
creation time per ring size and passing time for each ring size and lap count
(medians of the repetitions, per target and variant).
"""

import json

from msgbench.core import units
from msgbench.data import model
from msgbench.data.points import canonical, target_label
from msgbench.views import figures, tables
from msgbench.views.workloads.plugin import Column, Headline, Plugin

_BARS_NOTE = "error bars: min–max of the repetitions"


def section(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
    # Anything besides n and m (the payload) splits the pictures into groups.
    groups = model.group_by(data.entries, lambda e: canonical(_other_params(e)))
    extras = model.distinguishing([json.loads(key) for key in groups])
    items = []
    for entries, extra in zip(groups.values(), extras, strict=True):
        items += _group_items(data, entries, model.describe_params(extra), ids)
    return items


def _other_params(entry: model.Entry) -> dict:
    return {k: v for k, v in entry.params.items() if k not in ("n", "m")}


def _n(entry: model.Entry):
    return entry.params.get("n")


def _m(entry: model.Entry):
    return entry.params.get("m")


def _group_items(data, entries, subtitle, ids) -> list[dict]:
    ns = sorted({_n(e) for e in entries if _n(e) is not None})
    ms = sorted({_m(e) for e in entries if _m(e) is not None})
    series = list(model.group_by(entries, model.Entry.series_key).values())
    items = [_creation_figure(data, series, ns, subtitle, ids)]
    items += _pass_figures(data, series, ns, ms, subtitle, ids)
    hops = [v for e in entries if (v := model.point_of(e, "hops_per_s", None).y) is not None]
    z_range = (min(hops), max(hops)) if hops else None
    for index, members in enumerate(series):
        # A target's table and heatmap sit side by side (same "row").
        row = f"{ids.prefix}-row-{ids.count}-{index}"
        items.append(_seed_table(data, members, ns, ms, ids) | {"row": row})
        if len(ns) >= 2 and len(ms) >= 2:
            items.append(_hops_heatmap(data, members, ns, ms, ids, z_range) | {"row": row})
    return items


def _creation_point(members, n) -> model.Point:
    return model.pool([model.point_of(e, "create_wall_ms", n) for e in members if _n(e) == n], n)


def _creation_figure(data, series, ns, subtitle, ids) -> dict:
    traces = [model.entry_trace(data, members[0], [_creation_point(members, n) for n in ns])
              for members in series]
    return figures.xy(
        ids.next(), "Ring creation time vs ring size", subtitle=subtitle,
        note=f"wall time to build the ring; lower is better; {_BARS_NOTE}; "
             "pooled over m, which creation does not depend on",
        x_label="processes in the ring (n)", y_label="creation time (ms)", traces=traces)


def _pass_point(members, n, m) -> model.Point:
    match = next((e for e in members if _n(e) == n and _m(e) == m), None)
    return model.point_of(match, "pass_wall_ms", n)


def _pass_figures(data, series, ns, ms, subtitle, ids) -> list[dict]:
    note = f"wall time to pass the token m laps; lower is better; {_BARS_NOTE}"
    if len(ns) < 2 and len(ms) >= 2:  # a sweep over m at one ring size: draw vs m
        n = ns[0] if ns else None
        traces = [model.entry_trace(data, members[0], [
            model.point_of(next((e for e in members if _m(e) == m and _n(e) == n), None),
                           "pass_wall_ms", m) for m in ms]) for members in series]
        title = "Passing time vs laps" + (f", n = {n:,}" if n is not None else "")
        return [figures.xy(ids.next(), title, subtitle=subtitle,
                           note=note, x_label="laps (m)", y_label="passing time (ms)",
                           traces=traces)]
    out = []
    for m in ms:
        traces = [model.entry_trace(data, members[0], [
            _pass_point(members, n, m) for n in ns]) for members in series]
        out.append(figures.xy(
            ids.next(), f"Passing time vs ring size, m = {m:,} laps", subtitle=subtitle,
            note=note, x_label="processes in the ring (n)", y_label="passing time (ms)",
            traces=traces))
    return out


def _seed_table(data, members, ns, ms, ids) -> dict:
    """Seed 004's tables side by side: creation time, then passing time per lap count."""
    columns = ["Processes", "Creation time (ms)"] + [f"{m:,} laps (ms)" for m in ms]
    rows = []
    for n in ns:
        row = [figures.cell(f"{n:,}"), figures.value_cell(_creation_point(members, n))]
        row += [figures.value_cell(_pass_point(members, n, m)) for m in ms]
        rows.append(row)
    return figures.table(ids.next(), f"{data.label(members[0])}: ring times (ms)", columns, rows,
                         note="medians of the repetitions, as in seed 004's tables")


def _hops_heatmap(data, members, ns, ms, ids, z_range) -> dict:
    points = [[model.point_of(next((e for e in members if _n(e) == n and _m(e) == m), None),
                              "hops_per_s", m) for m in ms] for n in ns]
    return figures.heatmap(
        ids.next(), f"{data.label(members[0])}: hops per second over n x m",
        x_label="laps (m)", x_values=ms, y_label="processes (n)", y_values=ns,
        z=[[p.y for p in row] for row in points],
        status=[[p.status for p in row] for row in points],
        z_label="hops/s (median)", z_range=z_range,
        note="higher is better; one colour scale for every target, so colours compare")


# ---------------------------------------------------------------- the seed's text




def measurement_block(m: dict) -> str:
    """One ring measurement as the seed's program printed it."""
    p, x = m["params"], m["metrics"]
    if m["status"] != "ok":
        return f"Creating a ring of {p['n']} processes.\n{m['status'].upper()}: {m['error']}\n"
    create_cpu, create_wall = round(x["create_cpu_ms"]), round(x["create_wall_ms"])
    pass_cpu, pass_wall = round(x["pass_cpu_ms"]), round(x["pass_wall_ms"])
    return (
        f"Creating a ring of {p['n']} processes.\n\n"
        f"CPU Time (process creation) = {create_cpu} ms\n"
        f"Elapse time (process creation) = {create_wall} ms\n\n"
        f"Starting message round with message {_erlang_string(p['payload'])}\n"
        "Message round complete\n\n"
        f"CPU Time (sending message) = {pass_cpu} ms\n"
        f"Elapse Time (sending message) = {pass_wall} ms\n\n"
        f"CPU Time (total) = {create_cpu + pass_cpu} ms\n"
        f"Elapse Time (total) = {create_wall + pass_wall} ms\n"
    )


def _erlang_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def run_tables(summary: list[dict]) -> str:
    """The seed's creation table and n x m passing grid, per target and variant."""
    ring = [s for s in summary if s["workload"] == "ring"]
    out = []
    for tv in sorted({target_label(s) for s in ring}):
        points = [s for s in ring if target_label(s) == tv]
        ns = sorted({s["params"]["n"] for s in points})
        ms = sorted({s["params"]["m"] for s in points})
        out.append(f"== {tv} ==\n")
        creation = [[f"{n:,}", _median(points, n, None, "create_wall_ms")] for n in ns]
        out.append(tables.render(["Processes", "Creation Time (ms)"], creation) + "\n")
        grid = [[f"{n:,}", *(_median(points, n, m, "pass_wall_ms") for m in ms)] for n in ns]
        out.append("Message Laps: passing time (ms)\n")
        out.append(tables.render(["Processes", *(f"{m:,}" for m in ms)], grid) + "\n")
    return "\n".join(out)


def _median(points, n, m, metric) -> str:
    chosen = [s for s in points if s["params"]["n"] == n and (m is None or s["params"]["m"] == m)]
    values = [s["metrics"][metric]["median"] for s in chosen if metric in s["metrics"]]
    if not values:
        statuses = {s["status"] for s in chosen}
        return "" if not chosen else ("n/a" if statuses == {"unsupported"} else "failed")
    return f"{round(min(values) if m is None else values[0]):,}"


def seed_text(run: dict) -> str:
    blocks = [f"[{target_label(m)} repetition {m['repetition']}]\n{measurement_block(m)}"
              for m in run["measurements"] if m["workload"] == "ring" and not m["warmup"]]
    points = {(s["params"]["n"], s["params"]["m"]) for s in run["summary"] if s["workload"] == "ring"}
    if len(points) > 1:
        blocks.append(run_tables(run["summary"]))
    return "\n".join(blocks)


HEADLINE = Headline("ring: token passing (hops per second, higher is better) and ring creation", (
    Column("hops_per_s", "hops/s", units.number),
    Column("create_wall_ms", "creation", lambda ms: units.duration_us(ms * 1e3)),
))

PLUGIN = Plugin(name="ring", order=1, section=section, seed_text=seed_text, headline=lambda params: HEADLINE)
