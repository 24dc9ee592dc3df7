"""A background thread that samples the server's process tree and the system from /proc, and
sums what happened between start and stop, with a point per sample for the timeline. It measures
its own CPU cost.

CPU comes from the instance's cgroup when it has one (every process that ran in it counts, also
those born and gone between two samples); otherwise from /proc, where a process that has exited
counts through its parent's children's times once the parent has reaped it (docs/metrics.md).

`totals(window)` sums over the measured interval only: the cumulative counters are read at the
interval's edges by linear interpolation between the readings around them, and `mark()` takes a
reading at the moment the interval begins, so that interpolation spans milliseconds, not a
sampling interval.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

from gauntlet.monitor import roles
from gauntlet.monitor.cgroup import Cgroup
from gauntlet.monitor.procfs import ProcSample, SystemSample, sample_process, sample_system

DEFAULT_INTERVAL_S = 0.5
PROC_SOURCE = "proc"


class Monitored(Protocol):
    """What the sampler needs of a server instance (gauntlet.servers.base.ServerInstance)."""

    @property
    def main_pid(self) -> int: ...

    def backend_pids(self) -> list[int]: ...

    @property
    def cgroup(self) -> Cgroup | None: ...


@dataclass
class RoleMemory:
    processes: int = 0
    rss_bytes: int = 0
    vm_size_bytes: int = 0


@dataclass(frozen=True)
class RolePoint:
    """One role's processes between the previous sample and this one."""

    #: From each process's own /proc times (and its reaped children's), in % of one core.
    cpu_percent: float
    rss_bytes: int
    processes: int


@dataclass(frozen=True)
class TimelinePoint:
    """The server between the previous sample and this one."""

    #: Seconds since the first sample.
    t_s: float
    #: CPU of the whole tree, in % of one core (200 = two cores busy).
    cpu_percent: float
    rss_bytes: int
    processes: int
    threads: int
    #: Voluntary + involuntary, of the threads seen in this sample and the one before.
    context_switches: int
    #: The same split by role (master, worker, backend, ...): which part of the server used the
    #: CPU and the memory. A process that exited between samples without being reaped by one of
    #: the tree's own processes is missing here, so the roles' CPU may add up to less than the
    #: tree's (which comes from the cgroup when there is one).
    roles: dict[str, RolePoint] = field(default_factory=dict)


@dataclass
class ServerTotals:
    """What the server's tree did between start and stop (see docs/metrics.md)."""

    elapsed_s: float = 0.0
    cpu_user_s: float = 0.0
    cpu_system_s: float = 0.0
    #: Where the CPU figures come from: cgroup-v2, cgroup-v1 or proc.
    cpu_source: str = PROC_SOURCE
    voluntary_switches: int = 0
    involuntary_switches: int = 0
    minor_faults: int = 0
    major_faults: int = 0
    max_processes: int = 0
    max_threads: int = 0
    memory: dict[str, RoleMemory] = field(default_factory=dict)
    timeline: list[TimelinePoint] = field(default_factory=list)
    system_interrupts: int = 0
    system_context_switches: int = 0
    system_pages_freed: int = 0
    loopback_packets: int = 0
    loopback_bytes: int = 0
    load_1m: float = 0.0
    #: Readings that cover the window: one per edge read within EDGE_S of it, and those between
    #: (every reading when totals() is given no window).
    samples: int = 0
    monitor_cpu_s: float = 0.0

    @property
    def cpu_s(self) -> float:
        return self.cpu_user_s + self.cpu_system_s


@dataclass(frozen=True)
class _Reading:
    """One sample of the whole tree: cumulative counters and what is alive now."""

    at_s: float
    cpu_user_s: float
    cpu_system_s: float
    minor_faults: int
    major_faults: int
    processes: dict[int, tuple[ProcSample, str]]


