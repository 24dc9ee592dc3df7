"""Estimates with 95 % confidence intervals: the one place that says how much a figure varies
(docs/metrics.md, "Intervals and verdicts"). Pure functions of figures and timelines.

How to use it:

    from gauntlet.analysis import stats

    # A figure over the repeats of one case (their flat values, and their per-second timelines):
    e = stats.estimate("requests_per_s", [24993.0, 24627.0, 25110.0], [r["timeline"] for r in results])
    e.point, e.low, e.high, e.n, e.method      # the median, its interval, how many samples, how it was made
    e.has_interval                              # False: one value and no timeline to resample

    # How two estimates relate, with the interval of the ratio ("lighttpd 2.6x nginx [2.4-2.8]"):
    r = stats.ratio(lighttpd_rate, nginx_rate)  # r.point 2.6, r.low 2.4, r.high 2.8

    # Whether a percentile rests on enough responses to be shown (else stats.TOO_FEW):
    stats.percentile_shown("p99", responses)    # p99 needs 1,000, p99.9 10,000 (10 beyond the percentile)

The point is the median of the repeats (what `run` shows). The interval comes from, in order:
- 3 or more repeats: a percentile bootstrap of the median over the repeats (scipy.stats.bootstrap);
  a ratio or difference of two such figures with fewer than SMALL_SAMPLE repeats a side takes
  Welch's t interval instead (on a log scale for a ratio): the percentile bootstrap of 3 against 3
  excludes "no change" whenever the two sides do not overlap, which identical runs do 1 time in 10;
- fewer repeats, with per-second timelines of 3 seconds or more: batch means over each repeat's
  measured seconds (the seconds are dependent: a slow second is followed by slow ones, so they are
  not resampled one by one). Each repeat's seconds are cut into at most MAX_BATCHES consecutive
  batches of equal length (at least one second each); the batch values are taken as independent and
  the interval is the point +- t(0.975, B-1) * sd(batches) / sqrt(B);
- otherwise none: low and high equal the point, has_interval is False, method says why.
A figure without a per-second form (the CPU per request: the engine's timeline has no CPU counters)
gets an interval from repeats only, and its method says so.
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

CONFIDENCE = 0.95
#: Fewer repeats than this do not bootstrap: the median of 1 or 2 values resamples to themselves.
MIN_REPEATS = 3
#: Batch means need at least this many batches (seconds, with a short run) to give an interval.
MIN_BATCHES = 3
#: A repeat's seconds are cut into at most this many batches: 10 batches of a 60 s run are 6 s each,
#: long enough for one second's slowness not to carry into the next batch.
MAX_BATCHES = 10
BOOTSTRAP_RESAMPLES = 2000
#: Below this many repeats a side, a comparison takes Welch's t interval, not the bootstrap's.
SMALL_SAMPLE = 10
#: A fixed seed: the same stored runs give the same intervals every time they are compared.
SEED = 20261127

BOOTSTRAP = "bootstrap over repeats"
BATCH_MEANS = "batch means over seconds"
WELCH = "t interval over repeats (Welch)"
NO_INTERVAL = "no interval"

#: What a percentile shows when too few responses stand behind it.
TOO_FEW = "n too small"
#: A percentile q needs this many responses beyond it: p99 needs 1,000 responses, p99.9 10,000.
RESPONSES_BEYOND_PERCENTILE = 10
PERCENTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p99_9": 0.999, "max": 1.0}

#: /proc counts a process's CPU in clock ticks (USER_HZ, 100 a second): two readings of a tree of P
#: processes miss the truth by up to a tick per process and field, about a tick x sqrt(P) in all.
CLOCK_TICK_S = 1 / os.sysconf("SC_CLK_TCK")
#: A cgroup counts CPU in microseconds (cpu.stat usage_usec; nanoseconds in v1's cpuacct.usage).
CGROUP_RESOLUTION_S = 1e-6
#: The server's CPU per request is shown only when its CPU total is at least this many of its
#: counters' resolutions (within about 10 %): 20 requests in 2.5 ms read 0 or 1 tick, 0 or 500 µs each.
MIN_CPU_RESOLUTIONS = 10
#: ... and only over a measured interval of one monitor interval (0.5 s) or more: its end is placed
#: between the monitor's readings around it, so the server's work just after it (closing the
#: connections: milliseconds) is partly counted in it, a share only a short interval makes large.
MIN_CPU_WINDOW_S = 0.5
TOO_LITTLE_CPU = "too little CPU to measure"

Second = dict[str, Any]
#: A figure's value in one second of the timeline, as (numerator, denominator): a batch of seconds
#: has sum(numerators) / sum(denominators), so busy seconds weigh more than idle ones.
PerSecond = Callable[[Second], tuple[float, float]]


def _weighted(name: str) -> PerSecond:
    """A latency percentile of a second, weighted by its responses (the mean of the seconds'
    percentiles stands in for the variation of the whole interval's)."""
    return lambda s: (s[name] * s["responses"], s["responses"])


#: The figures that have a per-second form, by their flat name (gauntlet.store.figures).
PER_SECOND: dict[str, PerSecond] = {
    "requests_per_s": lambda s: (s["responses"], s["span_us"] / 1e6),
    "latency_p50_us": _weighted("p50_us"),
    "latency_p90_us": _weighted("p90_us"),
    "latency_p99_us": _weighted("p99_us"),
    "failed_share": lambda s: (s["errors"], s["requests"]),
}


@dataclass(frozen=True)
class Estimate:
    """A figure's point estimate and its 95 % interval."""

    point: float
    low: float
    high: float
    #: The samples behind the interval: repeats (bootstrap), batches (batch means), else values.
    n: int
    #: BOOTSTRAP, BATCH_MEANS or NO_INTERVAL, with the reason in words after a colon where useful.
    method: str
    #: The repeats' values, for a ratio's bootstrap.
    values: tuple[float, ...] = field(default=(), repr=False, compare=False)

    @property
    def has_interval(self) -> bool:
        return not self.method.startswith(NO_INTERVAL)

    @property
    def bootstrapped(self) -> bool:
        return self.method.startswith(BOOTSTRAP)

    @property
    def relative_half_width(self) -> float:
        """Half the interval over the point: 0.05 is +-5 %; 0 without an interval or with a 0 point."""
        return (self.high - self.low) / 2 / abs(self.point) if self.point else 0.0

    def text(self, show: Callable[[float], str]) -> str:
        """'24,993 [24,627-25,110]', or the point alone without an interval."""
        if not self.has_interval:
            return show(self.point)
        return f"{show(self.point)} [{show(self.low)}-{show(self.high)}]"


def _no_interval(point: float, n: int, why: str) -> Estimate:
    return Estimate(point, point, point, n, f"{NO_INTERVAL}: {why}")


def _bootstrap(samples: Sequence[Sequence[float]], statistic: Callable[..., Any]) -> tuple[float, float]:
    """The percentile bootstrap interval of `statistic` over independent samples (each resampled on its own)."""
    # numpy and scipy load here, not with the module: `gauntlet serve` and every command import this
    # module through the CLI, and scipy.stats takes seconds to import on a busy machine.
    import numpy as np
    from scipy import stats as scipy_stats

    found = scipy_stats.bootstrap(
        [np.asarray(s, dtype=float) for s in samples], statistic, vectorized=True, paired=False,
        confidence_level=CONFIDENCE, n_resamples=BOOTSTRAP_RESAMPLES, method="percentile",
        random_state=np.random.default_rng(SEED),
    )
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


def _welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Welch's t interval of mean(a) - mean(b) (scipy.stats.ttest_ind, unequal variances)."""
    from scipy import stats as scipy_stats

    found = scipy_stats.ttest_ind(a, b, equal_var=False).confidence_interval(CONFIDENCE)
    return float(found.low), float(found.high)


def _few(a: Estimate, b: Estimate) -> bool:
    return min(len(a.values), len(b.values)) < SMALL_SAMPLE


def _median(values: Any, axis: int = -1) -> Any:
    import numpy as np

    return np.median(values, axis=axis)


def batches(timeline: Sequence[Second], per_second: PerSecond) -> list[float]:
    """The values of consecutive batches of one repeat's seconds (at most MAX_BATCHES of equal
    length; the last few seconds that do not fill a batch are left out). Batches without a
    denominator (no response in them) are left out too."""
    length = max(1, math.ceil(len(timeline) / MAX_BATCHES))
    found = []
    for start in range(0, len(timeline) - length + 1, length):
        parts = [per_second(second) for second in timeline[start:start + length]]
        numerator, denominator = sum(p[0] for p in parts), sum(p[1] for p in parts)
        if denominator:
            found.append(numerator / denominator)
    return found


def batch_half_width(values: Sequence[float]) -> float:
    """t(0.975, B-1) * sd / sqrt(B): the half width of the 95 % interval of a mean of B independent values."""
    # The t quantile from scipy.special (scipy.stats.t.ppf computes it so): a fraction of the time
    # scipy.stats takes to import, which a live view pays when its first case ends.
    from scipy.special import stdtrit

    count = len(values)
    critical = float(stdtrit(count - 1, (1 + CONFIDENCE) / 2))
    return critical * statistics.stdev(values) / math.sqrt(count)


def estimate(figure: str, values: Sequence[float | None], timelines: Sequence[Sequence[Second]] = ()) -> Estimate | None:
    """The figure over the repeats of one case: `values` its flat value in each repeat (None where a
    repeat lacks it), `timelines` their per-second timelines (optional; used with fewer than
    MIN_REPEATS repeats). None when no repeat has the figure."""
    present = [float(v) for v in values if v is not None]
    if not present:
        return None
    point = float(statistics.median(present))
    if len(present) >= MIN_REPEATS:
        if min(present) == max(present):
            return Estimate(point, point, point, len(present), BOOTSTRAP, tuple(present))
        low, high = _bootstrap([present], _median)
        return Estimate(point, low, high, len(present), BOOTSTRAP, tuple(present))
    repeats = f"{len(present)} repeat{'s' if len(present) > 1 else ''}"
    per_second = PER_SECOND.get(figure)
    if per_second is None:
        return _no_interval(point, len(present), f"{repeats}, and this figure is estimated from repeats only")
    found = [value for timeline in timelines for value in batches(timeline, per_second)]
    if len(found) < MIN_BATCHES:
        return _no_interval(point, len(present), f"{repeats} of fewer than {MIN_BATCHES} seconds")
    half = batch_half_width(found)
    return Estimate(point, point - half, point + half, len(found), BATCH_MEANS, tuple(present))


def _constant(values: Sequence[float]) -> bool:
    return min(values) == max(values)


def ratio(numerator: Estimate, denominator: Estimate) -> Estimate:
    """numerator / denominator with its interval: both bootstrapped (3 repeats or more each): a
    bootstrap of the ratio of medians, each side resampled on its own (with fewer than SMALL_SAMPLE
    repeats a side, Welch's t interval of the difference of the logs' means); otherwise, both with an
    interval: the two relative half widths added in quadrature on a log scale (the delta method:
    exp(log r +- sqrt(h1^2 + h2^2))); else none. A zero denominator has no ratio: ValueError."""
    if not denominator.point:
        raise ValueError("a ratio over 0")
    point = numerator.point / denominator.point
    n = min(numerator.n, denominator.n)
    if numerator.bootstrapped and denominator.bootstrapped:
        if _constant(numerator.values) and _constant(denominator.values):
            return Estimate(point, point, point, n, BOOTSTRAP)
        if _few(numerator, denominator) and min(numerator.values + denominator.values) > 0:
            low, high = _welch([math.log(v) for v in numerator.values], [math.log(v) for v in denominator.values])
            return Estimate(point, math.exp(low), math.exp(high), n, f"{WELCH}, log scale")
        low, high = _bootstrap(
            [numerator.values, denominator.values], lambda a, b, axis=-1: _median(a, axis) / _median(b, axis)
        )
        return Estimate(point, low, high, n, BOOTSTRAP)
    if not (numerator.has_interval and denominator.has_interval):
        missing = numerator if not numerator.has_interval else denominator
        return _no_interval(point, n, missing.method.partition(": ")[2] or "one side has none")
    if point <= 0:
        return _no_interval(point, n, "a ratio at or below 0 has no log-scale interval")
    half = math.hypot(numerator.relative_half_width, denominator.relative_half_width)
    method = BATCH_MEANS if BATCH_MEANS in (numerator.method, denominator.method) else BOOTSTRAP
    return Estimate(point, point * math.exp(-half), point * math.exp(half), n, f"{method}, intervals combined")


def difference(before: Estimate, after: Estimate) -> Estimate:
    """after - before (for shares, compared in points): a bootstrap of the difference of medians
    when both are bootstrapped (Welch's t interval with fewer than SMALL_SAMPLE repeats a side), else the half widths added in quadrature, else no interval."""
    point = after.point - before.point
    n = min(before.n, after.n)
    if before.bootstrapped and after.bootstrapped:
        if _constant(before.values) and _constant(after.values):
            return Estimate(point, point, point, n, BOOTSTRAP)
        if _few(before, after):
            return Estimate(point, *_welch(after.values, before.values), n, WELCH)
        low, high = _bootstrap([after.values, before.values], lambda a, b, axis=-1: _median(a, axis) - _median(b, axis))
        return Estimate(point, low, high, n, BOOTSTRAP)
    if not (before.has_interval and after.has_interval):
        return _no_interval(point, n, "one side has none")
    half = math.hypot((before.high - before.low) / 2, (after.high - after.low) / 2)
    return Estimate(point, point - half, point + half, n, f"{BATCH_MEANS}, intervals combined")


def percentile_shown(name: str, responses: int | float | None) -> bool:
    """Whether a latency percentile ('p50', 'p99', 'p99_9', 'max', or 'latency_p99_us') rests on
    enough responses: RESPONSES_BEYOND_PERCENTILE beyond it, so 1,000 for p99 and 10,000 for
    p99.9. The max and the mean need one."""
    if not responses:
        return False
    quantile = PERCENTILES.get(name.removeprefix("latency_").removesuffix("_us"))
    if quantile is None or quantile >= 1:
        return True
    return responses * (1 - quantile) >= RESPONSES_BEYOND_PERCENTILE - 1e-9


def cpu_resolution_s(server: dict[str, Any]) -> float:
    """How finely the monitor's CPU total of a result's `server` block is counted: a tick x
    sqrt(processes) from /proc, a microsecond from a cgroup."""
    if server.get("cpu_source", "proc") != "proc":
        return CGROUP_RESOLUTION_S
    return CLOCK_TICK_S * math.sqrt(max(1, server.get("max_processes") or 1))


def server_cpu_unshown(server: dict[str, Any]) -> str:
    """Why the server's CPU per request is not shown ('' when it is): a measured interval under
    MIN_CPU_WINDOW_S, or a CPU total under MIN_CPU_RESOLUTIONS of its counters' resolution."""
    window_s = server.get("elapsed_s")
    if window_s is not None and window_s < MIN_CPU_WINDOW_S:
        return f"{TOO_LITTLE_CPU} (measured over {window_s * 1e3:.0f} ms; the monitor needs {MIN_CPU_WINDOW_S:g} s)"
    cpu_s, resolution_s = server["cpu_user_s"] + server["cpu_system_s"], cpu_resolution_s(server)
    if cpu_s >= MIN_CPU_RESOLUTIONS * resolution_s:
        return ""
    return f"{TOO_LITTLE_CPU} ({cpu_s * 1e3:.0f} ms, counted in steps of {resolution_s * 1e3:.0f} ms)"


def server_cpu_us_per_request(result: dict[str, Any]) -> float | None:
    """The server's CPU per request, None without a monitored server, a request, or enough CPU to measure."""
    server = result.get("server")
    if not server or not result["requests"] or server_cpu_unshown(server):
        return None
    return float(server["cpu_us_per_request"])


def min_responses(name: str) -> int:
    """The responses a percentile needs (p99: 1,000), 1 for the max."""
    quantile = PERCENTILES[name.removeprefix("latency_").removesuffix("_us")]
    return 1 if quantile >= 1 else round(RESPONSES_BEYOND_PERCENTILE / (1 - quantile))


#: The headline figures of a run result, by their flat name, and how to read each (None: absent).
HEADLINE: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "requests_per_s": lambda r: r["requests_per_s"],
    "latency_p50_us": lambda r: r["latency_us"]["p50"] if r["latency_us"]["count"] else None,
    "latency_p99_us": lambda r: r["latency_us"]["p99"] if r["latency_us"]["count"] else None,
    "client_cpu_us_per_request": lambda r: r["client"]["cpu_us_per_request"] if r["requests"] else None,
    "server_cpu_us_per_request": server_cpu_us_per_request,
}


