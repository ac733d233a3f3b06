"""Reports: the self-contained HTML report and PNG figures of a results document.

    render_html(doc, title=None) -> str     one HTML file that opens offline
    write_pngs(doc, outdir) -> [Path]       every figure of that report as a PNG

doc is a results document (docs/results-format.md), possibly with several runs.
Each workload's pictures are one module in msgbench/report/workloads/.
"""

from pathlib import Path

__all__ = ["render_html", "write_pngs"]

# Both import their machinery when called: msgbench.formats.otp uses report.model, and
# the HTML report needs no matplotlib.


def render_html(doc: dict, *, title: str | None = None) -> str:
    from msgbench.report.html import render_html as render

    return render(doc, title=title)


def write_pngs(doc: dict, outdir: Path) -> list[Path]:
    from msgbench.report.png import write_pngs as write

    return write(doc, Path(outdir))
