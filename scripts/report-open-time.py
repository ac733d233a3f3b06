#!/usr/bin/env python3
"""Time to open a msgbench HTML report in headless Chromium, offline.

Usage: .venv/bin/python scripts/report-open-time.py REPORT.html [--times 5]

Opens the file in Debian's chromium (no network: every request but the file is
refused) and measures, per opening, the time from navigation to the report's
`body[data-rendered]` mark, which report.js sets once every figure is drawn.
Prints the size and the median, min and max of the openings.
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--times", type=int, default=5)
    args = parser.parse_args()
    uri = args.report.resolve().as_uri()
    seconds = []
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900})
        for _ in range(args.times):
            page = context.new_page()
            page.route("**/*", lambda route: route.continue_() if route.request.url == uri else route.abort())
            started = time.monotonic()
            page.goto(uri, timeout=300_000)
            page.wait_for_selector("body[data-rendered]", timeout=300_000)
            seconds.append(time.monotonic() - started)
            figures = page.locator("[data-figure]").count()
            page.close()
        context.close()
    size = args.report.stat().st_size
    print(f"{args.report}: {size / 2**20:.2f} MiB, {figures} figures; opened {len(seconds)} times: "
          f"median {statistics.median(seconds):.2f} s (min {min(seconds):.2f}, max {max(seconds):.2f})")


if __name__ == "__main__":
    main()
