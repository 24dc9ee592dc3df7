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
from gauntlet.report.points import GridPoint, describe, varying
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
LATENCY_P99 = Metric("latency_p99_us", "p99 latency", False)


@dataclass(frozen=True)
class Contender:
    #: What tells it apart from the others of its group: "nginx", "builtin, 2 workers", "run 4".
    name: str
    point: GridPoint
    #: The metric's mean over the repeats.
    value: float
    #: Its share of the best, 0..1 (the best is 1; for latency, best / its own).
    of_best: float

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


def metric_of(point: GridPoint) -> Metric | None:
    """What ranks a point's load: requests/s of a closed loop, the p99 of a constant rate; None for
    sessions (their QoS table judges them) and capacity probes."""
    if point.params.get("model") == "sessions" or point.params.get("capacity"):
        return None
    return LATENCY_P99 if point.params.get("rate_per_s") is not None else REQUESTS_PER_S


def _load_key(point: GridPoint) -> str:
    return repr(sorted((k, repr(v)) for k, v in point.params.items() if k not in CONTENDER_PARAMS))


def comparable_groups(points: list[GridPoint]) -> list[list[GridPoint]]:
    """The points with a measured figure, grouped by the load they share; groups of one dropped,
    in the order of their first point."""
    groups: dict[str, list[GridPoint]] = defaultdict(list)
    for point in points:
        metric = metric_of(point)
        if metric is not None and point.figure(metric.figure) is not None:
            groups[_load_key(point)].append(point)
    return [members for members in groups.values() if len(members) >= 2]


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


def rank(members: list[GridPoint], name: str) -> Ranking:
    """The group ranked by its metric's mean over the repeats, best first; the error-bound after the
    others, in the same order."""
    metric = metric_of(members[0])
    assert metric is not None
    valued = []
    for point, contender in zip(members, contender_names(members), strict=True):
        spread = point.figure(metric.figure)
        assert spread is not None
        valued.append((contender, point, spread.mean))
    valued.sort(key=lambda found: (ERROR_BOUND in found[1].labels, -found[2] if metric.higher_is_better else found[2]))
    best = valued[0][2]

    def of_best(value: float) -> float:
        if metric.higher_is_better:
            return value / best if best else 0.0
        return best / value if value else 1.0

    return Ranking(name, metric, [Contender(c, p, v, of_best(v)) for c, p, v in valued])


def rankings(points: list[GridPoint]) -> list[Ranking]:
    """Every group of comparable cases, ranked."""
    return [rank(members, group_name(members, points)) for members in comparable_groups(points)]
