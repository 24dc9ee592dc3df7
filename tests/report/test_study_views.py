"""The studies' views (docs/reports.md#the-studies-views): the Deathmatch's figures against the
offered rate, Nguyen's against concurrency with each error kind apart, and the soak's servers over
time. Real cases, measured once on the built-in server and kept in golden/study-cases.json (removed,
it is measured again), are
stored in a real SQLite file; each view's data is checked against what was stored, and its data
and layout against golden/study-views.json (not pixels: the Chromium check draws the report)."""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import Any

import pytest

from gauntlet.report import charts
from gauntlet.report.figure import NO_BARS_NOTE
from gauntlet.report.html import write_report
from gauntlet.report.points import GridPoint
from gauntlet.store import Store
from tests.helpers.browser import charts_drawn, headless_chromium, open_report
from tests.report.conftest import grid_points_of

GOLDEN = Path(__file__).parent / "golden"
VIEWS_FILE = GOLDEN / "study-views.json"
UPDATE = os.environ.get("GAUNTLET_UPDATE_GOLDEN") == "1"


def views_of(points: list[GridPoint]) -> dict[str, Any]:
    return {chart.chart_id: {"title": chart.title, "figure": chart.figure} for chart in charts.all_charts(points)}


def test_the_views_are_the_golden_ones(points: list[GridPoint]) -> None:
    """The same charts as the golden file. GAUNTLET_UPDATE_GOLDEN=1 writes the views anew (review the
    diff); the cases are measured anew when their file is removed."""
    found = json.loads(json.dumps(views_of(points)))
    if UPDATE:
        VIEWS_FILE.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        pytest.fail(f"{VIEWS_FILE.name} written anew: review its diff, then run without GAUNTLET_UPDATE_GOLDEN")
    assert sorted(found) == sorted(json.loads(VIEWS_FILE.read_text()))


@pytest.mark.parametrize("chart_id", sorted(json.loads(VIEWS_FILE.read_text())))
def test_each_view_matches_its_golden_data_and_layout(points: list[GridPoint], chart_id: str) -> None:
    expected = json.loads(VIEWS_FILE.read_text())[chart_id]
    found = json.loads(json.dumps(views_of(points)))[chart_id]
    assert found["title"] == expected["title"]
    assert found["figure"]["layout"] == expected["figure"]["layout"]
    assert found["figure"]["data"] == expected["figure"]["data"]


def test_every_study_view_is_drawn(points: list[GridPoint]) -> None:
    titles = {chart.title for chart in charts.all_charts(points)}
    for title in (
        "Replies/s vs offered rate", "Response time vs offered rate", "Server CPU vs offered rate",
        "Load average vs offered rate", "Interrupts vs offered rate", "Context switches vs offered rate",
        "Pages freed vs offered rate",
    ):
        assert f"{title}: rate-sweep, http, rate" in titles, title
    for title in ("Requests/s vs concurrency", "Response time vs concurrency", "Failed requests vs concurrency",
                  "Timeout errors vs concurrency", "Reset errors vs concurrency"):
        assert f"{title}: concurrency, http, no keep-alive" in titles, title
    for title in ("Throughput over time", "Median latency over time", "Bandwidth over time"):
        assert f"{title}: soak, http" in titles, title


def chart_titled(points: list[GridPoint], title: str) -> charts.Chart:
    (found,) = [c for c in charts.all_charts(points) if c.title == title]
    return found


@pytest.mark.parametrize(("title", "figure"), [
    ("Server CPU vs offered rate", "server_cpu_percent"),
    ("Load average vs offered rate", "server_load_1m"),
    ("Interrupts vs offered rate", "server_interrupts_per_request"),
    ("Context switches vs offered rate", "server_system_context_switches_per_request"),
    ("Pages freed vs offered rate", "server_pages_freed_per_request"),
])
def test_deathmatch_views_are_the_repeats_median(points: list[GridPoint], title: str, figure: str) -> None:
    """Two repeats: their median; no interval (analysis.stats bootstraps from 3), so no error bar."""
    chart = chart_titled(points, f"{title}: rate-sweep, http, rate")
    assert [t["name"] for t in chart.figure["data"]] == ["1 worker", "2 workers"]
    assert chart.note.endswith(NO_BARS_NOTE)
    for trace, workers in zip(chart.figure["data"], (1, 2), strict=True):
        assert trace["x"] == [200, 400] and trace["error_y"]["visible"] is False
        for x, y in zip(trace["x"], trace["y"], strict=True):
            (point,) = [p for p in points if p.params.get("rate_per_s") == x and p.params["workers"] == workers]
            values = [c.figures[figure] for c in point.measured]
            assert len(values) == 2, "two repeats"
            assert y == pytest.approx(statistics.median(values))


def test_error_kinds_are_charted_apart(points: list[GridPoint]) -> None:
    for kind, workers in (("timeout", 1), ("reset", 2)):
        chart = chart_titled(points, f"{kind.capitalize()} errors vs concurrency: concurrency, http, no keep-alive")
        traces = {t["name"]: t for t in chart.figure["data"]}
        failing = f"{workers} worker" + ("s" if workers > 1 else "")
        (point,) = [p for p in points if p.params["group"] == "concurrency" and p.params["connections"] == 6
                    and p.params["workers"] == workers]
        (case,) = point.measured
        ended = case.figures["responses"] + case.figures["errors_total"]
        share_pct = 100 * case.figures[f"errors_{kind}"] / ended
        assert share_pct > 0 and traces[failing]["y"][-1] == pytest.approx(share_pct)
        other = traces.get("1 worker" if workers == 2 else "2 workers")
        assert other is None or other["y"] == [0, 0, 0], "a kind another server did not see stays at 0"


