"""The progress line: the rate now comes from successive readings of the engine's counters."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from gauntlet.cli.progress import ProgressLine, rate_now_per_s
from gauntlet.engine import Progress


def reading(responses: int, elapsed_us: int, errors: int = 0, measuring: bool = True) -> Progress:
    return {"requests": responses + errors, "responses": responses, "errors": errors, "bytes_in": 0,
            "elapsed_us": elapsed_us, "measuring": measuring}


@pytest.mark.parametrize(
    ("previous", "current", "rate_per_s"),
    [
        (None, reading(100, 250_000), 400.0),
        (None, reading(0, 0, measuring=False), 0.0),
        (reading(100, 250_000), reading(600, 500_000), 2_000.0),
        (reading(600, 500_000), reading(600, 750_000), 0.0),
        (reading(600, 500_000), reading(700, 500_000), 0.0),
        (reading(900, 0, measuring=False), reading(100, 250_000), 0.0),
    ],
)
def test_rate_now(previous: Progress | None, current: Progress, rate_per_s: float) -> None:
    assert rate_now_per_s(previous, current) == rate_per_s


def test_the_line_shows_elapsed_rate_counts_and_errors() -> None:
    line = ProgressLine(Console(file=io.StringIO()), total_requests=10_000, duration_us=None)
    assert line.render(reading(0, 0, measuring=False)).plain == "warming up..."
    line.render(reading(1_000, 500_000))
    shown = line.render(reading(3_000, 1_000_000, errors=7)).plain
    assert shown == "1.00s  4,000 req/s now  3,007 of 10,000 requests  7 errors"
