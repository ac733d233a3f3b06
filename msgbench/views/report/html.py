"""The self-contained HTML report: one file that opens offline.

Python writes the page's text (run metadata, section headings, tables) with every
value escaped; the figures are drawn in the browser by static/plot.js from JSON
embedded in a <script type="application/json"> element. That JSON has `<`, `>` and
`&` escaped as \\u003c etc., so no results text can close the element, and the
scripts only ever insert it with textContent. A Content-Security-Policy allows only
the report's own inline scripts (by hash) and no network at all.
"""

import base64
import hashlib
import html
import itertools
import json
import math
from datetime import UTC, datetime
from importlib import resources

import msgbench
from msgbench.data import model
from msgbench.hosts import inventory as hosts
from msgbench.running import probe
from msgbench.views import screen, workloads
from msgbench.views.figures import metric_label
from msgbench.views.report import findings
from msgbench.views.report.sections import extra_sections, section

_STATIC = resources.files("msgbench.views.report") / "static"
_METADATA_FIELDS = (
    ("host", "host"), ("cpu_model", "CPU"), ("cores", "cores"), ("memory_bytes", "memory"),
    ("kernel", "kernel"), ("os", "OS"), ("python", "Python"), ("git_revision", "git revision"),
    ("msgbench_version", "msgbench"),
)


def static_text(name: str) -> str:
    return (_STATIC / name).read_text(encoding="utf-8")


