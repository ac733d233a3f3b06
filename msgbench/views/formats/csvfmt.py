"""The CSV export of a results document (docs/results-format.md, "CSV"), and back.

One row per measurement, warm-ups included and flagged. Columns: run_id, scenario,
workload, target, variant, variant_label, sweep, x, repetition, warmup, status,
error, params (a JSON object), build (the build of the target's runtime, empty when the
run named none; a CSV written before builds has no such column), then `metric:<name>`
and `verify:<name>` columns (the union over the rows, sorted; empty where a row has none).

parse() rebuilds the runs' measurements and, by default, their summaries with the
harness's own statistics (msgbench.data.results.summarize_run); pass `summarize` to use
another. Run metadata is not in the CSV, so parsed runs carry only their id.
"""

import csv
import io
import json
import math
from collections.abc import Callable

from msgbench.data import results

COLUMNS = ("run_id", "scenario", "workload", "target", "variant", "variant_label", "sweep", "x",
           "repetition", "warmup", "status", "error", "params")
BUILD = "build"  # after COLUMNS; optional when reading
METRIC_PREFIX = "metric:"
VERIFY_PREFIX = "verify:"


class ParseError(ValueError):
    """CSV that is not a msgbench export; says the line, the column and what was expected."""

    def __init__(self, line: int, column: int, message: str):
        super().__init__(f"line {line}, column {column}: {message}")
        self.line, self.column, self.reason = line, column, message


# ---------------------------------------------------------------- render


def render(doc: dict) -> str:
    runs = doc["runs"]
    rows = [(run["id"], m) for run in runs for m in run.get("measurements") or []]
    metrics = sorted({k for _, m in rows for k in (m.get("metrics") or {})})
    verify = sorted({k for _, m in rows for k in (m.get("verify") or {})})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*COLUMNS, BUILD, *(METRIC_PREFIX + k for k in metrics),
                     *(VERIFY_PREFIX + k for k in verify)])
    for run_id, m in rows:
        writer.writerow([
            *map(_text, (run_id, m["scenario"], m["workload"], m["target"], m["variant"],
                         m.get("variant_label") or "", m.get("sweep") or "")),
            _number(m.get("x")), m.get("repetition", ""), "true" if m.get("warmup") else "false", _text(m["status"]),
            _text(m.get("error") or ""), _text(json.dumps(m.get("params") or {}, separators=(",", ":"))),
            _text(m.get("build") or ""),
            *(_number((m.get("metrics") or {}).get(k)) for k in metrics),
            *(_number((m.get("verify") or {}).get(k)) for k in verify),
        ])
    return out.getvalue()


# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection):
# such text gets a leading apostrophe, which spreadsheets show as text and parse() removes.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str) -> str:
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def _untext(cell: str) -> str:
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS) else cell


def _number(value) -> str:
    """A number as a number (negative ones too); anything else as guarded text."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _text(str(value))
    return repr(value) if isinstance(value, float) else str(value)


# ---------------------------------------------------------------- parse


def parse(text: str, *, summarize: Callable[[list[dict]], list[dict]] | None = None) -> dict:
    """A results document from CSV text; ParseError says where the text goes wrong."""
    summarize = summarize or results.summarize_run
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        header = next(reader)
    except StopIteration:
        raise ParseError(1, 1, "the CSV is empty: expected a header starting with "
                               f"{', '.join(COLUMNS[:3])}, ...") from None
    except csv.Error as err:
        raise ParseError(1, 1, f"unreadable CSV: {err}") from None
    _check_header(header)
    runs: dict[str, list[dict]] = {}
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            raise ParseError(reader.line_num, 1, f"unreadable CSV: {err}") from None
        if not any(cell.strip() for cell in row):
            continue
        run_id, measurement = _measurement(header, row, reader.line_num)
        runs.setdefault(run_id, []).append(measurement)
    if not runs:
        raise ParseError(2, 1, "expected at least one measurement row after the header")
    return {"format": results.FORMAT_NAME, "version": results.FORMAT_VERSION, "runs": [
        {"id": run_id, "created_at": None, "finished_at": None, "status": None,
         "command": None, "suite": None, "notes": ["read back from a CSV export"],
         "metadata": {}, "measurements": measurements, "summary": summarize(measurements)}
        for run_id, measurements in runs.items()]}


def _check_header(header: list[str]) -> None:
    for index, expected in enumerate(COLUMNS):
        found = header[index].strip() if index < len(header) else None
        if found != expected:
            what = f"found {found!r}" if found is not None else "the header ends there"
            raise ParseError(1, index + 1, f"expected column {expected!r} ({what}); a msgbench "
                                           f"CSV header starts {','.join(COLUMNS)}")
    extra = header[len(COLUMNS):]
    start = len(COLUMNS) + (1 if extra[:1] == [BUILD] else 0)
    for index, name in enumerate(header[start:], start=start):
        if not name.startswith((METRIC_PREFIX, VERIFY_PREFIX)):
            raise ParseError(1, index + 1, f"expected a column named metric:<name> or "
                                           f"verify:<name>, found {name!r}")


def _measurement(header: list[str], row: list[str], line: int) -> tuple[str, dict]:
    if len(row) != len(header):
        raise ParseError(line, min(len(row), len(header)) + 1,
                         f"expected {len(header)} fields as in the header, found {len(row)}")
    cells = {name: _untext(cell) for name, cell in zip(header, row, strict=True)}

    def fail(name: str, message: str):
        raise ParseError(line, header.index(name) + 1, f"{name}: {message}")

    try:
        params = json.loads(cells["params"])
    except json.JSONDecodeError as err:
        fail("params", f"expected a JSON object: {err.msg} at character {err.pos + 1}")
    if not isinstance(params, dict):
        fail("params", "expected a JSON object")
    for name in ("scenario", "workload", "target", "variant", "status"):
        if not cells[name].strip():
            fail(name, "expected a value, found an empty field")
    warmup = cells["warmup"].strip().lower()
    if warmup not in ("true", "false", "1", "0", ""):
        fail("warmup", f"expected true or false, found {cells['warmup']!r}")
    measurement = {
        "scenario": cells["scenario"], "workload": cells["workload"], "target": cells["target"],
        "variant": cells["variant"], "variant_label": cells["variant_label"] or "idiomatic",
        "params": params, "sweep": cells["sweep"] or None,
        "x": _parse_number(cells["x"], lambda msg: fail("x", msg)),
        "repetition": _parse_number(cells["repetition"], lambda msg: fail("repetition", msg)),
        "warmup": warmup in ("true", "1"), "status": cells["status"],
        "error": cells["error"] or None, "metrics": {}, "verify": {}, "build": cells.get(BUILD, ""),
    }
    for name, text in cells.items():
        if name.startswith(METRIC_PREFIX) and text.strip():
            measurement["metrics"][name[len(METRIC_PREFIX):]] = _parse_number(
                text, lambda msg, name=name: fail(name, msg))
        elif name.startswith(VERIFY_PREFIX) and text.strip():  # a count, or a fact such as a namespace
            measurement["verify"][name[len(VERIFY_PREFIX):]] = _verify_value(text)
    return cells["run_id"], measurement


def _verify_value(text: str) -> int | float | str:
    """A verify cell: a count, or a fact such as the namespace a server ran in."""
    problems = []
    value = _parse_number(text, problems.append) if text.strip() else None
    return text if problems or value is None else value


def _parse_number(text: str, fail: Callable[[str], None]) -> int | float | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        fail(f"expected a number, found {text!r}")
        return None
    if not math.isfinite(value):
        fail(f"expected a finite number, found {text!r}")
    return value
