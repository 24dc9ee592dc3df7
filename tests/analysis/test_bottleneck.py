"""Bottleneck labels as pure functions, in tables: each rule at and around its threshold.

The results here are shaped like the engine's and the CPU figures like the CPU window's; the
labels are provoked for real against real servers in test_bottleneck_provoked.py."""

from __future__ import annotations

from typing import Any

import pytest

from gauntlet.analysis.bottleneck import (
    BANDWIDTH_BOUND,
    CLIENT_BOUND,
    ERROR_BOUND,
    LISTEN_BACKLOG_FULL,
    RATE_NOT_HELD,
    SERVER_CPU_BOUND,
    SERVER_STALLED,
    Context,
    CpuUse,
    assess,
    bandwidth_ceiling_per_s,
    failed_requests,
    failed_share,
    format_link,
    stuck,
    stuck_unanswered,
)

BOTH_CPUS = frozenset({0, 1})
WINDOW_S = 10.0


def result(**changes: Any) -> dict[str, Any]:
    """A closed-loop result of 100,000 requests in 10 s, 300 bytes each way, all 200."""
    found: dict[str, Any] = {
        "elapsed_us": 10_000_000,
        "requests": 100_000,
        "responses": 100_000,
        "errors_total": 0,
        "status_codes": {"200": 100_000},
        "bytes_in": 30_000_000,
        "bytes_out": 10_000_000,
        "requests_per_s": 10_000.0,
        "schedule": None,
        "client": {"cpu_us_per_request": 10.0},
        "server": monitored(10.0),
    }
    found.update(changes)
    return found


def monitored(cpu_us_per_request: float, requests: int = 100_000) -> dict[str, Any]:
    """The monitor's `server` block over the 10 s window: /proc's totals for that CPU per request."""
    cpu_s = cpu_us_per_request * requests / 1e6
    return {
        "cpu_us_per_request": cpu_us_per_request, "cpu_user_s": cpu_s, "cpu_system_s": 0.0,
        "elapsed_s": WINDOW_S, "cpu_source": "proc", "max_processes": 1,
    }


def use(cpu_s: float = 1.0, wait_s: float = 0.0, threads: int = 2, busiest: float = 0.1, **changes: Any) -> CpuUse:
    return CpuUse(
        cpu_s=cpu_s, wait_s=wait_s, threads=threads, busiest_thread_runnable_share=busiest,
        cpus=changes.get("cpus", BOTH_CPUS), quota_cores=changes.get("quota_cores"),
    )


def context(client: CpuUse, server: CpuUse | None, idle_s: float = 10.0, **changes: Any) -> Context:
    """`idle_s` is each CPU's idle time over the 10 s window."""
    return Context(WINDOW_S, {0: idle_s, 1: idle_s}, client, server, **changes)


def labels(found_result: dict[str, Any], found_context: Context) -> list[str]:
    return assess(found_result, found_context)["labels"]


def test_nothing_saturated_gets_no_label() -> None:
    assessed = assess(result(), context(use(), use()))
    assert assessed["labels"] == [] and assessed["reasons"] == {}
    assert assessed["bandwidth_ceiling_per_s"] is None and assessed["rate_held"] is None


@pytest.mark.parametrize(
    ("client_use", "expected"),
    [
        (use(cpu_s=1.81, quota_cores=0.2), [CLIENT_BOUND]),  # 0.181 of a 0.2-core quota
        (use(cpu_s=1.79, quota_cores=0.2), []),  # 0.179 < 90 % of it
        (use(cpu_s=9.0, wait_s=9.0, threads=2), [CLIENT_BOUND]),  # runnable 1.8 of 2 cores
        (use(cpu_s=9.0, wait_s=8.9, threads=2), []),  # runnable 1.79
        (use(cpu_s=9.0, wait_s=9.0, threads=4, cpus=frozenset({0})), [CLIENT_BOUND]),  # 1.8 of 1 allowed CPU
        (use(cpu_s=5.0, threads=1, busiest=0.9), [CLIENT_BOUND]),  # one thread never waited for the network
    ],
)
def test_the_client_alone_is_judged_on_its_own_cpu(client_use: CpuUse, expected: list[str]) -> None:
    """An external URL: no server figures, so only the client's own saturation counts."""
    assert labels(result(), context(client_use, None)) == expected


