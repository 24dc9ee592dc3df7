"""How many requests the server logged over the measured interval, for the server-log-count
invariant: the access log's size once the engine says measuring has begun (a stat, so the instant
is not lost counting lines), between two readings of the engine's count of measured responses,
then the lines written after that point once the run has ended, followed by offset while they
catch up (each byte read once). A server that buffers its log (lighttpd) has the lines of its
buffer counted late."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gauntlet.analysis.invariants import LoggedCount
from gauntlet.servers.base import ServerInstance

#: Servers write a log line after the response has left: the count waits this long to catch up.
CATCH_UP_S = 2.0


class LoggedRequests:
    """`mark()` when the measured interval begins; `since_mark(result)` after the run (None when
    the server keeps no access log or no mark was made)."""

    def __init__(self, server: ServerInstance | None) -> None:
        self._server = server if server is not None and server.access_log is not None else None
        self._mark_offset_bytes: int | None = None
        self._counted = (0, 0)

    def mark(self, counted: Callable[[], int]) -> None:
        """Now, measuring having begun: `counted()` is the engine's count of measured responses so far."""
        if self._server is not None and self._server.access_log is not None:
            before = counted()
            try:
                self._mark_offset_bytes = self._server.access_log.stat().st_size
            except FileNotFoundError:
                self._mark_offset_bytes = 0
            self._counted = (before, counted())

    def since_mark(self, result: dict[str, Any]) -> LoggedCount | None:
        if self._server is None or self._server.access_log is None or self._mark_offset_bytes is None:
            return None
        follower = LogFollower(self._mark_offset_bytes, self._server.preface_log_marker)
        deadline = time.monotonic() + CATCH_UP_S
        while True:
            lines = follower.lines_after(self._server.flush_access_log())
            if lines >= result["responses"] - self._counted[1] or time.monotonic() >= deadline:
                return LoggedCount(lines, *self._counted)
            time.sleep(0.02)


class LogFollower:
    """Request lines written to a log past an offset, read once each: every call reads only what
    was appended since the last one, up to its last complete line."""

    def __init__(self, offset_bytes: int, marker: bytes | None) -> None:
        self._offset_bytes = offset_bytes
        self._marker = marker
        self._lines = 0

    def lines_after(self, log: Path) -> int:
        """Complete lines from the offset to the log's end, less those holding the marker."""
        with log.open("rb") as file:
            file.seek(self._offset_bytes)
            appended = file.read()
        complete = appended[: appended.rfind(b"\n") + 1]
        self._offset_bytes += len(complete)
        self._lines += complete.count(b"\n") - (complete.count(self._marker) if self._marker else 0)
        return self._lines
