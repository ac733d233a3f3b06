"""The data format of the Erlang/OTP parallel-signal benchmark page (seed 000).

`render(doc)` writes fanin summaries the way erts' parallel_messages_SUITE prints
them, so the text pastes into the OTP page; `parse(text)` reads that text back,
including the suite's own output with its `#` comments and start/end markers.

Records end with `$`. Per graph: a `Scenario:` record, the process counts
(`; 1; 2; 4`), then one `<label>; v1; v2 ...` record per run. The suite prints each
mix share as " ~f% ~w" and joins shares with ", ", which is why two spaces follow
"ms," and each comma between shares; msgbench writes the same bytes.

msgbench extension: a point without a number is written `n/a` (unsupported) or
`failed`, never a number; a row with no number at all is left out.
"""

import bisect
import re
from collections.abc import Callable

from msgbench.data import model
from msgbench.data.points import canonical

SEND = "Send Throughput"
RECEIVE = "Receive Throughput"
METRICS = {SEND: "send_throughput_per_s", RECEIVE: "receive_throughput_per_s"}
DEFAULT_SPAWN_OPTIONS = "[{message_queue_data,off_heap}]"
DEFAULT_DURATION_MS = 1000
DEFAULT_MIX = ({"percent": 100, "kind": "message", "size": 1},)
NO_VALUE = {"unsupported": "n/a", "missing": "n/a"}  # any other status is written "failed"

_TERMS = {"message": "message_size", "exit_signal": "exit_signal_size"}
_KINDS = {term: kind for kind, term in _TERMS.items()}
_TITLE = re.compile(r"Scenario:\s*(Send|Receive) Throughput,\s*send_duration=(\d+) ms,"
                    r"(?P<mix>.*),\s*Spawn Options=(?P<spawn>.*)$")
_SHARE = re.compile(r"([0-9.]+)% \{(\w+),(\d+)\}")


class ParseError(ValueError):
    """Text that is not OTP benchmark output; says the line, the column and what was expected."""

    def __init__(self, line: int, column: int, message: str):
        super().__init__(f"line {line}, column {column}: {message}")
        self.line, self.column, self.reason = line, column, message


# ---------------------------------------------------------------- render


def render_mix(mix) -> str:
    shares = [(float(s["percent"]), _TERMS[s["kind"]], int(s["size"])) for s in mix]
    return ", ".join(f" {percent:f}% {{{term},{size}}}" for percent, term, size in shares)


def scenario_title(throughput: str, duration_ms: int, mix, spawn_options: str) -> str:
    return (f"Scenario: {throughput}, send_duration={duration_ms} ms, {render_mix(mix)}, "
            f"Spawn Options={spawn_options}")


def spawn_options(summary: dict) -> str:
    """The Spawn Options of the variant (its message_queue_data option; `spawn_options` in
    older runs and imports), else the queue param, else the suite's default."""
    if summary.get("message_queue_data") in ("off_heap", "on_heap"):
        return f"[{{message_queue_data,{summary['message_queue_data']}}}]"
    if summary.get("spawn_options"):
        return str(summary["spawn_options"])
    queue = (summary.get("params") or {}).get("queue")
    if queue in ("off_heap", "on_heap"):
        return f"[{{message_queue_data,{queue}}}]"
    return DEFAULT_SPAWN_OPTIONS


def titles(summary: dict) -> dict[str, str]:
    """The Send and Receive graph titles of a fanin summary's scenario."""
    params = summary.get("params") or {}
    duration = params.get("duration_ms", DEFAULT_DURATION_MS)
    mix = params.get("mix") or DEFAULT_MIX
    return {kind: scenario_title(kind, duration, mix, spawn_options(summary))
            for kind in (SEND, RECEIVE)}


def scenario_key(summary: dict) -> str:
    """What makes two fanin points the same graph: every param but senders, and the options."""
    fixed = {k: v for k, v in (summary.get("params") or {}).items() if k != "senders"}
    return canonical([fixed, spawn_options(summary)])


def graphs_from_doc(doc: dict) -> list[dict]:
    """The fanin summaries of every run as OTP graphs (medians), in scenario order."""
    data = next((d for d in model.collect(doc) if d.workload == "fanin"), None)
    if data is None:
        return []
    scenarios = model.group_by(data.entries, lambda e: scenario_key(e.summary))
    graphs = []
    for entries, extra in zip(scenarios.values(), title_extras(scenarios), strict=True):
        xs = sorted({e.params.get("senders") for e in entries}, key=model.sort_key)
        suffix = f" [{model.describe_params(extra)}]" if extra else ""
        for kind, title in titles(entries[0].summary).items():
            rows = []
            for members in model.group_by(entries, model.Entry.series_key).values():
                at = {e.params.get("senders"): e for e in members}
                points = [model.point_of(at.get(x), METRICS[kind], x) for x in xs]
                rows.append({"label": _clean_label(_row_label(data, members[0]) + suffix),
                             "values": [p.y for p in points],
                             "status": [p.status for p in points]})
            graphs.append({"title": title, "x": xs, "rows": rows})
    return graphs


