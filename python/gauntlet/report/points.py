"""Grid points: stored cases grouped by key (the repeats of one grid point), with the figures of
their repeats aggregated, and the words that tell points apart in a chart or a table."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gauntlet import engine
from gauntlet.analysis import stats
from gauntlet.analysis.stats import Estimate
from gauntlet.analysis.verdict import default_floor, judge
from gauntlet.servers.spec import SIZING
from gauntlet.store import CaseRow


def _counted(count: Any, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _number(value: Any) -> str:
    """2500.0 as 2500, 0.5 as 0.5; whatever else as it is."""
    return f"{value:g}" if isinstance(value, int | float) else str(value)


#: The order in which parameters describe a case, most telling first; others follow by name.
PARAM_ORDER = (
    "run", "group", "server", *SIZING, "backend", "protocol", "tls_version",
    "cipher", "keepalive", "calls_per_connection", "http_version", "streams", "workload", "path", "model", "connections", "rate_per_s", "users",
    "requests", "duration_s", "timeout_s", "warmup_s", "io_batch_us", "scheduling",
)
PARAM_WORDS: dict[str, Callable[[Any], str]] = {
    "run": lambda v: f"run {v}",
    "keepalive": lambda v: "keep-alive" if v else "no keep-alive",
    "workers": lambda v: _counted(v, "worker"),
    "threads_per_child": lambda v: f"{v} threads/child",
    "max_request_workers": lambda v: f"at most {v} processes",
    "min_spare_servers": lambda v: f"at least {v} idle",
    "max_spare_servers": lambda v: f"at most {v} idle",
    "java_heap_mb": lambda v: f"heap {v} MiB",
    "processes": lambda v: f"{v} process" if v == 1 else f"{v} processes",
    "keepalive_timeout_s": lambda v: f"keep-alive timeout {_number(v)} s",
    "keepalive_requests": lambda v: f"{v} requests/conn" if v else "unlimited requests/conn",
    "scheduler_busy_wait": lambda v: "schedulers busy-wait" if v else "no busy wait",
    "backend_workers": lambda v: _counted(v, "backend worker"),
    "backend_threads": lambda v: f"{_counted(v, 'backend thread')}/process",
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
    "io_batch_us": lambda v: f"batch window {_number(v)} µs" if v else "no batch window",
    "scheduling": lambda v: "SCHED_BATCH" if v == "batch" else "normal scheduling",
}
#: Parameters whose value says itself (nginx, https, /webtest.html, ST-1, rate, static).
PLAIN_PARAMS = ("group", "server", "backend", "protocol", "cipher", "workload", "path", "model")
CaseValue = Callable[[CaseRow], float | None]


def stored_figure(name: str) -> CaseValue:
    """The case's flat figure of that name (gauntlet.store.figures)."""
    return lambda case: case.figures.get(name)


def difference_text(before: Estimate, after: Estimate, figure: str = "requests_per_s") -> str:
    """'+12%' for a detected change of a higher-is-better figure, '+3% (no change detected)' or
    '+3% (within noise)' otherwise (analysis.verdict, against the default noise floor)."""
    found = judge(before, after, True, default_floor(figure))
    change = f"{after.point / before.point - 1:+.0%}"
    return change if found is None or found.detected else f"{change} ({found.kind})"


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

    def sessions_results(self) -> list[dict[str, Any]]:
        """The measured repeats' results of a sessions load (none for another model)."""
        return [case.result for case in self.measured if case.result and case.result.get("sessions")]

    def figure(self, name: str) -> Estimate | None:
        """A flat figure (gauntlet.store.figures) over the measured repeats: estimate(name)."""
        return self.estimate(name)

    def value(self, of: CaseValue) -> Estimate | None:
        """A value of each repeat over the measured repeats (median, interval from repeats only)."""
        return stats.estimate("", [of(case) for case in self.measured])

    def estimate(self, name: str, of: CaseValue | None = None) -> Estimate | None:
        """A figure over the measured repeats: their median and its 95 % interval (analysis.stats,
        from the repeats or their per-second timelines). `name` is the flat figure
        (gauntlet.store.figures), read by `of` when given. None when no repeat has it, or for a
        latency percentile that some repeat has too few responses for, or a server CPU too small to
        measure (unshown)."""
        if self.unshown(name):
            return None
        read = of or stored_figure(name)
        timelines = [case.result.get("timeline", []) for case in self.measured if case.result is not None]
        return stats.estimate(name, [read(case) for case in self.measured], timelines)

    def unshown(self, name: str) -> str:
        """Why a figure is not shown, '' when it is: a latency percentile (latency_p99_us, ...) that
        some repeat has too few responses for (stats.percentile_shown: p99 needs 1,000), or a server
        CPU per request whose CPU total some repeat counted too coarsely (stats.server_cpu_unshown)."""
        if name == "server_cpu_us_per_request":
            servers = [case.result["server"] for case in self.measured if case.result and case.result.get("server")]
            return next((why for server in servers if (why := stats.server_cpu_unshown(server))), "")
        if not name.startswith("latency_p"):
            return ""
        if all(stats.percentile_shown(name, case.figures.get("responses")) for case in self.measured):
            return ""
        percentile = name.removeprefix("latency_").removesuffix("_us").replace("_", ".")
        return f"{stats.TOO_FEW} ({percentile} needs {stats.min_responses(name):,} responses a repeat)"

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


def point_ratio(numerator: GridPoint, denominator: GridPoint, name: str) -> Estimate | None:
    """How one point's figure relates to another's, with the interval of the ratio
    ('lighttpd 2.6x nginx [2.4-2.8]'): stats.ratio of their estimates; None when either lacks the
    figure or the denominator is 0."""
    top, bottom = numerator.estimate(name), denominator.estimate(name)
    if top is None or bottom is None or not bottom.point:
        return None
    return stats.ratio(top, bottom)


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