def test_the_soak_overlays_the_servers_second_by_second(points: list[GridPoint]) -> None:
    soak = {p.params["workers"]: p.measured[0] for p in points if p.params.get("group") == "soak"}
    throughput = chart_titled(points, "Throughput over time: soak, http").figure["data"]
    bandwidth = chart_titled(points, "Bandwidth over time: soak, http").figure["data"]
    for trace, rates, workers in zip(throughput, bandwidth, (1, 2), strict=True):
        seconds = [s for s in (soak[workers].result or {})["timeline"] if s["span_us"] > 0]
        assert len(seconds) >= 2
        assert trace["y"] == [s["responses"] * 1e6 / s["span_us"] for s in seconds]
        assert rates["y"] == [s["bytes_in"] / s["span_us"] for s in seconds]


def test_every_chart_has_a_colour_per_series_and_its_legend_outside(points: list[GridPoint]) -> None:
    """A series is a trace, or the traces of one legend group (a case's p99 and p50): one colour each."""
    for chart in charts.all_charts(points):
        traces = chart.figure["data"]
        colour_of = {trace.get("legendgroup", str(index)): trace["marker"]["color"] for index, trace in enumerate(traces)}
        assert len(set(colour_of.values())) == len(colour_of), chart.title
        for index, trace in enumerate(traces):
            assert trace["marker"]["color"] == colour_of[trace.get("legendgroup", str(index))], chart.title
        legend = chart.figure["layout"]["legend"]
        assert legend["x"] > 1 or legend["y"] < 0, "right of the plot or below it, covering nothing"


def test_latency_axes_read_in_the_runs_own_units(points: list[GridPoint]) -> None:
    """Percentiles, not the mean: each case's p99 (solid) and p50 (dashed), the median of its repeats'."""
    chart = chart_titled(points, "Response time vs offered rate: rate-sweep, http, rate")
    rate_sweep = [p for p in points if p.params.get("group") == "rate-sweep"]
    divisor, unit = charts.latency_unit([c.figures["latency_p99_us"] for p in rate_sweep for c in p.measured])
    assert chart.figure["layout"]["yaxis"]["title"]["text"] == f"latency ({unit}): p99 solid, p50 dashed"
    traces = chart.figure["data"]
    assert [t["name"] for t in traces] == ["1 worker p99", "1 worker p50", "2 workers p99", "2 workers p50"]
    assert [t["line"]["dash"] for t in traces] == ["solid", "dash"] * 2 and [t["showlegend"] for t in traces] == [True, False] * 2
    largest = max(y for trace in traces for y in trace["y"])
    assert 1 <= largest < 10_000 or unit == "µs", "a few digits, not 0.0236"
    for trace, (workers, figure) in zip(traces, [(w, f) for w in (1, 2) for f in ("latency_p99_us", "latency_p50_us")], strict=True):
        expected = [statistics.median([c.figures[figure] for c in p.measured]) / divisor
                    for p in sorted(rate_sweep, key=lambda p: p.params["rate_per_s"]) if p.params["workers"] == workers]
        assert trace["y"] == pytest.approx(expected)


def test_the_palette_never_repeats() -> None:
    from gauntlet.report.palette import colors

    for count in (1, 10, 18, 20, 21, 64, 300):
        found = colors(count)
        assert len(found) == count == len(set(found))


#: Each chart's legend, plot area and axis titles as the browser laid them out.
BOXES = """
(div) => {
  const box = (selector) => { const e = div.querySelector(selector); if (!e) return null;
    const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const whole = div.getBoundingClientRect();
  return {width: whole.width, legend: box('.legend'), plot: box('.nsewdrag'), xtitle: box('.xtitle'), ytitle: box('.ytitle'), y2title: box('.y2title')};
}
"""


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def test_chromium_draws_every_study_view_with_legends_clear(study_run: tuple[Path, int], tmp_path: Path) -> None:
    path, run_id = study_run
    report = tmp_path / "report.html"
    with Store.open(path, create=False) as store:
        write_report(store, [run_id], report)
    with headless_chromium() as browser:
        page = open_report(browser, report)
        assert charts_drawn(page) == len(charts.all_charts(grid_points_of(path, run_id)))
        for chart in page.query_selector_all(".chart"):
            boxes = chart.evaluate(BOXES)
            beside, below = boxes["legend"]["left"] >= boxes["plot"]["right"], boxes["legend"]["top"] >= boxes["plot"]["bottom"]
            assert beside or below, chart.get_attribute("id")
            for title in ("xtitle", "ytitle", "y2title"):
                assert boxes[title] is None or not overlap(boxes[title], boxes["legend"]), (chart.get_attribute("id"), title)
            if below:  # the plot keeps its height: long names do not squeeze it
                assert boxes["plot"]["bottom"] - boxes["plot"]["top"] > 250, chart.get_attribute("id")
            else:
                assert boxes["plot"]["right"] - boxes["plot"]["left"] > 0.6 * boxes["width"], chart.get_attribute("id")
