"""The study's views, built from the store alone: each shows what the stored cases measured."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gauntlet.report import charts, latency, views
from gauntlet.report.points import GridPoint, difference_text, grid_points
from gauntlet.store import CaseRow, Store


@pytest.fixture(scope="module")
def study(study_db: tuple[Path, int]) -> list[CaseRow]:
    path, run_id = study_db
    with Store.open(path, create=False) as store:
        return store.cases([run_id])


def in_group(cases: list[CaseRow], group: str, **params: object) -> list[CaseRow]:
    return [c for c in cases if c.params.get("group") == group and all(c.params.get(k) == v for k, v in params.items())]


def chart(found: list[charts.Chart], title: str) -> charts.Chart:
    matching = [c for c in found if c.title == title]
    assert len(matching) == 1, [c.title for c in found]
    return matching[0]


def test_requests_per_s_vs_concurrency_has_the_repeats_median_and_no_bar_from_two(study: list[CaseRow]) -> None:
    found = charts.throughput_vs_concurrency(grid_points(study))
    figure = chart(found, "Requests/s vs concurrency: static, http, keep-alive, /webtest.html").figure
    (trace,) = figure["data"]
    assert trace["x"] == [1, 4, 16]
    for x, y, high, low in zip(trace["x"], trace["y"], trace["error_y"]["array"], trace["error_y"]["arrayminus"], strict=True):
        rates = [c.figures["requests_per_s"] for c in in_group(study, "static", keepalive=True, connections=x, path="/webtest.html")]
        assert len(rates) == 2
        # The median of two is their mean; two repeats give no interval (a bootstrap needs 3), so no bar.
        assert y == pytest.approx(sum(rates) / 2) and high == low == 0
    assert trace["error_y"]["visible"] is False
    assert figure["layout"]["xaxis"]["tickvals"] == [1, 4, 16]
    # Lines join only cases of the same part of the study: the HTTPS pair (one concurrency each) has none.
    assert not any("https" in c.title for c in found)


def test_keepalive_and_https_pairs(study: list[CaseRow]) -> None:
    points = grid_points(study)
    keepalive = chart(charts.keepalive_comparison(points), "Keep-alive vs a new connection per request: static").figure
    on, off = keepalive["data"]
    assert on["orientation"] == "h" and on["y"] == off["y"] == ["1 conn", "4 conns", "16 conns"]
    assert all(a > b for a, b in zip(on["x"], off["x"], strict=True)), "a connection per request is slower here"
    https = chart(charts.https_penalty(points), "HTTPS penalty: https").figure
    plain, tls = https["data"]
    rate = {c.params["protocol"]: c.figures["requests_per_s"] for c in in_group(study, "https")}
    assert (plain["x"], tls["x"]) == ([rate["http"]], [rate["https"]])
    (plain_point,), (tls_point,) = (grid_points(in_group(study, "https", protocol=p)) for p in ("http", "https"))
    before, after = plain_point.figure("requests_per_s"), tls_point.figure("requests_per_s")
    assert before is not None and after is not None
    assert tls["text"] == [difference_text(before, after)]
    assert tls["text"][0].startswith(f"{(rate['https'] - rate['http']) / rate['http']:+.0%}")



def test_https_pairs_cases_of_different_groups(study: list[CaseRow]) -> None:
    """A suite may put its HTTPS cases in a group of their own (the thesis does): they still pair."""
    moved = [
        replace(p, params={**p.params, "group": "static"}) if p.params["protocol"] == "http" else p
        for p in grid_points(in_group(study, "https"))
    ]
    plain, tls = chart(charts.https_penalty(moved), "HTTPS penalty: static").figure["data"]
    assert (len(plain["x"]), len(tls["x"])) == (1, 1) and plain["x"][0] > 0

def test_worker_scaling_and_failed_requests(study: list[CaseRow]) -> None:
    points = grid_points(study)
    (workers,) = charts.worker_scaling(points)
    assert workers.title == "Worker scaling: worker-scaling, http, /webtest.html"
    assert workers.figure["data"][0]["x"] == [1, 2]
    (errors,) = charts.errors_vs_concurrency(points)
    assert errors.title == "Failed requests vs concurrency: faults, http"
    assert errors.figure["data"][0]["y"] == [100.0, 100.0], "every request was reset by the server"


def test_the_latency_distribution_agrees_with_the_engines_summary(study: list[CaseRow]) -> None:
    """The HdrHistogram plotter's axes: x is 1/(1-q), so 10, 100 and 1,000 are p90, p99 and p99.9,
    read from the stored histogram, up to the last percentile with 10 responses beyond it."""
    points = [p for p in grid_points(study) if p.params.get("group") == "worker-scaling"]
    (distribution,) = latency.latency_distribution(points)
    layout = distribution.figure["layout"]
    assert layout["xaxis"]["type"] == "log" and layout["xaxis"]["ticktext"][:3] == ["0%", "90%", "99%"]
    unit = layout["yaxis"]["title"]["text"].removeprefix("latency (").removesuffix(")")
    divisor = {"µs": 1, "ms": 1_000, "s": 1_000_000}[unit]
    for trace, point in zip(distribution.figure["data"], points, strict=True):
        (case,) = point.measured
        summary = case.result["latency_us"] if case.result else {}
        assert trace["x"] == latency.distribution_xs(summary["count"]) and trace["x"][-1] * 10 <= summary["count"]
        at = dict(zip(trace["x"], (y * divisor for y in trace["y"]), strict=True))
        expected = {1.0: "min", 10.0: "p90", 100.0: "p99", 1000.0: "p99_9"}
        shown = [x for x in expected if x * 10 <= summary["count"]]
        assert shown[:3] == [1.0, 10.0, 100.0], "at least 1,000 responses: up to the p99"
        assert [round(at[x]) for x in shown] == [summary[expected[x]] for x in shown]
        assert (1000.0 in at) == (summary["count"] >= 10_000), "p99.9 only on 10,000 responses"


def test_timelines_show_cases_of_two_seconds_or_more(study: list[CaseRow]) -> None:
    (timeline,) = charts.timelines(grid_points(study))
    long_cases = [c for c in study if c.result and len(c.result["timeline"]) >= 2]
    assert {c.params["group"] for c in long_cases} == {"https"}
    traces = timeline.figure["data"]
    assert len(traces) == 2 * len(long_cases) and [t["visible"] for t in traces] == [True, True, False, False]
    first = long_cases[0].result["timeline"] if long_cases[0].result else []
    assert traces[0]["y"] == [s["responses"] * 1e6 / s["span_us"] for s in first]
    divisor, unit = charts.latency_unit([s["p99_us"] for case in long_cases for s in (case.result or {})["timeline"]])
    assert traces[1]["y"] == [s["p99_us"] / divisor for s in first] and traces[1]["name"].endswith(f"p99 ({unit})")
    assert len(timeline.figure["layout"]["updatemenus"][0]["buttons"]) == len(long_cases)


def test_a_view_appears_only_when_the_cases_hold_its_data(study: list[CaseRow]) -> None:
    static = [p for p in grid_points(study) if p.params.get("group") == "static"]
    ids = {c.chart_id.rsplit("-", 1)[0] for c in charts.all_charts(static)}
    assert ids == {"throughput", "response-time", "keepalive", "distribution"}
    names = {t.table_id for t in views.tables(static)}
    # The study's static cases measure less than the monitor needs (docs/metrics.md, Invariants).
    assert names == {"cases", "breaches", "resources", "memory"}
    assert {b for p in static for c in p.measured for b in c.breaches} == {"monitor-samples"}
    assert charts.all_charts([]) == [] and views.tables([]) == []


def test_tables_of_resources_memory_qos_and_capacity(study: list[CaseRow]) -> None:
    points = grid_points(study)
    resources = views.resources_table(points)
    assert len(resources.rows) == len([p for p in points if p.measured])
    memory = views.memory_table(points)
    assert {row[2] for row in memory.rows} == {"server"}, "the built-in server is one process"
    qos = views.qos_table(points)
    assert [(row[0], row[1], row[-1]) for row in qos.rows] == [("2 users", "slow", "VALID"), ("30 users", "slow", "INVALID")]
    capacity = views.capacity_table(points)
    assert capacity.rows == [["builtin", "2 valid, 30 invalid", "2", "30"]]
    failures = views.failures_table(points)
    assert len(failures.rows) == 1 and failures.rows[0][-1].startswith("the server did not start")


def test_cases_table_is_the_headline(study: list[CaseRow]) -> None:
    points = grid_points(study)
    table = views.cases_table(points)
    assert [c.name for c in table.columns[:2]] == ["group", "case"]
    assert len(table.rows) == len(points)
    row = table.rows[0]
    rates = [c.figures["requests_per_s"] for c in points[0].measured]
    assert row[2] == "2" and row[3] == f"{sum(rates) / 2:,.0f}"
    # Two repeats of under 3 seconds each: no interval (the column shows one only where a case has it).
    estimate = points[0].figure("requests_per_s")
    assert estimate is not None and not estimate.has_interval and row[4] == ""
    faults = next(r for r, p in zip(table.rows, points, strict=True) if p.params.get("group") == "faults")
    assert faults[7] == "100.0%"


def test_repeats_of_one_key_are_one_point(study: list[CaseRow]) -> None:
    points = grid_points(study)
    assert len(points) == len({c.key for c in study})
    assert sum(len(p.measured) + len(p.failed) for p in points) == len(study)
    two_runs = grid_points([*study, *(replace_run(c, 99) for c in study)], by_run=True)
    assert len(two_runs) == 2 * len(points) and two_runs[-1].params["run"] == 99


def replace_run(case: CaseRow, run_id: int) -> CaseRow:
    from dataclasses import replace

    return replace(case, run_id=run_id)


def test_grid_point_without_results_has_no_latency() -> None:
    assert GridPoint("k", {}).latency_percentiles_us([0.5]) is None
