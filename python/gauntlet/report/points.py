"""Grid points: stored cases grouped by key (the repeats of one grid point), with the figures of
their repeats aggregated, and the words that tell points apart in a chart or a table."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gauntlet import engine
from gauntlet.store import CaseRow


def _counted(count: Any, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _number(value: Any) -> str:
    """2500.0 as 2500, 0.5 as 0.5; whatever else as it is."""
    return f"{value:g}" if isinstance(value, int | float) else str(value)


#: The order in which parameters describe a case, most telling first; others follow by name.
PARAM_ORDER = (
    "run", "group", "server", "workers", "threads_per_child", "backend", "backend_workers", "protocol", "tls_version",
    "cipher", "keepalive", "calls_per_connection", "http_version", "streams", "workload", "path", "model", "connections", "rate_per_s", "users",
    "requests", "duration_s", "timeout_s", "warmup_s",
)
PARAM_WORDS: dict[str, Callable[[Any], str]] = {
    "run": lambda v: f"run {v}",
    "keepalive": lambda v: "keep-alive" if v else "no keep-alive",
    "workers": lambda v: _counted(v, "worker"),
    "threads_per_child": lambda v: f"{v} threads/child",
    "backend_workers": lambda v: _counted(v, "backend worker"),
    "tls_version": lambda v: f"TLS {v}",
    "calls_per_connection": lambda v: f"{v} calls/conn",
    "http_version": lambda v: f"HTTP/{v}",
    "streams": lambda v: f"{_counted(v, 'stream')}/conn",
    "connections": lambda v: _counted(v, "conn"),
    "rate_per_s": lambda v: f"{_number(v)}/s",
    "users": lambda v: _counted(v, "user"),
    "requests": lambda v: _counted(v, "request"),
    "duration_s": lambda v: f"{_number(v)} s",
    "timeout_s": lambda v: f"{_number(v)} s timeout",
    "warmup_s": lambda v: f"{_number(v)} s warm-up",
}
#: Parameters whose value says itself (nginx, https, /webtest.html, ST-1, rate, static).
PLAIN_PARAMS = ("group", "server", "backend", "protocol", "cipher", "workload", "path", "model")
CaseValue = Callable[[CaseRow], float | None]


def stored_figure(name: str) -> CaseValue:
    """The case's flat figure of that name (gauntlet.store.figures)."""
    return lambda case: case.figures.get(name)


@dataclass(frozen=True)
class Spread:
    """A figure over the repeats of a grid point."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def relative_range(self) -> float:
        """(max - min) / mean: how far apart the repeats were; 0 with one repeat."""
        return (self.high - self.low) / self.mean if self.mean else 0.0


#: Rounds of the same command differ by up to 30 % on this kind of shared 2-core machine
#: (docs/reports.md): the spread assumed for a case that was measured once.
DEFAULT_NOISE = 0.30


def noise(before: Spread, after: Spread, default: float = DEFAULT_NOISE) -> float:
    """The relative change two measurements of one figure must exceed to differ: the larger range of
    their repeats, or `default` when neither was repeated."""
    repeated = [s.relative_range for s in (before, after) if s.n > 1]
    return max(repeated) if repeated else default


def difference_text(before: Spread, after: Spread) -> str:
    """'+12%', or '+12% (inside the spread)' when the change does not exceed their noise."""
    change = (after.mean - before.mean) / before.mean
    return f"{change:+.0%}" + (" (inside the spread)" if abs(change) <= noise(before, after) else "")


def spread(values: Iterable[float | None]) -> Spread | None:
    present = [float(v) for v in values if v is not None]
    if not present:
        return None
    return Spread(sum(present) / len(present), min(present), max(present), len(present))


@dataclass(eq=False)
class GridPoint:
    key: str
    params: dict[str, Any]
    #: Repeats that have a result (ok or partial), in the order they were stored.
    measured: list[CaseRow] = field(default_factory=list)
    #: Repeats that are errors: without a result (the server did not start, the combination is
    #: unsupported, ...), or with what was measured until a server process exited or when no
    #: request ended, which no headline figure includes.
    failed: list[CaseRow] = field(default_factory=list)

    def figure(self, name: str) -> Spread | None:
        """A flat figure (gauntlet.store.figures) over the measured repeats."""
        return spread(case.figures.get(name) for case in self.measured)

    def value(self, of: CaseValue) -> Spread | None:
        return spread(of(case) for case in self.measured)

    @property
    def labels(self) -> list[str]:
        """The bottleneck labels of every repeat, each once."""
        return sorted({label for case in [*self.measured, *self.failed] for label in case.labels})

    def latency_percentiles_us(self, quantiles: list[float]) -> list[int] | None:
        """Percentiles of every repeat's latencies together (their histograms merged), None without any."""
        encoded = [c.result["histogram"] for c in self.measured if c.result and c.result["latency_us"]["count"]]
        if not encoded:
            return None
        merged = encoded[0] if len(encoded) == 1 else engine.merge_histograms(encoded)
        return engine.histogram_percentiles(merged, quantiles)


