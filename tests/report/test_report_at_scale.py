"""The report of 30 cases, drawn in headless Chromium: the keep-alive bars of 15 servers with long
names, each name whole on its own line and no label over another, the % labels readable; the
verdict ranks all 15. The results are real (golden/study-cases.json, measured on the built-in
server), relabelled as 15 servers, since what is checked is the layout."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from gauntlet.model.record import CaseRecord
from gauntlet.report.html import write_report
from gauntlet.store import Store
from tests.helpers.browser import charts_drawn, headless_chromium, open_report, screenshot
from tests.report.conftest import CASES_FILE

SERVERS = 15
#: Smallest type a label may be drawn in (the bars' % labels were ~5 px once).
MIN_LABEL_PX = 11


def thirty_cases() -> list[CaseRecord]:
    """Each server with keep-alive (the soak's result) and without (the concurrency sweep's)."""
    stored = [CaseRecord(**case) for case in json.loads(CASES_FILE.read_text())]
    kept = next(c for c in stored if c.params["group"] == "soak")
    closed = next(c for c in stored if c.params["group"] == "concurrency" and c.params["connections"] == 2)
    records = []
    for index in range(SERVERS):
        for keepalive, source in ((True, kept), (False, closed)):
            params = {"server": f"server-{index:02d}-with-a-rather-long-name", "workload": "ST-1", "keepalive": keepalive,
                      "connections": 50}
            records.append(CaseRecord(params, result=source.result, labels=source.labels))
    return records


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    tmp = tmp_path_factory.mktemp("scale")
    with Store.open(tmp / "results.db") as store:
        run_id = store.begin_run(suite="scale", suite_text=None, options={}, environment={}, planned_cases=2 * SERVERS)
        for record in thirty_cases():
            store.add_case(run_id, record)
        store.end_run(run_id, "complete")
        write_report(store, [run_id], tmp / "report.html")
    with headless_chromium() as browser:
        opened = open_report(browser, tmp / "report.html")
        yield opened
        screenshot(opened, "report-30-cases.png")


BOX = "e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; }"


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def test_thirty_bar_labels_are_whole_and_apart(page: Any) -> None:
    chart = page.query_selector("#keepalive-1")
    names = chart.eval_on_selector_all(".ytick text", "ticks => ticks.map(t => t.textContent)")
    assert sorted(names) == [f"server-{i:02d}-with-a-rather-long-name" for i in range(SERVERS)], "every name whole, none cut"
    whole = chart.evaluate(BOX)
    for selector in (".ytick text", ".bartext"):
        boxes = chart.eval_on_selector_all(selector, f"all => all.map({BOX})")
        assert len(boxes) == SERVERS, selector
        for box in boxes:
            assert whole["left"] <= box["left"] and box["right"] <= whole["right"], (selector, box, whole)
        for first, second in zip(boxes, boxes[1:], strict=False):
            assert not overlap(first, second), selector
    sizes = chart.eval_on_selector_all(".bartext text, .ytick text", "all => all.map(t => parseFloat(getComputedStyle(t).fontSize))")
    assert min(sizes) >= MIN_LABEL_PX, sizes


def test_the_verdict_ranks_the_fifteen(page: Any) -> None:
    verdicts = page.query_selector_all("#verdict .verdict")
    assert len(verdicts) == 2, "with keep-alive, and without"
    for verdict in verdicts:
        assert len(verdict.query_selector_all("tbody tr")) == SERVERS


def test_every_chart_is_drawn_with_its_legend_clear_of_the_plot(page: Any) -> None:
    assert charts_drawn(page) >= 2
    for chart in page.query_selector_all(".chart"):
        legend, plot = chart.query_selector(".legend"), chart.query_selector(".nsewdrag")
        if legend is not None:
            assert not overlap(legend.evaluate(BOX), plot.evaluate(BOX)), chart.get_attribute("id")