class Sampler:
    """`with Sampler(pid): ...` samples the tree rooted at `pid` (and the backends' trees, roles
    `backend`, or `database` for MariaDB) every `interval_s`; `Sampler.of(server)` takes all of that from a server instance."""

    def __init__(
        self,
        root_pid: int,
        interval_s: float = DEFAULT_INTERVAL_S,
        *,
        backend_pids: Sequence[int] = (),
        cgroup: Cgroup | None = None,
    ) -> None:
        self._root_pid = root_pid
        self._backend_pids = list(backend_pids)
        self._cgroup = cgroup
        self._interval_s = interval_s
        self._first: _Reading | None = None
        self._previous: _Reading | None = None
        self._counters: list[Counters] = []
        self._lock = threading.Lock()
        self._totals = ServerTotals(cpu_source=cgroup.source if cgroup else PROC_SOURCE)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gauntlet-monitor", daemon=True)
        self._system_first: SystemSample | None = None

    @classmethod
    def of(cls, server: Monitored, interval_s: float = DEFAULT_INTERVAL_S) -> Sampler:
        return cls(server.main_pid, interval_s, backend_pids=server.backend_pids(), cgroup=server.cgroup)

    def __enter__(self) -> Sampler:
        self._system_first = sample_system()
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            self._sample()
        self._sample()
        self._totals.monitor_cpu_s = time.thread_time()

    def _read(self) -> _Reading:
        processes: dict[int, tuple[ProcSample, str]] = {}
        for root in [self._root_pid, *self._backend_pids]:
            family = [s for s in map(sample_process, roles.descendants(root)) if s is not None]
            if not family:
                continue
            for sample in family:
                role = roles.role(sample, family[0], len(family) > 1) if root == self._root_pid else roles.backend_role(sample)
                processes[sample.pid] = (sample, role)
        samples = [s for s, _ in processes.values()]
        if self._cgroup is not None:
            user_s, system_s = self._cgroup.cpu_s()
        else:
            # Alive now plus everything they have reaped: continuous as processes come and go.
            user_s = sum(s.user_with_reaped_s for s in samples)
            system_s = sum(s.system_with_reaped_s for s in samples)
        return _Reading(
            at_s=time.monotonic(),
            cpu_user_s=user_s,
            cpu_system_s=system_s,
            minor_faults=sum(s.minor_faults_with_reaped for s in samples),
            major_faults=sum(s.major_faults_with_reaped for s in samples),
            processes=processes,
        )

    def mark(self) -> None:
        """Take a reading now, from any thread (at the start of the measured interval): the
        system-wide counters start from here too."""
        self._sample()
        self._system_first = sample_system()

    def _sample(self) -> None:
        with self._lock:
            self._sample_locked()

    def _sample_locked(self) -> None:
        reading = self._read()
        self._counters.append(
            Counters(reading.at_s, reading.cpu_user_s, reading.cpu_system_s, reading.minor_faults, reading.major_faults)
        )
        totals = self._totals
        samples = [s for s, _ in reading.processes.values()]
        totals.max_processes = max(totals.max_processes, len(samples))
        totals.max_threads = max(totals.max_threads, sum(s.threads for s in samples))
        if samples:
            totals.memory = memory_by_role(list(reading.processes.values()))
        previous = self._previous
        self._previous = reading
        if previous is None:
            self._first = reading
            return
        voluntary = involuntary = 0
        for pid, (sample, _) in reading.processes.items():
            before = previous.processes.get(pid)
            # Per-thread counters: a thread that exited takes its count along, hence the floor.
            voluntary += max(0, sample.voluntary_switches - (before[0].voluntary_switches if before else 0))
            involuntary += max(0, sample.involuntary_switches - (before[0].involuntary_switches if before else 0))
        totals.voluntary_switches += voluntary
        totals.involuntary_switches += involuntary
        cpu_s = reading.cpu_user_s + reading.cpu_system_s - previous.cpu_user_s - previous.cpu_system_s
        span_s = max(reading.at_s - previous.at_s, 1e-6)
        assert self._first is not None
        totals.timeline.append(
            TimelinePoint(
                t_s=reading.at_s - self._first.at_s,
                cpu_percent=max(0.0, 100 * cpu_s / span_s),
                rss_bytes=sum(s.rss_bytes for s in samples),
                processes=len(samples),
                threads=sum(s.threads for s in samples),
                context_switches=voluntary + involuntary,
                roles=roles_between(previous, reading, span_s),
            )
        )

    def points(self, start: int) -> list[TimelinePoint]:
        """The timeline's points from index `start` on, while the sampler runs (from any thread)."""
        with self._lock:
            return self._totals.timeline[start:]

    def _window_switches(self, totals: ServerTotals, from_s: float, to_s: float) -> None:
        """Scale the context switches to the share of them counted within the window (each
        timeline point spreads its count evenly over its interval)."""
        first_at_s, previous_t_s = self._counters[0].at_s, 0.0
        in_window = 0.0
        for point in totals.timeline:
            start_s, end_s = first_at_s + previous_t_s, first_at_s + point.t_s
            overlap_s = max(0.0, min(end_s, to_s) - max(start_s, from_s))
            in_window += point.context_switches * overlap_s / max(end_s - start_s, 1e-9)
            previous_t_s = point.t_s
        counted = sum(point.context_switches for point in totals.timeline)
        share = in_window / counted if counted else 0.0
        totals.voluntary_switches = round(totals.voluntary_switches * share)
        totals.involuntary_switches = round(totals.involuntary_switches * share)

    def totals(self, window: tuple[float, float] | None = None) -> ServerTotals:
        """Call after the `with` block: the sums over the tree within `window` (time.monotonic
        seconds, from and to; None: between the first and last sample)."""
        totals = dataclasses.replace(self._totals)
        counters = self._counters
        if counters:
            from_s, to_s = window if window is not None else (counters[0].at_s, counters[-1].at_s)
            start, end = interpolate(counters, from_s), interpolate(counters, to_s)
            totals.elapsed_s = max(0.0, to_s - from_s)
            totals.cpu_user_s = max(0.0, end.cpu_user_s - start.cpu_user_s)
            totals.cpu_system_s = max(0.0, end.cpu_system_s - start.cpu_system_s)
            totals.minor_faults = max(0, round(end.minor_faults - start.minor_faults))
            totals.major_faults = max(0, round(end.major_faults - start.major_faults))
            totals.samples = len(counters)
            if window is not None:
                totals.samples = readings_over(counters, from_s, to_s)
                self._window_switches(totals, from_s, to_s)
        if self._system_first is not None:
            before, after = self._system_first, sample_system()
            totals.system_interrupts = after.interrupts - before.interrupts
            totals.system_context_switches = after.context_switches - before.context_switches
            totals.system_pages_freed = after.pages_freed - before.pages_freed
            totals.loopback_packets = after.loopback_packets - before.loopback_packets
            totals.loopback_bytes = after.loopback_bytes - before.loopback_bytes
            totals.load_1m = after.load_1m
        return totals


