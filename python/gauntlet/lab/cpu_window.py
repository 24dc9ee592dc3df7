"""What the CPUs did while a load was measured: how long each CPU stayed idle (/proc/stat), and
what the server's threads used and waited for (the scheduler's /proc/PID/task/TID/schedstat), from
the moment the measured interval began (`begin`, called when the engine says so; else the moment
before the load) to the moment after. The bottleneck labels are judged from these.

A thread of the server that exits during the load is not counted by schedstat (two readings, not a
timeline): where the server has a cgroup, `with_cgroup_cpu` takes its CPU from the cgroup, which
counts every process that ran in it (CGI children too). The client's threads are measured by the
engine itself (`client.cpu_wait_us`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import psutil

from gauntlet.analysis.bottleneck import CpuUse
from gauntlet.analysis.machine import MachineUse
from gauntlet.host import allowed_cpus, cpu_quota_cores
from gauntlet.monitor.cgroup import PROC_CGROUP, PROC_MOUNTINFO, cgroup_dirs
from gauntlet.monitor.sampler import PROC_SOURCE, ServerTotals


@dataclass(frozen=True)
class ThreadTime:
    cpu_s: float
    wait_s: float


def read_schedstat(text: str) -> ThreadTime:
    """/proc/.../schedstat: ns on a CPU, ns runnable but waiting for one, timeslices."""
    cpu_ns, wait_ns, _ = text.split()
    return ThreadTime(int(cpu_ns) / 1e9, int(wait_ns) / 1e9)


def thread_times(pids: list[int]) -> dict[int, ThreadTime]:
    """Every thread of these processes, by thread id (processes that are gone are skipped)."""
    found = {}
    for pid in pids:
        try:  # a process can end between being listed and being read (a CGI child)
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                found[int(task.name)] = read_schedstat((task / "schedstat").read_text())
            except (OSError, ValueError):
                continue
    return found


def idle_s_by_cpu() -> dict[int, float]:
    """Seconds each CPU has been idle (idle + iowait) since boot."""
    return {cpu: times.idle + getattr(times, "iowait", 0.0) for cpu, times in enumerate(psutil.cpu_times(percpu=True))}


@functools.cache
def _root_cpuacct() -> Path | None:
    """cgroup v1's cpuacct.usage at its hierarchy's root (every task the machine ran, in ns); None
    where there is no v1 cpuacct hierarchy (a cgroup-v2-only machine)."""
    try:
        with open(PROC_MOUNTINFO) as mountinfo, open(PROC_CGROUP) as own:
            found = cgroup_dirs(mountinfo.read(), own.read(), "cpuacct")
    except OSError:
        return None
    usage = next((top / "cpuacct.usage" for version, _, top in found if version == 1), None)
    return usage if usage is not None and usage.exists() else None


def tasks_cpu_s() -> float:
    """Seconds every task of the machine has run since boot: the root cpuacct group's count, in ns
    as precise as the client's getrusage and the server's cgroup, exited processes included and
    interrupt work on idle CPUs left out (no task ran it); else /proc/stat's user, nice and system
    ticks, which leave out the interrupt work the client's and the server's ticks include."""
    usage = _root_cpuacct()
    if usage is not None:
        try:
            return int(usage.read_text()) / 1e9
        except (OSError, ValueError):
            pass
    times = psutil.cpu_times()
    return float(times.user + times.nice + times.system)


#: /proc/PID/stat's flags: the task is a kernel thread.
PF_KTHREAD = 0x00200000


def kernel_threads_cpu_s() -> dict[int, float]:
    """Seconds each kernel thread has run since it started (its schedstat, ns), by pid."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            flags = int(text[text.rindex(")") + 2 :].split()[6])
            if flags & PF_KTHREAD:
                found[int(stat.parent.name)] = read_schedstat((stat.parent / "schedstat").read_text()).cpu_s
        except (OSError, ValueError, IndexError):
            continue
    return found


def grown_s(before: dict[int, float], after: dict[int, float]) -> float:
    """What the threads of `after` ran since `before`; a pid that is new, or whose count went down
    (a new thread with a reused pid), ran all of its CPU since."""
    return sum(cpu_s - before.get(pid, 0.0) if cpu_s >= before.get(pid, 0.0) else cpu_s for pid, cpu_s in after.items())


def steal_s() -> float:
    """Seconds the hypervisor has run something else on this machine's CPUs since boot."""
    return float(getattr(psutil.cpu_times(), "steal", 0.0))


def own_cpu_s() -> float:
    """This process's CPU and that of the children it has reaped."""
    usages = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(usage.ru_utime + usage.ru_stime for usage in usages)


