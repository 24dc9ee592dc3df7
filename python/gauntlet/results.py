"""The results store as pandas DataFrames:

    import gauntlet.results
    with gauntlet.results.open("results.db") as results:
        cases = results.cases()            # every run; results.cases(3) for run 3 only
        cases.groupby("server")["requests_per_s"].mean()

One row per case: the case's own columns, its parameters, its flat figures (docs/results-store.md).
pandas is imported on first use, not with gauntlet.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from gauntlet.report.export import flat_rows
from gauntlet.store import CaseRow, Store
from gauntlet.store.write import TIMELINE_COLUMNS

if TYPE_CHECKING:
    import pandas

#: The parameters a timeline row carries to say whose second it is.
CASE_NAMES = ("server", "group")


def open(path: str | Path) -> Results:
    """Open an existing results database for reading only (it is never written)."""
    return Results(Store.open_read_only(path))


class Results:
    def __init__(self, store: Store) -> None:
        self._store = store

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _cases(self, run_ids: tuple[int, ...]) -> list[CaseRow]:
        for run_id in run_ids:
            self._store.run(run_id)
        return self._store.cases(list(run_ids) or [run.run_id for run in self._store.runs()])

    def runs(self) -> pandas.DataFrame:
        """One row per run: suite, status, planned and stored cases, times, environment (a dict)."""
        import pandas

        return pandas.DataFrame([asdict(run) for run in self._store.runs()], columns=[
            "run_id", "suite", "status", "planned_cases", "stored_cases", "started_unix_ms", "ended_unix_ms",
            "gauntlet_version", "options", "environment", "suite_text",
        ])

    def cases(self, *run_ids: int) -> pandas.DataFrame:
        """One row per case of the given runs (all runs without any)."""
        import pandas

        columns, rows = flat_rows(self._cases(run_ids))
        return pandas.DataFrame(rows, columns=columns)

    def timelines(self, *run_ids: int) -> pandas.DataFrame:
        """One row per second of every measured case of the given runs (all runs without any), with the
        case's server and group, so that servers can be overlaid without a join."""
        import pandas

        rows = [
            {"run_id": case.run_id, "case_id": case.case_id, "repeat": case.repeat, **{name: case.params.get(name) for name in CASE_NAMES},
             **second}
            for case in self._cases(run_ids) if case.result is not None for second in case.result["timeline"]
        ]
        return pandas.DataFrame(rows, columns=["run_id", "case_id", "repeat", *CASE_NAMES, *TIMELINE_COLUMNS, "errors_by_kind"])
