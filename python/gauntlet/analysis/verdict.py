"""Verdicts: whether a figure changed between a baseline and a new measurement, made in one place
for `compare`, `--fail-on`, the terminal summary and the report (docs/metrics.md, "Verdicts").

A change is detected (regressed or improved) only when both hold:
- its 95 % interval excludes zero: the interval of the ratio new/old (stats.ratio) minus 1, or of the
  difference in points for a share (stats.difference). When the runs give no interval (one short
  repeat each), the noise floor stands in for it: the interval is the change +- the floor;
- it exceeds the machine's noise floor for that figure: how much identical runs differ here (99 %
  of A/A differences are within it), measured by `gauntlet calibrate noise` and stored, or
  DEFAULT_NOISE_FLOORS when it was not measured. Intervals from 3 repeats are narrow by chance
  often enough (all three of one side above all three of the other: 1 in 10) that the floor is
  needed even then.
An interval that excludes zero for a change inside the floor is "within noise"; one that includes
zero is "no change detected", within the larger of the floor and the interval's reach.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from gauntlet.analysis.stats import HEADLINE, PERCENTILES_OF_RESULTS, Estimate, difference, percentile_shown, ratio


class Kind(StrEnum):
    REGRESSED = "regressed"
    IMPROVED = "improved"
    WITHIN_NOISE = "within noise"
    NO_CHANGE = "no change detected"


#: The relative change identical runs stay within when no floor was measured on this machine: the
#: widest 99 % band (exp(2.576 x rms of the log ratios) - 1) of three sets of A/A pairs on a quiet
#: 2-core machine (docs/metrics.md, "Default floors": 20 pairs of the built-in server with 3 repeats,
#: 10 of single built-in runs, 10 of single nginx runs). Wide because runs of a freshly started server
#: differ more than its repeats: where its threads land moves the built-in server's single-run
#: requests/s by 34 % and its p99 by up to 4.4x. A machine's own floor is narrower: measure it.
DEFAULT_NOISE_FLOORS = {
    "requests_per_s": 0.85,
    "latency_p50_us": 1.4,
    "latency_p90_us": 2.0,
    "latency_p99_us": 4.1,
    "client_cpu_us_per_request": 0.6,
    "server_cpu_us_per_request": 0.4,
}
#: The floor of a figure without its own default.
DEFAULT_NOISE_FLOOR = 0.30
#: Shares (failed requests, each error kind, non-2xx) change in points: 1 request in 100 more
#: failing is a change, a few stray errors are not. Not calibrated (identical runs rarely fail).
SHARE_NOISE_FLOOR = 0.01
NOT_MEASURED = "noise floor not measured on this machine: run gauntlet calibrate noise"


@dataclass(frozen=True)
class NoiseFloor:
    """The change two identical runs stay within, 99 % of the time (relative; points for a share)."""

    figure: str
    relative: float
    #: 'measured on HOST at TIME (N pairs, SERVER)', or NOT_MEASURED.
    source: str

    @property
    def measured(self) -> bool:
        return self.source != NOT_MEASURED


def default_floor(figure: str, share: bool = False) -> NoiseFloor:
    if share:
        return NoiseFloor(figure, SHARE_NOISE_FLOOR, "shares: 1 point")
    return NoiseFloor(figure, DEFAULT_NOISE_FLOORS.get(figure, DEFAULT_NOISE_FLOOR), NOT_MEASURED)


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    #: after/before - 1 (points after - before for a share), with its interval.
    change: Estimate
    floor: NoiseFloor
    share: bool
    reason: str

    @property
    def detected(self) -> bool:
        return self.kind in (Kind.REGRESSED, Kind.IMPROVED)

    @property
    def reach(self) -> float:
        """How large the change could be and still go undetected: the floor or the interval's far end."""
        if not self.change.has_interval:
            return self.floor.relative
        return max(self.floor.relative, abs(self.change.low), abs(self.change.high))

    def change_text(self) -> str:
        """'+13 % [+9, +17 %]', '+0.5 pts [-0.1, +1.1 pts]'; the point alone without an interval."""
        if self.share:
            unit, scale, digits = " pts", 100, 1
        else:
            unit, scale, digits = " %", 100, 0
        point = f"{self.change.point * scale:+.{digits}f}"
        if not self.change.has_interval:
            return point + unit
        return f"{point}{unit} [{self.change.low * scale:+.{digits}f}, {self.change.high * scale:+.{digits}f}{unit}]"

    def text(self) -> str:
        """'REGRESSION', 'improvement', 'within noise (±6 %)', 'no change detected (within ±6 %)'."""
        reach = f"±{self.reach * 100:.1f} pts" if self.share else f"±{self.reach:.0%}"
        match self.kind:
            case Kind.REGRESSED:
                return "REGRESSION"
            case Kind.IMPROVED:
                return "improvement"
            case Kind.WITHIN_NOISE:
                return f"within noise ({reach})"
        return f"no change detected (within {reach})"


