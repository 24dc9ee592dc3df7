"""The machine's own state during a measured interval: the CPU that neither the client nor the
server used (other processes, a hypervisor's steal), as a share of the machine's cores. A case run
beside other work measures that work too; above `BUSY_SHARE` it is labelled `machine-busy`
(docs/metrics.md, "The machine's other work"). The kernel's own threads are not other work: on a
machine running a load, they carry its network traffic (ksoftirqd) and free its sockets (RCU)."""

from __future__ import annotations

from dataclasses import dataclass

MACHINE_BUSY = "machine-busy"
#: Above this share of the machine's cores taken by other processes and steal, a case is
#: `machine-busy`: far below one busy core of two (50 %), above what other processes took of a
#: quiet machine (3.2 % at most); docs/metrics.md says what was measured.
BUSY_SHARE = 0.05


@dataclass(frozen=True)
class MachineUse:
    """What every task of the machine ran over the window, Gauntlet's own share of it, and the time
    the hypervisor took from its CPUs."""

    #: CPU every task ran (lab.cpu_window.tasks_cpu_s: the root cpuacct group's ns where there is
    #: one, exited processes included; else /proc/stat's user + nice + system ticks).
    tasks_s: float
    #: This process (the client's load threads, the monitor) and the children it reaped (engine
    #: processes of a local split).
    own_s: float
    cores: int
    #: Steal of every CPU (/proc/stat): time the hypervisor ran something else on them.
    steal_s: float = 0.0
    #: Kernel threads (lab.cpu_window.kernel_threads_cpu_s): in tasks_s, but the load's work.
    kernel_s: float = 0.0


def other_cpu_share(machine: MachineUse, server_cpu_s: float, window_s: float) -> float:
    """The CPU that was neither the client's nor the server's, over the machine's cores: other
    processes' (0 when the counters' resolution makes it come out below zero) and steal."""
    return _processes_share(machine, server_cpu_s, window_s) + _share(machine.steal_s, machine, window_s)


def _processes_share(machine: MachineUse, server_cpu_s: float, window_s: float) -> float:
    return max(0.0, _share(machine.tasks_s - machine.own_s - machine.kernel_s - server_cpu_s, machine, window_s))


def _share(cpu_s: float, machine: MachineUse, window_s: float) -> float:
    return cpu_s / max(window_s * machine.cores, 1e-9)


def machine_figures(machine: MachineUse, server_cpu_s: float, window_s: float) -> dict[str, float | int | bool]:
    """The result's `bottleneck.machine`: the share, steal's part of it, the kernel threads' share
    left out of it, the limit, and whether it was passed."""
    share = other_cpu_share(machine, server_cpu_s, window_s)
    return {
        "other_cpu_share": share, "steal_share": _share(machine.steal_s, machine, window_s),
        "kernel_threads_share": _share(machine.kernel_s, machine, window_s),
        "busy_share_limit": BUSY_SHARE, "cores": machine.cores, "busy": share > BUSY_SHARE,
    }


def busy_reason(figures: dict[str, float | int | bool]) -> str:
    steal = figures.get("steal_share", 0.0)
    return (
        f"other processes and the hypervisor's steal ({steal:.1%}) took {figures['other_cpu_share']:.1%} of the "
        f"machine's {figures['cores']} cores while it was measured (more than {figures['busy_share_limit']:.0%}): "
        "its figures include their contention"
    )
