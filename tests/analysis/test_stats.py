"""The statistics module: estimates, intervals, ratios and the percentile sample rule, against values
worked by hand and against the coverage an interval promises on data drawn from a known distribution."""

from __future__ import annotations

import math
import random
import statistics
from typing import Any

import pytest

from gauntlet.analysis import stats


def second(responses: int, p99_us: int = 1_000, errors: int = 0) -> dict[str, Any]:
    return {
        "span_us": 1_000_000, "requests": responses + errors, "responses": responses, "errors": errors,
        "p50_us": p99_us // 2, "p90_us": p99_us, "p99_us": p99_us,
    }


def test_one_value_without_a_timeline_has_no_interval_and_says_why() -> None:
    e = stats.estimate("requests_per_s", [1_000.0])
    assert e is not None and (e.point, e.low, e.high, e.n, e.has_interval) == (1_000.0, 1_000.0, 1_000.0, 1, False)
    assert e.method == "no interval: 1 repeat of fewer than 3 seconds"


def test_nothing_to_estimate_is_none() -> None:
    assert stats.estimate("requests_per_s", [None, None]) is None


def test_three_repeats_bootstrap_the_median_within_their_range() -> None:
    e = stats.estimate("requests_per_s", [90.0, 100.0, 130.0, None])
    assert e is not None and e.method == stats.BOOTSTRAP and e.n == 3 and e.point == 100.0
    # The median of 3 values resampled is one of them: the 95 % interval spans the outer two.
    assert (e.low, e.high) == (90.0, 130.0)


def test_identical_repeats_have_a_zero_width_interval() -> None:
    e = stats.estimate("requests_per_s", [5.0, 5.0, 5.0])
    assert e is not None and (e.low, e.high, e.has_interval) == (5.0, 5.0, True)


