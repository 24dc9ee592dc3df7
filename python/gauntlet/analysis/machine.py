"""The machine's own state during a measured interval: the CPU that neither the client nor the
server used (other processes, a hypervisor's steal), as a share of the machine's cores. A case run
beside other work measures that work too; above `BUSY_SHARE` it is labelled `machine-busy`
(docs/metrics.md, "The machine's other work")."""

from __future__ import annotations

from dataclasses import dataclass

MACHINE_BUSY = "machine-busy"
#: Above this share of the machine's cores used by other processes, a case is `machine-busy`: far
#: below one busy core of two (50 %), above the figure's own resolution (10 ms ticks of /proc/stat
#: over a window of seconds); docs/metrics.md says what was measured.
BUSY_SHARE = 0.05


@dataclass(frozen=True)
class MachineUse:
    """Every CPU's busy time over the window and Gauntlet's own share of it."""

    #: user + nice + system + steal of every CPU (/proc/stat): not idle, iowait, irq or softirq
    #: (interrupts and softirqs are the traffic's own work: loopback packets, timers).
    busy_s: float
    #: This process (the client's load threads, the monitor) and the children it reaped (engine
    #: processes of a local split).
    own_s: float
    cores: int


def other_cpu_share(machine: MachineUse, server_cpu_s: float, window_s: float) -> float:
    """The busy time that was neither the client's nor the server's, over the machine's cores
    (0 when the counters' resolution makes it come out below zero)."""
    other_s = machine.busy_s - machine.own_s - server_cpu_s
    return max(0.0, other_s / max(window_s * machine.cores, 1e-9))


def machine_figures(machine: MachineUse, server_cpu_s: float, window_s: float) -> dict[str, float | int | bool]:
    """The result's `bottleneck.machine`: the share, the limit, and whether it was passed."""
    share = other_cpu_share(machine, server_cpu_s, window_s)
    return {"other_cpu_share": share, "busy_share_limit": BUSY_SHARE, "cores": machine.cores, "busy": share > BUSY_SHARE}


def busy_reason(figures: dict[str, float | int | bool]) -> str:
    return (
        f"other processes used {figures['other_cpu_share']:.1%} of the machine's {figures['cores']} cores "
        f"while it was measured (more than {figures['busy_share_limit']:.0%}): its figures include their contention"
    )
