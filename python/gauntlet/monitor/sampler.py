"""A background thread that samples the server's process tree and the system from /proc, and
sums what happened between start and stop. It measures its own CPU cost."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from types import TracebackType

from gauntlet.monitor import proctree
from gauntlet.monitor.procfs import ProcSample, SystemSample, sample_process, sample_system

DEFAULT_INTERVAL_S = 0.5


@dataclass
class RoleMemory:
    processes: int = 0
    rss_bytes: int = 0
    vm_size_bytes: int = 0


@dataclass
class ServerTotals:
    """What the server's tree did between start and stop (see docs/metrics.md)."""

    elapsed_s: float = 0.0
    cpu_user_s: float = 0.0
    cpu_system_s: float = 0.0
    voluntary_switches: int = 0
    involuntary_switches: int = 0
    minor_faults: int = 0
    major_faults: int = 0
    max_processes: int = 0
    max_threads: int = 0
    memory: dict[str, RoleMemory] = field(default_factory=dict)
    system_interrupts: int = 0
    system_context_switches: int = 0
    system_pages_freed: int = 0
    loopback_packets: int = 0
    loopback_bytes: int = 0
    load_1m: float = 0.0
    samples: int = 0
    monitor_cpu_s: float = 0.0

    @property
    def cpu_s(self) -> float:
        return self.cpu_user_s + self.cpu_system_s


class Sampler:
    """`with Sampler(pid): ...` samples the tree rooted at `pid` every `interval_s`."""

    def __init__(self, root_pid: int, interval_s: float = DEFAULT_INTERVAL_S) -> None:
        self._root_pid = root_pid
        self._interval_s = interval_s
        self._first: dict[int, ProcSample] = {}
        self._last: dict[int, ProcSample] = {}
        self._totals = ServerTotals()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gauntlet-monitor", daemon=True)
        self._system_first: SystemSample | None = None
        self._began_s = 0.0

    def __enter__(self) -> Sampler:
        self._began_s = time.monotonic()
        self._system_first = sample_system()
        self._sample(first=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            self._sample(first=False)
        self._sample(first=False)
        self._totals.monitor_cpu_s = time.thread_time()

    def _sample(self, first: bool) -> None:
        samples = [s for s in map(sample_process, proctree.descendants(self._root_pid)) if s is not None]
        for sample in samples:
            if first:
                self._first[sample.pid] = sample
            self._last[sample.pid] = sample
        self._totals.samples += 1
        self._totals.max_processes = max(self._totals.max_processes, len(samples))
        self._totals.max_threads = max(self._totals.max_threads, sum(s.threads for s in samples))
        if samples:
            self._totals.memory = memory_by_role(self._root_pid, samples)

    def totals(self) -> ServerTotals:
        """Call after the `with` block: the sums over every process seen."""
        totals = self._totals
        totals.elapsed_s = time.monotonic() - self._began_s
        zero = ProcSample(0, 0, "", 0.0, 0.0, 0, 0, 0, 0, 0)
        for pid, last in self._last.items():
            first = self._first.get(pid, zero)
            totals.cpu_user_s += last.user_s - first.user_s
            totals.cpu_system_s += last.system_s - first.system_s
            totals.voluntary_switches += last.voluntary_switches - first.voluntary_switches
            totals.involuntary_switches += last.involuntary_switches - first.involuntary_switches
            totals.minor_faults += last.minor_faults - first.minor_faults
            totals.major_faults += last.major_faults - first.major_faults
        if self._system_first is not None:
            before, after = self._system_first, sample_system()
            totals.system_interrupts = after.interrupts - before.interrupts
            totals.system_context_switches = after.context_switches - before.context_switches
            totals.system_pages_freed = after.pages_freed - before.pages_freed
            totals.loopback_packets = after.loopback_packets - before.loopback_packets
            totals.loopback_bytes = after.loopback_bytes - before.loopback_bytes
            totals.load_1m = after.load_1m
        return totals


def memory_by_role(root_pid: int, samples: list[ProcSample]) -> dict[str, RoleMemory]:
    """The thesis's VmRSS/VmSize table: processes and summed sizes per role."""
    root = next((s for s in samples if s.pid == root_pid), samples[0])
    has_children = len(samples) > 1
    memory: dict[str, RoleMemory] = {}
    for sample in samples:
        entry = memory.setdefault(proctree.role(sample, root, has_children), RoleMemory())
        entry.processes += 1
        entry.rss_bytes += sample.rss_bytes
        entry.vm_size_bytes += sample.vm_size_bytes
    return memory