def headline_estimates(results: Sequence[dict[str, Any]]) -> dict[str, Estimate]:
    """Each headline figure over the repeats (run results) that have it; a latency percentile only
    where every repeat has the responses it needs (percentile_shown)."""
    found = {}
    timelines = [result.get("timeline", []) for result in results]
    for name, read in HEADLINE.items():
        if name in PERCENTILES_OF_RESULTS and not all(percentile_shown(name, r["latency_us"]["count"]) for r in results):
            continue
        if (e := estimate(name, [read(result) for result in results], timelines)) is not None:
            found[name] = e
    return found


PERCENTILES_OF_RESULTS = ("latency_p50_us", "latency_p99_us")


def median_index(results: Sequence[dict[str, Any]]) -> int:
    """The repeat whose requests/s is the median (the lower middle one of an even count): the one
    shown in full when there are several."""
    order = sorted(range(len(results)), key=lambda i: results[i]["requests_per_s"])
    return order[(len(order) - 1) // 2]


def estimates_json(found: dict[str, Estimate]) -> dict[str, dict[str, Any]]:
    """Estimates by figure as JSON (repeat-result-v2.json): point, low, high, n, method."""
    return {name: {"point": e.point, "low": e.low, "high": e.high, "n": e.n, "method": e.method} for name, e in found.items()}