class CpuWindow:
    """`with CpuWindow(server_pids) as window: <load>`; then `window.server_use()`,
    `window.idle_s_by_cpu` and `window.machine`. `server_pids` lists the server's processes at the time it is called
    (None: Gauntlet did not start the server, and only the CPUs' idle time is read)."""

    def __init__(self, server_pids: Callable[[], list[int]] | None) -> None:
        self._server_pids = server_pids
        self._before: dict[int, ThreadTime] = {}
        self._after: dict[int, ThreadTime] = {}
        self._idle_before: dict[int, float] = {}
        self._tasks_before_s = self._own_before_s = self._steal_before_s = 0.0
        self._kernel_before: dict[int, float] = {}
        self.machine: MachineUse | None = None
        self._began_s = 0.0
        self._cpus: frozenset[int] = frozenset()
        self._quota_cores: float | None = None
        self.window_s = 0.0
        self.idle_s_by_cpu: dict[int, float] = {}

    def __enter__(self) -> Self:
        self.begin()
        return self

    def begin(self) -> None:
        """Start the window now (again): at the start of the measured interval."""
        if self._server_pids is not None:
            pids = self._server_pids()
            self._cpus = cpus_of_threads(pids)
            self._quota_cores = cpu_quota_cores(pids[0]) if pids else None
            self._before = thread_times(pids)
        self._idle_before = idle_s_by_cpu()
        self._kernel_before = kernel_threads_cpu_s()
        self._tasks_before_s, self._own_before_s, self._steal_before_s = tasks_cpu_s(), own_cpu_s(), steal_s()
        self._began_s = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.window_s = time.monotonic() - self._began_s
        self.machine = MachineUse(
            tasks_cpu_s() - self._tasks_before_s, own_cpu_s() - self._own_before_s, psutil.cpu_count() or 1,
            steal_s() - self._steal_before_s,
            grown_s(self._kernel_before, kernel_threads_cpu_s()),
        )
        idle_after = idle_s_by_cpu()
        self.idle_s_by_cpu = {
            cpu: idle_after[cpu] - before for cpu, before in self._idle_before.items() if cpu in idle_after
        }
        if self._server_pids is not None:
            self._after = thread_times(self._server_pids())

    def server_use(self) -> CpuUse | None:
        """The server's threads over the window; None when Gauntlet did not start the server."""
        if self._server_pids is None:
            return None
        zero = ThreadTime(0.0, 0.0)
        deltas = [
            ThreadTime(after.cpu_s - self._before.get(tid, zero).cpu_s, after.wait_s - self._before.get(tid, zero).wait_s)
            for tid, after in self._after.items()
        ]
        window_s = max(self.window_s, 1e-9)
        return CpuUse(
            cpu_s=sum(d.cpu_s for d in deltas),
            wait_s=sum(d.wait_s for d in deltas),
            threads=len(deltas),
            busiest_thread_runnable_share=min(1.0, max(((d.cpu_s + d.wait_s) / window_s for d in deltas), default=0.0)),
            cpus=self._cpus,
            quota_cores=self._quota_cores,
        )


def with_cgroup_cpu(use: CpuUse | None, totals: ServerTotals | None, window_s: float) -> CpuUse | None:
    """The server's use with its CPU from its cgroup when it has one (short-lived processes
    included), at the cgroup's rate over the measured interval times this window."""
    if use is None or totals is None or totals.cpu_source == PROC_SOURCE or totals.elapsed_s <= 0:
        return use
    cgroup_cpu_s = totals.cpu_s / totals.elapsed_s * window_s
    return dataclasses.replace(use, cpu_s=max(use.cpu_s, cgroup_cpu_s))


def client_use(result: dict[str, Any]) -> CpuUse:
    """The load threads over the measured interval, from the engine's own figures (its `cpu_us`
    includes the warm-up: the measured share is `cpu_us_per_request` x requests), and the CPUs this
    process may use."""
    client = result["client"]
    measured_cpu_us = client["cpu_us_per_request"] * result["requests"]
    measured_share = measured_cpu_us / client["cpu_us"] if client["cpu_us"] > 0 else 0.0
    return CpuUse(
        cpu_s=measured_cpu_us / 1e6,
        wait_s=client["cpu_wait_us"] * measured_share / 1e6,
        threads=result["threads"],
        busiest_thread_runnable_share=client["busiest_thread_runnable_share"],
        cpus=allowed_cpus(0),
        quota_cores=cpu_quota_cores(os.getpid()),
    )


def cpus_of_threads(pids: list[int]) -> frozenset[int]:
    """Every CPU one of the processes' threads may run on (taskset can pin each thread apart)."""
    cpus: set[int] = set()
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                cpus |= allowed_cpus(int(task.name))
            except (OSError, ValueError):
                continue
    return frozenset(cpus)
