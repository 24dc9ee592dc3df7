"""Verdicts: a change is detected only when its interval excludes zero and it exceeds the noise floor."""

from __future__ import annotations

import math

import pytest

from gauntlet.analysis import stats
from gauntlet.analysis.verdict import DEFAULT_NOISE_FLOORS, NOT_MEASURED, Kind, NoiseFloor, default_floor, floor_from_pairs, judge, pair_floors

FLOOR = NoiseFloor("requests_per_s", 0.05, "measured on test")


def repeats(*values: float) -> stats.Estimate:
    found = stats.estimate("requests_per_s", list(values))
    assert found is not None
    return found


def batch(point: float, half_share: float) -> stats.Estimate:
    return stats.Estimate(point, point * (1 - half_share), point * (1 + half_share), 10, stats.BATCH_MEANS)


@pytest.mark.parametrize(
    ("before", "after", "higher_is_better", "kind"),
    [
        # Apart by 20 %, each +-1 %: beyond the 5 % floor.
        (batch(1_000, 0.01), batch(800, 0.01), True, Kind.REGRESSED),
        (batch(1_000, 0.01), batch(800, 0.01), False, Kind.IMPROVED),
        # Apart by 3 %, each +-1 %: the interval excludes 0 but the floor is 5 %.
        (batch(1_000, 0.01), batch(970, 0.01), True, Kind.WITHIN_NOISE),
        # Apart by 20 %, each +-30 %: the interval includes 0.
        (batch(1_000, 0.3), batch(800, 0.3), True, Kind.NO_CHANGE),
        # Three repeats each, all of one side below all of the other, by far.
        (repeats(1_000, 1_010, 990), repeats(500, 505, 495), True, Kind.REGRESSED),
        # Three repeats each, interleaved: no change.
        (repeats(1_000, 1_100, 900), repeats(950, 1_050, 1_000), True, Kind.NO_CHANGE),
    ],
)
def test_the_verdict_needs_an_interval_that_excludes_zero_and_a_change_beyond_the_floor(
    before: stats.Estimate, after: stats.Estimate, higher_is_better: bool, kind: Kind
) -> None:
    verdict = judge(before, after, higher_is_better, FLOOR)
    assert verdict is not None and verdict.kind is kind
    assert verdict.detected is (kind in (Kind.REGRESSED, Kind.IMPROVED))


def test_without_an_interval_the_floor_stands_in() -> None:
    one, slower, a_bit_slower = repeats(1_000), repeats(900), repeats(980)
    big = judge(one, slower, True, FLOOR)
    small = judge(one, a_bit_slower, True, FLOOR)
    assert big is not None and big.kind is Kind.REGRESSED and "the noise floor stands in" in big.reason
    assert small is not None and small.kind is Kind.NO_CHANGE
    assert small.text() == "no change detected (within ±5%)"


def test_the_reach_of_no_change_is_the_far_end_of_its_interval() -> None:
    verdict = judge(batch(1_000, 0.3), batch(800, 0.3), True, FLOOR)
    assert verdict is not None and verdict.change.low < -0.4
    assert verdict.text() == f"no change detected (within ±{abs(verdict.change.low):.0%})"


def test_shares_change_in_points_against_a_one_point_floor() -> None:
    floor = default_floor("failed_share", share=True)
    zero = stats.estimate("failed_share", [0.0])
    some = stats.estimate("failed_share", [0.05])
    assert zero is not None and some is not None
    verdict = judge(zero, some, False, floor, share=True)
    assert verdict is not None and verdict.kind is Kind.REGRESSED and verdict.change_text() == "+5.0 pts"


def test_an_unmeasured_floor_says_so_in_the_reason() -> None:
    floor = default_floor("latency_p99_us")
    assert not floor.measured and floor.relative == DEFAULT_NOISE_FLOORS["latency_p99_us"]
    verdict = judge(repeats(1_000), repeats(1_100), False, floor)
    assert verdict is not None and NOT_MEASURED in verdict.reason


def test_a_zero_baseline_has_no_relative_verdict() -> None:
    assert judge(repeats(0.0), repeats(5.0), True, FLOOR) is None


def test_the_change_text_shows_the_interval() -> None:
    verdict = judge(batch(1_000, 0.01), batch(800, 0.01), True, FLOOR)
    assert verdict is not None and verdict.change_text() == "-20 % [-21, -19 %]"


def test_a_fall_exceeds_the_floor_as_the_same_factor_up_does() -> None:
    """On a log scale: 1,000 -> 760 is 1/1.316, beyond a 30 % floor; 1,000 -> 780 (1/1.28) is not."""
    floor = NoiseFloor("requests_per_s", 0.30, "measured on test")
    fell, fell_less = judge(repeats(1_000), repeats(760), True, floor), judge(repeats(1_000), repeats(780), True, floor)
    assert fell is not None and fell.kind is Kind.REGRESSED
    assert fell_less is not None and fell_less.kind is Kind.NO_CHANGE


def test_the_floor_from_pairs_is_a_tolerance_bound_of_their_log_ratios() -> None:
    # log ratios +-0.0953 (1.1x either way): rms 0.0953; 2 pairs: chi2(0.05, 2) = 0.1026, so the
    # upper bound of the spread is 0.0953 * sqrt(2 / 0.1026) = 0.4208, and the floor exp(2.576 * 0.4208) - 1 (99 % of pairs).
    floor = floor_from_pairs([(100.0, 110.0), (110.0, 100.0)])
    assert floor == pytest.approx(math.exp(2.576 * 0.0953102 * math.sqrt(2 / 0.1025866)) - 1, rel=1e-4)
    # More pairs of the same spread give a tighter bound.
    assert floor_from_pairs([(100.0, 110.0), (110.0, 100.0)] * 10) < 0.5 < floor
    with pytest.raises(ValueError):
        floor_from_pairs([(0.0, 5.0)])


def test_pair_floors_read_consecutive_results_as_pairs() -> None:
    def result(rate: float, count: int) -> dict[str, object]:
        return {"requests_per_s": rate, "requests": count, "latency_us": {"count": count, "p50": 100, "p99": 1_000},
                "client": {"cpu_us_per_request": 5.0}}

    floors = pair_floors([result(100.0, 500), result(110.0, 500), result(110.0, 500), result(100.0, 500)])
    assert floors["requests_per_s"] == pytest.approx(floor_from_pairs([(100.0, 110.0), (110.0, 100.0)]))
    assert floors["client_cpu_us_per_request"] == 0.0 and floors["latency_p50_us"] == 0.0
    assert "latency_p99_us" not in floors, "500 responses a run are too few for a p99"
    assert "server_cpu_us_per_request" not in floors, "no server monitored"
