"""Every file format msgbench writes, each with its reader: one registry serving `run`,
`show` and `export` (render), `import` and the results page (sniff and read).

    json  the results document (docs/results-format.md), everything
    csv   one row per measurement; run metadata is not in it
    md    the summary table for people, with the whole document in an HTML comment
          at its end, so the Markdown a user pastes into an issue can be read back
    otp   the Erlang/OTP benchmark page's `$` format (fanin only), one figure per point

Whatever `export` writes, `import` reads: tests/test_formats.py round-trips each.
"""

from collections.abc import Callable
from dataclasses import dataclass

from msgbench.core import jsonio
from msgbench.data import results
from msgbench.data.store import now_iso
from msgbench.views.formats import csvfmt, markdown, otp, otp_import


class FormatError(ValueError):
    """Text a reader cannot take: why, and where when known (line and column, 1-based)."""

    def __init__(self, reason: str, fmt: str, line: int | None = None, column: int | None = None):
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(where + reason)
        self.reason, self.format, self.line, self.column = reason, fmt, line, column


@dataclass(frozen=True)
class Format:
    name: str
    title: str
    render: Callable[[dict], str]  # a results document -> the text
    sniff: Callable[[str], bool]  # does this text look like this format
    read: Callable[[str, str], dict]  # text, where it came from -> a results document


# ---------------------------------------------------------------- json


def _read_json(text: str, source: str) -> dict:
    try:
        doc = jsonio.loads(text)
    except jsonio.JSONError as err:
        raise FormatError(f"invalid JSON: {err.reason}", "json", err.line, err.column) from None
    return _checked(doc, source, "json")


def _checked(doc: object, source: str, fmt: str) -> dict:
    try:
        results.check_document(doc, source)
    except results.DocumentError as err:
        raise FormatError(str(err), fmt) from None
    return doc


# ---------------------------------------------------------------- csv


def _sniff_csv(text: str) -> bool:
    head = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return head.startswith(("run_id,", '"run_id"'))


def _read_csv(text: str, source: str) -> dict:
    """The CSV's runs, with what the CSV does not carry said in each run's notes."""
    try:
        doc = csvfmt.parse(text)
    except csvfmt.ParseError as err:
        raise FormatError(err.reason, "csv", err.line, err.column) from None
    for run in doc["runs"]:
        run.update(created_at=now_iso(), finished_at=now_iso(), status="complete",
                   command=f"msgbench import {source}",
                   notes=[f"imported from a CSV export ({source}): the CSV carries the measurements, "
                          "not the run's metadata, logs or notes"])
    return _checked(doc, source, "csv")


# ---------------------------------------------------------------- md


def _read_md(text: str, source: str) -> dict:
    embedded = markdown.embedded_documents(text)
    if not embedded:
        raise FormatError("this Markdown holds no msgbench results (an export ends with a "
                          f"'<!-- {markdown.EMBED_MARK}' comment)", "md")
    if len(embedded) > 1:  # which one is "the" document is ambiguous: refuse rather than pick
        raise FormatError(f"this Markdown holds {len(embedded)} embedded msgbench documents ('<!-- "
                          f"{markdown.EMBED_MARK}' comments); an export holds one, at its end: which to read "
                          "is ambiguous, so none is read", "md")
    return _read_json(embedded[0], source)


# ---------------------------------------------------------------- otp


def _sniff_otp(text: str) -> bool:
    return "Scenario:" in text or "#BENCHMARK" in text.upper()


def _read_otp(text: str, source: str) -> dict:
    try:
        runs = otp_import.runs_from_text(text, source)
    except otp.ParseError as err:
        raise FormatError(err.reason, "otp", err.line, err.column) from None
    return {"format": results.FORMAT_NAME, "version": results.FORMAT_VERSION, "runs": runs}


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("json", "msgbench JSON", lambda doc: jsonio.dumps(doc, indent=2),
           lambda text: text.lstrip()[:1] in ("{", "["), _read_json),
    Format("csv", "msgbench CSV", csvfmt.render, _sniff_csv, _read_csv),
    Format("md", "Markdown", markdown.render, lambda text: markdown.EMBED_MARK in text, _read_md),
    Format("otp", "the Erlang/OTP benchmark page's format", otp.render, _sniff_otp, _read_otp),
)}


def names() -> list[str]:
    return list(FORMATS)


def sniff(text: str) -> Format:
    """The format the text is in (json, then csv, md, otp), or a FormatError saying what
    each looks like."""
    body = text.lstrip("\ufeff")
    if not body.strip():
        raise FormatError("the input is empty", "", 1, 1)
    for fmt in FORMATS.values():
        if fmt.sniff(body):
            return fmt
    raise FormatError("cannot tell the format: expected a msgbench JSON document (starting with '{'), "
                      "a msgbench CSV export (a header starting 'run_id,'), a msgbench Markdown export, "
                      "or Erlang/OTP benchmark output ('Scenario: ...$' lines)", "", 1, 1)


def read(text: str, source: str) -> dict:
    """A results document from text in any format msgbench writes."""
    body = text.lstrip("\ufeff")
    return sniff(body).read(body, source)

