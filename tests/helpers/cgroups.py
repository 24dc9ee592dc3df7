"""A cgroup with a CPU quota for a test: a process moved into it (or a command started in it) gets
at most that share of one core. cgroup v1's `cpu` hierarchy or v2 with the cpu controller; as root."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from gauntlet.monitor.cgroup import Cgroup, cgroup_dirs
from tests.conftest import missing_here

PERIOD_US = 100_000


class CpuGroup(Cgroup):
    """A cgroup (monitor/cgroup.py: `wrap` a command into it, `remove` it) that also takes a quota."""

    def limit(self, quota_cores: float) -> None:
        quota_us = round(quota_cores * PERIOD_US)
        if self.version == 1:
            (self.path / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (self.path / "cpu.cfs_quota_us").write_text(str(quota_us))
        else:
            (self.path / "cpu.max").write_text(f"{quota_us} {PERIOD_US}")

    def add(self, pid: int) -> None:
        """The process and all its threads."""
        (self.path / "cgroup.procs").write_text(str(pid))


def _new_group() -> CpuGroup | None:
    mounts, own = Path("/proc/self/mountinfo").read_text(), Path("/proc/self/cgroup").read_text()
    for version, parent, _ in cgroup_dirs(mounts, own, "cpu"):
        control = "cpu.cfs_quota_us" if version == 1 else "cpu.max"
        group = CpuGroup(parent / f"gauntlet-test-{os.getpid()}-{time.monotonic_ns()}", version)
        try:
            group.path.mkdir()
        except OSError:
            continue
        if (group.path / control).exists():
            return group
        group.remove()
    return None


@contextlib.contextmanager
def cpu_quota(quota_cores: float) -> Iterator[CpuGroup]:
    """A new group limited to `quota_cores`; removed at the end (stop what you put in it first)."""
    group = _new_group() if os.geteuid() == 0 else None
    if group is None:
        missing_here("no writable cgroup with a CPU quota here (needs root and a cpu hierarchy)", "CI runs as root")
    try:
        group.limit(quota_cores)
        yield group
    finally:
        assert group.remove(timeout_s=5.0), f"{group.path} is still there"
