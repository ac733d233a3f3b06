"""Reports: the self-contained HTML report and PNG figures of a results document.

    render_html(doc, title=None, history=None) -> str   one HTML file that opens offline
    write_pngs(doc, outdir, history=None) -> [Path]     every figure of that report as a PNG
    history(store, doc) -> [figure]         trend charts of doc's scenarios over the stored
                                            runs (the History section; [] with one run)

doc is a results document (docs/results-format.md), possibly with several runs.
Each workload's pictures are its plug-in's section (msgbench/views/workloads/<name>.py).
"""

from pathlib import Path

__all__ = ["history", "render_html", "write_pngs"]

# Both import their machinery when called: msgbench.views.formats.otp uses report.model, and
# the HTML report needs no matplotlib.


def render_html(doc: dict, *, title: str | None = None, history: list[dict] | None = None) -> str:
    from msgbench.views.report.html import render_html as render

    return render(doc, title=title, history=history)


def write_pngs(doc: dict, outdir: Path, history: list[dict] | None = None) -> list[Path]:
    from msgbench.views.report.png import write_pngs as write

    return write(doc, Path(outdir), history)


def history(store, doc: dict) -> list[dict]:
    from msgbench.views.report.timeline import history_figures

    return history_figures(store, doc)
