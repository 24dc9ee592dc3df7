"""The machine a measurement ran on: a snapshot for the store and `gauntlet doctor`, what differs
between two snapshots, and the CPUs a process may use (affinity and cgroup quota).

Everything is read from /proc and /sys (and the tools' `--version`); nothing is changed.
"""

from __future__ import annotations

import os
import platform
import re
import resource
import shutil
import subprocess
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import psutil

from gauntlet import __version__
from gauntlet.monitor.cgroup import cgroup_dirs
from gauntlet.servers.registry import KINDS, availability

#: The kernel settings the studies tuned, by their sysctl names (docs/tuning.md says why).
SYSCTLS = (
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.tcp_fin_timeout",
    "net.core.netdev_max_backlog",
    "fs.file-max",
)
ULIMITS = {"nofile": resource.RLIMIT_NOFILE, "nproc": resource.RLIMIT_NPROC}
#: Peer load generators, with the flag that makes each print its version.
TOOLS = {"wrk": "-v", "h2load": "--version", "ab": "-V"}
#: What two snapshots may differ in without making their results incomparable.
INCIDENTAL = frozenset({"taken_unix_ms", "hostname", "load_average", "python"})
VERSION = re.compile(r"(\d+\.\d+(?:\.\d+)?)")
GOVERNOR = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
HUGE_PAGES = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def snapshot(load_average: tuple[float, float, float] | None = None) -> dict[str, Any]:
    """The facts a result depends on, as JSON-able values (None where the machine does not say);
    `load_average` as read before the load, when the snapshot is taken after it."""
    soft_hard = {name: list(resource.getrlimit(limit)) for name, limit in ULIMITS.items()}
    return {
        "taken_unix_ms": int(time.time() * 1000),
        "hostname": platform.node(),
        "gauntlet": __version__,
        "python": platform.python_version(),
        "os": _os_name(),
        "kernel": platform.release(),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "cpus_allowed": sorted(os.sched_getaffinity(0)),
        "cpu_quota_cores": cpu_quota_cores(os.getpid()),
        "memory_bytes": psutil.virtual_memory().total,
        "cpu_governor": _read(GOVERNOR),
        "transparent_hugepages": _bracketed(_read(HUGE_PAGES)),
        "sysctls": {name: _read(Path("/proc/sys") / name.replace(".", "/")) for name in SYSCTLS},
        "ulimits": {name: [None if v == resource.RLIM_INFINITY else v for v in pair] for name, pair in soft_hard.items()},
        "load_average": [round(load, 2) for load in load_average or os.getloadavg()],
        "tools": {tool: _tool_version(tool, flag) for tool, flag in TOOLS.items()},
        "servers": {kind: availability(kind).version for kind in KINDS},
    }


def snapshot_after_load() -> Callable[[], dict[str, Any]]:
    """The load average now, before the load; the rest of the snapshot (versions take a few
    subprocesses) on the first call, after the first measurement, so nothing delays the load."""
    before = os.getloadavg()
    return cache(lambda: snapshot(before))


def busy_now(interval_s: float = 0.3, windows: int = 3, top: int = 3) -> dict[str, Any]:
    """What other processes use right now: the quietest of `windows` windows of `interval_s` each,
    so that one burst (this command's own start-up, a cron job) is not taken for a busy machine.
    Busy cores besides this process and its children, and the busiest few other processes
    (`{"cpu_cores": 0.8, "top": [{"pid", "name", "cpu_cores"}]}`)."""
    return min((_busy_over(interval_s, top) for _ in range(windows)), key=lambda busy: busy["cpu_cores"])


