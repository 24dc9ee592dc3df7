"""The HTML report, made from the store alone by `gauntlet report`, opened in headless Chromium."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require_installed
from tests.helpers.cli_process import run_cli
from tests.report.conftest import HOSTILE_SCRIPT, HOSTILE_SERVER

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
#: Where the screenshot goes (CI uploads this directory); GAUNTLET_TEST_ARTIFACTS overrides it.
ARTIFACTS = Path(os.environ.get("GAUNTLET_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts"))
#: In each chart: the number of data points Plotly drew, and the number its visible traces hold.
COUNT_POINTS = """
(div) => ({
  drawn: div.querySelectorAll('.point').length,
  data: div.data.filter(t => t.visible !== false).reduce((n, t) => n + t.y.filter(y => y !== null).length, 0),
})
"""


@pytest.fixture(scope="module")
def report(study_db: tuple[Path, int], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The study's report, written by the CLI from a copy of the database (nothing else is read)."""
    path, run_id = study_db
    tmp = tmp_path_factory.mktemp("report")
    db = tmp / "copy.db"
    shutil.copy(path, db)
    out = tmp / "report.html"
    done = run_cli("report", str(run_id), "-o", out, "--db", db, timeout_s=120)
    assert done.code == 0, done.stderr
    assert done.stderr.strip() == f"report: {out}"
    return out, done.stdout


def test_the_report_is_one_file_with_nothing_to_fetch(report: tuple[Path, str]) -> None:
    html = report[0].read_text()
    assert re.search(r"<(script|img|iframe)[^>]+src=|<link[^>]+href=", html) is None
    assert html.count("<script>") == 2, "plotly.js inlined, and the charts"
    assert len(html) > 4_000_000, "plotly.js is about 4.8 MB"


def test_stored_strings_are_escaped(report: tuple[Path, str]) -> None:
    html = report[0].read_text()
    assert "<img src=x" not in html and "<script>window.__pwned" not in html
    assert "&lt;img src=x onerror=window.__pwned=1&gt;&lt;b&gt;nginx" in html
    assert "&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;window.__pwned=2" in html


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    require_installed("playwright", sync_playwright is not None, "pip install -e '.[test]'")
    require_installed("chromium", CHROMIUM.exists(), "apt-get install chromium")
    assert sync_playwright is not None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def test_the_report_draws_every_chart_offline(report: tuple[Path, str], browser: Any) -> None:
    path = report[0]
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
    assert page.evaluate("window.__pwned") is None
    assert HOSTILE_SERVER in page.inner_text("body") and HOSTILE_SCRIPT in page.inner_text("body")
    charts = page.query_selector_all(".chart")
    assert len(charts) >= 10
    for chart in charts:
        counts = chart.evaluate(COUNT_POINTS)
        assert counts["drawn"] == counts["data"] > 0, chart.get_attribute("id")
    # Plotly would read tags in a name as its own markup and drop them: the name must show as written.
    legends = page.eval_on_selector_all(".legendtext", "texts => texts.map(t => t.textContent)")
    assert any(HOSTILE_SERVER in text for text in legends), legends
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    screenshot = ARTIFACTS / "report.png"
    page.screenshot(path=str(screenshot), full_page=True)
    print(f"screenshot of the report: {screenshot}")
    page.close()


def test_the_timeline_menu_switches_cases(report: tuple[Path, str], browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(report[0].as_uri())
    page.wait_for_load_state("load")
    timeline = page.query_selector("#timeline-1")
    before = timeline.evaluate("div => div.data.map(t => t.visible)")
    page.click("#timeline-1 .updatemenu-header-group")
    page.click("#timeline-1 .updatemenu-dropdown-button >> nth=1")
    page.wait_for_function("() => document.getElementById('timeline-1').data[2].visible === true")
    after = timeline.evaluate("div => div.data.map(t => t.visible)")
    assert (before, after) == ([True, True, False, False], [False, False, True, True])
    counts = timeline.evaluate(COUNT_POINTS)
    assert counts["drawn"] == counts["data"] > 0
    page.close()
