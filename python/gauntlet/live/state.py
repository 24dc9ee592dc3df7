"""What a live view knows of the run under way: its cases, each second of load and of the server's
processes as they come, and the cases finished with their records. Written by the command's
thread (through the lab's observer), read by the live server's threads: every access holds the lock,
and readers get copies."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gauntlet.model.record import CaseRecord, case_key
from gauntlet.report.labels import case_label

#: The engine's timeline fields a live second carries (docs/results.md, "Timeline entries").
SECOND_FIELDS = ("second", "span_us", "requests", "responses", "errors", "bytes_in", "p50_us", "p90_us", "p99_us", "max_us")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class LiveCase:
    index: int
    params: dict[str, Any]
    repeat: int
    server_kind: str | None
    server_version: str | None
    started_unix_ms: int
    #: How long its load is planned to run (None: a count of requests, or sessions).
    planned_s: float | None
    #: When it began, in seconds since the run began (the clock of the page's charts).
    began_at_s: float = 0.0
    #: Its timeline seconds so far, in order (SECOND_FIELDS and errors_by_kind).
    seconds: list[dict[str, Any]] = field(default_factory=list)
    #: The server's processes sampled while its load runs (monitor.sampler.TimelinePoint as a dict,
    #: as the result's `server.timeline` stores them), in order.
    server_points: list[dict[str, Any]] = field(default_factory=list)
    #: Set when it ends: what the store receives.
    record: CaseRecord | None = None

    @property
    def key(self) -> str:
        return case_key(self.params)

    @property
    def label(self) -> str:
        return case_label(self.params, self.repeat)

    def totals(self) -> dict[str, Any]:
        """Its counts so far: the result's once it ended, the sum of its seconds until then."""
        result = None if self.record is None else self.record.result
        if result is not None:
            return {
                "requests": result["requests"], "responses": result["responses"], "bytes_in": result["bytes_in"],
                "errors_by_kind": {kind: n for kind, n in result["errors"].items() if n},
            }
        by_kind: dict[str, int] = {}
        for second in self.seconds:
            for kind, n in (second.get("errors_by_kind") or {}).items():
                by_kind[kind] = by_kind.get(kind, 0) + n
        return {
            "requests": sum(s["requests"] for s in self.seconds), "responses": sum(s["responses"] for s in self.seconds),
            "bytes_in": sum(s["bytes_in"] for s in self.seconds), "errors_by_kind": by_kind,
        }


@dataclass(frozen=True)
class Point:
    """One point for the page's charts: a second of load (`load`: the timeline entry) or a sample
    of the server's processes (`server`: a TimelinePoint as a dict)."""

    seq: int
    case: int
    at_s: float
    load: dict[str, Any] | None = None
    server: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {"seq": self.seq, "case": self.case, "at_s": round(self.at_s, 3)}
        if self.load is not None:
            found["load"] = self.load
        if self.server is not None:
            found["roles"] = {
                role: {"cpu_percent": r["cpu_percent"], "rss_bytes": r["rss_bytes"]} for role, r in self.server["roles"].items()
            }
        return found


#: The finished cases as tables (live.finished.finished_tables): records in, JSON-able tables out.
Tabulate = Callable[[list[CaseRecord], int | None], list[dict[str, Any]]]


