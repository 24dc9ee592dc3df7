"""The verdict first: the report's servers ranked, per group of comparable cases.

Cases are comparable when they ran the same load (part of the study, workload, keep-alive,
concurrency, rate, protocol...) and differ only in what served it: the server, its settings, or the
run that measured it. Each group with two contenders or more is ranked by its headline figure
(requests/s under a closed loop, p99 latency under a constant rate, where requests/s is the rate
offered), best first, each with its share of the best and the ratio to the best with its interval.
Pure functions of grid points; the words are gauntlet.report.verdicts'.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, fields

from gauntlet.analysis.bottleneck import ERROR_BOUND
from gauntlet.analysis.stats import Estimate
from gauntlet.analysis.verdict import NoiseFloor, Verdict, default_floor, judge
from gauntlet.report.points import GridPoint, describe, point_ratio, varying
from gauntlet.servers.spec import ServerSpec

#: The case parameters that say what served the load: the server spec's settings (keep-alive is
#: the client's, TLS and HTTP/2 show as the load's protocol and HTTP version), the URL of a server
#: Gauntlet did not start, and the run (two runs of `gauntlet run` against two servers).
CONTENDER_PARAMS = frozenset(
    {"server", "url", "run"}
    | {f.name for f in fields(ServerSpec)} - {"kind", "keepalive", "tls", "http2", "expected_connections"}
)


@dataclass(frozen=True)
class Metric:
    figure: str
    #: What the figure is called in a sentence, and its unit.
    name: str
    higher_is_better: bool


REQUESTS_PER_S = Metric("requests_per_s", "requests/s", True)
LATENCY_P99 = Metric("latency_p99_us", "p99", False)
#: Under a rate too short for a p99 (stats.percentile_shown: 1,000 responses), the p50.
LATENCY_P50 = Metric("latency_p50_us", "p50", False)


@dataclass(frozen=True)
class Contender:
    #: What tells it apart from the others of its group: "nginx", "builtin, 2 workers", "run 4".
    name: str
    point: GridPoint
    #: The metric over the repeats: their median and its interval.
    estimate: Estimate
    #: Its share of the best, 0..1 (the best is 1; for latency, best / its own).
    of_best: float
    #: How many times better the best is (best / it for requests/s, it / best for latency), with its
    #: interval; None for the best itself, and where there is no ratio (a figure of 0).
    ratio: Estimate | None = None
    #: Whether the best's lead over it is a detected difference (analysis.verdict); None for the best.
    verdict: Verdict | None = None

    @property
    def value(self) -> float:
        return self.estimate.point

    @property
    def failing(self) -> bool:
        """More of its requests failed than the error limit allows: its figure is not the server's
        speed, and it is ranked after the others."""
        return ERROR_BOUND in self.point.labels


@dataclass(frozen=True)
class Ranking:
    #: The load the group shares, in words: "static, ST-1, keep-alive, 50 conns".
    name: str
    metric: Metric
    #: Best first.
    contenders: list[Contender]

    @property
    def best(self) -> Contender:
        return self.contenders[0]


def _candidates(point: GridPoint) -> tuple[Metric, ...]:
    """What may rank a point's load, first choice first: requests/s of a closed loop, the p99 (or
    the p50) of a constant rate; nothing for sessions (their QoS table judges them) and capacity probes."""
    if point.params.get("model") == "sessions" or point.params.get("capacity"):
        return ()
    return (LATENCY_P99, LATENCY_P50) if point.params.get("rate_per_s") is not None else (REQUESTS_PER_S,)


def _load_key(point: GridPoint) -> str:
    return repr(sorted((k, repr(v)) for k, v in point.params.items() if k not in CONTENDER_PARAMS))


def comparable_groups(points: list[GridPoint]) -> list[tuple[Metric, list[GridPoint]]]:
    """The points grouped by the load they share, each group with the first metric that two of its
    points or more have (those that lack it left out); groups of one dropped, in the order of their
    first point."""
    groups: dict[str, list[GridPoint]] = defaultdict(list)
    for point in points:
        if _candidates(point):
            groups[_load_key(point)].append(point)
    found = []
    for members in groups.values():
        for metric in _candidates(members[0]):
            having = [p for p in members if p.figure(metric.figure) is not None]
            if len(having) >= 2:
                found.append((metric, having))
                break
    return found


def contender_names(members: list[GridPoint]) -> list[str]:
    names = varying(members) or ["server"]
    return [describe(point.params, names) or "all cases" for point in members]


def group_name(members: list[GridPoint], everything: list[GridPoint]) -> str:
    """The group's load in the words that tell it from the other groups (all its load parameters
    when it is the only one)."""
    load_params = [name for name in varying(everything) if name not in CONTENDER_PARAMS]
    if not load_params:
        load_params = [name for name in members[0].params if name not in CONTENDER_PARAMS]
    if "workload" in load_params and "path" in load_params:  # ST-1 names its file
        load_params.remove("path")
    return describe(members[0].params, load_params) or "all cases"


def _versus_best(metric: Metric, best: GridPoint, other: GridPoint, floors: dict[str, NoiseFloor]) -> tuple[Estimate | None, Verdict | None]:
    """How many times better the best is, with its interval, and whether that is a detected difference."""
    top, bottom = (best, other) if metric.higher_is_better else (other, best)
    ratio = point_ratio(top, bottom, metric.figure)
    before, after = other.figure(metric.figure), best.figure(metric.figure)
    assert before is not None and after is not None
    floor = floors.get(metric.figure) or default_floor(metric.figure)
    return ratio, judge(before, after, metric.higher_is_better, floor)


def rank(metric: Metric, members: list[GridPoint], name: str, floors: dict[str, NoiseFloor] | None = None) -> Ranking:
    """The group ranked by the metric's median over the repeats, best first; the error-bound after
    the others, in the same order. `floors`: the machine's measured noise floors (Store.noise_floors)."""
    valued = []
    for point, contender in zip(members, contender_names(members), strict=True):
        estimate = point.figure(metric.figure)
        assert estimate is not None
        valued.append((contender, point, estimate))
    valued.sort(key=lambda found: (ERROR_BOUND in found[1].labels, -found[2].point if metric.higher_is_better else found[2].point))
    best_name, best_point, best = valued[0]

    def of_best(value: float) -> float:
        if metric.higher_is_better:
            return value / best.point if best.point else 0.0
        return best.point / value if value else 1.0

    contenders = [Contender(best_name, best_point, best, 1.0)]
    for contender, point, estimate in valued[1:]:
        ratio, verdict = _versus_best(metric, best_point, point, floors or {})
        contenders.append(Contender(contender, point, estimate, of_best(estimate.point), ratio, verdict))
    return Ranking(name, metric, contenders)


def rankings(points: list[GridPoint], floors: dict[str, NoiseFloor] | None = None) -> list[Ranking]:
    """Every group of comparable cases, ranked."""
    return [rank(metric, members, group_name(members, points), floors) for metric, members in comparable_groups(points)]
