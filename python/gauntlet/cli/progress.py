"""The live progress line of a run: elapsed, requests/s now, errors."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.text import Text

from gauntlet.engine import Progress
from gauntlet.units import format_count, format_duration_us


def rate_now_per_s(previous: Progress | None, current: Progress) -> float:
    """Responses per second between two successive readings, by the engine's own clock; the first
    reading counts from the start (zero responses at zero elapsed)."""
    start: Progress = {"responses": 0, "elapsed_us": 0}
    before = start if previous is None else previous
    span_us = int(current["elapsed_us"]) - int(before["elapsed_us"])
    if span_us <= 0:
        return 0.0
    return max(0, int(current["responses"]) - int(before["responses"])) * 1_000_000 / span_us


class ProgressLine:
    """Shows the engine's counters on stderr while a run goes (on a terminal only); gone when it ends."""

    def __init__(self, console: Console, total_requests: int | None, duration_us: int | None) -> None:
        self._console = console
        self._total_requests = total_requests
        self._duration_us = duration_us
        self._live = Live(Text("starting..."), console=console, transient=True, refresh_per_second=8)
        self._previous: Progress | None = None

    def __enter__(self) -> ProgressLine:
        if self._console.is_terminal:
            self._live.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._console.is_terminal:
            self._live.__exit__(kind, error, tb)

    def update(self, progress: Progress) -> None:
        self._live.update(self.render(progress))

    def render(self, progress: Progress) -> Text:
        """The line for this reading; the rate is the change since the previous reading."""
        rate_per_s = rate_now_per_s(self._previous, progress)
        self._previous = progress
        if not progress["measuring"]:
            return Text("warming up...")
        elapsed = format_duration_us(int(progress["elapsed_us"]))
        if self._duration_us:
            elapsed += f" of {format_duration_us(self._duration_us)}"
        done = format_count(int(progress["requests"]))
        if self._total_requests:
            done += f" of {format_count(self._total_requests)}"
        return Text.assemble(
            (f"{elapsed}  ", "bold"),
            f"{format_count(rate_per_s)} req/s now  ",
            f"{done} requests  ",
            (f"{format_count(int(progress['errors']))} errors", "red" if progress["errors"] else "dim"),
        )