class LiveState:
    def __init__(self, command: str, tabulate: Tabulate, gauntlet_version: str) -> None:
        self.command = command
        self.gauntlet_version = gauntlet_version
        self._tabulate = tabulate
        self._lock = threading.Lock()
        self.started_unix_ms = now_ms()
        self._started_monotonic_s = time.monotonic()
        self.run_id: int | None = None
        self.planned_cases: int | None = None
        self.status = "running"
        self._cases: list[LiveCase] = []
        self._points: list[Point] = []
        self._finished_tables: list[dict[str, Any]] = []

    def _at_s(self) -> float:
        return time.monotonic() - self._started_monotonic_s

    def begin(self, run_id: int | None, planned_cases: int | None) -> None:
        with self._lock:
            self.run_id, self.planned_cases = run_id, planned_cases

    def case_started(
        self, params: dict[str, Any], repeat: int, server_kind: str | None, server_version: str | None, planned_s: float | None
    ) -> None:
        with self._lock:
            self._cases.append(
                LiveCase(len(self._cases), dict(params), repeat, server_kind, server_version, now_ms(), planned_s, self._at_s())
            )

    def _current(self) -> LiveCase | None:
        return self._cases[-1] if self._cases and self._cases[-1].record is None else None

    def second(self, entry: dict[str, Any]) -> None:
        """A timeline second of the current case, final (the engine's `on_second`)."""
        with self._lock:
            case = self._current()
            if case is None:
                return
            load = {name: entry[name] for name in SECOND_FIELDS} | {"errors_by_kind": dict(entry.get("errors_by_kind") or {})}
            case.seconds.append(load)
            self._points.append(Point(len(self._points), case.index, self._at_s(), load=load))

    def server_sample(self, point: dict[str, Any]) -> None:
        """A sample of the current case's server processes (a TimelinePoint as a dict)."""
        with self._lock:
            case = self._current()
            if case is None:
                return
            case.server_points.append(point)
            # At the sample's own time: samples are told in batches, with the seconds.
            self._points.append(Point(len(self._points), case.index, case.began_at_s + point["t_s"], server=point))

    def case_done(self, record: CaseRecord) -> None:
        """The case ended (its record as the store receives it); the finished tables are made again
        here, in the caller's thread, so that a page's request never waits on them."""
        with self._lock:
            case = self._current()
            if case is None:  # a case with no start (a server that never started)
                case = LiveCase(
                    len(self._cases), dict(record.params), record.repeat, None, record.server_version, record.started_unix_ms, None,
                    self._at_s(),
                )
                self._cases.append(case)
            case.record = record
            records = [c.record for c in self._cases if c.record is not None]
            run_id = self.run_id
        tables = self._tabulate(records, run_id)
        with self._lock:
            self._finished_tables = tables

    def end(self, status: str) -> None:
        with self._lock:
            self.status = status

    def cases(self) -> list[LiveCase]:
        """Every case so far (shallow copies: seconds, points and records are never changed in place)."""
        with self._lock:
            return [
                LiveCase(c.index, c.params, c.repeat, c.server_kind, c.server_version, c.started_unix_ms, c.planned_s,
                         c.began_at_s, list(c.seconds), list(c.server_points), c.record)
                for c in self._cases
            ]

    def left_s(self) -> float | None:
        """The suite's time left: the cases still to start at the mean length of those finished (or
        at the current one's plan before any finished), minus what the current one has run."""
        with self._lock:
            return self._left_s()

    def _left_s(self) -> float | None:
        if self.planned_cases is None:
            return None
        finished = [c for c in self._cases if c.record is not None]
        current = self._current()
        if finished:
            each_s = sum((c.record.ended_unix_ms - c.started_unix_ms) / 1000 for c in finished if c.record) / len(finished)
        elif current is not None and current.planned_s is not None:
            each_s = current.planned_s
        else:
            return None
        elapsed_s = 0.0 if current is None else (now_ms() - current.started_unix_ms) / 1000
        to_go = max(0, self.planned_cases - len(finished))
        return max(0.0, to_go * each_s - min(elapsed_s, each_s))

    def snapshot(self, since_seq: int = 0) -> dict[str, Any]:
        """What the page draws: the run, the current case, the points from `since_seq` on (all of
        them for a page opened late), the finished tables."""
        with self._lock:
            current = self._current()
            finished = [c for c in self._cases if c.record is not None]
            last = finished[-1] if finished else None
            return {
                "command": self.command, "run_id": self.run_id, "status": self.status, "gauntlet": self.gauntlet_version,
                "started_unix_ms": self.started_unix_ms, "now_unix_ms": now_ms(),
                "planned_cases": self.planned_cases, "finished_cases": len(finished), "left_s": self._left_s(),
                "current": None if current is None else {
                    "index": current.index, "label": current.label, "repeat": current.repeat,
                    "server_kind": current.server_kind, "server_version": current.server_version,
                    "elapsed_s": (now_ms() - current.started_unix_ms) / 1000, "planned_s": current.planned_s,
                },
                "last_finished": None if last is None or last.record is None else {
                    "label": last.label, "labels": list(last.record.labels), "error": last.record.error,
                },
                "cases": [{"index": c.index, "label": c.label} for c in self._cases],
                "points": [p.to_json() for p in self._points[since_seq:]],
                "next_seq": len(self._points),
                "finished": self._finished_tables,
            }