def test_a_server_under_a_quota_is_server_cpu_bound_with_its_reason() -> None:
    assessed = assess(result(), context(use(), use(cpu_s=1.0, wait_s=15.0, quota_cores=0.1)))
    assert assessed["labels"] == [SERVER_CPU_BOUND]
    assert "0.10 of its 0.10-core cgroup quota" in assessed["reasons"][SERVER_CPU_BOUND]
    assert assessed["server"]["quota_cores"] == 0.1 and assessed["server"]["cpu_cores"] == pytest.approx(0.1)


def test_on_separate_cpus_each_side_is_judged_alone() -> None:
    client = use(cpu_s=2.0, cpus=frozenset({0}))
    server = use(cpu_s=9.5, threads=1, busiest=0.95, cpus=frozenset({1}))
    assessed = assess(result(), context(client, server, idle_s=0.0))
    assert assessed["labels"] == [SERVER_CPU_BOUND] and assessed["shared_cpus"] == []


@pytest.mark.parametrize(
    ("client_us", "server_us", "expected"),
    [
        (14.0, 17.0, [SERVER_CPU_BOUND]),  # nginx keep-alive on this machine
        (50.0, 27.0, [CLIENT_BOUND]),  # a new connection per request to the built-in server
        (9.2, 10.0, [CLIENT_BOUND, SERVER_CPU_BOUND]),  # within 10 %: both
    ],
)
def test_on_shared_busy_cpus_the_side_costing_more_per_request_is_the_bottleneck(
    client_us: float, server_us: float, expected: list[str]
) -> None:
    found = result(client={"cpu_us_per_request": client_us}, server=monitored(server_us))
    busy = context(use(cpu_s=9.0, wait_s=7.0), use(cpu_s=9.0, wait_s=6.0), idle_s=0.5)
    assessed = assess(found, busy)
    assert assessed["labels"] == expected
    assert f"client {client_us:.1f} µs, server {server_us:.1f} µs" in assessed["reasons"][expected[0]]


def test_busy_cpus_that_client_and_server_did_not_want_label_nothing() -> None:
    """Other processes kept the CPUs busy while a low rate ran: nothing of ours was saturated."""
    assert labels(result(), context(use(cpu_s=0.1, wait_s=0.1), use(cpu_s=0.1, wait_s=0.1), idle_s=0.0)) == []


def test_a_quota_keeps_its_label_when_the_cpus_are_also_contended() -> None:
    found = result(client={"cpu_us_per_request": 20.0}, server=monitored(5.0))
    busy = context(use(cpu_s=15.0, wait_s=5.0), use(cpu_s=1.0, wait_s=19.0, quota_cores=0.1), idle_s=0.2)
    assert labels(found, busy) == [CLIENT_BOUND, SERVER_CPU_BOUND]


def test_without_monitor_figures_the_server_cost_comes_from_the_cpu_window() -> None:
    """A server watched by the CPU window but without the monitor's per-request figure."""
    found = result()
    del found["server"]
    assessed = assess(found, context(use(), use(cpu_s=2.0)))
    assert assessed["server"]["cpu_us_per_request"] == pytest.approx(20.0)


def test_a_monitor_total_too_coarse_to_show_gives_way_to_the_cpu_window() -> None:
    """30 ms of /proc ticks over 10,000 requests is not a figure; the scheduler's 2 s (in ns) is."""
    found = result(requests=10_000, server=monitored(3.0, requests=10_000))
    assessed = assess(found, context(use(), use(cpu_s=2.0)))
    assert assessed["server"]["cpu_us_per_request"] == pytest.approx(200.0)


