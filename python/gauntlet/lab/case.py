"""One case: a load plan measured against a running server, with the server's process tree
monitored while the load runs and the result's bottleneck labels (lab.measure.measure_run), handed
back as a CaseRecord."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.lab.measure import DEFAULT_SETTINGS, Settings, measure_run
from gauntlet.lab.record import CaseRecord
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.spec import ServerSpec

if TYPE_CHECKING:
    from gauntlet.lab.loadfile import LoadFile


@dataclass(frozen=True)
class Sessions:
    """A sessions case: the load file, and a number of simultaneous users, or a capacity search
    (from `capacity_start`), or neither: the load file as written (its users or arrival phases)."""

    load: LoadFile
    users: int | None = None
    capacity_start: int | None = None
    capacity_max_probes: int = 8

    def plan(self, params: dict[str, Any], url: str) -> engine.Plan:
        """The engine plan of the case (or capacity probe) with these params."""
        level = params.get(self.load.level_name)
        return (self.load if level is None else self.load.at_level(level)).plan(url)


@dataclass(frozen=True)
class Case:
    """A grid point: the server it needs, the request path, and the load: an engine plan without its
    URL, or sessions whose plan the load file builds at the target."""

    group: str
    server: ServerSpec
    path: str
    params: dict[str, Any]
    plan: dict[str, Any] = field(default_factory=dict)
    sessions: Sessions | None = None


@dataclass
class Measured:
    record: CaseRecord
    interrupted: bool


def now_ms() -> int:
    return int(time.time() * 1000)


def measure(
    plan: engine.Plan,
    server: ServerInstance | None,
    params: dict[str, Any],
    *,
    server_version: str | None = None,
    repeat: int = 0,
    run_plan: engine.Runner = engine.run,
    on_progress: Callable[[engine.Progress], None] | None = None,
    settings: Settings = DEFAULT_SETTINGS,
) -> Measured:
    """Run `plan` (its URL filled in) and record it; a plan the engine refuses becomes a record
    with the reason, so a suite goes on."""
    started_ms = now_ms()
    base = CaseRecord(
        params,
        repeat=repeat,
        server_version=server_version,
        config_text=None if server is None else server.config_text,
        started_unix_ms=started_ms,
    )
    try:
        measured = measure_run(plan, server, settings, on_progress, run_plan)
    except GauntletError as err:
        base.error = str(err)
        base.ended_unix_ms = now_ms()
        return Measured(base, interrupted=False)
    base.result = measured.result
    base.labels = measured.labels
    base.ended_unix_ms = now_ms()
    return Measured(base, measured.interrupted)
