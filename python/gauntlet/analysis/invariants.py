"""What must hold for a result to be believed, checked on every result (docs/metrics.md,
"Invariants"): the CPU it reports fits in the machine, the monitor read the server often enough
over the measured interval, and the server logged the requests the engine counted. Pure functions
of the result and of what the lab read besides it; a check that could not be made says why."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

CPU_BUDGET = "cpu-budget"
MONITOR_SAMPLES = "monitor-samples"
SERVER_LOG_COUNT = "server-log-count"

#: Client and server CPU may exceed cores x time by this share: the two are read by different
#: clocks (the engine's threads, the server's cgroup) at edges a few milliseconds apart.
CPU_BUDGET_TOLERANCE = 0.05
#: A reading at each edge of the measured interval and at least one between (monitor.sampler's
#: `samples`): a window shorter than a sampling interval has its CPU from the edge readings alone
#: and no timeline point inside.
MIN_SAMPLES = 3


@dataclass(frozen=True)
class Check:
    name: str
    #: None: not checked here (`detail` says why).
    held: bool | None
    detail: str


def cpu_budget(result: dict[str, Any], cores: int) -> Check:
    """Client CPU + server CPU over the measured interval <= cores x its length (+ tolerance)."""
    if "agents" in result:
        return Check(CPU_BUDGET, None, "the agents' CPU may be on other machines")
    measured_s = result["elapsed_us"] / 1e6
    client_s = result["client"]["cpu_us_per_request"] * result["requests"] / 1e6
    server = result.get("server")
    server_s = 0.0 if server is None else server["cpu_user_s"] + server["cpu_system_s"]
    budget_s = cores * measured_s
    used = f"client {client_s:.3f} s + server {server_s:.3f} s of CPU in {measured_s:.3f} s on {cores} cores"
    if server is None:
        used += " (the server unmonitored)"
    held = client_s + server_s <= budget_s * (1 + CPU_BUDGET_TOLERANCE) + 1e-6
    return Check(CPU_BUDGET, held, f"{used}: {(client_s + server_s) / max(budget_s, 1e-9):.0%} of the budget")


def monitor_samples(result: dict[str, Any]) -> Check:
    server = result.get("server")
    if server is None:
        return Check(MONITOR_SAMPLES, None, "the server was not monitored")
    samples = server["samples"]
    detail = f"{samples} readings of the server within the {server['elapsed_s']:.3f} s measured (at least {MIN_SAMPLES})"
    return Check(MONITOR_SAMPLES, samples >= MIN_SAMPLES, detail)


@dataclass(frozen=True)
class LoggedCount:
    """What the server's access log gained from the moment its size was read, once measuring had
    begun (`late_s` after the engine's start of the measured interval), to the end of the run."""

    lines: int
    late_s: float


def server_log_count(result: dict[str, Any], logged: LoggedCount | None) -> Check:
    """The lines the server's access log gained over the measured interval against the engine's
    count. Each connection may have one request in flight at each edge (one per stream over
    HTTP/2), logged on one side of it and counted on the other; and the log was read `late_s` after the interval began, missing
    what the server answered meanwhile (at the run's rate)."""
    if logged is None:
        return Check(SERVER_LOG_COUNT, None, "the server keeps no access log here")
    if result["sessions"] is not None or "agents" in result:
        return Check(SERVER_LOG_COUNT, None, "sessions and agents open connections the plan does not bound")
    edges = 2 * result["connections"] * result["negotiated"]["streams_per_connection"]
    missed_late = math.ceil(result["requests_per_s"] * logged.late_s)
    low, high = result["responses"] - edges - missed_late, result["requests"] + edges
    detail = (
        f"the server logged {logged.lines:,} requests, the engine counted {result['responses']:,} responses of "
        f"{result['requests']:,} requests (allowed {max(low, 0):,} to {high:,}: the log read "
        f"{logged.late_s * 1e3:.1f} ms into the interval)"
    )
    return Check(SERVER_LOG_COUNT, low <= logged.lines <= high, detail)


def check_all(result: dict[str, Any], cores: int, logged: LoggedCount | None) -> dict[str, Any]:
    """The result's `invariants`: every check, and the names of those that broke."""
    checks = [cpu_budget(result, cores), monitor_samples(result), server_log_count(result, logged)]
    return {
        "checks": {check.name: {k: v for k, v in asdict(check).items() if k != "name"} for check in checks},
        "breaches": [check.name for check in checks if check.held is False],
    }


def breach_reasons(invariants: dict[str, Any]) -> list[str]:
    """'name: detail' of each breach, for the terminal and the report."""
    return [f"{name}: {invariants['checks'][name]['detail']}" for name in invariants["breaches"]]