@dataclass(frozen=True)
class Counters:
    """The tree's cumulative counters at one instant (time.monotonic seconds)."""

    at_s: float
    cpu_user_s: float
    cpu_system_s: float
    minor_faults: float
    major_faults: float

    def values(self) -> tuple[float, float, float, float]:
        return (self.cpu_user_s, self.cpu_system_s, self.minor_faults, self.major_faults)


#: A reading this close to a window's edge counts as taken at it.
EDGE_S = 0.1


def readings_over(counters: list[Counters], from_s: float, to_s: float) -> int:
    """Readings that cover the window: one at each edge (within EDGE_S of it), each counted
    once, and those between them."""
    at_edges = sum(any(abs(c.at_s - edge_s) <= EDGE_S for c in counters) for edge_s in (from_s, to_s))
    return at_edges + sum(1 for c in counters if from_s + EDGE_S < c.at_s < to_s - EDGE_S)


def interpolate(counters: list[Counters], at_s: float) -> Counters:
    """The counters at `at_s`, linear between the readings around it (the nearest one outside them)."""
    if at_s <= counters[0].at_s:
        return counters[0]
    for before, after in itertools.pairwise(counters):
        if before.at_s <= at_s <= after.at_s:
            share = (at_s - before.at_s) / max(after.at_s - before.at_s, 1e-9)
            return Counters(at_s, *(b + share * (a - b) for b, a in zip(before.values(), after.values(), strict=True)))
    return counters[-1]


def _process_cpu_s(sample: ProcSample) -> float:
    return sample.user_with_reaped_s + sample.system_with_reaped_s


def roles_between(previous: _Reading, reading: _Reading, span_s: float) -> dict[str, RolePoint]:
    """Each role's CPU over the span (a process new since `previous` counts from its birth) and
    its memory now."""
    cpu_s: dict[str, float] = defaultdict(float)
    memory = memory_by_role(list(reading.processes.values()))
    for pid, (sample, role) in reading.processes.items():
        before = previous.processes.get(pid)
        cpu_s[role] += max(0.0, _process_cpu_s(sample) - (_process_cpu_s(before[0]) if before else 0.0))
    return {
        role: RolePoint(cpu_percent=100 * cpu_s[role] / span_s, rss_bytes=m.rss_bytes, processes=m.processes)
        for role, m in sorted(memory.items())
    }


def memory_by_role(processes: list[tuple[ProcSample, str]]) -> dict[str, RoleMemory]:
    """The thesis's VmRSS/VmSize table: processes and summed sizes per role."""
    memory: dict[str, RoleMemory] = {}
    for sample, role in processes:
        entry = memory.setdefault(role, RoleMemory())
        entry.processes += 1
        entry.rss_bytes += sample.rss_bytes
        entry.vm_size_bytes += sample.vm_size_bytes
    return memory
