"""The ring in the seed document's own text form (seed 004).

One measurement prints as the seed's `ring_benchmark:start(N, M)` did; a run prints
the seed's two tables: creation time per ring size, and passing time for each ring
size and lap count (medians of the repetitions, per target and variant).
"""

from msgbench import tables


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
    for tv in sorted({(s["target"], s["variant"]) for s in ring}):
        points = [s for s in ring if (s["target"], s["variant"]) == tv]
        ns = sorted({s["params"]["n"] for s in points})
        ms = sorted({s["params"]["m"] for s in points})
        out.append(f"== {tv[0]}/{tv[1]} ==\n")
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