def json_for_script(data: object) -> str:
    """JSON that is safe inside a <script> element: no `<`, `>` or `&` left to misread."""
    text = json.dumps(_finite(data), ensure_ascii=False, allow_nan=False)
    for char, escape in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def _finite(value: object) -> object:
    """NaN and infinities are not JSON; they are no number, so they become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _script_hash(source: str) -> str:
    digest = hashlib.sha256(source.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def sections_of(doc: dict) -> list[dict]:
    return [section(data) for data in model.collect(doc, workloads.order)] + extra_sections(doc)


def render_html(doc: dict, *, title: str | None = None, history: list[dict] | None = None) -> str:
    """The report of every run in the document as one self-contained HTML page.

    It opens with the findings (who leads each scenario, by how much, verification and
    loss), then each workload's charts, then the history of earlier runs when given
    (history.figures: trend charts), and ends with the runs' metadata.
    """
    runs = model.runs_of(doc)
    sections = sections_of(doc)
    history = history or []
    title = title or "msgbench report: " + ", ".join(str(r.get("id", "?")) for r in runs)
    figures = {item["id"]: item for s in sections for item in s["items"] if item["kind"] != "table"}
    figures.update({item["id"]: item for item in history})
    scripts = [static_text("plot.js"), static_text("report.js")]
    for source in scripts:
        if "</script" in source.lower():  # would end the element early
            raise ValueError("a report script contains '</script'")
    csp = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
           f"script-src {' '.join(_script_hash(s) for s in scripts)}")
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # The policy has no `"`, `<` or `&`; its quotes must stay as they are.
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title>",
        f"<style>{static_text('plot.css')}\n{static_text('report.css')}</style>",
        "</head><body>",
        "<header>",
        f"<h1>{e(title)}</h1>",
        f'<p class="generated">Generated {e(_now())} by msgbench {e(msgbench.__version__)}. '
        "Medians of the repetitions; error bars span min–max; n/a = not supported by the "
        "target, failed = no valid result; neither is ever drawn as zero.</p>",
        _toc(sections, bool(history)),
        "</header><main>",
        _findings_html(findings.findings(doc), _noise_lines(runs)),
        *(_section_html(s) for s in sections),
        _history_html(history),
        _runs_html(runs),
        "</main>",
        '<script type="application/json" id="msgbench-data">'
        + json_for_script({"figures": figures}) + "</script>",
        *(f"<script>{source}</script>" for source in scripts),
        "</body></html>",
    ]
    return "\n".join(parts)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _toc(sections: list[dict], history: bool) -> str:
    links = ['<li><a href="#findings">Findings</a></li>']
    links += [f'<li><a href="#section-{html.escape(s["id"])}">{html.escape(s["title"])}</a></li>'
              for s in sections]
    if history:
        links.append('<li><a href="#history">History</a></li>')
    links.append('<li><a href="#runs">Runs</a></li>')
    return '<nav><ul class="toc">' + "".join(links) + "</ul></nav>"


_ARROW = {"higher": "↑ higher is better", "lower": "↓ lower is better"}


def _noise_lines(runs: list[dict]) -> list[str]:
    """Per run, how many points were noisy and why (the terminal's line): the Findings'
    first words, since a noisy point's leader is less certain."""
    out = []
    for run in runs:
        line = screen.noise_line(run.get("summary") or [])
        if line:
            out.append(line + (f" in run {run.get('id')}" if len(runs) > 1 else ""))
    return out


def _findings_html(rows: list[findings.Finding], noise: list[str] | None = None) -> str:
    e = html.escape
    parts = ['<section id="findings" class="findings"><h2>Findings</h2>',
             '<p class="description">Per scenario, by the metric compared there: the best system '
             "against the runner-up at the largest x both measured (builds: each against the first), "
             "named a leader only where a two-sided Mann-Whitney U test of their repetitions finds a "
             "difference (p &lt; 0.05; three repetitions against three can never reach it); each "
             "system against its own reference tool; the points that passed verification.</p>"]
    parts += [f'<p class="noise">{html.escape(line)}</p>' for line in noise or []]
    if not rows:
        parts.append('<p class="empty">No scenario has a number to compare.</p>')
        parts.append("</section>")
        return "\n".join(parts)
    multi_run = any(f.run for f in rows)
    with_tools = any(f.own_tool for f in rows)
    head = ["scenario", *(["run"] if multi_run else []), "judged by", "leader", "answer",
            "significance", *(["x own tool"] if with_tools else []), "verification", "loss"]
    parts.append('<table class="data findings-table"><thead><tr>'
                 + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead><tbody>")
    for f in rows:
        scenario = f"{f.workload}: {f.scenario}" + (f" ({f.params})" if f.params else "")
        leader = (f'{e(f.leader)}<div class="sub">best at {e(f.leads_at)}</div>' if f.leader else "—")
        loss = f.loss_text()
        cells = [f"<td>{e(scenario)}</td>", *([f"<td>{e(f.run)}</td>"] if multi_run else []),
                 f"<td>{e(metric_label(f.metric))} {e(_ARROW.get(f.better, ''))}</td>",
                 f'<td class="leader">{leader}</td>', f'<td class="margin">{e(f.margin_text())}</td>',
                 f'<td class="{"significant" if f.significant else "insignificant"}">'
                 f"{e(f.significance_text())}</td>",
                 *([f'<td class="own-tool">{"<br>".join(map(e, f.own_tool)) or "—"}</td>'] if with_tools else []),
                 f'<td class="{"failed" if f.failed else "ok"}">{e(f.verification_text())}</td>',
                 f"<td>{e(loss)}</td>"]
        parts.append(f'<tr data-finding="{e(f.workload)}">' + "".join(cells) + "</tr>")
    parts.append("</tbody></table></section>")
    return "\n".join(parts)


def _history_html(items: list[dict]) -> str:
    if not items:
        return ""
    e = html.escape
    parts = ['<section id="history" class="history"><h2>History</h2>',
             '<p class="description">The same scenarios in every stored run, in time order: '
             "one line per target and build, the median of each run; a ringed point is a step "
             "change (Mann-Whitney U test against the run before, p &lt; 0.05).</p>"]
    parts += [f'<div class="figure" data-figure="{e(item["id"])}"></div>' for item in items]
    parts.append("</section>")
    return "\n".join(parts)


def _runs_html(runs: list[dict]) -> str:
    parts = ['<section id="runs" class="runs"><h2>Runs</h2>']
    for run in runs:
        parts.append(_run_html(run))
    parts.append("</section>")
    return "\n".join(parts)


def _run_html(run: dict) -> str:
    e = html.escape
    meta = run.get("metadata") or {}
    measurements = run.get("measurements") or []
    rows = [("status", run.get("status")), ("command", run.get("command")),
            ("suite", run.get("suite")), ("started", run.get("created_at")),
            ("finished", run.get("finished_at"))]
    for key, label in _METADATA_FIELDS:
        value = meta.get(key)
        if key == "host" and value in (None, ""):
            # An imported run (OTP text, CSV) knows nothing of the machine: say so in words.
            value = "unknown (the run's results do not say which machine measured them)"
        if key == "memory_bytes" and isinstance(value, (int, float)):
            value = f"{value / 2**30:.1f} GiB"
        rows.append((label, value))
    for name, version in sorted((meta.get("runtimes") or {}).items()):
        rows.append((f"runtime {name}", version))
    rows += [(f"host {alias}", line) for alias, line in hosts.describe(meta.get("hosts"))]
    if isinstance(meta.get("cpu_placement"), dict):  # where its processes ran, in words (msgbench/workers/cpus.py)
        rows.append(("cpus", meta["cpu_placement"].get("description") or meta["cpu_placement"].get("policy")))
    floor = probe.line(meta.get("noise_floor"))
    rows += [("noise floor", floor.removeprefix("noise floor: "))] if floor else []
    known = {k for k, _ in _METADATA_FIELDS} | {"runtimes", "hosts", "noise_floor", "cpu_placement"}
    rows += [(k, v) for k, v in meta.items() if k not in known]
    warmups = sum(1 for m in measurements if m.get("warmup"))
    not_ok = sum(1 for m in measurements if not m.get("warmup") and m.get("status") != "ok")
    rows.append(("measurements", f"{len(measurements)} ({warmups} warm-up, {not_ok} not ok)"))
    body = "".join(f"<tr><th>{e(str(k))}</th><td>{e(_text(v))}</td></tr>" for k, v in rows
                   if v not in (None, ""))
    notes = "".join(f"<li>{e(str(n))}</li>" for n in run.get("notes") or [])
    return (f'<div class="run" data-run="{e(str(run.get("id", "")))}">'
            f"<h3>Run {e(str(run.get('id', '?')))}</h3>"
            f'<table class="meta">{body}</table>'
            + (f'<ul class="notes">{notes}</ul>' if notes else "") + "</div>")


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _section_html(s: dict) -> str:
    e = html.escape
    parts = [f'<section class="workload" id="section-{e(s["id"])}" '
             f'data-workload="{e(s["workload"])}">', f"<h2>{e(s['title'])}</h2>"]
    # The figures come first: how the workload is measured (the spec's paragraph, 10 to 20
    # lines) is one click away, under a line that names the seed it reproduces.
    if s["description"] or s["seed"]:
        seed = f" (reproduces seed {e(s['seed'])})" if s["seed"] else ""
        parts.append(f'<details class="description"><summary>How it is measured{seed}</summary>'
                     f'<p>{e(s["description"] or "")}</p></details>')
    if not s["items"]:
        parts.append('<p class="empty">Nothing to draw: no summary has a number.</p>')
    for row, items in itertools.groupby(s["items"], key=lambda item: item.get("row")):
        rendered = [_item_html(item) for item in items]
        # Items that share a row (a table and its heatmap) are laid out side by side.
        parts.append(f'<div class="item-row">{"".join(rendered)}</div>' if row else
                     "\n".join(rendered))
    table = s["summary_table"]
    if table is not None:  # the limits section has none
        parts.append(f'<details class="summaries"><summary>All summaries ({len(table["rows"])})'
                     f"</summary>{table_html(table)}</details>")
    parts.append("</section>")
    return "\n".join(parts)


def _item_html(item: dict) -> str:
    if item["kind"] == "table":
        return table_html(item)
    return (f'<div class="figure" data-figure="{html.escape(item["id"])}">'
            f"<noscript>{html.escape(item['title'])}: the figures need JavaScript.</noscript>"
            "</div>")


def table_html(table: dict) -> str:
    e = html.escape
    head = "".join(f"<th>{e(c)}</th>" for c in table["columns"])
    rows = []
    for row in table["rows"]:
        cells = []
        for cell in row:
            classes = [] if cell["status"] == "ok" else ["na" if cell["status"] == "unsupported"
                                                         else "failed"]
            if _looks_numeric(cell["text"]):
                classes.append("num")
            attr = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{attr}>{e(cell['text'])}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    note = f'<p class="table-note">{e(table["note"])}</p>' if table.get("note") else ""
    return (f'<div class="table-wrap" data-table="{e(table["id"])}"><table class="data">'
            f"<caption>{e(table['title'])}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>{note}</div>")


def _looks_numeric(text: str) -> bool:
    return bool(text) and text.replace(",", "").replace(".", "").replace("e", "").replace(
        "-", "").replace("+", "").isdigit()
