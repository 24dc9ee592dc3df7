"""The results store: one SQLite file holding runs, their cases, figures, timelines and histograms.

    with Store.open(Path("results.db")) as store:
        run_id = store.begin_run(suite="quick", suite_text=text, options={}, environment=env, planned_cases=12)
        for record in measured_cases:
            store.add_case(run_id, record)      # on disk when it returns
        store.end_run(run_id, "complete")

    with Store.open_read_only(Path("results.db")) as store:   # report, compare, export
        runs = store.runs()

The schema is in migrations/, the flat figures in figures.py; docs/results-store.md describes both.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from gauntlet.model.record import CaseRecord
from gauntlet.analysis.verdict import NoiseFloor
from gauntlet.store import db, noise, read, write
from gauntlet.store.read import CaseHeadline, CaseRow, RunRow

__all__ = ["CaseHeadline", "CaseRow", "RunRow", "Store"]


class Store:
    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    @classmethod
    def open(cls, path: Path | str, *, create: bool = True) -> Store:
        """Open (or, with `create`, make) the database for writing and bring its schema to this version."""
        path = Path(path)
        return cls(db.connect(path, create=create), path)

    @classmethod
    def open_read_only(cls, path: Path | str) -> Store:
        """Open an existing store for reading only, as every reading command does: the file is never
        created, migrated or switched to WAL (an older schema is read from a migrated copy in memory)."""
        path = Path(path)
        return cls(db.connect_read_only(path), path)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # The suite's side: a run, its cases as they end, its end.

    def begin_run(
        self, *, suite: str, suite_text: str | None, options: dict[str, Any], environment: dict[str, Any], planned_cases: int,
        command: str = "suite", started_unix_ms: int | None = None,
    ) -> int:
        """`command`: suite, or the measuring command (run, sweep, capacity, calibrate) whose run this is;
        `started_unix_ms`: when it started, if not now."""
        return write.begin_run(
            self._conn, self.path, command=command, suite=suite, suite_text=suite_text, options=options,
            environment=environment, planned_cases=planned_cases, started_unix_ms=started_unix_ms,
        )

    def add_case(self, run_id: int, record: CaseRecord) -> int:
        """One transaction: the case, its figures, timeline and histograms are durable when this returns."""
        return write.add_case(self._conn, self.path, run_id, record)

    def end_run(self, run_id: int, status: str) -> None:
        """status: running, complete, interrupted or failed."""
        read.run(self._conn, self.path, run_id)
        write.end_run(self._conn, self.path, run_id, status)

    def resume_run(self, run_id: int) -> RunRow:
        """Mark the run running again; its row (suite text, options) lets the suite rebuild its plan."""
        self.end_run(run_id, "running")
        return read.run(self._conn, self.path, run_id)

    def done(self, run_id: int) -> dict[tuple[str, int], bool | None]:
        """The run's stored cases except partial ones (a resume measures those again), by (key, repeat),
        with the QoS verdict the suite stored in a sessions result (`result["qos"]["valid"]`), else None."""
        return read.done(self._conn, run_id)

    # The report's side.

    def runs(self) -> list[RunRow]:
        return read.runs(self._conn)

    def headlines(self) -> dict[int, list[CaseHeadline]]:
        """Each run's cases by run id: key, params, server kind, requests/s (no result read)."""
        return read.headlines(self._conn)

    def run(self, run_id: int) -> RunRow:
        return read.run(self._conn, self.path, run_id)

    def latest_run_id(self) -> int:
        return read.latest_run_id(self._conn, self.path)

    def cases(self, run_ids: list[int]) -> list[CaseRow]:
        """The runs' cases in the order they were stored, each with its whole result."""
        return read.cases(self._conn, run_ids)

    # The machine's noise floors (gauntlet calibrate noise).

    def add_noise_floors(self, measured: noise.Measured, measured_unix_ms: int | None = None) -> None:
        noise.add(self._conn, self.path, measured, measured_unix_ms)

    def noise_floors(self, server_kind: str | None = None) -> dict[str, NoiseFloor]:
        """The latest measured floor of each figure (none when never calibrated), one measured on
        `server_kind` where there is one."""
        return noise.latest(self._conn, server_kind)
