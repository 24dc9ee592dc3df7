"""Spread of repeated measurements: pure functions in tables."""

from __future__ import annotations

from typing import Any

import pytest

from gauntlet.analysis.spread import median_index, spread, spreads


def result(requests_per_s: float, p99_us: int = 1_000, server: bool = True) -> dict[str, Any]:
    found: dict[str, Any] = {
        "requests_per_s": requests_per_s,
        "requests": 1_000,
        "latency_us": {"count": 1_000, "p50": p99_us // 2, "p99": p99_us},
        "client": {"cpu_us_per_request": 5.0},
    }
    if server:
        found["server"] = {"cpu_us_per_request": 7.0}
    return found


@pytest.mark.parametrize(
    ("values", "median", "low", "high", "cv"),
    [
        ([10.0], 10.0, 10.0, 10.0, None),
        ([10.0, 20.0], 15.0, 10.0, 20.0, 0.4714),  # stdev 7.071 / mean 15
        ([90.0, 100.0, 110.0], 100.0, 90.0, 110.0, 0.1),
        ([0.0, 0.0], 0.0, 0.0, 0.0, None),  # a zero mean has no coefficient of variation
    ],
)
def test_spread(values: list[float], median: float, low: float, high: float, cv: float | None) -> None:
    found = spread(values)
    assert (found.median, found.min, found.max, found.count) == (median, low, high, len(values))
    assert found.cv == (None if cv is None else pytest.approx(cv, abs=1e-4))


def test_spread_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        spread([])


def test_spreads_cover_the_headline_figures_each_result_has() -> None:
    found = spreads([result(100.0, 1_000), result(300.0, 3_000), result(200.0, 2_000, server=False)])
    assert found["requests_per_s"]["median"] == 200.0
    assert found["latency_p99_us"] == {"median": 2_000, "min": 1_000, "max": 3_000, "cv": 0.5, "count": 3}
    assert found["server_cpu_us_per_request"]["count"] == 2
    assert found["client_cpu_us_per_request"]["cv"] == 0.0


def test_a_run_without_responses_has_no_latency_to_spread() -> None:
    empty = result(0.0)
    empty["latency_us"] = {"count": 0, "p50": 0, "p99": 0}
    empty["requests"] = 0
    found = spreads([empty])
    assert set(found) == {"requests_per_s"}


@pytest.mark.parametrize(
    ("rates", "index"),
    [([5.0], 0), ([3.0, 1.0, 2.0], 2), ([4.0, 1.0, 3.0, 2.0], 3), ([2.0, 2.0], 0)],
)
def test_median_index_is_the_lower_middle_by_requests_per_s(rates: list[float], index: int) -> None:
    assert median_index([result(rate) for rate in rates]) == index
