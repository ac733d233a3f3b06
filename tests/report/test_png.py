"""PNG figures: one file per chart of the report, drawn without a display."""

from msgbench.views import report
from msgbench.views.report import html, png

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_every_chart_is_written_as_a_png(one_run, tmp_path):
    paths = report.write_pngs(one_run, tmp_path / "pngs")
    charts = [i for s in html.sections_of(one_run) for i in s["items"] if i["kind"] != "table"]
    assert len(paths) == len(charts)
    assert len(set(paths)) == len(paths)
    for path in paths:
        assert path.read_bytes().startswith(PNG_MAGIC)
        assert path.stat().st_size > 10_000
    assert any(p.name.startswith("ring-1-ring-creation-time") for p in paths)


def test_points_without_numbers_are_marked_not_drawn(one_run):
    section = next(s for s in html.sections_of(one_run) if s["workload"] == "fanin")
    mixed_send = section["items"][2]  # go is n/a at every x
    figure = png.draw(mixed_send)
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert texts.count("n/a") == len(mixed_send["traces"][0]["x"])
    go_line = next(line for line in figure.axes[0].lines if line.get_label() == "go/default")
    assert all(y != y for y in go_line.get_ydata())  # NaN: a gap, never zero


def test_two_y_axes_and_bars_are_drawn():
    trace = {"label": "a", "axis": "y", "x": ["s1", "s2"], "y": [1.0, 2.0], "lo": [None, None],
             "hi": [None, None], "n": [1, 1], "status": ["ok", "failed"], "note": ["", ""]}
    rate = dict(trace, label="b", axis="y2", y=[1e6, 2e6], status=["ok", "ok"])
    figure = {"kind": "xy", "id": "x", "title": "t", "subtitle": "", "note": "", "bars": True,
              "x": {"label": "x", "scale": "category"}, "y": {"label": "y", "scale": "linear"},
              "y2": {"label": "y2", "scale": "linear"}, "traces": [trace, rate]}
    drawn = png.draw(figure)
    assert len(drawn.axes) == 2
    assert [t.get_text() for t in drawn.axes[0].texts] == ["✕"]


def test_a_png_uses_the_traces_colour_marker_and_dash_and_heads_the_legend_by_run(two_runs):
    from matplotlib import colors

    from msgbench.views import figures
    section = next(s for s in html.sections_of(two_runs) if s["workload"] == "fanin")
    item = section["items"][0]
    drawn = png.draw(item)
    lines = {line.get_label(): line for line in drawn.axes[0].lines}
    first, second = (f"{run['id']} erlang/default" for run in two_runs["runs"])
    assert colors.to_hex(lines[first].get_color()) == figures.TARGET_COLOURS["erlang"]
    assert colors.to_hex(lines[second].get_color()) == figures.TARGET_COLOURS["erlang"]
    assert (lines[first].get_marker(), lines[first].get_linestyle()) == ("o", "-")
    assert (lines[second].get_marker(), lines[second].get_linestyle()) == ("s", ":")
    legend = [t.get_text() for t in drawn.axes[0].get_legend().get_texts()]
    assert legend[:2] == [two_runs["runs"][0]["id"], "  erlang/default"]
    assert two_runs["runs"][1]["id"] in legend
