"""What bounded a result: client-bound, server-cpu-bound, bandwidth-bound, error-bound,
rate-not-held, and for a run that ended no request at all listen-backlog-full or server-stalled;
machine-busy beside any of them (docs/metrics.md, "Bottlenecks", defines each). Pure functions of
the run result and of what the CPUs did meanwhile; every label comes with the figures that justify it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gauntlet.analysis.machine import MACHINE_BUSY, MachineUse, busy_reason, machine_figures
from gauntlet.analysis.stats import server_cpu_us_per_request
from gauntlet.units import format_count, format_duration_us

CLIENT_BOUND = "client-bound"
SERVER_CPU_BOUND = "server-cpu-bound"
BANDWIDTH_BOUND = "bandwidth-bound"
ERROR_BOUND = "error-bound"
RATE_NOT_HELD = "rate-not-held"
#: No request ended, and most were still connecting: the server accepted no connection.
LISTEN_BACKLOG_FULL = "listen-backlog-full"
#: No request ended, and most were connected (TLS handshake or request sent) without an answer.
SERVER_STALLED = "server-stalled"
UNANSWERED_STAGES = ("connecting", "tls_handshake", "awaiting_response")

#: "Nearly all" of a CPU budget.
SATURATED_SHARE = 0.9
#: CPUs with less idle time than this share of them left nothing to take.
IDLE_LEFT_SHARE = 0.1
#: Under contention, a side costing at least this share of the other's CPU per request is a bottleneck too.
TIE_SHARE = 0.9
BANDWIDTH_SHARE = 0.95
DEFAULT_ERROR_SHARE = 0.01
#: A rate is held when this share of it was sent, with the p99 send lag within RATE_LAG_P99_US or
#: one interval between sends, whichever is longer.
RATE_HELD_SHARE = 0.98
RATE_LAG_P99_US = 1_000
#: Steal from which the rate-not-held reason names it: on this project's machines, cases with more
#: than 0.5 % steal mostly lagged over 1 ms at p99 (docs/findings/deathmatch.md).
STEAL_LATE_SENDS_SHARE = 0.005


@dataclass(frozen=True)
class CpuUse:
    """What one side (the load threads, or the server's processes) did with the CPU while the
    load ran."""

    cpu_s: float
    #: Runnable but waiting for a CPU (the scheduler's run-queue wait, cgroup throttling included).
    wait_s: float
    threads: int
    #: The highest (CPU + wait) / window of one thread.
    busiest_thread_runnable_share: float
    #: The CPUs it may run on (affinity).
    cpus: frozenset[int]
    #: Its cgroup CPU quota in cores; None: no quota.
    quota_cores: float | None


@dataclass(frozen=True)
class Context:
    """What the result alone does not say: the CPUs over the load's window, and the user's limits."""

    window_s: float
    #: Seconds each CPU was idle during the window.
    idle_s_by_cpu: dict[int, float]
    client: CpuUse
    #: None when Gauntlet did not start (and so could not watch) the server.
    server: CpuUse | None = None
    #: The declared link speed (--link); None when none was declared.
    link_bits_per_s: float | None = None
    #: The routes the load took to the target (gauntlet.route.Route.to_json): this machine's, or
    #: each agent's; empty when not known.
    routes: tuple[dict[str, Any], ...] = ()
    error_share_limit: float = DEFAULT_ERROR_SHARE
    #: Every CPU's busy time over the window (None: not read); judged only with a watched server.
    machine: MachineUse | None = None


@dataclass(frozen=True)
class Saturation:
    reason: str
    by_quota: bool


def saturation(use: CpuUse, window_s: float, subject: str) -> Saturation | None:
    """Whether a side used nearly all the CPU it could get, and why (`subject` names the side)."""
    cpu_cores, runnable_cores = use.cpu_s / window_s, (use.cpu_s + use.wait_s) / window_s
    if use.quota_cores is not None and cpu_cores >= SATURATED_SHARE * use.quota_cores:
        return Saturation(f"{subject} used {cpu_cores:.2f} of its {use.quota_cores:.2f}-core cgroup quota", True)
    cores = min(use.threads, len(use.cpus))
    if cores and runnable_cores >= SATURATED_SHARE * cores:
        return Saturation(
            f"{subject}'s threads were running or waiting for a CPU {runnable_cores:.2f} of the {cores} cores it may use",
            False,
        )
    if use.busiest_thread_runnable_share >= SATURATED_SHARE:
        return Saturation(
            f"{subject}'s busiest thread was running or waiting for a CPU "
            f"{use.busiest_thread_runnable_share:.0%} of the time",
            False,
        )
    return None


def rate_held(schedule: dict[str, Any]) -> bool:
    """Nearly every request sent, and late ones rarely later than the gap to the next one (the
    server saw the arrivals offered, not bursts)."""
    offered = schedule["offered_rate_per_s"]
    allowed_lag_us = max(RATE_LAG_P99_US, 1e6 / offered)
    return schedule["achieved_rate_per_s"] >= RATE_HELD_SHARE * offered and schedule["send_lag_us"]["p99"] <= allowed_lag_us


def _rate_reason(schedule: dict[str, Any], machine: dict[str, Any] | None) -> str:
    """What was sent and how late; the hypervisor's steal when it was enough to make sends late
    (docs/findings/deathmatch.md: above 0.5 % steal, 71 % of its cases lagged more than 1 ms at p99)."""
    sent, offered = format_count(schedule["achieved_rate_per_s"]), format_count(schedule["offered_rate_per_s"])
    reason = f"sent {sent}/s of the {offered}/s offered, send lag p99 {format_duration_us(schedule['send_lag_us']['p99'])}"
    steal = 0.0 if machine is None else machine["steal_share"]
    if steal >= STEAL_LATE_SENDS_SHARE:
        reason += f"; the hypervisor's steal took {steal:.1%} of the CPUs, which alone delays sends"
    return reason


def failing_statuses(result: dict[str, Any]) -> int:
    """Responses with a status other than 2xx or 3xx (a 502 from a gateway whose backend is full)."""
    return sum(n for code, n in result["status_codes"].items() if not 200 <= int(code) < 400)


def failed_requests(result: dict[str, Any]) -> int:
    """Errors (timeouts included), responses that were not 2xx or 3xx, and requests stuck
    unanswered at the end (`stuck_unanswered`)."""
    return result["errors_total"] + failing_statuses(result) + stuck_unanswered(result)


def stuck_unanswered(result: dict[str, Any]) -> int:
    """Requests unanswered at the end that count as failed: all of them when no response came;
    else those of each stage whose mean age is above the slowest response's service time. The
    requests merely in flight when a closed loop's time is up (one per connection, younger on
    average than the slowest answered request) are not failures."""
    unanswered = result.get("unanswered")
    if not unanswered:
        return 0
    if not result["service_time_us"]["count"]:
        return int(unanswered["count"])
    slowest_us = result["service_time_us"]["max"]
    return sum(unanswered[stage]["count"] for stage in UNANSWERED_STAGES if unanswered[stage]["mean_age_us"] > slowest_us)


def failed_share(result: dict[str, Any]) -> float:
    """Failed requests (`failed_requests`) over those that ended and those stuck unanswered, 0..1."""
    ended = result["requests"] + stuck_unanswered(result)
    return failed_requests(result) / ended if ended else 0.0


def stuck(result: dict[str, Any]) -> tuple[str, str] | None:
    """A run that ended no request at all: the label of where its requests stuck, with the reason
    (None when some request ended, or none was begun)."""
    unanswered = result.get("unanswered")
    if result["requests"] or not unanswered or not unanswered["count"]:
        return None
    connecting, total = unanswered["connecting"]["count"], unanswered["count"]
    oldest = format_duration_us(unanswered["max_age_us"])
    if connecting * 2 >= total:
        return LISTEN_BACKLOG_FULL, (
            f"no request ended: {format_count(connecting)} of {format_count(total)} were still connecting at the end "
            f"(the oldest for {oldest}): no connection was accepted, as when the server's listen backlog is full "
            "(or the client could not make its connects in the time)"
        )
    return SERVER_STALLED, (
        f"no request ended: {format_count(total - connecting)} of {format_count(total)} were connected and "
        f"waiting for an answer at the end (the oldest for {oldest}), so the server stalled"
    )


def bytes_per_request(result: dict[str, Any]) -> float:
    """On the wire, headers included, in the busier direction (a link carries each one apart)."""
    return max(result["bytes_in"], result["bytes_out"]) / max(result["responses"], 1)


def bandwidth_ceiling_per_s(result: dict[str, Any], link_bits_per_s: float | None) -> float | None:
    """The thesis's ceiling: link bits/s / (bytes per request x 8); None without a declared link."""
    if link_bits_per_s is None or not result["responses"]:
        return None
    return link_bits_per_s / (bytes_per_request(result) * 8)


