"""Measuring one case: a load plan run against a running server, with the server's processes
monitored while the load runs and the result's bottleneck labels (lab.measure.measure_run), handed
back as a CaseRecord."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.lab.measure import DEFAULT_SETTINGS, Settings, measure_run
from gauntlet.model.record import CaseRecord
from gauntlet.servers.base import ServerInstance
from gauntlet.plan import Plan


@dataclass
class Measured:
    record: CaseRecord
    interrupted: bool


def now_ms() -> int:
    return int(time.time() * 1000)


def measure(
    plan: Plan,
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
    base.error = measured.error
    base.labels = measured.labels
    base.ended_unix_ms = now_ms()
    return Measured(base, measured.interrupted)
