"""What a person sees, in Debian's chromium: overlaid sources told apart, one colour per
target in the report and on the page, the findings first, legends clear of the plots.

Set MSGBENCH_SCREENSHOTS=DIR to keep the screenshots (and look at them).
"""

import json

import pytest

from msgbench.views import figures, report
from msgbench.views.formats import otp
from tests.report.test_browser import SEND_1_KEY, add, single, site  # noqa: F401  (a fixture)
from tests.report.test_sections import series_doc

pytestmark = pytest.mark.browser

# Each drawn trace of a graph's view (page) or of a report figure: how it looks.
LOOKS = """(root) => [...root.querySelectorAll('g.msgplot-trace')].map(g => ({
  label: g.dataset.label, colour: g.dataset.colour, marker: g.dataset.marker,
  line: g.dataset.line, source: g.dataset.source}))"""

# Boxes of a chart's plot area, legend and each legend entry.
BOXES = """(frame) => {
  const box = (n) => { const r = n.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; };
  return {plot: box(frame.querySelector('.msgplot-area')), legend: box(frame.querySelector('.msgplot-legend')),
          entries: [...frame.querySelectorAll('.msgplot-legend-entry')].map(box)};
}"""


def overlaps(a: dict, b: dict) -> bool:
    return a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and \
        a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]


def throughput_holder(page, key=SEND_1_KEY):
    return page.locator(f'section.graph[data-key="{key}"] [data-view=throughput]')


@pytest.fixture
def overlaid(page, site, two_runs):  # noqa: F811
    """Run 1 pasted as msgbench JSON, run 2 as the OTP page's text: two sources."""
    page.goto(site)
    page.wait_for_selector("body[data-ready=true]")
    add(page, json.dumps(single(two_runs, 0)))
    add(page, otp.render(single(two_runs, 1)))
    return page


def test_overlaid_sources_differ_by_marker_and_dash_and_keep_the_targets_colour(overlaid,
                                                                                screenshot_dir):
    page = overlaid
    holder = throughput_holder(page)
    looks = holder.evaluate(LOOKS)
    assert len(looks) == 6
    # No two lines of the chart look alike.
    assert len({(t["colour"], t["marker"], t["line"]) for t in looks}) == 6
    by_label = {t["label"]: t for t in looks}
    for target in ("erlang", "go", "c"):
        first, second = by_label[f"{target}/default"], by_label[f"Ver: 2 {target}/default"]
        assert first["colour"] == second["colour"] == figures.TARGET_COLOURS[target]
        assert (first["marker"], first["line"]) != (second["marker"], second["line"])
    assert {t["source"] for t in looks} == {"Ver: 1", "Ver: 2"}
    # The legend is grouped by source: a heading per source with its own entries under it.
    groups = holder.locator(".msgplot-legend-group")
    assert groups.count() == 2
    assert [groups.nth(i).locator(".msgplot-legend-source").text_content() for i in (0, 1)] == [
        "Ver: 1", "Ver: 2"]
    assert groups.nth(1).locator(".msgplot-legend-entry").count() == 3
    holder.screenshot(path=str(screenshot_dir / "page-overlaid-sources.png"))


def test_the_legend_never_covers_the_plot_nor_another_entry(overlaid):
    page = overlaid
    page.check("#view-all-metrics")
    frames = page.locator(".msgplot")
    assert frames.count() > 5
    for i in range(frames.count()):
        boxes = frames.nth(i).evaluate(BOXES)
        assert not overlaps(boxes["plot"], boxes["legend"])
        entries = boxes["entries"]
        for a in range(len(entries)):
            for b in range(a + 1, len(entries)):
                assert not overlaps(entries[a], entries[b]), (i, a, b)


def test_all_metrics_has_an_index_that_links_to_every_graph(overlaid):
    page = overlaid
    page.check("#view-all-metrics")
    graphs = page.locator("section.graph")
    links = page.locator("#graph-index a")
    assert links.count() == graphs.count() > 10
    target = links.nth(graphs.count() - 1).get_attribute("href")
    assert page.locator(f"section.graph{target}").count() == 1
    links.nth(graphs.count() - 1).click()
    assert page.locator(f"section.graph{target} h3").is_visible()