def test_batch_means_over_seconds_are_the_t_interval_of_the_batches() -> None:
    # 30 seconds cut into 10 batches of 3; batches alternate 900 and 1,100 responses a second.
    timeline = [second(900 if (i // 3) % 2 == 0 else 1_100) for i in range(30)]
    assert stats.batches(timeline, stats.PER_SECOND["requests_per_s"]) == [900.0, 1_100.0] * 5
    e = stats.estimate("requests_per_s", [1_000.0], [timeline])
    assert e is not None and e.method == stats.BATCH_MEANS and e.n == 10
    sd = math.sqrt(10 * 100**2 / 9)  # deviations of +-100 around 1,000
    half = 2.2622 * sd / math.sqrt(10)  # t(0.975, 9)
    assert e.low == pytest.approx(1_000 - half, abs=0.01) and e.high == pytest.approx(1_000 + half, abs=0.01)


def test_batches_weigh_seconds_by_their_responses_and_skip_empty_ones() -> None:
    timeline = [second(10, 1_000), second(30, 2_000), second(0, 0), second(0, 0)]
    assert stats.batches(timeline, stats.PER_SECOND["latency_p99_us"]) == [1_000.0, 2_000.0]


def test_cpu_per_request_is_estimated_from_repeats_only() -> None:
    e = stats.estimate("server_cpu_us_per_request", [12.0], [[second(1_000)] * 10])
    assert e is not None and not e.has_interval and "repeats only" in e.method


def test_a_ratio_of_bootstrapped_estimates_bootstraps_the_ratio_of_medians() -> None:
    fast = stats.estimate("requests_per_s", [200.0, 210.0, 190.0, 205.0, 195.0] * 2)
    slow = stats.estimate("requests_per_s", [100.0, 105.0, 95.0, 102.0, 98.0] * 2)
    assert fast is not None and slow is not None
    r = stats.ratio(fast, slow)
    assert r.point == 2.0 and r.method == stats.BOOTSTRAP
    assert 190 / 105 <= r.low < 2.0 < r.high <= 210 / 95


def test_a_ratio_of_few_repeats_takes_welch_s_interval_of_the_logs() -> None:
    fast = stats.estimate("requests_per_s", [200.0, 210.0, 190.0])
    slow = stats.estimate("requests_per_s", [100.0, 105.0, 95.0])
    assert fast is not None and slow is not None
    r = stats.ratio(fast, slow)
    logs = [math.log(v) for v in (200.0, 210.0, 190.0)], [math.log(v) for v in (100.0, 105.0, 95.0)]
    # Same spread on a log scale both sides: df = 4, half width t(0.975, 4) * sd * sqrt(2 / 3).
    half = 2.7764451 * statistics.stdev(logs[0]) * math.sqrt(2 / 3)
    shift = statistics.fmean(logs[0]) - statistics.fmean(logs[1])
    assert r.point == 2.0 and r.method.startswith(stats.WELCH)
    assert (r.low, r.high) == (pytest.approx(math.exp(shift - half)), pytest.approx(math.exp(shift + half)))


def test_few_repeats_of_identical_runs_cover_no_change_95_percent_of_the_time() -> None:
    """3 repeats against 3 of one distribution: the interval of the ratio covers 1 in about 95 % of
    pairs (the percentile bootstrap's covered it in 90 %: it excluded 1 whenever the sides did not
    overlap), and the difference of shares covers 0 as often."""
    draw = random.Random(5)
    trials, ratios, differences = 1_000, 0, 0
    for _ in range(trials):
        a, b = ([draw.lognormvariate(7, 0.1) for _ in range(3)] for _ in range(2))
        ea, eb = stats.estimate("requests_per_s", a), stats.estimate("requests_per_s", b)
        sa, sb = stats.estimate("failed_share", [v / 1e4 for v in a]), stats.estimate("failed_share", [v / 1e4 for v in b])
        assert ea is not None and eb is not None and sa is not None and sb is not None
        r, d = stats.ratio(ea, eb), stats.difference(sa, sb)
        ratios += r.low <= 1.0 <= r.high
        differences += d.low <= 0.0 <= d.high
    assert ratios / trials >= 0.93 and differences / trials >= 0.93


def test_a_ratio_of_batch_means_combines_the_two_intervals_on_a_log_scale() -> None:
    a = stats.Estimate(200.0, 190.0, 210.0, 10, stats.BATCH_MEANS)  # +-5 %
    b = stats.Estimate(100.0, 88.0, 112.0, 10, stats.BATCH_MEANS)  # +-12 %
    r = stats.ratio(a, b)
    half = math.hypot(0.05, 0.12)  # 13 %
    assert (r.point, r.low, r.high) == (2.0, pytest.approx(2 * math.exp(-half)), pytest.approx(2 * math.exp(half)))


def test_a_ratio_with_a_side_without_interval_has_none() -> None:
    a = stats.Estimate(200.0, 190.0, 210.0, 10, stats.BATCH_MEANS)
    b = stats.estimate("requests_per_s", [100.0])
    assert b is not None and not stats.ratio(a, b).has_interval


def test_a_difference_of_shares_adds_the_half_widths_in_quadrature() -> None:
    a = stats.Estimate(0.01, 0.0, 0.02, 10, stats.BATCH_MEANS)
    b = stats.Estimate(0.05, 0.02, 0.08, 10, stats.BATCH_MEANS)
    d = stats.difference(a, b)
    assert d.point == pytest.approx(0.04) and d.high - d.point == pytest.approx(math.hypot(0.01, 0.03))


def test_the_ratio_interval_of_identical_distributions_covers_one_about_95_percent_of_the_time() -> None:
    draw = random.Random(7)
    trials, covered = 100, 0
    for _ in range(trials):
        a = stats.estimate("requests_per_s", [draw.gauss(1_000, 50) for _ in range(8)])
        b = stats.estimate("requests_per_s", [draw.gauss(1_000, 50) for _ in range(8)])
        assert a is not None and b is not None
        r = stats.ratio(a, b)
        covered += r.low <= 1.0 <= r.high
    # The percentile bootstrap of a median over 8 values is a little liberal; 90 % at the least.
    assert covered / trials >= 0.90


def test_batch_means_cover_the_true_rate_of_dependent_seconds() -> None:
    """Seconds that follow an AR(1) process (each carries 0.6 of the one before): the batch-means
    interval of one 60-second repeat covers the true mean in about 95 % of repeats."""
    draw = random.Random(11)
    trials, covered = 300, 0
    for _ in range(trials):
        level, timeline = 0.0, []
        for _ in range(60):
            level = 0.6 * level + draw.gauss(0, 40)
            timeline.append(second(round(1_000 + level)))
        mean = sum(s["responses"] for s in timeline) / 60
        e = stats.estimate("requests_per_s", [mean], [timeline])
        assert e is not None
        covered += e.low <= 1_000 <= e.high
    assert covered / trials >= 0.90


@pytest.mark.parametrize(
    ("name", "responses", "shown"),
    [
        ("p99", 999, False), ("p99", 1_000, True), ("latency_p99_us", 1_000, True),
        ("p99_9", 9_999, False), ("p99_9", 10_000, True), ("p90", 99, False), ("p90", 100, True),
        ("p50", 19, False), ("p50", 20, True), ("max", 1, True), ("max", 0, False), ("p50", None, False),
    ],
)
def test_the_percentile_sample_rule(name: str, responses: int | None, shown: bool) -> None:
    assert stats.percentile_shown(name, responses) is shown


def test_min_responses_names_the_rule() -> None:
    assert [stats.min_responses(n) for n in ("p50", "p90", "p99", "p99_9", "max")] == [20, 100, 1_000, 10_000, 1]


def result(requests_per_s: float, p99_us: int = 1_000, server: bool = True, count: int = 5_000) -> dict[str, Any]:
    found: dict[str, Any] = {
        "requests_per_s": requests_per_s,
        "requests": count,
        "latency_us": {"count": count, "p50": p99_us // 2, "p99": p99_us},
        "client": {"cpu_us_per_request": 5.0},
        "timeline": [],
    }
    if server:
        found["server"] = {"cpu_us_per_request": 7.0, "cpu_user_s": 7.0 * count / 1e6, "cpu_system_s": 0.0, "cpu_source": "cgroup-v2"}
    return found


def test_headline_estimates_cover_the_figures_each_result_has() -> None:
    found = stats.headline_estimates([result(100.0, 1_000), result(300.0, 3_000), result(200.0, 2_000, server=False)])
    assert found["requests_per_s"].point == 200.0 and found["latency_p99_us"].point == 2_000
    assert found["server_cpu_us_per_request"].n == 2
    assert found["client_cpu_us_per_request"].method == stats.BOOTSTRAP


def monitored(cpu_s: float, source: str = "proc", processes: int = 1) -> dict[str, Any]:
    return {"cpu_user_s": cpu_s, "cpu_system_s": 0.0, "cpu_source": source, "max_processes": processes, "elapsed_s": 2.0}


def test_server_cpu_is_shown_from_ten_of_its_counters_steps() -> None:
    """/proc ticks 10 ms (USER_HZ 100) a process: 20 requests in 2.5 ms read 0 or 1 tick, 0 or 500 µs each."""
    tick_s = stats.CLOCK_TICK_S
    assert stats.cpu_resolution_s(monitored(1.0)) == tick_s
    assert stats.cpu_resolution_s(monitored(1.0, processes=16)) == pytest.approx(4 * tick_s)
    assert stats.cpu_resolution_s(monitored(1.0, "cgroup-v2")) == stats.CGROUP_RESOLUTION_S
    assert stats.server_cpu_unshown(monitored(10 * tick_s)) == ""
    why = stats.server_cpu_unshown(monitored(tick_s))
    assert why.startswith(stats.TOO_LITTLE_CPU) and f"steps of {tick_s * 1e3:.0f} ms" in why
    assert stats.server_cpu_unshown(monitored(40 * tick_s, processes=25)) != ""
    assert stats.server_cpu_unshown(monitored(0.001, "cgroup-v2")) == ""
    brief = monitored(1.0, "cgroup-v2") | {"elapsed_s": 0.0025}
    assert stats.server_cpu_unshown(brief) == f"{stats.TOO_LITTLE_CPU} (measured over 2 ms; the monitor needs 0.5 s)"


def test_a_server_cpu_too_small_to_measure_is_no_figure() -> None:
    thin = result(100.0, count=20) | {"server": monitored(stats.CLOCK_TICK_S) | {"cpu_us_per_request": 500.0}}
    assert stats.server_cpu_us_per_request(thin) is None
    assert "server_cpu_us_per_request" not in stats.headline_estimates([thin])
    assert stats.server_cpu_us_per_request(result(100.0)) == 7.0


def test_headline_estimates_leave_out_a_p99_on_too_few_responses() -> None:
    found = stats.headline_estimates([result(100.0, count=999)])
    assert "latency_p99_us" not in found and "latency_p50_us" in found


@pytest.mark.parametrize(
    ("rates", "index"),
    [([5.0], 0), ([3.0, 1.0, 2.0], 2), ([4.0, 1.0, 3.0, 2.0], 3), ([2.0, 2.0], 0)],
)
def test_median_index_is_the_lower_middle_by_requests_per_s(rates: list[float], index: int) -> None:
    assert stats.median_index([result(rate) for rate in rates]) == index
