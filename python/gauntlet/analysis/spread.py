"""How much repeated measurements of the same case vary: median, min..max and coefficient of
variation of the headline figures. Pure functions of run results."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

#: The headline figures, by the name the spread is reported under, and how to read each from a result.
FIGURES: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "requests_per_s": lambda r: r["requests_per_s"],
    "latency_p50_us": lambda r: r["latency_us"]["p50"] if r["latency_us"]["count"] else None,
    "latency_p99_us": lambda r: r["latency_us"]["p99"] if r["latency_us"]["count"] else None,
    "client_cpu_us_per_request": lambda r: r["client"]["cpu_us_per_request"] if r["requests"] else None,
    "server_cpu_us_per_request": lambda r: r["server"]["cpu_us_per_request"] if "server" in r and r["requests"] else None,
}


@dataclass(frozen=True)
class Spread:
    median: float
    min: float
    max: float
    #: Sample standard deviation over the mean; None with fewer than two values or a zero mean.
    cv: float | None
    count: int


def spread(values: Sequence[float]) -> Spread:
    if not values:
        raise ValueError("no values to spread")
    mean = statistics.fmean(values)
    cv = statistics.stdev(values) / mean if len(values) > 1 and mean else None
    return Spread(statistics.median(values), min(values), max(values), cv, len(values))


def spreads(results: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The spread of each headline figure over the results that have it (JSON-able)."""
    found = {}
    for name, read in FIGURES.items():
        values = [value for value in map(read, results) if value is not None]
        if values:
            found[name] = asdict(spread(values))
    return found


def median_index(results: Sequence[dict[str, Any]]) -> int:
    """The repeat whose requests/s is the median (the lower middle one of an even count): the one
    shown in full when there are several."""
    order = sorted(range(len(results)), key=lambda i: results[i]["requests_per_s"])
    return order[(len(order) - 1) // 2]
