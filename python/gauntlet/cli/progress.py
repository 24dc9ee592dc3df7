"""The live progress line of a run: elapsed, requests/s now, errors."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
from rich.progress import Progress as Bar
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


class SuiteProgress:
    """A suite's progress on stderr: cases done of all with the time left, and the current case's
    live requests/s (on a terminal only); `finished` prints a line per case that stays."""

    def __init__(self, console: Console, total_cases: int) -> None:
        self._console = console
        self._bar = Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("cases, left"),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        self._overall = self._bar.add_task("suite", total=total_cases)
        self._line = ProgressLine(console, None, None)
        self._current = ""

    def __enter__(self) -> SuiteProgress:
        if self._console.is_terminal:
            self._bar.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._console.is_terminal:
            self._bar.__exit__(kind, error, tb)

    def started(self, label: str) -> None:
        self._current = label
        self._line = ProgressLine(self._console, None, None)
        self._bar.update(self._overall, description=label)

    def update(self, progress: Progress) -> None:
        self._bar.update(self._overall, description=f"{self._current}  {self._line.render(progress)}")

    def finished(self, line: str) -> None:
        self._console.print(line, highlight=False)
        self._bar.advance(self._overall)
