"""The sampler against the kernel's own accounting (a cgroup-v1 cpuacct group the test makes for
the server's processes), its timeline, its roles, and its cost."""

from __future__ import annotations

import math
import os
import time
from itertools import pairwise
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


from gauntlet import engine
from gauntlet.monitor.per_request import per_request
from gauntlet.monitor.sampler import ServerTotals, Sampler
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.builtin import start_builtin
from tests.conftest import Start, missing_here

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


@contextmanager
def kernel_accounting(server: ServerInstance) -> Iterator[Path]:
    """The server's processes (and all they fork from now on) in a cpuacct group of their own."""
    if not os.access(CPUACCT, os.W_OK):
        missing_here("no writable cgroup-v1 cpuacct hierarchy here to compare against", "the CI machine has one")
    if server.cgroup is not None and server.cgroup.version == 1:
        missing_here("the server's own cgroup is in the cpuacct hierarchy: no second one to compare with", "on the CI machine it is in v2")
    group = CPUACCT / f"gauntlet-test-{os.getpid()}-{server.main_pid}"
    group.mkdir()
    try:
        for pid in server.pids():
            try:
                (group / "cgroup.procs").write_text(str(pid))
            except ProcessLookupError:
                continue  # a CGI child that has just finished
        yield group
    finally:
        server.stop()
        deadline = time.monotonic() + 5
        while group.exists() and time.monotonic() < deadline:
            try:
                group.rmdir()
            except OSError:
                time.sleep(0.05)


def kernel_cpu_s(group: Path) -> float:
    return int((group / "cpuacct.usage").read_text()) / 1e9


def assert_per_request_figures(totals: ServerTotals, requests: int) -> None:
    figures = per_request(totals, requests)
    for name in ("cpu_us_per_request", "context_switches_per_request", "interrupts_per_request", "loopback_packets_per_request"):
        assert 0 < figures[name] < math.inf, name
    assert figures["cpu_source"] == totals.cpu_source and len(figures["timeline"]) == totals.samples - 1


def test_builtin_cpu_agrees_with_the_kernel_within_5_percent() -> None:
    with start_builtin(threads=2) as server, kernel_accounting(server) as group:
        before_s = kernel_cpu_s(group)
        with Sampler(server.main_pid) as sampler:
            result = engine.run({"url": f"{server.url}webtest.html", "connections": 20, "threads": 2, "duration_us": 2_000_000}).result
        kernel_s = kernel_cpu_s(group) - before_s
        totals = sampler.totals()
    assert kernel_s > 0.3, "the server was loaded"
    assert totals.cpu_source == "proc"
    assert abs(totals.cpu_s - kernel_s) <= 0.05 * kernel_s, (totals.cpu_s, kernel_s)
    assert_per_request_figures(totals, result["requests"])
    assert totals.memory["server"].rss_bytes > 1_000_000
    assert totals.max_threads >= 3


def test_cgi_children_are_counted_as_the_kernel_counts_them(server: Start) -> None:
    """lighttpd forks a Python process per request, each gone long before the next sample. The
    instance's own cgroup counts them; so does /proc through lighttpd's children's times, as
    lighttpd reaps its children (docs/metrics.md says which servers do not)."""
    instance = server("lighttpd", backend="python-cgi")
    if instance.cgroup is None:
        missing_here("no cgroup for the server on this machine: only the /proc figures", "CI runs as root")
    with kernel_accounting(instance) as group:
        before_s = kernel_cpu_s(group)
        with Sampler.of(instance, interval_s=0.2) as by_cgroup, Sampler(instance.main_pid, 0.2) as by_proc:
            result = engine.run({"url": f"{instance.url}page.py", "connections": 4, "threads": 1, "duration_us": 2_000_000}).result
            time.sleep(0.5)  # the last CGI children finish and are reaped before both last samples
        kernel_s = kernel_cpu_s(group) - before_s
    assert result["errors_total"] == 0 and result["responses"] > 20
    assert kernel_s > 0.3, "the CGI children were busy"
    for totals, source in ((by_cgroup.totals(), instance.cgroup.source), (by_proc.totals(), "proc")):
        assert totals.cpu_source == source
        assert abs(totals.cpu_s - kernel_s) <= 0.05 * kernel_s, (source, totals.cpu_s, kernel_s)
        assert_per_request_figures(totals, result["requests"])


def test_the_timeline_follows_the_load(server: Start) -> None:
    instance = server("nginx", workers=2)
    with Sampler.of(instance, interval_s=0.2) as sampler:
        engine.run({"url": f"{instance.url}webtest.html", "connections": 8, "threads": 1, "duration_us": 1_200_000})
        time.sleep(1.2)
    totals = sampler.totals()
    timeline = totals.timeline
    assert len(timeline) == totals.samples - 1 >= 10
    assert all(b.t_s > a.t_s for a, b in pairwise(timeline))
    assert all(p.processes == 3 and p.threads >= 3 and p.rss_bytes > 1_000_000 for p in timeline)
    loaded = [p for p in timeline if 0.4 <= p.t_s <= 1.0]
    idle = [p for p in timeline if p.t_s >= 1.6]
    assert min(p.cpu_percent for p in loaded) > 5 and max(p.cpu_percent for p in idle) < 1, timeline
    assert min(p.context_switches for p in loaded) > max(p.context_switches for p in idle)


def test_own_cost_stays_under_2_percent_of_a_core(builtin_server: ServerInstance) -> None:
    with Sampler(builtin_server.pids()[0]) as sampler:
        engine.run({"url": builtin_server.url, "connections": 4, "threads": 1, "duration_us": 3_000_000})
    totals = sampler.totals()
    assert totals.samples >= 6
    assert totals.monitor_cpu_s / totals.elapsed_s < 0.02, (totals.monitor_cpu_s, totals.elapsed_s)


def test_roles_of_a_master_its_workers_and_its_backend(server: Start) -> None:
    instance = server("nginx", workers=3, backend="php-fpm", backend_workers=2)
    with Sampler.of(instance) as sampler:
        engine.run({"url": f"{instance.url}hello.php", "connections": 6, "threads": 2, "requests": 600})
    memory = sampler.totals().memory
    assert {role: m.processes for role, m in memory.items()} == {"master": 1, "worker": 3, "backend": 3}
    assert all(m.rss_bytes > 0 and m.vm_size_bytes >= m.rss_bytes for m in memory.values())


def test_the_timeline_splits_cpu_and_memory_by_role(server: Start) -> None:
    """PHP pages through nginx: its workers and the PHP-FPM pool both work, each second, and the
    roles add up to the tree (from /proc here, where no process comes or goes)."""
    instance = server("nginx", workers=2, backend="php-fpm", backend_workers=2)
    with Sampler(instance.main_pid, 0.2, backend_pids=instance.backend_pids()) as sampler:
        engine.run({"url": f"{instance.url}hello.php", "connections": 4, "threads": 1, "duration_us": 1_500_000})
    timeline = sampler.totals().timeline
    loaded = [p for p in timeline if 0.3 <= p.t_s <= 1.3]
    assert loaded and all(set(p.roles) == {"master", "worker", "backend"} for p in timeline)
    assert all(p.roles["worker"].cpu_percent > 1 and p.roles["backend"].cpu_percent > 1 for p in loaded), loaded
    for point in timeline:
        assert math.isclose(sum(r.cpu_percent for r in point.roles.values()), point.cpu_percent, abs_tol=1e-6)
        assert sum(r.rss_bytes for r in point.roles.values()) == point.rss_bytes
        assert point.roles["backend"].processes == 3 and point.roles["worker"].processes == 2
