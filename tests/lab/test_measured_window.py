"""The server's CPU is read over exactly the engine's measured interval: a suite case whose warm-up
is as long as its measurement stores the CPU the server's cgroup counted between the engine's own
timestamps, not the warm-up's as well."""

from __future__ import annotations

from gauntlet.lab.case import measure
from gauntlet.plan import Plan
from tests.conftest import Start, missing_here
from tests.helpers.cgroup_readings import cgroup_readings, cpu_at


def test_a_case_with_a_long_warm_up_stores_the_measured_intervals_cpu(server: Start) -> None:
    instance = server("nginx", workers=2)
    if instance.cgroup is None:
        missing_here("no cgroup for the server on this machine: nothing independent to compare with", "CI runs as root")
    plan = Plan(url=f"{instance.url}webtest.html", connections=20, threads=1, warmup_us=2_000_000, duration_us=2_000_000)
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
