"""The HTML report, made from the store alone by `gauntlet report`, opened in headless Chromium."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import COUNT_POINTS, charts_drawn, headless_chromium, open_report, screenshot
from tests.helpers.cli_process import run_cli
from tests.report.conftest import HOSTILE_SCRIPT, HOSTILE_SERVER


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
    with headless_chromium() as chromium:
        yield chromium


def test_the_report_draws_every_chart_offline(report: tuple[Path, str], browser: Any) -> None:
    page = open_report(browser, report[0])
    assert page.evaluate("window.__pwned") is None
    assert HOSTILE_SERVER in page.inner_text("body") and HOSTILE_SCRIPT in page.inner_text("body")
    assert charts_drawn(page) >= 10
    # Plotly would read tags in a name as its own markup and drop them: the name must show as written.
    legends = page.eval_on_selector_all(".legendtext", "texts => texts.map(t => t.textContent)")
    assert any(HOSTILE_SERVER in text for text in legends), legends
    screenshot(page, "report.png")
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


def test_the_report_opens_with_the_verdict(report: tuple[Path, str], browser: Any) -> None:
    """The first section ranks the cases that ran one load on different servers (the study's worker
    scaling: the built-in server on one thread and on two), its bars as wide as each one's share of
    the best, before any chart."""
    page = open_report(browser, report[0])
    sections = page.eval_on_selector_all("main > section", "all => all.map(s => s.id)")
    assert sections[:2] == ["verdict", "charts"]
    verdicts = page.query_selector_all("#verdict .verdict")
    assert len(verdicts) == 1
    headline = verdicts[0].query_selector(".headline").inner_text()
    assert headline.startswith(("2 workers ", "1 worker ")) and "µs/request" in headline, headline
    rows = verdicts[0].eval_on_selector_all("tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))")
    assert [row[0] for row in rows] == ["1", "2"] and rows[0][3] == "100%"
    widths = verdicts[0].eval_on_selector_all(
        "td.share", "cells => cells.map(c => c.querySelector('.bar').getBoundingClientRect().width / c.getBoundingClientRect().width)"
    )
    second_share = int(rows[1][3].rstrip("%")) / 100
    assert widths[0] == pytest.approx(1, abs=0.01) and widths[1] == pytest.approx(second_share, abs=0.02)
    page.close()


def test_the_latency_distribution_is_drawn_on_the_percentile_axis(report: tuple[Path, str], browser: Any) -> None:
    """The HdrHistogram plotter's x axis: 0 %, 90 %, 99 %... equally apart on a 1/(1-q) log scale."""
    page = open_report(browser, report[0])
    chart = page.query_selector("#distribution-1")
    ticks = chart.eval_on_selector_all(".xtick text", "ticks => ticks.map(t => { const r = t.getBoundingClientRect(); return [t.textContent, r.x + r.width / 2]; })")
    labels = [label for label, _ in ticks]
    assert labels[:3] == ["0%", "90%", "99%"], labels
    gaps = [b - a for (_, a), (_, b) in zip(ticks, ticks[1:], strict=False)]
    assert max(gaps) - min(gaps) < 2, "a decade of 1/(1-q) each"
    y_labels = chart.eval_on_selector_all(".ytick text", "ticks => ticks.map(t => t.textContent)")
    assert all(label.replace(",", "").replace(".", "").lstrip("0")[:1] in "125" for label in y_labels), y_labels
    page.close()