def path_figures(routes: tuple[dict[str, Any], ...]) -> dict[str, Any] | None:
    """The path the load took: loopback only when every route was; None when not known."""
    if not routes:
        return None
    return {"loopback": all(route["loopback"] for route in routes), "routes": list(routes)}


def side_figures(use: CpuUse | None, window_s: float, cpu_us_per_request: float) -> dict[str, Any] | None:
    if use is None:
        return None
    return {
        "cpu_us_per_request": cpu_us_per_request,
        "cpu_cores": use.cpu_s / window_s,
        "runnable_cores": (use.cpu_s + use.wait_s) / window_s,
        "threads": use.threads,
        "busiest_thread_runnable_share": use.busiest_thread_runnable_share,
        "cpus": sorted(use.cpus),
        "quota_cores": use.quota_cores,
    }


def assess(result: dict[str, Any], context: Context) -> dict[str, Any]:
    """The labels, a reason for each, and the figures they were judged on (the result's `bottleneck`)."""
    window_s = max(context.window_s, 1e-9)
    reasons: dict[str, str] = {}
    client = side_figures(context.client, window_s, result["client"]["cpu_us_per_request"])
    server = side_figures(context.server, window_s, _server_cpu_us_per_request(result, context.server, window_s))
    shared = sorted(context.client.cpus & context.server.cpus) if context.server else []
    shared_idle_cores = sum(context.idle_s_by_cpu.get(cpu, 0.0) for cpu in shared) / window_s if shared else None
    reasons.update(_cpu_labels(context, window_s, client, server, shared, shared_idle_cores))
    ceiling = bandwidth_ceiling_per_s(result, context.link_bits_per_s)
    if ceiling is not None and result["requests_per_s"] >= BANDWIDTH_SHARE * ceiling:
        reasons[BANDWIDTH_BOUND] = _bandwidth_reason(result, context.link_bits_per_s or 0.0, ceiling)
    failed, share = failed_requests(result), failed_share(result)
    if share > context.error_share_limit:
        reasons[ERROR_BOUND] = (
            f"{share:.1%} of the requests failed, timed out or stayed unanswered ({format_count(failed)}; "
            f"the limit is {context.error_share_limit:.1%})"
        )
    machine = None
    if context.machine is not None and context.server is not None:
        machine = machine_figures(context.machine, context.server.cpu_s, window_s)
        if machine["busy"]:
            reasons[MACHINE_BUSY] = busy_reason(machine)
    schedule = result["schedule"]
    held = None if schedule is None else rate_held(schedule)
    if schedule is not None and not held:
        reasons[RATE_NOT_HELD] = _rate_reason(schedule, machine)
    order: tuple[str, ...] = (CLIENT_BOUND, SERVER_CPU_BOUND, BANDWIDTH_BOUND, ERROR_BOUND, RATE_NOT_HELD, MACHINE_BUSY)
    if (stuck_at := stuck(result)) is not None:
        # Nothing ended: what the CPUs did says nothing of a throughput of zero (the machine's
        # other work still says what else ran).
        reasons = dict([stuck_at]) | {label: reasons[label] for label in (MACHINE_BUSY,) if label in reasons}
        order = (stuck_at[0], MACHINE_BUSY)
    return {
        "labels": [label for label in order if label in reasons],
        "reasons": reasons,
        "window_s": context.window_s,
        "client": client,
        "server": server,
        "shared_cpus": shared,
        "shared_idle_cores": shared_idle_cores,
        "failed_share": share,
        "error_share_limit": context.error_share_limit,
        "link_bits_per_s": context.link_bits_per_s,
        "bandwidth_ceiling_per_s": ceiling,
        "path": path_figures(context.routes),
        "rate_held": held,
        "machine": machine,
    }