@pytest.mark.parametrize(
    ("errors", "status_codes", "limit", "bound"),
    [
        (0, {"200": 100_000}, 0.01, False),
        (1_000, {"200": 99_000}, 0.01, False),  # exactly 1 %: not more than the limit
        (1_001, {"200": 98_999}, 0.01, True),
        (0, {"200": 97_000, "500": 3_000}, 0.01, True),  # 5xx answers failed too
        (0, {"200": 99_000, "404": 1_500}, 0.02, False),
        (0, {"304": 100_000}, 0.01, False),
    ],
)
def test_error_bound_above_the_share(errors: int, status_codes: dict[str, int], limit: float, bound: bool) -> None:
    responses = sum(status_codes.values())
    found = result(errors_total=errors, responses=responses, requests=responses + errors, status_codes=status_codes)
    assessed = assess(found, context(use(), use(), error_share_limit=limit))
    assert (ERROR_BOUND in assessed["labels"]) is bound
    assert assessed["error_share_limit"] == limit


@pytest.mark.parametrize(
    ("requests_per_s", "bound"),
    [(3_950.0, False), (3_960.0, True), (4_167.0, True), (10_000.0, True)],
)
def test_bandwidth_bound_within_5_percent_of_the_ceiling(requests_per_s: float, bound: bool) -> None:
    """300 B per request over 10 Mbit/s: a ceiling of 10e6 / 2,400 = 4,166.7 requests/s."""
    assessed = assess(result(requests_per_s=requests_per_s), context(use(), use(), link_bits_per_s=10e6))
    assert assessed["bandwidth_ceiling_per_s"] == pytest.approx(4_166.67, abs=0.01)
    assert (BANDWIDTH_BOUND in assessed["labels"]) is bound


def test_the_ceiling_uses_the_busier_direction_and_is_none_without_a_link() -> None:
    uploads = result(bytes_in=10_000_000, bytes_out=50_000_000)
    assert bandwidth_ceiling_per_s(uploads, 1e9) == pytest.approx(1e9 / (500 * 8))
    assert bandwidth_ceiling_per_s(result(), None) is None
    assert "above it" in assess(result(), context(use(), use(), link_bits_per_s=10e6))["reasons"][BANDWIDTH_BOUND]


@pytest.mark.parametrize(
    ("offered", "achieved", "lag_p99_us", "held"),
    [
        (1_000.0, 1_000.0, 500, True),
        (1_000.0, 980.0, 1_000, True),
        (1_000.0, 979.0, 100, False),  # under 98 % sent
        (1_000.0, 1_000.0, 1_001, False),  # late by more than 1 ms, the gap between sends
        (100_000.0, 100_000.0, 1_001, False),  # 1 ms is the least lag allowed
        (100.0, 100.0, 9_000, True),  # 10 ms apart: a 9 ms lag keeps the arrivals apart
        (100.0, 100.0, 10_001, False),
    ],
)
def test_rate_not_held(offered: float, achieved: float, lag_p99_us: int, held: bool) -> None:
    schedule = {"offered_rate_per_s": offered, "achieved_rate_per_s": achieved, "send_lag_us": {"p99": lag_p99_us}}
    assessed = assess(result(schedule=schedule), context(use(), use()))
    assert assessed["rate_held"] is held
    assert (RATE_NOT_HELD in assessed["labels"]) is not held


def test_several_labels_come_in_a_fixed_order() -> None:
    schedule = {"offered_rate_per_s": 1e6, "achieved_rate_per_s": 10.0, "send_lag_us": {"p99": 10**6}}
    found = result(schedule=schedule, errors_total=50_000, responses=50_000, status_codes={"200": 50_000})
    busy = context(use(cpu_s=1.9, quota_cores=0.2), None, link_bits_per_s=1e6)
    assert labels(found, busy) == [CLIENT_BOUND, BANDWIDTH_BOUND, ERROR_BOUND, RATE_NOT_HELD]