def title_extras(scenarios: dict[str, list[model.Entry]]) -> list[dict]:
    """Per scenario, the params that set it apart from scenarios with the same title.

    The title shows duration, mix and spawn options; scenarios differing only in
    another param (method=otp, say) need that param said next to the title.
    """
    first_summaries = [entries[0].summary for entries in scenarios.values()]
    same_title = model.group_by(range(len(first_summaries)),
                                lambda i: titles(first_summaries[i])[SEND])
    extras: list[dict] = [{} for _ in first_summaries]
    for members in same_title.values():
        if len(members) > 1:
            params = [{k: v for k, v in first_summaries[i]["params"].items() if k != "senders"}
                      for i in members]
            for i, extra in zip(members, model.distinguishing(params), strict=True):
                extras[i] = extra
    return extras


def _row_label(data: model.WorkloadData, entry: model.Entry) -> str:
    """A build's label alone, as the OTP suite labels a row with its release
    (master_2ef0c); otherwise the run's target/variant."""
    build = entry.summary.get("build") or ""
    if build and not data.multi_run:
        return build
    return data.label(entry)


def _clean_label(label: str) -> str:
    # `;` and `$` are the format's separators; a label must not contain them.
    return " ".join(re.sub(r"[;$]", " ", label).split())


def _graphs_with_rows(doc: dict) -> list[tuple[dict, list[dict]]]:
    """Each graph of the document with its rows that hold a value or a status; empty ones left out."""
    found = []
    for graph in graphs_from_doc(doc):
        rows = [r for r in graph["rows"] if any(v is not None or s not in NO_VALUE
                                                 for v, s in zip(r["values"], r["status"],
                                                                 strict=True))]
        if rows:
            found.append((graph, rows))
    return found


def has_results(doc: dict) -> bool:
    """Whether the OTP format can say anything of the document (it holds fanin results)."""
    return bool(_graphs_with_rows(doc))


def render(doc: dict) -> str:
    """The document's fanin results in the OTP page's format (empty graphs left out)."""
    lines = ["#BENCHMARK STARTED$"]
    for graph, rows in _graphs_with_rows(doc):
        lines.append(graph["title"] + "$")
        lines.append("".join(f"; {x}" for x in graph["x"]) + "$")
        for row in rows:
            cells = [f"{v:f}" if v is not None else NO_VALUE.get(s, "failed")
                     for v, s in zip(row["values"], row["status"], strict=True)]
            lines.append(row["label"] + "".join(f"; {c}" for c in cells) + "$")
    lines.append("#BENCHMARK ENDED$")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- parse


def parse(text: str) -> list[dict]:
    """Graphs from OTP benchmark output: [{"title", "throughput", "duration_ms", "mix",
    "spawn_options", "x", "rows": [{"label", "values", "status"}], "line"}].

    Only the part between `#BENCHMARK STARTED$` and `#BENCHMARK ENDED$` is read when
    the markers are there, as the OTP page asks; `#` lines are comments. Records end
    at `$`, not at the end of a line, as the OTP page splits them: the suite's raw
    output breaks a result row over several lines, a `#Name:` note after each value
    (large_throughput_benchmark). A line starting `Scenario:` starts a record too.
    Several runs pasted one after another repeat their graphs (see runs_of()).
    """
    source = _Source()
    lines = text.splitlines()
    has_markers = any(_marker(line) == "STARTED" for line in lines)
    reading = not has_markers
    for number, line in enumerate(lines, start=1):
        marker = _marker(line)
        if marker:
            reading = marker == "STARTED"
            source.end_record()
            continue
        if not reading or line.lstrip().startswith("#"):
            continue
        if line.lstrip().startswith("Scenario:"):
            source.end_record()
        source.add(line, number)
    source.end_record()
    graphs: list[dict] = []
    for record, locate in source.records:
        _read_record(graphs, record, locate)
    if not graphs:
        raise ParseError(1, 1, "no 'Scenario:' line found: expected Erlang/OTP benchmark "
                               "output (a 'Scenario: ...$' line, '; 1; 2; 4$', then result rows)")
    _check_complete(graphs[-1])
    return graphs


class _Source:
    """The records of the text read, split at `$`, each with where its characters were
    (line and column) for the errors."""

    def __init__(self):
        self.records: list[tuple[str, Callable[[int], tuple[int, int]]]] = []
        self._text = ""
        self._starts: list[tuple[int, int, int]] = []  # (offset in the record, line, column)

    def add(self, line: str, number: int) -> None:
        column = 1
        for index, part in enumerate(line.split("$")):
            if index:
                self.end_record()
            self._starts.append((len(self._text), number, column))
            self._text += part
            column += len(part) + 1
        self._text += "\n"  # a record that goes on over the next line: a blank between

    def end_record(self) -> None:
        text, starts = self._text, self._starts
        self._text, self._starts = "", []
        stripped = text.strip()
        if not stripped:
            return
        lead = len(text) - len(text.lstrip())

        def locate(offset: int) -> tuple[int, int]:
            at = offset + lead
            start, line, column = starts[max(bisect.bisect_right([s[0] for s in starts], at) - 1, 0)]
            return line, column + at - start

        self.records.append((stripped, locate))


