"""The flat figures of a case: one column each in the store's `measurements` table, in the CSV and
in the DataFrame, so that queries need not parse the result JSON.

Each is read from the run result (docs/results.md, docs/metrics.md); a figure that does not apply
to the case (no server monitor, no TLS, no rate, no response to time) is None, never 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gauntlet.analysis.bottleneck import stuck_unanswered
from gauntlet.analysis.stats import server_cpu_us_per_request

Figure = int | float | None
Result = dict[str, Any]


def _field(*path: str) -> Callable[[Result], Figure]:
    """The value at `path`, None where a part of the path is missing or null."""

    def read(result: Result) -> Figure:
        value: Any = result
        for name in path:
            if not isinstance(value, dict) or value.get(name) is None:
                return None
            value = value[name]
        return value  # type: ignore[no-any-return]

    return read


def _timed(summary: str, name: str) -> Callable[[Result], Figure]:
    """A latency figure, None when the summary has no sample (the engine reports 0 then)."""

    def read(result: Result) -> Figure:
        timed = result.get(summary) or {}
        return timed[name] if timed.get("count") else None

    return read


def _server_memory(name: str) -> Callable[[Result], Figure]:
    """A memory size summed over the server's roles."""

    def read(result: Result) -> Figure:
        server = result.get("server")
        return None if server is None else sum(role[name] for role in server["memory"].values())

    return read


def _php_worker(name: str) -> Callable[[Result], Figure]:
    """A memory size per process of the role that runs PHP (result["server"]["php_role"]: the
    backend pool, or Apache's workers with mod_php): the thesis's Table A.12."""

    def read(result: Result) -> Figure:
        server = result.get("server") or {}
        memory = server.get("memory", {}).get(server.get("php_role") or "")
        return None if not memory or not memory["processes"] else memory[name] // memory["processes"]

    return read


#: The engine's error kinds (docs/results.md), HTTP/2's included: one column each. A kind the
#: engine did not count (an HTTP/2 kind in a result from before it had them) is None.
ERROR_KINDS = (
    "connect_refused", "connect_timeout", "connect_error", "reset", "timeout", "malformed", "truncated", "tls",
    "content", "goaway", "stream_reset", "h2_protocol",
)


def _unanswered_failed(result: Result) -> Figure:
    """Requests stuck unanswered at the end, which count as failed (analysis.bottleneck.stuck_unanswered)."""
    return stuck_unanswered(result) if "unanswered" in result and "service_time_us" in result else None


def _failed_share(result: Result) -> Figure:
    """Requests that ended in an error or stuck unanswered over those and the responses, 0..1."""
    responses, errors = result.get("responses"), result.get("errors_total")
    failed = None if errors is None else errors + (_unanswered_failed(result) or 0)
    if responses is None or failed is None or responses + failed == 0:
        return None
    return float(failed / (responses + failed))


def _non_2xx(result: Result) -> Figure:
    codes = result.get("status_codes")
    return None if codes is None else sum(n for code, n in codes.items() if not code.startswith("2"))


def _non_2xx_share(result: Result) -> Figure:
    """Responses with a status outside 200..299 over all responses, 0..1."""
    non_2xx, responses = _non_2xx(result), result.get("responses")
    return None if non_2xx is None or not responses else non_2xx / responses


def _server_cpu_percent(result: Result) -> Figure:
    """The server's CPU over the measured interval in % of one core (200: two cores busy), as
    sar and the Deathmatch report it."""
    server = result.get("server")
    if not server or not server.get("elapsed_s"):
        return None
    return float(100 * (server["cpu_user_s"] + server["cpu_system_s"]) / server["elapsed_s"])


FIGURES: dict[str, Callable[[Result], Figure]] = {
    "responses": _field("responses"),
    "errors_total": _field("errors_total"),
    "bytes_in": _field("bytes_in"),
    "bytes_out": _field("bytes_out"),
    "connections_opened": _field("connections_opened"),
    "elapsed_us": _field("elapsed_us"),
    "requests_per_s": _field("requests_per_s"),
    "bytes_in_per_s": _field("bytes_in_per_s"),
    "latency_mean_us": _timed("latency_us", "mean"),
    "latency_p50_us": _timed("latency_us", "p50"),
    "latency_p90_us": _timed("latency_us", "p90"),
    "latency_p99_us": _timed("latency_us", "p99"),
    "latency_p99_9_us": _timed("latency_us", "p99_9"),
    "latency_max_us": _timed("latency_us", "max"),
    "service_time_p50_us": _timed("service_time_us", "p50"),
    "service_time_p99_us": _timed("service_time_us", "p99"),
    "offered_rate_per_s": _field("schedule", "offered_rate_per_s"),
    "achieved_rate_per_s": _field("schedule", "achieved_rate_per_s"),
    "tls_handshakes": _field("tls", "handshakes"),
    "tls_resumed": _field("tls", "resumed"),
    "client_cpu_us_per_request": _field("client", "cpu_us_per_request"),
    "client_busiest_thread_share": _field("client", "busiest_thread_share"),
    "server_cpu_us_per_request": server_cpu_us_per_request,
    "server_context_switches_per_request": _field("server", "context_switches_per_request"),
    "server_page_faults_per_request": _field("server", "page_faults_per_request"),
    "server_rss_bytes": _server_memory("rss_bytes"),
    "server_vm_size_bytes": _server_memory("vm_size_bytes"),
    "server_max_processes": _field("server", "max_processes"),
    "sessions_users_completed": _field("sessions", "users_completed"),
    "sessions_users_dropped": _field("sessions", "users_dropped"),
    "qos_valid": _field("qos", "valid"),
    "php_worker_rss_bytes": _php_worker("rss_bytes"),
    "php_worker_vm_size_bytes": _php_worker("vm_size_bytes"),
    "failed_share": _failed_share,
    **{f"errors_{kind}": _field("errors", kind) for kind in ERROR_KINDS},
    "non_2xx_responses": _non_2xx,
    "non_2xx_share": _non_2xx_share,
    "server_cpu_percent": _server_cpu_percent,
    "server_load_1m": _field("server", "load_1m"),
    "server_interrupts_per_request": _field("server", "interrupts_per_request"),
    "server_system_context_switches_per_request": _field("server", "system_context_switches_per_request"),
    "server_pages_freed_per_request": _field("server", "pages_freed_per_request"),
    "server_loopback_packets_per_request": _field("server", "loopback_packets_per_request"),
    "unanswered_failed": _unanswered_failed,
    "unsolicited": _field("unsolicited"),
    "unsolicited_bytes": _field("unsolicited_bytes"),
    "machine_other_cpu_share": _field("bottleneck", "machine", "other_cpu_share"),
}


def figures_of(result: Result) -> dict[str, Figure]:
    return {name: read(result) for name, read in FIGURES.items()}
