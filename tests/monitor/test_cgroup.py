"""Finding a cgroup hierarchy to create the server's group in (on captured /proc text), and a
real group counting the CPU of a process that has already exited."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


from gauntlet.monitor.cgroup import create_cgroup, hierarchies
from tests.conftest import missing_here

HYBRID_MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
HYBRID_OWN = "4:memory:/lab/42\n2:cpuacct:/\n1:cpu:/\n0::/\n"
# systemd's v2-only layout, the process in a session scope.
V2_MOUNTS = "27 22 0:24 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
V2_OWN = "0::/user.slice/user-0.slice/session-3.scope\n"
# A container whose v1 cpu,cpuacct hierarchy is mounted from its own group downwards.
CONTAINER_MOUNTS = "300 290 0:40 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct\n"
CONTAINER_OWN = "3:cpu,cpuacct:/docker/abc/inner\n"


def test_v2_first_then_v1_cpuacct_below_our_own_group() -> None:
    assert hierarchies(HYBRID_MOUNTS, HYBRID_OWN) == [
        (2, Path("/sys/fs/cgroup/unified")),
        (1, Path("/sys/fs/cgroup/cpuacct")),
    ]
    assert hierarchies(V2_MOUNTS, V2_OWN) == [(2, Path("/sys/fs/cgroup/user.slice/user-0.slice/session-3.scope"))]
    assert hierarchies(CONTAINER_MOUNTS, CONTAINER_OWN) == [(1, Path("/sys/fs/cgroup/cpu,cpuacct/inner"))]
    assert hierarchies(HYBRID_MOUNTS.replace("cgroup2 cgroup2", "tmpfs tmpfs"), "2:cpu:/\n") == []


def test_a_group_counts_what_its_processes_used_after_they_exit() -> None:
    group = create_cgroup(f"gauntlet-test-{Path('/proc/self').resolve().name}")
    if group is None:
        missing_here("no writable cgroup hierarchy here (not root, no delegation)", "CI runs as root")
    try:
        burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
        subprocess.run(group.wrap([sys.executable, "-c", burn]), check=True, timeout=30)
        user_s, system_s = group.cpu_s()
        assert 0.3 <= user_s + system_s < 1.5, (user_s, system_s)
        assert group.pids() == [], "the process has exited"
    finally:
        assert group.remove()
    assert not group.path.exists()
