"""Headless Chromium (Debian's, driven by Playwright) for the HTML report: open it from disk, check
that nothing failed or was fetched, count what each chart drew, keep a screenshot."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.conftest import require_installed

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
#: Where screenshots go (CI keeps this directory); GAUNTLET_TEST_ARTIFACTS overrides it.
ARTIFACTS = Path(os.environ.get("GAUNTLET_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts"))
#: In each chart: the number of data points Plotly drew, and the number its visible traces hold.
COUNT_POINTS = """
(div) => ({
  drawn: div.querySelectorAll('.point').length,
  data: div.data.filter(t => t.visible !== false).reduce((n, t) => n + t.y.filter(y => y !== null).length, 0),
})
"""


@contextlib.contextmanager
def headless_chromium() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    require_installed("playwright", sync_playwright is not None, "pip install -e '.[test]'")
    require_installed("chromium", os.access(CHROMIUM, os.X_OK), "apt-get install chromium")
    assert sync_playwright is not None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_report(browser: Any, path: Path) -> Any:
    """The report's page once loaded; fails on a console error or warning and on any request but the file."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    problems: list[str] = []
    requests: list[str] = []
    page.on("console", lambda message: problems.append(message.text) if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("request", lambda request: requests.append(request.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    assert problems == []
    assert requests == [path.as_uri()], "nothing but the file itself"
    return page


def charts_drawn(page: Any) -> int:
    """Checks that every chart drew as many points as its data holds (and some); returns how many charts."""
    charts = page.query_selector_all(".chart")
    for chart in charts:
        counts = chart.evaluate(COUNT_POINTS)
        assert counts["drawn"] == counts["data"] > 0, chart.get_attribute("id")
    return len(charts)


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path
