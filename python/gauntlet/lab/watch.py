"""The processes Gauntlet started for a case, watched while its load runs: the server's main
process and each backend's (PHP-FPM, uWSGI, MariaDB, BeSim). The first one that exits sets the
engine's stop flag, so the case ends at once instead of at its deadline, and is stored as an error
that names the exit (docs/results.md, "A server that exits").

A worker that its master replaces (nginx, Apache, PHP-FPM) is not watched: its master is, and the
master's exit takes every worker with it."""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, Self

WATCH_INTERVAL_S = 0.02


class Watched(Protocol):
    """What the watch needs of a server instance (gauntlet.servers.base.ServerInstance)."""

    def exits(self) -> list[tuple[str, int]]: ...


@dataclass(frozen=True)
class Exit:
    """A watched process that exited: its name, its status (-N: signal N), and when the watch saw
    it on time.monotonic's clock (within WATCH_INTERVAL_S)."""

    name: str
    status: int
    seen_monotonic_us: int

    def how(self) -> str:
        if self.status < 0:
            try:
                return f"signal {-self.status}, {signal.Signals(-self.status).name}"
            except ValueError:
                return f"signal {-self.status}"
        return f"exit code {self.status}"

    def after_us(self, result: dict[str, Any]) -> int | None:
        """Its time into the result's measured interval; None when it came before the interval began."""
        after_us = self.seen_monotonic_us - int(result["measured_from_monotonic_us"])
        return after_us if after_us >= 0 and result["elapsed_us"] else None

    def message(self, result: dict[str, Any]) -> str:
        """`nginx exited (signal 9, SIGKILL) 3.0 s into the measurement`."""
        after_us = self.after_us(result)
        when = "before the measurement began" if after_us is None else f"{after_us / 1e6:.1f} s into the measurement"
        return f"{self.name} exited ({self.how()}) {when}"

    def to_json(self, result: dict[str, Any]) -> dict[str, Any]:
        """The result's `server_exit` (docs/results.md)."""
        return {
            "process": self.name,
            "exit_code": self.status if self.status >= 0 else None,
            "signal": -self.status if self.status < 0 else None,
            "after_us": self.after_us(result),
            "message": self.message(result),
        }


class Watch:
    """Polls the server's processes every WATCH_INTERVAL_S in a thread while the block runs; `stop`
    is set, and `exit` filled in, when one of them exits. Without a server it watches nothing."""

    def __init__(self, server: Watched | None) -> None:
        self._server = server
        self.stop = threading.Event()
        self.exit: Exit | None = None
        self._ended = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="gauntlet-watch", daemon=True)

    def _poll(self) -> None:
        assert self._server is not None
        while not self._ended.is_set():
            exits = self._server.exits()
            if exits:
                name, status = exits[0]
                self.exit = Exit(name, status, time.monotonic_ns() // 1000)
                self.stop.set()
                return
            self._ended.wait(WATCH_INTERVAL_S)

    def __enter__(self) -> Self:
        if self._server is not None:
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._ended.set()
        if self._thread.is_alive():
            self._thread.join()
