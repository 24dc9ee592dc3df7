"""A CGI server forks a process per request that lives a few milliseconds: the scheduler's view of
the server's live threads misses them, the server's cgroup does not, and its CPU decides the label.
The server is held to a CPU quota so that it saturates even on a machine others keep busy."""

from __future__ import annotations

import pytest

from gauntlet.analysis.bottleneck import SERVER_CPU_BOUND
from gauntlet.lab.case import measure
from gauntlet.plan import Plan
from gauntlet.servers.backends.catalog import backend_named
from tests.conftest import Start, missing_here
from tests.helpers.cgroups import cpu_quota

QUOTA_CORES = 0.3


def test_php_cgi_behind_nginx_held_to_a_quota_is_server_cpu_bound_by_its_cgroup(server: Start) -> None:
    instance = server("nginx", backend="php-cgi")
    if instance.cgroup is None:
        missing_here("no cgroup for the server on this machine: short-lived processes go uncounted", "CI runs as root")
    page = backend_named("php-cgi").page
    plan = Plan(url=f"{instance.url}{page.name}", connections=4, threads=1, warmup_us=500_000, duration_us=3_000_000)
    with cpu_quota(QUOTA_CORES) as group:
        if group.path.parent == instance.cgroup.path.parent:
            missing_here("the quota's hierarchy is the server's own: moving it would lose its accounting", "CI: v2 accounting, v1 cpu")
        try:  # the group can go only once the server has left it, also when the run failed
            for pid in instance.pids():
                group.add(pid)  # php-cgi children, forked later by fcgiwrap, are born in it
            record = measure(plan, instance, {"server": "nginx", "backend": "php-cgi"}).record
        finally:
            instance.stop()
    result = record.result
    assert result is not None and result["responses"] > 5 and result["errors_total"] == 0
    server = result["server"]
    assert server["cpu_source"] == instance.cgroup.source
    cgroup_cores = (server["cpu_user_s"] + server["cpu_system_s"]) / server["elapsed_s"]
    assert cgroup_cores == pytest.approx(QUOTA_CORES, rel=0.2), "php-cgi used its quota"
    judged = result["bottleneck"]["server"]
    assert judged["cpu_cores"] == pytest.approx(cgroup_cores, rel=0.15), "judged on the cgroup's CPU, children included"
    assert SERVER_CPU_BOUND in record.labels, result["bottleneck"]
    assert f"{QUOTA_CORES:.2f}-core cgroup quota" in result["bottleneck"]["reasons"][SERVER_CPU_BOUND]
