"""The host snapshot every run records, what counts as a different environment, and the CPUs a
process may use (affinity, cgroup quota), read back from real processes."""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import jsonschema
import pytest

from gauntlet import schema
from gauntlet.host import allowed_cpus, cpu_quota_cores, differences, snapshot
from gauntlet.monitor.cgroup import cgroup_dirs
from gauntlet.servers.registry import availability
from tests.helpers.cgroups import cpu_quota

SCHEMA = schema.run_result()

#: This machine's layout: v1 controllers mounted apart, v2 beside them.
HOST_MOUNTS = """\
24 30 0:21 / /sys rw,nosuid - sysfs sysfs rw
35 24 0:30 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
36 24 0:31 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
44 24 0:39 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
#: Inside a container: cpu and cpuacct together, the container's own group mounted as the root.
CONTAINER_MOUNTS = """\
37 24 0:32 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,relatime - cgroup cgroup rw,cpu,cpuacct
"""


def load_average_now() -> list[float]:
    return [round(load, 2) for load in os.getloadavg()]


def test_the_snapshot_is_what_the_schema_describes_and_what_the_machine_says() -> None:
    before = load_average_now()
    found = snapshot()
    after = load_average_now()
    jsonschema.Draft202012Validator(SCHEMA["properties"]["environment"]).validate(found)
    assert found["cores"] == os.cpu_count()
    assert found["cpus_allowed"] == sorted(os.sched_getaffinity(0))
    assert found["ulimits"]["nofile"] == list(resource.getrlimit(resource.RLIMIT_NOFILE))
    assert found["sysctls"]["net.core.somaxconn"] == Path("/proc/sys/net/core/somaxconn").read_text().strip()
    assert found["kernel"] == os.uname().release
    assert found["servers"]["nginx"] == availability("nginx").version
    # The kernel refreshes it every 5 s: the snapshot holds the reading from before or after.
    assert found["load_average"] in (before, after)


def test_a_snapshot_after_the_load_keeps_the_load_average_from_before_it() -> None:
    assert snapshot((1.234, 0.5, 0.0))["load_average"] == [1.23, 0.5, 0.0]


def test_the_same_machine_later_differs_in_nothing_that_matters() -> None:
    before = snapshot()
    later = before | {"taken_unix_ms": before["taken_unix_ms"] + 60_000, "load_average": [9.0, 9.0, 9.0]}
    assert differences(before, later) == []


def test_differences_name_each_setting_that_changed() -> None:
    before = snapshot()
    after = before | {
        "kernel": "6.1.0-test",
        "sysctls": before["sysctls"] | {"net.core.somaxconn": "128"},
        "servers": before["servers"] | {"nginx": "9.9.9"},
        "cpu_quota_cores": 0.5,
    }
    assert differences(before, after) == [
        f"cpu_quota_cores: {before['cpu_quota_cores'] or 'absent'} -> 0.5",
        f"kernel: {before['kernel']} -> 6.1.0-test",
        f"servers.nginx: {before['servers']['nginx'] or 'absent'} -> 9.9.9",
        f"sysctls.net.core.somaxconn: {before['sysctls']['net.core.somaxconn']} -> 128",
    ]


@pytest.mark.parametrize(
    ("mounts", "proc_cgroup", "expected"),
    [
        (HOST_MOUNTS, "1:cpu:/bench\n0::/\n", [(1, "/sys/fs/cgroup/cpu/bench"), (2, "/sys/fs/cgroup/unified")]),
        (HOST_MOUNTS, "2:cpuacct:/\n", []),  # no cpu controller, no v2 group
        (CONTAINER_MOUNTS, "1:cpu,cpuacct:/docker/abc/x\n", [(1, "/sys/fs/cgroup/cpu,cpuacct/x")]),
        (CONTAINER_MOUNTS, "1:cpu,cpuacct:/other\n", []),  # outside the mounted part
    ],
)
def test_cgroup_dirs(mounts: str, proc_cgroup: str, expected: list[tuple[int, str]]) -> None:
    assert [(version, str(path)) for version, path, _ in cgroup_dirs(mounts, proc_cgroup, "cpu")] == expected


def test_a_process_in_a_quota_group_has_that_quota() -> None:
    with cpu_quota(0.3) as group:
        child = subprocess.Popen(group.wrap(["sleep", "10"]))
        try:
            for _ in range(100):
                if str(child.pid) in (group.path / "cgroup.procs").read_text().split():
                    break
                subprocess.run(["sleep", "0.02"], check=True)
            assert cpu_quota_cores(child.pid) == pytest.approx(0.3)
        finally:
            child.kill()
            child.wait()


def test_affinity_is_read_per_process() -> None:
    child = subprocess.Popen(["taskset", "-c", "0", "sleep", "10"])
    try:
        for _ in range(100):
            if allowed_cpus(child.pid) == frozenset({0}):
                break
            subprocess.run(["sleep", "0.02"], check=True)
        assert allowed_cpus(child.pid) == frozenset({0})
    finally:
        child.kill()
        child.wait()


def test_a_process_that_is_gone_has_no_quota() -> None:
    child = subprocess.Popen(["true"])
    child.wait()
    assert cpu_quota_cores(child.pid) is None
