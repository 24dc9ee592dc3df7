"""The sampler against the kernel's own accounting, and its cost."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gauntlet import engine
from gauntlet.monitor.per_request import per_request
from gauntlet.monitor.sampler import Sampler
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.builtin import start_builtin

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


@pytest.fixture
def accounted_builtin() -> Iterator[tuple[ServerInstance, Path]]:
    """The built-in server alone in a cpuacct cgroup of its own: the kernel's count of its CPU."""
    if not os.access(CPUACCT, os.W_OK):
        pytest.skip("no writable cgroup-v1 cpuacct hierarchy here to compare against")
    group = CPUACCT / f"gauntlet-test-{os.getpid()}"
    group.mkdir()
    try:
        with start_builtin(threads=2) as server:
            (group / "cgroup.procs").write_text(str(server.pids()[0]))
            yield server, group
    finally:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.05)


def test_cpu_agrees_with_the_kernel_within_5_percent(accounted_builtin: tuple[ServerInstance, Path]) -> None:
    server, group = accounted_builtin
    usage_ns: Callable[[], int] = lambda: int((group / "cpuacct.usage").read_text())  # noqa: E731
    before_ns = usage_ns()
    with Sampler(server.pids()[0]) as sampler:
        result = engine.run({"url": f"{server.url}webtest.html", "connections": 20, "threads": 2, "duration_us": 2_000_000}).result
    kernel_s = (usage_ns() - before_ns) / 1e9
    totals = sampler.totals()
    assert kernel_s > 0.3, "the server was loaded"
    assert abs(totals.cpu_s - kernel_s) <= 0.05 * kernel_s, (totals.cpu_s, kernel_s)
    figures = per_request(totals, result["requests"])
    for name in ("cpu_us_per_request", "context_switches_per_request", "interrupts_per_request", "loopback_packets_per_request"):
        assert 0 < figures[name] < math.inf, name
    assert figures["memory"]["server"]["rss_bytes"] > 1_000_000
    assert figures["max_threads"] >= 3


def test_own_cost_stays_under_2_percent_of_a_core(builtin_server: ServerInstance) -> None:
    with Sampler(builtin_server.pids()[0]) as sampler:
        engine.run({"url": builtin_server.url, "connections": 4, "threads": 1, "duration_us": 3_000_000})
    totals = sampler.totals()
    assert totals.samples >= 6
    assert totals.monitor_cpu_s / totals.elapsed_s < 0.02, (totals.monitor_cpu_s, totals.elapsed_s)


def test_roles_of_a_master_and_its_workers(nginx_server: Callable[..., ServerInstance]) -> None:
    server = nginx_server(workers=3)
    with Sampler(server.pids()[0]) as sampler:
        engine.run({"url": f"{server.url}webtest.html", "connections": 6, "threads": 2, "requests": 3000})
    memory = sampler.totals().memory
    assert (memory["master"].processes, memory["worker"].processes) == (1, 3)
    assert all(m.rss_bytes > 0 and m.vm_size_bytes >= m.rss_bytes for m in memory.values())