@pytest.mark.parametrize(
    ("bits_per_s", "shown"), [(1e9, "1 Gbit/s"), (10e6, "10 Mbit/s"), (940e6, "940 Mbit/s"), (500, "500 bit/s")]
)
def test_format_link(bits_per_s: float, shown: str) -> None:
    assert format_link(bits_per_s) == shown


def pending(count: int = 0, mean_age_us: float = 0.0) -> dict[str, Any]:
    return {"count": count, "max_age_us": int(mean_age_us * 2), "mean_age_us": mean_age_us}


def unanswered(connecting: dict[str, Any], awaiting: dict[str, Any], tls: dict[str, Any] | None = None) -> dict[str, Any]:
    stages = {"connecting": connecting, "tls_handshake": tls or pending(), "awaiting_response": awaiting}
    count = sum(stage["count"] for stage in stages.values())
    return {"count": count, "max_age_us": max(stage["max_age_us"] for stage in stages.values()), "mean_age_us": 0.0, **stages}


def answered(slowest_us: int, **changes: Any) -> dict[str, Any]:
    """100,000 responses whose slowest took `slowest_us`, with `unanswered` at the end."""
    return result(service_time_us={"count": 100_000, "max": slowest_us}, **changes)


@pytest.mark.parametrize(
    ("found", "stuck_count"),
    [
        # 20 in flight when the time was up, younger on average than the slowest response: not failures.
        (answered(5_000, unanswered=unanswered(pending(), pending(20, 4_999.0))), 0),
        # Older on average than the slowest response: the server stopped answering them.
        (answered(5_000, unanswered=unanswered(pending(), pending(20, 5_001.0))), 20),
        # Per stage: the connects stuck, the responses in flight.
        (answered(5_000, unanswered=unanswered(pending(30, 900_000.0), pending(20, 100.0))), 30),
        # No response at all: every unanswered request is stuck, whatever its age.
        (result(requests=0, responses=0, status_codes={}, service_time_us={"count": 0, "max": 0},
                unanswered=unanswered(pending(3, 10.0), pending(2, 10.0))), 5),
    ],
)
def test_unanswered_requests_count_as_failed_when_stuck(found: dict[str, Any], stuck_count: int) -> None:
    assert stuck_unanswered(found) == stuck_count
    assert failed_requests(found) == stuck_count
    assert failed_share(found) == pytest.approx(stuck_count / (found["requests"] + stuck_count) if stuck_count else 0.0)


def test_stuck_requests_make_a_case_error_bound() -> None:
    found = answered(5_000, unanswered=unanswered(pending(2_000, 900_000.0), pending()))  # 2,000 of 102,000: 1.96 %
    assessed = assess(found, context(use(), use()))
    assert assessed["labels"] == [ERROR_BOUND] and assessed["failed_share"] == pytest.approx(2_000 / 102_000)


@pytest.mark.parametrize(
    ("connecting", "awaiting", "tls", "label"),
    [
        (8_000, 0, 0, LISTEN_BACKLOG_FULL),
        (5, 5, 0, LISTEN_BACKLOG_FULL),  # half still connecting: the backlog
        (4, 6, 0, SERVER_STALLED),
        (0, 0, 10, SERVER_STALLED),  # connected, the TLS handshake never answered
    ],
)
def test_a_run_that_ended_no_request_is_labelled_where_it_stuck_and_only_so(
    connecting: int, awaiting: int, tls: int, label: str
) -> None:
    found = result(
        requests=0, responses=0, status_codes={}, requests_per_s=0.0, service_time_us={"count": 0, "max": 0},
        unanswered=unanswered(pending(connecting, 1e6), pending(awaiting, 1e6), pending(tls, 1e6)),
    )
    saturated = use(cpu_s=9.0, wait_s=9.0, threads=2)  # the CPU labels would apply: they say nothing here
    assessed = assess(found, context(saturated, saturated))
    assert assessed["labels"] == [label] and assessed["failed_share"] == 1.0
    assert assessed["reasons"][label].startswith("no request ended")
    assert stuck(found) is not None and stuck(result()) is None
