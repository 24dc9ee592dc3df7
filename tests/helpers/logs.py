"""Servers write an access-log line after the response has left: read logs with a bounded wait."""

from __future__ import annotations

import time
from pathlib import Path

from gauntlet.servers.base import ServerInstance


def log_lines(path: Path, expected: int, timeout_s: float = 3.0) -> list[str]:
    """The log's lines once it has `expected` of them, or whatever it has after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= expected or time.monotonic() >= deadline:
            return lines
        time.sleep(0.01)


def access_log_lines(server: ServerInstance, expected: int, timeout_s: float = 3.0) -> list[str]:
    """The server's access log (flushed where it buffers) once it has `expected` lines, or
    whatever it has after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        lines = server.access_log_lines()
        if len(lines) >= expected or time.monotonic() >= deadline:
            return lines
        time.sleep(0.02)
