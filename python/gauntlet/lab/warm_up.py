"""SPECweb's warm-up before a capacity search: the load at the search's start level, run once on
each freshly started server before its first probe, so that what a server does only at first (a
JSP compiled on its first request, the JVM's JIT, PHP's opcode cache filling) happens before
anything is measured. The run is not a probe: its figures go with the first probe's result
(`result["warm_up"]`), so the report can set the cold server's CPU per page beside the warm one."""

from __future__ import annotations

import dataclasses
from typing import Any

from gauntlet.analysis.qos import pages_of
from gauntlet.lab.measure import DEFAULT_SETTINGS, measure_run
from gauntlet.model.case import Case
from gauntlet.model.loadfile import LoadFile
from gauntlet.plan import Plan
from gauntlet.servers.base import ServerInstance


class WarmUpInterrupted(Exception):
    """Ctrl-C during the warm-up."""


def summary(result: dict[str, Any], users: int) -> dict[str, Any]:
    """What the warm-up run did: its length, pages, and the server's CPU per page (None without
    the monitor or a page)."""
    pages, server = pages_of(result), result.get("server")
    cpu_ms = None if not server else (server["cpu_user_s"] + server["cpu_system_s"]) * 1e3
    return {
        "users": users,
        "duration_s": result["elapsed_us"] / 1e6,
        "pages": pages,
        "server_cpu_ms_per_page": cpu_ms / pages if cpu_ms is not None and pages else None,
    }


def warm_up_load(load: LoadFile, duration_us: int) -> LoadFile:
    """`load` as a warm-up: the whole run measured (its pages are the warm-up's), no warm-up or
    ramp-down of its own."""
    return load.model_copy(update={"warm_up": 0, "measure": duration_us, "ramp_down": 0})


def run_warm_up(plan: Plan, server: ServerInstance | None, users: int) -> dict[str, Any]:
    """Runs the warm-up `plan`; its summary (Ctrl-C: WarmUpInterrupted)."""
    measured = measure_run(plan, server, DEFAULT_SETTINGS, observed=False)
    if measured.interrupted:
        raise WarmUpInterrupted
    return summary(measured.result, users)


class WarmUp:
    """The warm-up of one capacity search: `once(server)` runs it the first time it is called for a
    server (before the first probe measured there: a server started again after a probe broke it is
    cold again) and hands its summary back; None after."""

    def __init__(self, case: Case, params: dict[str, Any]) -> None:
        self._case, self._params = case, params
        self._warmed: ServerInstance | None = None

    def once(self, server: ServerInstance) -> dict[str, Any] | None:
        sessions = self._case.sessions
        if self._warmed is server or sessions is None or not sessions.capacity_warm_up_us or sessions.capacity_start is None:
            return None
        self._warmed = server
        load = warm_up_load(sessions.load, sessions.capacity_warm_up_us)
        plan = dataclasses.replace(sessions, load=load).plan(self._params, server.url, server.https_url)
        return run_warm_up(plan, server, sessions.capacity_start)
