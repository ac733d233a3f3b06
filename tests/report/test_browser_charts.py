"""The chart rules of issue 29 as Debian's chromium draws them: a one-x chart is a dot
per series at its own place (not a line on a wide axis), reference tools drawn with
their star, and the results page showing its graphs before the store's run list.

Set MSGBENCH_SCREENSHOTS=DIR to keep the screenshots (and look at them).
"""

import json

import pytest

from msgbench.views import figures, report
from tests.report.test_browser import add, single, site  # noqa: F401  (a fixture)
from tests.report.test_chart_rules import _brokers, _chat_doc

pytestmark = pytest.mark.browser

POINTS = """(frame) => [...frame.querySelectorAll('g.msgplot-trace')].map(g => ({
  label: g.dataset.label, marker: g.dataset.marker,
  xs: [...g.querySelectorAll('.msgplot-point')].map(p => { const b = p.getBBox(); return b.x + b.width / 2; })}))"""


def _open(page, tmp_path, doc, name):
    path = tmp_path / f"{name}.html"
    path.write_text(report.render_html(doc), encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered=true]")


def test_a_one_x_chart_draws_each_series_at_its_own_place(page, tmp_path, screenshot_dir):
    _open(page, tmp_path, _brokers(), "brokers")
    frame = page.locator("section[data-workload=pubsub] .msgplot").first
    drawn = frame.evaluate(POINTS)
    xs = [t["xs"][0] for t in drawn]
    assert len(xs) == 5 and len({round(x) for x in xs}) == 5  # no series under another
    ticks = frame.locator(".msgplot-tick").all_text_contents()
    assert "nats/" in ticks and "nats_bench" in ticks  # the series name, broken after its target
    assert {t["label"]: t["marker"] for t in drawn}["reference/nats_bench"] == figures.REFERENCE_MARKER
    assert "at payload size (bytes) = 1,024" in frame.locator(".msgplot-subtitle").text_content()
    page.locator("section[data-workload=pubsub]").screenshot(path=str(screenshot_dir / "brokers-and-tools.png"))
    assert not page.problems


def test_chat_sent_and_received_are_drawn_apart(page, tmp_path, screenshot_dir):
    _open(page, tmp_path, _chat_doc(), "chat")
    frame = page.locator("section[data-workload=chat] .msgplot").first
    drawn = {t["label"]: t for t in frame.evaluate(POINTS)}
    sent, received = drawn["rust/default sent"], drawn["rust/default received before T"]
    assert sent["xs"][0] != received["xs"][0] and sent["marker"] != received["marker"]
    frame.screenshot(path=str(screenshot_dir / "chat-sent-received.png"))


def test_the_results_page_shows_its_graphs_before_the_store(page, site, two_runs,  # noqa: F811
                                                             screenshot_dir):
    page.goto(site)
    page.wait_for_selector("body[data-ready=true]")
    add(page, json.dumps(single(two_runs, 0)))
    page.locator("section.graph").first.wait_for()
    first_graph = page.locator("section.graph").first.bounding_box()
    store = page.locator("#store").bounding_box()
    assert first_graph["y"] < store["y"]
    assert first_graph["y"] < 900  # within the first screen
    assert page.locator("#store-runs tr").count() > 1  # the store is still listed, below
    page.screenshot(path=str(screenshot_dir / "page-with-a-paste.png"))
    assert not page.problems