def test_a_target_has_the_same_colour_in_the_report_and_on_the_page(page, site, two_runs,  # noqa: F811
                                                                   tmp_path, screenshot_dir):
    path = tmp_path / "report.html"
    path.write_text(report.render_html(two_runs), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered=true]")
    in_report = page.evaluate(f"() => ({LOOKS})(document)")
    report_colours: dict = {}
    for t in in_report:
        report_colours.setdefault(t["label"].split(" ")[-1].split("/")[0], set()).add(t["colour"])
    assert report_colours.keys() == {"erlang", "go", "c"}
    assert all(len(c) == 1 for c in report_colours.values())  # every chart, both runs

    page.goto(site)
    page.wait_for_selector("body[data-ready=true]")
    add(page, json.dumps(single(two_runs, 0)))
    on_page = page.evaluate(f"() => ({LOOKS})(document)")
    page_colours: dict = {}
    for t in on_page:
        page_colours.setdefault(t["label"].split("/")[0], set()).add(t["colour"])
    assert page_colours == report_colours
    assert report_colours["go"] == {figures.TARGET_COLOURS["go"]}


def test_the_report_opens_on_the_findings(page, every_workload, tmp_path, screenshot_dir):
    path = tmp_path / "report.html"
    path.write_text(report.render_html(every_workload), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered=true]")
    first = page.locator("main > section").first
    assert first.get_attribute("id") == "findings"
    box = page.locator("#findings table").bounding_box()
    assert box["y"] < 900  # in the first screenful, no metadata before it
    assert page.locator("main > section").last.get_attribute("id") == "runs"
    row = page.locator("#findings tr[data-finding=fanin]").first
    answer = row.locator("td.margin").text_content()
    # Three repetitions a side can never be significant: the opening says so, never a leader's margin.
    assert "inconclusive: too few repetitions (3 a side" in answer and answer.endswith("at senders = 16")
    assert row.locator("td.leader").text_content().strip() == "—"  # no leader named where none is significant
    page.screenshot(path=str(screenshot_dir / "report-opening.png"))
    page.locator("section[data-workload=pubsub]").screenshot(
        path=str(screenshot_dir / "report-pubsub-panels.png"))
    assert not page.problems


def test_chat_time_charts_and_the_history_draw_in_the_report(page, tmp_path, screenshot_dir):
    samples = [{"t_ms": t * 500.0, "rss_bytes": 2e7 + t * 3e6,
                "erlang_memory_processes_bytes": 5e6 + t * 2e6,
                "erlang_memory_binary_bytes": 1e6 + t * 1e5, "processes_count": 1000 + 40 * t}
               for t in range(9)]
    doc = series_doc({1: samples})
    path = tmp_path / "chat.html"
    path.write_text(report.render_html(doc), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered=true]")
    charts = page.locator("section[data-workload=chat] [data-figure]")
    titles = [charts.nth(i).locator(".msgplot-title").text_content() for i in range(charts.count())]
    assert "erlang/default, 100 users: memory over time" in titles
    memory = charts.nth(titles.index("erlang/default, 100 users: memory over time"))
    assert memory.locator("g.msgplot-trace").count() == 3
    assert memory.locator(".msgplot-point").count() == 3 * 9
    assert not page.problems
    page.locator("section[data-workload=chat]").screenshot(
        path=str(screenshot_dir / "report-chat-series.png"))


def test_the_history_rings_its_step_change(page, tmp_path, screenshot_dir):
    from msgbench.data.store import Store
    from tests.report.test_history import ring_run

    store = Store(tmp_path / "history.sqlite")
    try:
        runs = [ring_run("r1", "2026-11-20T10:00:00+00:00", {"erlang": 1e7, "go": 2e7}),
                ring_run("r2", "2026-11-21T10:00:00+00:00", {"erlang": 1e7, "go": 2e7}),
                ring_run("r3", "2026-11-22T10:00:00+00:00", {"erlang": 1e7, "go": 1e7})]
        for run in runs:
            store.import_run(run, "test")
        doc = {"runs": [runs[-1]]}
        history = report.history(store, doc)
    finally:
        store.close()
    path = tmp_path / "history.html"
    path.write_text(report.render_html(doc, history=history), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered=true]")
    chart = page.locator("#history [data-figure]")
    assert chart.count() == 1
    step = chart.locator('g.msgplot-trace[data-label="step change (p < 0.05)"]')
    assert step.locator("circle.msgplot-point[fill=none]").count() == 1  # one ring
    assert step.locator("path.msgplot-line").count() == 0  # marks only, no line
    assert chart.locator("g.msgplot-trace").count() == 3
    # One run's lines and the ring's entry: no source headings, the labels whole.
    assert chart.locator(".msgplot-legend-group").count() == 0
    assert "step change (p < 0.05)" in chart.locator(".msgplot-legend").text_content()
    assert not page.problems
    chart.screenshot(path=str(screenshot_dir / "report-history.png"))
