"""A study's claims judged against a run's cases: each claim holds, does not hold, is inconclusive
(measured, but the intervals cannot tell) or is not measured (and why). Pure functions of the
claims (gauntlet.model.claims) and the stored cases; the intervals come from analysis.stats.

Cases pair into cells: the cases a claim compares that agree on every param but the one the claim
varies (`by`, and `axis` for held claims), the suite's group and, when servers are compared, the
servers' own settings (workers, backend workers, timeouts). A claim holds when it holds in every
cell measured, does not hold when some cell contradicts it, and is inconclusive otherwise.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from gauntlet.analysis import stats, verdict
from gauntlet.analysis.bottleneck import ERROR_BOUND, failed_share
from gauntlet.analysis.machine import MACHINE_BUSY
from gauntlet.analysis.qos import verdict as qos_verdict
from gauntlet.analysis.verdict import NoiseFloor
from gauntlet.model.claims import CAPACITY, Claim, HeldClaim, OrderClaim, RatioClaim
from gauntlet.servers.spec import SIZING

#: The noise floor of a figure, by its name.
Floors = Callable[[str], NoiseFloor]

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
INCONCLUSIVE = "inconclusive"
NOT_MEASURED = "not measured"

#: Params that tell cases of one server apart from another's without being what a claim compares:
#: ignored when cells pair servers.
SERVER_SETTINGS = (*SIZING, "app")
#: Why a capacity claim leaves a search out.
SEARCH_NOT_ENDED = "capacity search not finished (resume the run)"
#: How a capacity ratio's interval was found.
CAPACITY_BRACKETS = "between the last valid and the first invalid levels"
#: Params that differ whenever the named one does: a workload has its own path, each server its
#: own settings.
GOES_WITH = {"workload": ("path",), "server": SERVER_SETTINGS}
#: Params never part of a cell: the suite's group is where a case was listed, not what it measured.
NEVER_PAIRED = ("group",)


class MeasuredCase(Protocol):
    """What judging needs of a stored case (gauntlet.store.CaseRow has it)."""

    @property
    def params(self) -> dict[str, Any]: ...
    @property
    def status(self) -> str: ...
    @property
    def figures(self) -> dict[str, Any]: ...
    @property
    def result(self) -> dict[str, Any] | None: ...
    @property
    def labels(self) -> list[str]: ...


@dataclass(frozen=True)
class Judged:
    claim: Claim
    verdict: str
    #: What the run measured, in words ("lighttpd 1.42x nginx [1.38-1.47] at 10 conns; ...").
    measured: str
    #: Why the verdict is what it is, where the measured text does not say it.
    why: str = ""


def _matches(params: dict[str, Any], where: dict[str, Any]) -> bool:
    for name, wanted in where.items():
        allowed = wanted if isinstance(wanted, list) else [wanted]
        if params.get(name) not in allowed:
            return False
    return True


def _selected(cases: Iterable[MeasuredCase], claim: Claim) -> list[MeasuredCase]:
    return [case for case in cases if case.status == "ok" and case.result is not None and _matches(case.params, claim.where)]


def _cells(cases: Iterable[MeasuredCase], claim: Claim, *varied: str) -> dict[tuple[tuple[str, str], ...], list[MeasuredCase]]:
    """Cases by cell: the params that are neither varied nor ignored by the claim, as a sorted key
    of (name, value in words)."""
    ignored = {*varied, *NEVER_PAIRED, *claim.ignore, *(p for name in varied for p in GOES_WITH.get(name, ()))}
    cells: dict[tuple[tuple[str, str], ...], list[MeasuredCase]] = defaultdict(list)
    for case in cases:
        key = tuple(sorted((name, _words(value)) for name, value in case.params.items() if name not in ignored))
        cells[key].append(case)
    return cells


def _words(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _cell_words(key: tuple[tuple[str, str], ...], cells: Sequence[tuple[tuple[str, str], ...]]) -> str:
    """What sets this cell apart from the others ('workload ST-1, connections 10'), empty with one
    cell; a param that goes with another shown (a workload's path) is left out."""
    differing = [name for name, value in key if any(dict(other).get(name) != value for other in cells)]
    implied = {p for name in differing for p in GOES_WITH.get(name, ())}
    return ", ".join(f"{name} {dict(key)[name]}" for name in differing if name not in implied)


def _estimate(cases: Sequence[MeasuredCase], figure: str) -> stats.Estimate | None:
    timelines = [case.result.get("timeline", []) for case in cases if case.result is not None]
    return stats.estimate(figure, [case.figures.get(figure) for case in cases], timelines)


def _bounds(ratio: stats.Estimate, floor: NoiseFloor) -> tuple[float, float]:
    """The range a ratio claim is judged on: the ratio's interval widened to at least its point
    divided and multiplied by (1 + the machine's noise floor for the figure), the log-scale band
    analysis.verdict judges changes in (one run's interval can be narrow by chance; without one, the
    floor stands in for it)."""
    low, high = (ratio.low, ratio.high) if ratio.has_interval else (ratio.point, ratio.point)
    return min(low, ratio.point / (1 + floor.relative)), max(high, ratio.point * (1 + floor.relative))


def _ratio_text(ratio: stats.Estimate) -> str:
    """'5.52x [3.19-9.55]', or the point alone (_measured says why it has no interval)."""
    if not ratio.has_interval:
        return f"{ratio.point:.2f}x"
    high = "∞" if math.isinf(ratio.high) else f"{ratio.high:.2f}"
    return f"{ratio.point:.2f}x [{ratio.low:.2f}-{high}]"


def _measured(figure: str, words: list[str], ratios: list[stats.Estimate], left_out: str) -> str:
    """'figure: what each cell measured', once why some ratios have no interval (the noise floor
    stood in for it), and the cases left out (_comparable)."""
    missing = sorted({ratio.method.partition(": ")[2] for ratio in ratios if not ratio.has_interval})
    lacking = f" (no interval: {'; '.join(missing)}; the noise floor stands in)" if missing else ""
    return f"{figure}: " + "; ".join(words) + lacking + (f"; {left_out}" if left_out else "")


def _comparable(cases: list[MeasuredCase], claim: Claim, *varied: str) -> tuple[list[MeasuredCase], str]:
    """The cases whose figures a claim may compare, and in words those it leaves out: error-bound
    ones, more of whose requests failed than the run allowed (a gateway's 502, answered at once,
    would count as a fast request)."""
    return _leave_out(cases, claim, varied, lambda case: ERROR_BOUND in case.labels, "error-bound")


def _leave_out(
    cases: list[MeasuredCase], claim: Claim, varied: Sequence[str], leaving: Callable[[MeasuredCase], bool], reason: str
) -> tuple[list[MeasuredCase], str]:
    """The cases `leaving` does not pick, and in words those it picks: each by its value of the
    claim's `by`, in its cell."""
    left = [case for case in cases if leaving(case)]
    if not left:
        return cases, ""
    keys = list(_cells(cases, claim, *varied))
    described = {
        f"{case.params.get(claim.by)}" + (f" ({where})" if (where := _cell_words(key, keys)) else "")
        for key, members in _cells(left, claim, *varied).items()
        for case in members
    }
    return [case for case in cases if not leaving(case)], f"left out, {reason}: " + "; ".join(sorted(described))


def _overall(per_cell: list[int]) -> str:
    """+1 confirms, -1 contradicts, 0 cannot tell, per cell."""
    if any(sign < 0 for sign in per_cell):
        return DOES_NOT_HOLD
    if per_cell and all(sign > 0 for sign in per_cell):
        return HOLDS
    return INCONCLUSIVE


def _order(claim: OrderClaim, cases: list[MeasuredCase], floors: Floors) -> Judged:
    ranked = {value for tier in claim.order for value in tier}
    compared, left_out = _comparable([c for c in cases if c.params.get(claim.by) in ranked], claim, claim.by)
    cells = _cells(compared, claim, claim.by)
    signs, words, ratios = [], [], []
    for key, members in cells.items():
        by_value = defaultdict(list)
        for case in members:
            by_value[case.params[claim.by]].append(case)
        estimates = {value: e for value, group in by_value.items() if (e := _estimate(group, claim.figure)) is not None}
        pairs = [
            (better, worse)
            for upper, lower in zip(claim.order, claim.order[1:], strict=False)
            for better in upper for worse in lower
            if better in estimates and worse in estimates and estimates[worse].point
        ]
        if not pairs:
            continue
        where = _cell_words(key, list(cells))
        for better, worse in pairs:
            judged = verdict.judge(estimates[worse], estimates[better], claim.higher_is_better, floors(claim.figure))
            assert judged is not None  # the worse side's point is not 0
            signs.append({verdict.Kind.IMPROVED: 1, verdict.Kind.REGRESSED: -1}.get(judged.kind, 0))
            ratio = stats.ratio(estimates[better], estimates[worse])
            ratios.append(ratio)
            words.append(f"{better} {_ratio_text(ratio)} {worse}" + (f" ({where})" if where else ""))
    if not signs:
        return Judged(claim, NOT_MEASURED, "-", left_out) if left_out else _not_measured(claim, cases, claim.by, ranked)
    return _judged(claim, _overall(signs), _measured(claim.figure, words, ratios, left_out), cases)


def _ratio(claim: RatioClaim, cases: list[MeasuredCase], floors: Floors) -> Judged:
    sides = (claim.numerator, claim.denominator)
    capacity = claim.figure == CAPACITY
    at_capacity = claim.compared_at == "capacity"
    levels = ["users"] if capacity or at_capacity else []
    chosen = [c for c in cases if c.params.get(claim.by) in sides]
    # A capacity search's invalid levels are what bounds it: only a figure compared at equal load
    # leaves the error-bound out.
    compared, left_out = (chosen, "") if levels else _comparable(chosen, claim, claim.by)
    cells = _cells(compared, claim, claim.by, *levels)
    signs, words, ratios = [], [], []
    low_bound, high_bound = claim.at_least or 0.0, claim.at_most or math.inf
    for key, members in cells.items():
        top = [c for c in members if c.params[claim.by] == claim.numerator]
        bottom = [c for c in members if c.params[claim.by] == claim.denominator]
        where = _cell_words(key, list(cells))
        if at_capacity:
            top, bottom = _at_capacity(top), _at_capacity(bottom)
            if top and bottom:
                levels_words = f"at capacity: {top[0].params['users']:,} and {bottom[0].params['users']:,} users"
                where = f"{where}, {levels_words}" if where else levels_words
        if capacity:
            ratio = _capacity_ratio(top, bottom)
            bounds = None if ratio is None else (ratio.low, ratio.high)
        else:
            ratio = _figure_ratio(top, bottom, claim.figure)
            bounds = None if ratio is None else _bounds(ratio, floors(claim.figure))
        if ratio is None or bounds is None:
            continue
        low, high = bounds
        signs.append(1 if low >= low_bound and high <= high_bound else -1 if high < low_bound or low > high_bound else 0)
        ratios.append(ratio)
        words.append(_ratio_text(ratio) + (f" ({where})" if where else ""))
    if not signs:
        return Judged(claim, NOT_MEASURED, "-", left_out) if left_out else _not_measured(claim, cases, claim.by, set(sides))
    return _judged(claim, _overall(signs), _measured(claim.figure, words, ratios, left_out), cases)


def _figure_ratio(top: list[MeasuredCase], bottom: list[MeasuredCase], figure: str) -> stats.Estimate | None:
    numerator, denominator = _estimate(top, figure), _estimate(bottom, figure)
    if numerator is None or denominator is None or not denominator.point:
        return None
    return stats.ratio(numerator, denominator)


def _capacity_ratio(top: list[MeasuredCase], bottom: list[MeasuredCase]) -> stats.Estimate | None:
    """The ratio of two capacity searches' results: each capacity lies between its last valid and
    its first invalid level, so the ratio lies between the extremes those brackets allow (up to
    infinity, or down to 0, where a search found no invalid level)."""
    mine, theirs = _users_reach(top), _users_reach(bottom)
    if mine is None or theirs is None or mine.held is None or theirs.held is None:
        return None
    low = mine.held / theirs.failed if theirs.failed is not None else 0.0
    high = mine.failed / theirs.held if mine.failed is not None else math.inf
    return stats.Estimate(mine.held / theirs.held, low, high, 1, CAPACITY_BRACKETS)


def _at_capacity(cases: list[MeasuredCase]) -> list[MeasuredCase]:
    """A capacity search's cases at its capacity (the largest valid level below the first invalid
    one); none when no level was valid."""
    reach = _users_reach(cases)
    if reach is None or reach.held is None:
        return []
    return [case for case in cases if case.params.get("users") == reach.held]


def _users_reach(cases: list[MeasuredCase]) -> Reach | None:
    levels = [(case.params["users"], _held(case, 0.0)) for case in cases if "users" in case.params]
    return _reach(levels) if levels else None


def _held(case: MeasuredCase, failed_share_at_most: float) -> bool:
    """Whether one case held its load: QoS-valid sessions, or few enough failed requests (errors,
    statuses other than 2xx/3xx, stuck unanswered: analysis.bottleneck.failed_share) and, at a
    constant rate, the offered rate reached within 5 %."""
    assert case.result is not None
    sessions = case.result.get("sessions")
    if sessions is not None:
        return qos_verdict(sessions).valid
    failed = failed_share(case.result)
    rate = case.params.get("rate_per_s")
    reached = rate is None or (case.figures.get("requests_per_s") or 0.0) >= 0.95 * rate
    return failed <= failed_share_at_most and reached


def _phases_held(case: MeasuredCase) -> list[tuple[int, bool]]:
    assert case.result is not None
    phases = (case.result.get("sessions") or {}).get("phases") or []
    return [(k, qos_verdict({"pages": phase["pages"]}).valid) for k, phase in enumerate(phases, 1)]


@dataclass(frozen=True)
class Reach:
    """How far up an axis a server held: the highest level held before the first that was not."""

    held: float | None
    failed: float | None

    def beats(self, other: Reach) -> bool:
        return other.failed is not None and self.held is not None and self.held >= other.failed

    def text(self, unit: Callable[[float], str]) -> str:
        held = f"held {unit(self.held)}" if self.held is not None else "held no level"
        return f"{held}, failed at {unit(self.failed)}" if self.failed is not None else f"{held}, never failed"


def _reach(levels: list[tuple[float, bool]]) -> Reach:
    held = None
    for level, ok in sorted(levels):
        if not ok:
            return Reach(held, level)
        held = level
    return Reach(held, None)


def _held_claim(claim: HeldClaim, cases: list[MeasuredCase], floors: Floors) -> Judged:
    ranked = {value for tier in claim.order for value in tier}
    chosen = [c for c in cases if c.params.get(claim.by) in ranked]
    by_phase = claim.axis == "phase"
    cells = _cells(chosen, claim, claim.by, *(() if by_phase else (claim.axis,)))
    unit = (lambda level: f"phase {level:g}") if by_phase else (lambda level: f"{claim.axis} {level:g}")
    signs: list[int] = []
    words: list[str] = []
    for key, members in cells.items():
        levels: dict[Any, list[tuple[float, bool]]] = defaultdict(list)
        for case in members:
            if by_phase:
                levels[case.params[claim.by]].extend(_phases_held(case))
            elif claim.axis in case.params:
                levels[case.params[claim.by]].append((case.params[claim.axis], _held(case, claim.failed_share_at_most)))
        reach = {value: _reach(found) for value, found in levels.items() if found}
        for upper, lower in zip(claim.order, claim.order[1:], strict=False):
            for better in upper:
                for worse in lower:
                    if better in reach and worse in reach:
                        mine, theirs = reach[better], reach[worse]
                        signs.append(1 if mine.beats(theirs) else -1 if theirs.beats(mine) else 0)
        where = _cell_words(key, list(cells))
        words.extend(f"{value} {reach[value].text(unit)}" + (f" ({where})" if where else "") for value in sorted(reach, key=str))
    if not signs:
        return _not_measured(claim, cases, claim.by, ranked)
    return _judged(claim, _overall(signs), "; ".join(words), cases)


def _judged(claim: Claim, verdict_words: str, measured: str, cases: list[MeasuredCase]) -> Judged:
    """The verdict, marked when other work took the machine's cores in some of the cases judged
    (the machine-busy label: analysis.machine)."""
    busy = [case for case in cases if MACHINE_BUSY in case.labels]
    stolen = sum(_mostly_steal(case) for case in busy)
    why = f"machine busy in {len(busy)} of {len(cases)} cases" if busy else ""
    if stolen:
        why += f" (the hypervisor's steal the larger part in {stolen})"
    return Judged(claim, verdict_words, measured, why)


def _mostly_steal(case: MeasuredCase) -> bool:
    machine = ((case.result or {}).get("bottleneck") or {}).get("machine") or {}
    return machine.get("steal_share", 0.0) * 2 > machine.get("other_cpu_share", 0.0) > 0


def _not_measured(claim: Claim, cases: list[MeasuredCase], by: str, wanted: set[Any]) -> Judged:
    seen = {case.params.get(by) for case in cases}
    missing = sorted((str(value) for value in wanted - seen))
    if not cases:
        why = "the run has no case it applies to" + (f" ({_where_words(claim.where)})" if claim.where else "")
    elif missing:
        why = f"the run did not measure {by} {', '.join(missing)}"
    else:
        why = "no two of its cases differ only in " + by
    return Judged(claim, NOT_MEASURED, "-", why)


def _where_words(where: dict[str, Any]) -> str:
    return ", ".join(f"{name} {value}" for name, value in where.items())


JUDGES: dict[str, Callable[[Any, list[MeasuredCase], Floors], Judged]] = {
    "order": _order, "ratio": _ratio, "held": _held_claim,
}


def judge(
    claims: Sequence[Claim], cases: Sequence[MeasuredCase], floors: Floors = verdict.default_floor,
    unfinished: Sequence[MeasuredCase] = (),
) -> list[Judged]:
    """Every claim's verdict on these cases (one run's); `floors` gives the machine's noise floor
    of a figure (the store's measured one, else analysis.verdict's default). `unfinished`: the
    probes of capacity searches that had not ended (an interrupted run's), which no claim about
    where a search ends may judge."""
    return [_judge_one(claim, _selected(cases, claim), floors, unfinished) for claim in claims]


def _judge_one(claim: Claim, cases: list[MeasuredCase], floors: Floors, unfinished: Sequence[MeasuredCase]) -> Judged:
    if not _at_search_end(claim):
        return JUDGES[claim.kind](claim, cases, floors)
    ended, left_out = _leave_out(cases, claim, (claim.by, "users"), lambda case: case in unfinished, SEARCH_NOT_ENDED)
    judged = JUDGES[claim.kind](claim, ended, floors)
    if not left_out:
        return judged
    if judged.verdict == NOT_MEASURED:
        return replace(judged, why=left_out)
    return replace(judged, measured=f"{judged.measured}; {left_out}")


def _at_search_end(claim: Claim) -> bool:
    """Whether a claim is about where capacity searches end: their capacities, the figures at
    them, how far up the users each held."""
    if isinstance(claim, RatioClaim):
        return claim.figure == CAPACITY or claim.compared_at == "capacity"
    return isinstance(claim, HeldClaim) and claim.axis == "users"