def runs_of(graphs: list[dict]) -> list[list[int]]:
    """For each graph, the run each of its rows belongs to (1, 2, ...): the k-th row
    with a label in graphs of one title is that label's k-th run. Runs pasted one after
    another repeat every graph with the same labels; they stay apart, as the OTP page
    keeps them apart."""
    seen: dict[tuple[str, str], int] = {}
    found = []
    for graph in graphs:
        numbers = []
        for row in graph["rows"]:
            key = (graph_key(graph["title"]), row["label"])
            seen[key] = seen.get(key, 0) + 1
            numbers.append(seen[key])
        found.append(numbers)
    return found


def run_label(label: str, run: int) -> str:
    """A row's label for a later run of the same label in one paste: `25 (run 2)`. (The
    results page marks a later paste's rows `Ver: 2 ...` itself; this stays clear of it.)"""
    return label if run == 1 else f"{label} (run {run})"


def _marker(line: str) -> str | None:
    match = re.fullmatch(r"\s*#\s*BENCHMARK\s+(STARTED|ENDED)\s*\$?\s*", line, re.IGNORECASE)
    return match.group(1).upper() if match else None


def _read_record(graphs: list[dict], record: str, locate) -> None:
    current = graphs[-1] if graphs else None
    line, column = locate(0)
    if record.startswith("Scenario:"):
        if current is not None:
            _check_complete(current)
        graphs.append(_new_graph(" ".join(record.split()) if "\n" in record else record, line))
    elif current is None:
        raise ParseError(line, column, f"expected a 'Scenario:' record, found {_quote(record)}")
    elif record.startswith(";"):
        if current["x"] is not None:
            raise ParseError(line, column, "expected a result row '<label>; v1; v2 ...', found "
                                           "a second line of process counts")
        current["x"] = [_count(field, locate(offset)) for field, offset in _fields(record[1:], 1)]
    elif current["x"] is None:
        raise ParseError(line, column, "expected the process counts ('; 1; 2; 4') after the "
                                       f"Scenario line, found {_quote(record)}")
    else:
        current["rows"].append(_row(record, current["x"], locate))


def _new_graph(title: str, line: int) -> dict:
    graph = {"title": title, "throughput": None, "duration_ms": None, "mix": None,
             "spawn_options": None, "x": None, "rows": [], "line": line}
    match = _TITLE.match(title)
    if match:
        graph["throughput"] = "send" if match.group(1) == "Send" else "receive"
        graph["duration_ms"] = int(match.group(2))
        graph["mix"] = [{"percent": float(p), "kind": _KINDS.get(term, term), "size": int(size)}
                        for p, term, size in _SHARE.findall(match.group("mix"))]
        graph["spawn_options"] = match.group("spawn").strip()
    return graph


def _check_complete(graph: dict) -> None:
    if graph["x"] is None:
        raise ParseError(graph["line"], 1, "expected the process counts ('; 1; 2; 4') "
                                           "after this Scenario line")


def _fields(text: str, offset: int):
    """The `;`-separated fields of a record with the offset each starts at."""
    for part in text.split(";"):
        yield part.strip(), offset + len(part) - len(part.lstrip())
        offset += len(part) + 1


def _count(field: str, where: tuple[int, int]) -> int:
    try:
        value = int(field)
    except ValueError:
        raise ParseError(*where, f"expected a process count (a whole number), "
                                 f"found {_quote(field)}") from None
    if value < 1:
        raise ParseError(*where, f"expected a process count >= 1, found {value}")
    return value


def _row(record: str, xs: list[int], locate) -> dict:
    label, sep, rest = record.partition(";")
    if not sep:
        raise ParseError(*locate(0), f"expected '<label>; v1; v2 ...', found {_quote(record)}")
    fields = list(_fields(rest, len(label) + 1))
    if len(fields) > len(xs):
        values = "value" if len(xs) == 1 else "values"
        raise ParseError(*locate(fields[len(xs)][1]), f"expected {len(xs)} {values} (one per process count), "
                                                      f"found {len(fields)}")
    values, status = [], []
    for field, offset in fields:
        value, state = _value(field, locate(offset))
        values.append(value)
        status.append(state)
    # An interrupted suite run prints fewer values than process counts.
    values += [None] * (len(xs) - len(fields))
    status += ["missing"] * (len(xs) - len(fields))
    return {"label": label.strip(), "values": values, "status": status}


def _value(field: str, where: tuple[int, int]) -> tuple[float | None, str]:
    lowered = field.lower()
    if lowered == "n/a":
        return None, "unsupported"
    if lowered == "failed":
        return None, "failed"
    try:
        value = float(field)
    except ValueError:
        value = None
    if value is None or value != value or value in (float("inf"), float("-inf")):
        raise ParseError(*where, f"expected a number, 'n/a' or 'failed', found {_quote(field)}")
    return value, "ok"


def _quote(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def graph_key(title: str) -> str:
    """Titles that differ only in spacing name the same scenario."""
    return " ".join(title.split())
