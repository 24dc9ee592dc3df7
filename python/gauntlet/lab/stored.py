"""A measuring command's results kept as a run of the results store (`run`, `sweep`, `capacity`,
`calibrate`), so that `report`, `compare` and `export` read them as they read a suite's.

The store is opened before any load (a bad --db fails at once); the run begins with the first
case, when the environment taken after the first measurement is known.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from gauntlet.lab.measure import Measurement
from gauntlet.lab.observers import Feed, Observer, running_version
from gauntlet.model.case import plan_params, server_params
from gauntlet.model.record import CaseRecord
from gauntlet.plan import Plan
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.spec import ServerSpec

if TYPE_CHECKING:
    from gauntlet.store import Store


class StoredRun:
    """Where a command's cases go: a new run in the store at `db`, or nowhere when `db` is None."""

    def __init__(
        self, db: Path | None, command: str, options: dict[str, Any], environment: Callable[[], dict[str, Any]],
        planned_cases: int, observers: Sequence[Observer] = (), params_of: Callable[[Plan], dict[str, Any]] | None = None,
    ) -> None:
        """`observers` are told of each case while the run is open (lab.observers); `params_of`
        names the case a plan measures, for them."""
        self._store = None if db is None else _open(db)
        self.feed = Feed(command, observers, planned_cases, params_of)
        self._command = command
        self._options = options
        self._environment = environment
        self._planned_cases = planned_cases
        self._started_unix_ms = time.time_ns() // 1_000_000
        self.run_id: int | None = None
        self.status = "failed"

    def begin(self) -> int | None:
        """The run's id, the run begun if it was not yet (None: nothing is stored)."""
        if self._store is not None and self.run_id is None:
            self.run_id = self._store.begin_run(
                command=self._command, suite=self._command, suite_text=None, options=self._options,
                environment=self._environment(), planned_cases=self._planned_cases, started_unix_ms=self._started_unix_ms,
            )
        return self.run_id

    def add(self, record: CaseRecord) -> None:
        if self._store is not None and (run_id := self.begin()) is not None:
            self._store.add_case(run_id, record)
        self.feed.ended(record, self.run_id)

    def add_measurement(self, params: dict[str, Any], measurement: Measurement, repeat: int, server: ServerInstance | None) -> None:
        self.add(measured_record(params, measurement, repeat, server))

    def __enter__(self) -> Self:
        self.feed.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        try:
            self.feed.__exit__(kind, error, tb)
        finally:
            self._end_run(kind)

    def _end_run(self, kind: type[BaseException] | None) -> None:
        if self._store is None:
            return
        try:
            if self.run_id is not None:
                self._store.end_run(self.run_id, "interrupted" if kind is KeyboardInterrupt else self.status)
        finally:
            self._store.close()


def _open(db: Path) -> Store:
    # Imported here: the CLI starts without the store (and SQLite) until a command stores something.
    from gauntlet.store import Store

    return Store.open(db)


def measured_record(params: dict[str, Any], measurement: Measurement, repeat: int, server: ServerInstance | None) -> CaseRecord:
    """One measurement as the store keeps it, with the server's version and config when Gauntlet started it."""
    result = measurement.result
    started_ms = int(result["started_unix_ms"])
    return CaseRecord(
        params, repeat=repeat, server_version=None if server is None else running_version(server),
        config_text=None if server is None else server.config_text, result=result, error=measurement.error,
        labels=measurement.labels,
        started_unix_ms=started_ms, ended_unix_ms=started_ms + int(result["elapsed_us"]) // 1000,
    )


def command_params(command: str, url: str | None, spec: ServerSpec | None, path: str, plan: Plan) -> dict[str, Any]:
    """A command's case params: the target (the URL given, or the server and the path), then the load;
    the same for the same command line, so that two runs of it compare case by case."""
    keepalive = plan.keepalive is not False
    target = {"url": url, "keepalive": keepalive} if spec is None else server_params(spec, keepalive) | {"path": path}
    model = "sessions" if plan.sessions is not None else "rate" if plan.rate_per_s is not None else "closed"
    return {"group": command} | target | plan_params(plan, model)
