"""What runs on a Dask worker: its facts for the controller's checks, and one slice of a plan.

A slice task checks that its worker can reach the target, says it is ready, waits for the start
instant the controller publishes once every agent is ready (the barrier), then runs the native
engine with the GIL released until the plan ends or the controller cancels it. Progress and
readiness (with the route the probe took) go to the controller as Dask events on the run's topic.
"""

from __future__ import annotations

import socket
import threading
import time
import urllib.parse
from typing import Any

from distributed import Variable, get_worker

import gauntlet
from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.route import Route, route_of_socket

#: How long a reachability probe may take to connect.
CONNECT_PROBE_TIMEOUT_S = 3.0

#: Runs in progress in this worker process, by run id: set to cancel.
_STOPS: dict[str, threading.Event] = {}


class AgentError(Exception):
    """Why a slice could not run, in one line (a GauntletError does not cross processes intact)."""


def topic(run_id: str) -> str:
    return f"gauntlet-agents-{run_id}"


def start_variable_name(run_id: str) -> str:
    return f"gauntlet-start-{run_id}"


def agent_facts() -> dict[str, Any]:
    """This worker's Gauntlet version and wall clock (read last)."""
    return {"version": gauntlet.__version__, "unix_time_s": time.time()}


def cancel_run(run_id: str) -> bool:
    """Ask this worker's slice of `run_id` to stop; False when it has none running."""
    stop = _STOPS.get(run_id)
    if stop is not None:
        stop.set()
    return stop is not None


def probe_target(url: str, origin: str) -> Route:
    """Connect once to the plan's target (no request is sent): an agent that cannot reach it
    says so before the load begins; one that can says which route its connection took."""
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=CONNECT_PROBE_TIMEOUT_S) as probe:
            return route_of_socket(probe, origin)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise GauntletError(f"cannot reach {parts.hostname}:{port} ({reason})", "Check the target and this node's network") from None


def run_slice(run_id: str, index: int, plan: engine.Plan, start_timeout_s: float) -> dict[str, Any]:
    """Run one slice: probe, say ready, wait for the agreed start, run; returns the engine's result."""
    worker = get_worker()
    stop = _STOPS.setdefault(run_id, threading.Event())
    try:
        route = probe_target(plan["url"], worker.address)
        worker.log_event(topic(run_id), {"kind": "ready", "index": index, "route": route.to_json()})
        try:
            decision = Variable(start_variable_name(run_id)).get(timeout=start_timeout_s)
        except TimeoutError:
            raise AgentError(f"no start time came from the controller within {start_timeout_s:g} s") from None
        if "abort" in decision:
            raise AgentError(f"the controller called the run off: {decision['abort']}")

        def report(progress: engine.Progress) -> None:
            worker.log_event(topic(run_id), {"kind": "progress", "index": index, **progress})

        timed_plan = {**plan, "start_at_unix_us": decision["start_at_unix_us"], "timeline_histograms": True}
        return engine.run(timed_plan, report, stop).result
    except GauntletError as err:
        raise AgentError(str(err)) from None
    finally:
        _STOPS.pop(run_id, None)