def _server_cpu_us_per_request(result: dict[str, Any], use: CpuUse | None, window_s: float) -> float:
    """The monitor's figure when it ran and counted enough CPU to show (the one shown next to the
    client's); else the scheduler's CPU time over the window (counted in ns), the measured
    interval's share of it, per request."""
    if (monitored := server_cpu_us_per_request(result)) is not None:
        return monitored
    if use is None or not result["requests"]:
        return 0.0
    measured_share = min(result["elapsed_us"] / 1e6, window_s) / window_s
    return use.cpu_s * 1e6 * measured_share / result["requests"]


def _cpu_labels(
    context: Context,
    window_s: float,
    client: dict[str, Any] | None,
    server: dict[str, Any] | None,
    shared: list[int],
    shared_idle_cores: float | None,
) -> dict[str, str]:
    """client-bound and server-cpu-bound (docs/metrics.md explains the rules)."""
    uses = {CLIENT_BOUND: (context.client, "the client"), SERVER_CPU_BOUND: (context.server, "the server")}
    saturated = {
        label: found
        for label, (use, subject) in uses.items()
        if use is not None and (found := saturation(use, window_s, subject)) is not None
    }
    if client is None or server is None or shared_idle_cores is None:
        return {label: found.reason for label, found in saturated.items()}
    wanted_cores = client["runnable_cores"] + server["runnable_cores"]
    if shared_idle_cores >= IDLE_LEFT_SHARE * len(shared) or wanted_cores < len(shared):
        return {label: found.reason for label, found in saturated.items()}
    # Both wanted the CPUs they shared and left them busy: each waited for the other, so its own
    # runnable share says nothing; the CPU per request says who takes the most of them.
    reasons = {label: found.reason for label, found in saturated.items() if found.by_quota}
    costs = {CLIENT_BOUND: client["cpu_us_per_request"], SERVER_CPU_BOUND: server["cpu_us_per_request"]}
    for label, cost in costs.items():
        if cost >= TIE_SHARE * max(costs.values()):
            reasons.setdefault(
                label,
                f"client and server shared CPUs {_cpu_list(shared)}, busy with {wanted_cores:.1f} threads "
                f"wanting them ({shared_idle_cores:.2f} cores left idle), and {uses[label][1]} took "
                f"{'about as much' if cost < max(costs.values()) else 'the most'} CPU per request: "
                f"client {client['cpu_us_per_request']:.1f} µs, server {server['cpu_us_per_request']:.1f} µs",
            )
    return reasons


def _bandwidth_reason(result: dict[str, Any], link_bits_per_s: float, ceiling_per_s: float) -> str:
    share = result["requests_per_s"] / ceiling_per_s
    reason = (
        f"{format_count(result['requests_per_s'])} requests/s is {share:.0%} of the ceiling of "
        f"{format_count(ceiling_per_s)}/s that a {format_link(link_bits_per_s)} link allows at "
        f"{format_count(bytes_per_request(result))} B per request"
    )
    if share > 1 / BANDWIDTH_SHARE:
        reason += " (above it: the traffic did not cross a link of that speed)"
    return reason


def format_link(bits_per_s: float) -> str:
    exponent = min(int(math.log10(bits_per_s) // 3), 4) if bits_per_s >= 1 else 0
    return f"{bits_per_s / 1000**exponent:g} {('', 'k', 'M', 'G', 'T')[exponent]}bit/s"


def _cpu_list(cpus: list[int]) -> str:
    return ",".join(map(str, cpus))
