"""Pure parsers for the /proc files the monitor reads (tested on captured text)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class ProcSample:
    """One process, from /proc/PID/stat and /proc/PID/status."""

    pid: int
    ppid: int
    comm: str
    user_s: float
    system_s: float
    minor_faults: int
    major_faults: int
    threads: int
    vm_size_bytes: int
    rss_bytes: int
    #: What the process's reaped children used (cutime, cstime, cminflt, cmajflt).
    children_user_s: float = 0.0
    children_system_s: float = 0.0
    children_minor_faults: int = 0
    children_major_faults: int = 0
    voluntary_switches: int = 0
    involuntary_switches: int = 0

    @property
    def user_with_reaped_s(self) -> float:
        """User CPU of the process and of the children it reaped: continuous as children come and go."""
        return self.user_s + self.children_user_s

    @property
    def system_with_reaped_s(self) -> float:
        return self.system_s + self.children_system_s

    @property
    def minor_faults_with_reaped(self) -> int:
        return self.minor_faults + self.children_minor_faults

    @property
    def major_faults_with_reaped(self) -> int:
        return self.major_faults + self.children_major_faults


def parse_pid_stat(text: str) -> ProcSample:
    """/proc/PID/stat: the command sits in parentheses and may itself hold spaces and parentheses."""
    pid_text, _, rest = text.partition(" (")
    comm, _, fields_text = rest.rpartition(") ")
    fields = fields_text.split()
    # fields[0] is field 3 (state) of proc(5); index = field number - 3.
    return ProcSample(
        pid=int(pid_text),
        ppid=int(fields[1]),
        comm=comm,
        minor_faults=int(fields[7]),
        children_minor_faults=int(fields[8]),
        major_faults=int(fields[9]),
        children_major_faults=int(fields[10]),
        user_s=int(fields[11]) / CLOCK_TICKS_PER_S,
        system_s=int(fields[12]) / CLOCK_TICKS_PER_S,
        children_user_s=int(fields[13]) / CLOCK_TICKS_PER_S,
        children_system_s=int(fields[14]) / CLOCK_TICKS_PER_S,
        threads=int(fields[17]),
        vm_size_bytes=int(fields[20]),
        rss_bytes=int(fields[21]) * PAGE_BYTES,
    )


def parse_context_switches(status_text: str) -> tuple[int, int]:
    """(voluntary, involuntary) context switches from /proc/PID/status."""
    counts = {"voluntary_ctxt_switches": 0, "nonvoluntary_ctxt_switches": 0}
    for line in status_text.splitlines():
        name, _, value = line.partition(":")
        if name in counts:
            counts[name] = int(value)
    return counts["voluntary_ctxt_switches"], counts["nonvoluntary_ctxt_switches"]


@dataclass(frozen=True)
class SystemSample:
    interrupts: int
    context_switches: int
    pages_freed: int
    loopback_packets: int
    loopback_bytes: int
    load_1m: float


def parse_proc_stat(text: str) -> tuple[int, int]:
    """(interrupts, context switches) since boot, from /proc/stat."""
    interrupts = switches = 0
    for line in text.splitlines():
        if line.startswith("intr "):
            interrupts = int(line.split()[1])
        elif line.startswith("ctxt "):
            switches = int(line.split()[1])
    return interrupts, switches


def parse_vmstat_pgfree(text: str) -> int:
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == "pgfree":
            return int(value)
    return 0


def parse_net_dev(text: str, interface: str = "lo") -> tuple[int, int]:
    """(packets, bytes) received plus sent on one interface, from /proc/net/dev."""
    for line in text.splitlines():
        name, colon, counters = line.partition(":")
        if colon and name.strip() == interface:
            fields = [int(f) for f in counters.split()]
            return fields[1] + fields[9], fields[0] + fields[8]
    return 0, 0


def read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def thread_context_switches(pid: int) -> tuple[int, int]:
    """(voluntary, involuntary) summed over the process's threads: /proc/PID/status has only
    the main thread's."""
    voluntary = involuntary = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            v, i = parse_context_switches(read(f"/proc/{pid}/task/{task}/status"))
        except (FileNotFoundError, ProcessLookupError):
            continue
        voluntary, involuntary = voluntary + v, involuntary + i
    return voluntary, involuntary


def sample_process(pid: int) -> ProcSample | None:
    """None when the process has gone (it may exit between listing and reading)."""
    try:
        sample = parse_pid_stat(read(f"/proc/{pid}/stat"))
        voluntary, involuntary = thread_context_switches(pid)
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return None
    return replace(sample, voluntary_switches=voluntary, involuntary_switches=involuntary)


def sample_system() -> SystemSample:
    interrupts, switches = parse_proc_stat(read("/proc/stat"))
    packets, n_bytes = parse_net_dev(read("/proc/net/dev"))
    return SystemSample(
        interrupts=interrupts,
        context_switches=switches,
        pages_freed=parse_vmstat_pgfree(read("/proc/vmstat")),
        loopback_packets=packets,
        loopback_bytes=n_bytes,
        load_1m=float(read("/proc/loadavg").split()[0]),
    )
