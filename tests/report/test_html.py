"""The HTML report as text: self-contained, every section, nothing in the data can escape."""

import base64
import hashlib
import json
import re

from msgbench.views import report
from msgbench.views.report import html

EVIL = '</script><script>alert(1)</script><img src=x onerror="alert(2)">&amp;'


def embedded_data(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="msgbench-data">(.*?)</script>', page,
                      re.S)
    return json.loads(match.group(1))


def test_one_file_with_nothing_to_fetch(two_runs):
    page = report.render_html(two_runs)
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', page)
    assert "<link" not in page and "@import" not in page
    assert "default-src 'none'" in page


def test_findings_first_then_a_section_per_workload_then_the_run_metadata(every_workload):
    page = report.render_html(every_workload)
    for run in every_workload["runs"]:
        assert f'data-run="{run["id"]}"' in page
    assert "AMD EPYC 7B13" in page and "Erlang/OTP 25 [erts-13.1.5]" in page and "24.0 GiB" in page
    assert "m scaled down 100x" in page
    order = [page.index(f'data-workload="{w}"')
             for w in ("ring", "fanin", "socket", "pubsub", "chat")]
    assert order == sorted(order)
    # The report opens on results: the findings come before any chart, metadata last.
    assert page.index('id="findings"') < order[0]
    assert page.index('id="runs"') > order[-1]


def test_the_findings_name_the_leader_its_margin_and_verification(one_run):
    page = report.render_html(one_run)
    findings = page[page.index('id="findings"'):page.index('data-workload="ring"')]
    # fanin message-1: go is fastest at every sender count (SPEED in report_fixtures).
    row = next(r for r in findings.split("<tr")[1:] if "fanin-message-1" in r)
    # Three repetitions a side can never differ significantly: no leader, and the answer says why.
    assert '<td class="leader">—</td>' in row
    assert "inconclusive: too few repetitions (3 a side can never reach p&lt;0.05) at senders = 16" in row
    assert "14 of 15 points ok, 1 failed" in row  # c failed verification at 16 senders
    mixed = next(r for r in findings.split("<tr")[1:] if "fanin-mixed-10" in r)
    assert "10 of 15 points ok, 5 n/a" in mixed  # go: exit signals unsupported at every x


def test_an_imported_run_says_its_machine_is_unknown(one_run):
    del one_run["runs"][0]["metadata"]
    page = report.render_html(one_run)
    assert "unknown (the run" in page and ">None<" not in page and ">null<" not in page


def test_every_figure_has_its_description_embedded(two_runs):
    page = report.render_html(two_runs)
    ids = re.findall(r'data-figure="([^"]+)"', page)
    figures = embedded_data(page)["figures"]
    assert ids and set(ids) == set(figures)
    assert {f["kind"] for f in figures.values()} == {"xy", "heatmap"}


def test_tables_are_html_with_n_a_and_failed_cells(one_run):
    page = report.render_html(one_run)
    assert '<td class="failed">failed (timeout)</td>' in page
    assert '<td class="na">n/a</td>' in page
    assert '<td class="num">1,000</td>' in page


def test_results_text_cannot_break_out_of_the_data_or_the_page(one_run):
    run = one_run["runs"][0]
    run["id"] = EVIL
    run["notes"] = [EVIL]
    for s in run["summary"]:
        s["target"] = EVIL
    page = report.render_html(one_run, title=EVIL)
    # The only script elements are the data and the report's own two scripts.
    assert page.count("<script") == 3 and page.lower().count("</script") == 3
    assert "<img" not in page
    data_text = re.search(r'id="msgbench-data">(.*?)</script>', page, re.S).group(1)
    assert "<" not in data_text and ">" not in data_text and "&" not in data_text
    labels = {t["label"] for f in embedded_data(page)["figures"].values() if f["kind"] == "xy"
              for t in f["traces"]}
    assert any(EVIL in label for label in labels)  # the text survives, as text
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page


def test_the_content_security_policy_lists_exactly_the_inline_scripts(one_run):
    page = report.render_html(one_run)
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 2
    policy = re.search(r'Content-Security-Policy" content="([^"]+)"', page).group(1)
    for source in scripts:
        digest = base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
        assert f"sha256-{digest}" in policy


def test_json_for_script_escapes_markup_and_drops_non_numbers():
    text = html.json_for_script({"a": "</script>&", "b": float("nan"), "c": [float("inf"), 1.5]})
    assert text == '{"a": "\\u003c/script\\u003e\\u0026", "b": null, "c": [null, 1.5]}'
    assert json.loads(text) == {"a": "</script>&", "b": None, "c": [None, 1.5]}


def test_a_document_without_summaries_is_summarised(one_run):
    for run in one_run["runs"]:
        run["summary"] = None
    assert 'data-workload="ring"' in report.render_html(one_run)


def test_the_report_of_an_empty_run_still_renders():
    page = report.render_html({"runs": [{"id": "empty", "measurements": [], "summary": []}]})
    assert 'data-run="empty"' in page and "data-workload" not in page


def test_each_section_opens_on_its_figures_with_the_method_one_click_away(every_workload):
    page = report.render_html(every_workload)
    for workload in ("ring", "fanin", "socket", "pubsub", "chat"):
        section = page[page.index(f'data-workload="{workload}"'):]
        section = section[:section.index("</section>")]
        # Between the heading and the first figure: one summary line, the paragraph folded.
        before_figure = section[:section.index('class="figure"')]
        assert '<details class="description"><summary>How it is measured' in before_figure
        assert '<p class="description">' not in section
        assert re.sub(r"<details.*?</details>", "", before_figure, flags=re.S).count("<p") == 0
