"""What must hold for a result to be believed, checked on every result (docs/metrics.md,
"Invariants"): the CPU it reports fits in the machine, the monitor read the server often enough
over the measured interval, and the server logged the requests the engine counted. Pure functions
of the result and of what the lab read besides it; a check that could not be made says why."""

from __future__ import annotations

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
    begun, to the end of the run; and the engine's count of measured responses just before and
    just after that read."""

    lines: int
    counted_before: int
    counted_after: int


def server_log_count(result: dict[str, Any], logged: LoggedCount | None) -> Check:
    """The lines the server's access log gained from the read of its size against the responses
    the engine counted after that read (its count then taken off its total). What differs is
    bounded by what the engine knows: the responses it counted while the size was read (logged
    after, counted before), the requests open on each connection at the read and at the end (one
    per stream each, logged on one side and counted on the other; one more at the read, as the
    engine's threads publish their counts once per pass of their event loop), and its errors."""
    if logged is None:
        return Check(SERVER_LOG_COUNT, None, "the server keeps no access log here")
    if result["sessions"] is not None or "agents" in result:
        return Check(SERVER_LOG_COUNT, None, "sessions and agents open connections the plan does not bound")
    edge = result["connections"] * result["negotiated"]["streams_per_connection"]
    after = result["responses"] - logged.counted_after
    during = logged.counted_after - logged.counted_before
    low, high = after - 2 * edge, after + during + 2 * edge + result["errors_total"]
    detail = (
        f"the server logged {logged.lines:,} requests after its log was read, the engine counted {result['responses']:,} "
        f"responses, {after:,} of them after that read (allowed {max(low, 0):,} to {high:,}: {during:,} counted "
        f"during the read, {edge:,} open at each edge, {result['errors_total']:,} errors)"
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