def grid_points(cases: Iterable[CaseRow], by_run: bool = False) -> list[GridPoint]:
    """One point per key (per run and key with `by_run`, which adds `run` to the parameters), in the
    order of their first stored case."""
    points: dict[tuple[int, str], GridPoint] = {}
    for case in cases:
        run_id = case.run_id if by_run else 0
        point = points.get((run_id, case.key))
        if point is None:
            params = {"run": case.run_id, **case.params} if by_run else dict(case.params)
            point = points[(run_id, case.key)] = GridPoint(case.key, params)
        (point.measured if case.result is not None and case.status != "error" else point.failed).append(case)
    return list(points.values())


def kind_share(kind: str) -> CaseValue:
    """Requests that ended in this error kind over all that ended, 0..1."""

    def value(case: CaseRow) -> float | None:
        count, ended = case.figures.get(f"errors_{kind}"), error_share_base(case)
        return None if count is None or not ended else count / ended

    return value


def error_share_base(case: CaseRow) -> int | None:
    """Requests that ended: responses and errors."""
    responses, errors = case.figures.get("responses"), case.figures.get("errors_total")
    return None if responses is None or errors is None else int(responses + errors)


def param_sort_key(name: str) -> tuple[int, str]:
    return (PARAM_ORDER.index(name) if name in PARAM_ORDER else len(PARAM_ORDER), name)


def varying(points: Iterable[GridPoint], exclude: Iterable[str] = ()) -> list[str]:
    """The parameters whose values differ between the points (absent counts as a value), in PARAM_ORDER."""
    points = list(points)
    names = {name for point in points for name in point.params} - set(exclude)
    return sorted(
        (n for n in names if len({repr(p.params.get(n)) for p in points}) > 1),
        key=param_sort_key,
    )


def describe(params: dict[str, Any], names: Iterable[str]) -> str:
    """The named parameters in words: 'nginx, 2 workers, keep-alive, 100 conns'."""
    words = []
    for name in sorted(names, key=param_sort_key):
        if name not in params or params[name] is None:
            continue
        value = params[name]
        if name in PARAM_WORDS:
            words.append(PARAM_WORDS[name](value))
        elif name in PLAIN_PARAMS:
            words.append(str(value))
        else:
            words.append(f"{name}={value}")
    return ", ".join(words)


def point_names(points: list[GridPoint], exclude: Iterable[str] = ()) -> list[str]:
    """A short name for each point: the parameters that tell it apart from the others (a workload,
    ST-1, names its file: its path is left out)."""
    names = varying(points, exclude)
    if "workload" in names and "path" in names:
        names.remove("path")
    if not names:
        names = [n for n in ("server", "path") if any(n in p.params for p in points)]
    return [describe(point.params, names) or "all cases" for point in points]