def judge(before: Estimate, after: Estimate, higher_is_better: bool, floor: NoiseFloor, share: bool = False) -> Verdict | None:
    """The verdict on one figure; None when a relative change does not exist (a baseline of 0)."""
    if share:
        change = difference(before, after)
    else:
        if not before.point or after.point < 0:
            return None
        r = ratio(after, before)
        change = Estimate(r.point - 1, r.low - 1, r.high - 1, r.n, r.method)
    beyond_floor = _beyond(change.point, floor.relative, share)
    if change.has_interval:
        excludes_zero = change.low > 0 or change.high < 0
        interval = f"its interval {'excludes' if excludes_zero else 'includes'} 0 ({change.method})"
    else:
        excludes_zero = beyond_floor
        interval = f"no interval from the runs ({change.method.partition(': ')[2]}): the noise floor stands in"
    floor_words = f"{'beyond' if beyond_floor else 'within'} the noise floor ({_floor_text(floor, share)}; {floor.source})"
    worse = (change.point < 0) if higher_is_better else (change.point > 0)
    if excludes_zero and beyond_floor:
        kind = Kind.REGRESSED if worse else Kind.IMPROVED
    elif excludes_zero:
        kind = Kind.WITHIN_NOISE
    else:
        kind = Kind.NO_CHANGE
    return Verdict(kind, change, floor, share, f"{interval}; {floor_words}")


def _beyond(change: float, floor: float, share: bool) -> bool:
    """Whether a change exceeds the floor: in points for a share; on a log scale for a relative
    change, as the floor was measured (a fall to 1/1.3 exceeds a 30 % floor as a rise to 1.3 does)."""
    if share:
        return abs(change) > floor
    if change <= -1:
        return True
    return abs(math.log1p(change)) > math.log1p(floor)


def _floor_text(floor: NoiseFloor, share: bool) -> str:
    return f"±{floor.relative * 100:.1f} pts" if share else f"±{floor.relative:.0%}"


#: 99 % of a normal variable lies within this many standard deviations of its mean: a floor per
#: figure that 99 % of identical pairs stay within keeps all five headline figures of a pair within
#: their floors about 95 % of the time (at 95 % each, one pair in eight would show a change).
Z_99 = 2.576
#: The confidence of the floor's bound on the A/A spread.
CONFIDENCE_OF_FLOOR = 0.95


def floor_from_pairs(pairs: list[tuple[float, float]]) -> float:
    """The noise floor from A/A pairs (two runs of the same thing, one after the other), as a
    tolerance bound: with d = log(b / a) per pair, taken as normal around 0 (identical runs have no
    true difference), s = rms(d) over the n pairs, and s's upper 95 % confidence bound
    s * sqrt(n / chi2(0.05, n)), the floor is exp(2.576 * that bound) - 1: with 95 % confidence, 99 %
    of identical pairs differ by less. A handful of pairs cannot pin the spread down, so the bound
    is wide with few: 2.1 s * 2.576 with 5 pairs, 1.6 s * 2.576 with 10. Pairs with a value at or
    below 0 are left out; ValueError when none is left."""
    from scipy import stats as scipy_stats

    logs = [math.log(b / a) for a, b in pairs if a > 0 and b > 0]
    if not logs:
        raise ValueError("no pair with both values above 0")
    count = len(logs)
    rms = math.sqrt(sum(d * d for d in logs) / count)
    upper = rms * math.sqrt(count / float(scipy_stats.chi2.ppf(1 - CONFIDENCE_OF_FLOOR, count)))
    return math.exp(Z_99 * upper) - 1


def pair_floors(results: list[dict[str, Any]]) -> dict[str, float]:
    """The floor of each headline figure (stats.HEADLINE) from run results taken as consecutive A/A
    pairs, (0, 1), (2, 3), ...; a latency percentile only from pairs with the responses it needs."""
    floors = {}
    for name, read in HEADLINE.items():
        pairs = []
        for a, b in zip(results[0::2], results[1::2], strict=False):
            if name in PERCENTILES_OF_RESULTS and not all(percentile_shown(name, r["latency_us"]["count"]) for r in (a, b)):
                continue
            before, after = read(a), read(b)
            if before is not None and after is not None and before > 0 and after > 0:
                pairs.append((before, after))
        if pairs:
            floors[name] = floor_from_pairs(pairs)
    return floors
