"""The server's CPU is read over exactly the engine's measured interval: a suite case whose warm-up
is as long as its measurement stores the CPU the server's cgroup counted between the engine's own
timestamps, not the warm-up's as well."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from gauntlet.lab.case import measure
from gauntlet.monitor.cgroup import Cgroup
from tests.conftest import Start, missing_here

POLL_S = 0.002


@contextmanager
def cgroup_readings(group: Cgroup) -> Iterator[list[tuple[float, float]]]:
    """(time.monotonic s, CPU s of the group) every 2 ms while the block runs: the test's own reading."""
    readings: list[tuple[float, float]] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            readings.append((time.monotonic(), sum(group.cpu_s())))
            time.sleep(POLL_S)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        yield readings
    finally:
        done.set()
        poller.join()


def cpu_at(readings: list[tuple[float, float]], at_s: float) -> float:
    """The group's CPU at the reading nearest `at_s` (they are 2 ms apart)."""
    nearest_s, cpu_s = min(readings, key=lambda reading: abs(reading[0] - at_s))
    assert abs(nearest_s - at_s) < 0.05, "the poller missed the instant"
    return cpu_s


def test_a_case_with_a_long_warm_up_stores_the_measured_intervals_cpu(server: Start) -> None:
    instance = server("nginx", workers=2)
    if instance.cgroup is None:
        missing_here("no cgroup for the server on this machine: nothing independent to compare with", "CI runs as root")
    plan = {
        "url": f"{instance.url}webtest.html", "connections": 20, "threads": 1,
        "warmup_us": 2_000_000, "duration_us": 2_000_000,
    }
    with cgroup_readings(instance.cgroup) as readings:
        measured = measure(plan, instance, {"server": "nginx"})
    result = measured.record.result
    assert result is not None and result["errors_total"] == 0 and result["requests"] > 1_000
    from_s, to_s = result["measured_from_monotonic_us"] / 1e6, result["measured_to_monotonic_us"] / 1e6
    assert abs((to_s - from_s) - 2.0) < 0.01
    truth_s = cpu_at(readings, to_s) - cpu_at(readings, from_s)
    whole_run_s = readings[-1][1] - readings[0][1]
    assert whole_run_s > 1.6 * truth_s, "the warm-up was busy too: counting it would show"
    stored_s = result["server"]["cpu_us_per_request"] * result["requests"] / 1e6
    assert abs(stored_s - truth_s) <= 0.10 * truth_s, (stored_s, truth_s)
    assert result["server"]["elapsed_s"] == to_s - from_s
    assert result["server"]["samples"] >= 4, "a reading at each edge and every 0.5 s between"
    server_cores = result["bottleneck"]["server"]["cpu_cores"]
    assert abs(server_cores - truth_s / (to_s - from_s)) <= 0.15 * server_cores