def _busy_over(interval_s: float, top: int) -> dict[str, Any]:
    own = {os.getpid(), *(child.pid for child in psutil.Process().children(recursive=True))}
    procs = [p for p in psutil.process_iter(["name"]) if p.pid not in own]
    before = {p.pid: cpu_s for p in procs if (cpu_s := _cpu_s(p)) is not None}
    total_before, own_before = psutil.cpu_times(), _own_cpu_s()
    time.sleep(interval_s)
    total_after, own_after = psutil.cpu_times(), _own_cpu_s()
    idle_s = sum(getattr(total_after, f) - getattr(total_before, f) for f in ("idle", "iowait") if hasattr(total_after, f))
    wall_s = sum(total_after) - sum(total_before)
    cores = os.cpu_count() or 1
    busy_cores = max(0.0, (wall_s - idle_s) / wall_s * cores - (own_after - own_before) / interval_s) if wall_s else 0.0
    used = [
        {"pid": p.pid, "name": p.info["name"], "cpu_cores": round((after - before[p.pid]) / interval_s, 3)}
        for p in procs
        if p.pid in before and (after := _cpu_s(p)) is not None
    ]
    busiest = sorted((u for u in used if u["cpu_cores"] >= 0.01), key=lambda u: -u["cpu_cores"])[:top]
    return {"cpu_cores": round(busy_cores, 3), "top": busiest}


def _own_cpu_s() -> float:
    """This process's CPU and its children's (live ones and those it has reaped)."""
    times = os.times()
    live = 0.0
    for child in psutil.Process().children(recursive=True):
        live += _cpu_s(child) or 0.0
    return times.user + times.system + times.children_user + times.children_system + live


def _cpu_s(process: psutil.Process) -> float | None:
    try:
        times = process.cpu_times()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None
    return times.user + times.system


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two snapshots in what matters for comparing results, one line each
    ('kernel: 6.1.0 -> 6.18.4'); empty when they were taken under the same conditions."""
    lines = []
    for key in sorted((before.keys() | after.keys()) - INCIDENTAL):
        old, new = before.get(key), after.get(key)
        if isinstance(old, dict) and isinstance(new, dict):
            lines += [f"{key}.{line}" for line in differences(old, new)]
        elif old != new:
            lines.append(f"{key}: {_shown(old)} -> {_shown(new)}")
    return lines


def allowed_cpus(pid: int) -> frozenset[int]:
    """The CPUs the process (or thread) may run on: its affinity, as taskset sets it."""
    return frozenset(os.sched_getaffinity(pid))


def cpu_quota_cores(pid: int) -> float | None:
    """The CPU its cgroups allow the process, in cores (0.1: a tenth of one core), the tightest of
    its group and the groups above it, in cgroup v1's `cpu` and v2's hierarchies; None: no quota."""
    try:
        groups = Path(f"/proc/{pid}/cgroup").read_text()
        mounts = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return None
    quotas = [
        quota
        for version, group, top in cgroup_dirs(mounts, groups, "cpu")
        for directory in (group, *group.parents)
        if directory.is_relative_to(top)
        for quota in [_quota_cores(directory, version)]
        if quota is not None
    ]
    return min(quotas, default=None)


def _quota_cores(directory: Path, version: int) -> float | None:
    try:
        if version == 2:
            quota, period = (directory / "cpu.max").read_text().split()
            return None if quota == "max" else int(quota) / int(period)
        quota_us = int((directory / "cpu.cfs_quota_us").read_text())
        return None if quota_us < 0 else quota_us / int((directory / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None


def _read(path: Path) -> str | None:
    try:
        return " ".join(path.read_text().split())
    except OSError:
        return None


def _bracketed(text: str | None) -> str | None:
    """The selected choice of a sysfs list such as 'always [madvise] never'."""
    found = re.search(r"\[(\w+)\]", text or "")
    return found[1] if found else text


def _os_name() -> str | None:
    found = re.search(r'^PRETTY_NAME="?([^"\n]*)', _read_raw(Path("/etc/os-release")), re.MULTILINE)
    return found[1] if found else None


def _cpu_model() -> str | None:
    found = re.search(r"^model name\s*:\s*(.*)$", _read_raw(Path("/proc/cpuinfo")), re.MULTILINE)
    return found[1].strip() if found else platform.processor() or None


def _read_raw(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _tool_version(tool: str, flag: str) -> str | None:
    """The version a peer tool prints about itself; None when it is not installed."""
    binary = shutil.which(tool)
    if binary is None:
        return None
    done = subprocess.run([binary, flag], capture_output=True, text=True, timeout=10, check=False)
    found = VERSION.search(done.stdout + done.stderr)
    return found[1] if found else "unknown"


def _shown(value: Any) -> str:
    return "absent" if value is None else str(value)
