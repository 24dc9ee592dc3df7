"""The live progress line of a run: elapsed, requests/s now, errors."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.text import Text

from gauntlet.engine import Progress
from gauntlet.units import format_count, format_duration_us


class ProgressLine:
    """Shows the engine's counters on stderr while a run goes; gone when it ends."""

    def __init__(self, console: Console, total_requests: int | None, duration_us: int | None) -> None:
        self._console = console
        self._total_requests = total_requests
        self._duration_us = duration_us
        self._live = Live(Text("starting..."), console=console, transient=True, refresh_per_second=8)
        self._last: tuple[float, int] | None = None

    def __enter__(self) -> ProgressLine:
        if self._console.is_terminal:
            self._live.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._console.is_terminal:
            self._live.__exit__(kind, error, tb)

    def update(self, progress: Progress) -> None:
        now_s = time.monotonic()
        responses = int(progress["responses"])
        rate_per_s = 0.0
        if self._last is not None and now_s > self._last[0]:
            rate_per_s = (responses - self._last[1]) / (now_s - self._last[0])
        self._last = (now_s, responses)
        if not progress["measuring"]:
            self._live.update(Text("warming up..."))
            return
        elapsed = format_duration_us(int(progress["elapsed_us"]))
        if self._duration_us:
            elapsed += f" of {format_duration_us(self._duration_us)}"
        done = format_count(int(progress["requests"]))
        if self._total_requests:
            done += f" of {format_count(self._total_requests)}"
        line = Text.assemble(
            (f"{elapsed}  ", "bold"),
            f"{format_count(rate_per_s)} req/s now  ",
            f"{done} requests  ",
            (f"{format_count(int(progress['errors']))} errors", "red" if progress["errors"] else "dim"),
        )
        self._live.update(line)
