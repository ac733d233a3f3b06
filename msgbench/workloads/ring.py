"""ring (seed 004): creation time vs n, passing time vs n for each m, the seed's
n x m table, and a heatmap of hops per second over n x m.

The pictures read n and m from the params rather than from the sweep, so a run that
sweeps n at one m and a suite that sweeps m at one n draw the same way. Creation does
not depend on m, so creation points measured at several m are pooled.
"""

import json

from msgbench.report import figures, model

_BARS_NOTE = "error bars: min–max of the repetitions"


def build(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
    # Anything besides n and m (the payload) splits the pictures into groups.
    groups = model.group_by(data.entries, lambda e: model.canonical(_other_params(e)))
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
    traces = [model.trace(data.label(members[0]), [_creation_point(members, n) for n in ns])
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
        traces = [model.trace(data.label(members[0]), [
            model.point_of(next((e for e in members if _m(e) == m and _n(e) == n), None),
                           "pass_wall_ms", m) for m in ms]) for members in series]
        title = "Passing time vs laps" + (f", n = {n:,}" if n is not None else "")
        return [figures.xy(ids.next(), title, subtitle=subtitle,
                           note=note, x_label="laps (m)", y_label="passing time (ms)",
                           traces=traces)]
    out = []
    for m in ms:
        traces = [model.trace(data.label(members[0]), [
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
