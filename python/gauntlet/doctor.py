"""`gauntlet doctor`'s checks: what the studies learned to tune, judged from a host snapshot
(gauntlet.host.snapshot()) for a given number of connections. Pure functions; docs/tuning.md
says why each matters.

A finding's status is `ok`, `warn` (it limits some tests or adds variation), `fail` (results at
that concurrency would be wrong or refused) or `n/a` (the machine does not expose it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Descriptors a process needs besides its connections (the engine reserves as many).
RESERVED_FILES = 64
TIME_WAIT_S = 60
#: Other processes busier than this share of the CPUs leave the measurement less than all of them.
BUSY_SHARE = 0.1


@dataclass(frozen=True)
class Finding:
    check: str
    #: What was found, as the machine says it.
    found: str
    status: str
    #: What it limits (or why it is fine).
    meaning: str
    #: The command that fixes it; empty when nothing needs fixing.
    fix: str = ""


def checks(snapshot: dict[str, Any], connections: int, busy: dict[str, Any] | None = None) -> list[Finding]:
    """Every check, in the order shown. `busy` is what other processes used just now
    (`{"cpu_cores": float, "top": [{"pid", "name", "cpu_cores"}...]}`), None when not measured."""
    sysctls = snapshot["sysctls"]
    soft, hard = snapshot["ulimits"]["nofile"]
    found = [
        open_files(soft, hard, connections),
        accept_queue(sysctls.get("net.core.somaxconn"), connections),
        syn_queue(sysctls.get("net.ipv4.tcp_max_syn_backlog"), connections),
        local_ports(sysctls.get("net.ipv4.ip_local_port_range"), connections),
        time_wait_reuse(
            sysctls.get("net.ipv4.tcp_tw_reuse"),
            sysctls.get("net.ipv4.tcp_timestamps"),
            sysctls.get("net.ipv4.ip_local_port_range"),
        ),
        governor(snapshot["cpu_governor"]),
        huge_pages(snapshot["transparent_hugepages"]),
    ]
    if busy is not None:
        found.append(other_processes(busy, snapshot["cores"] or 1))
    return found


def failed(found: list[Finding]) -> bool:
    return any(f.status == "fail" for f in found)


def open_files(soft: int | None, hard: int | None, connections: int) -> Finding:
    """None is unlimited."""
    needed = connections + RESERVED_FILES
    shown = f"ulimit -n: soft {_limit(soft)}, hard {_limit(hard)}"
    check = "open files"
    if hard is not None and hard < needed:
        return Finding(
            check, shown, "fail",
            f"{connections} connections need about {needed} descriptors: the engine raises its soft limit to the hard "
            f"one and refuses more; a server dies at it, as the thesis's did at 1,024",
            f"prlimit --pid $$ --nofile={needed * 2}:{needed * 2}  (as root; for good: nofile in /etc/security/limits.conf)",
        )
    if soft is not None and soft < needed:
        return Finding(
            check, shown, "warn",
            f"servers Gauntlet starts inherit the soft limit and can run out at {connections} connections "
            "unless they raise it themselves (nginx does, with worker_rlimit_nofile)",
            f"ulimit -n {_limit(hard)}",
        )
    return Finding(check, shown, "ok", f"enough for {connections} connections on both sides")


def accept_queue(value: str | None, connections: int) -> Finding:
    return _holds_connections(
        "accept queue", "net.core.somaxconn", value, connections, "fail",
        f"caps every server's listen backlog below {connections}: connections opened at once beyond it wait for a "
        "SYN retransmit (1 s, then 3 s), which shows as latency",
    )


def syn_queue(value: str | None, connections: int) -> Finding:
    return _holds_connections(
        "SYN queue", "net.ipv4.tcp_max_syn_backlog", value, connections, "warn",
        f"half-open connections beyond it fall back to SYN cookies (or are dropped without them) when {connections} "
        "connect at once",
    )


def _holds_connections(check: str, sysctl: str, value: str | None, connections: int, status: str, short: str) -> Finding:
    """A kernel queue that must hold every connection opened at once; `short` says what happens when it cannot."""
    if value is None:
        return Finding(check, "absent", "n/a", "the kernel does not say")
    shown = f"{sysctl.rsplit('.', 1)[1]} {value}"
    if int(value) < connections:
        return Finding(check, shown, status, short, f"sysctl -w {sysctl}={_at_least(connections)}")
    return Finding(check, shown, "ok", f"holds {connections} connections arriving at once")


def local_ports(value: str | None, connections: int) -> Finding:
    check = "local ports"
    if value is None:
        return Finding(check, "absent", "n/a", "the kernel does not say")
    ports = _port_count(value)
    shown = f"ip_local_port_range {value}"
    if ports < connections:
        return Finding(
            check, shown, "fail",
            f"{ports} ports: the client cannot hold {connections} connections to one server address",
            'sysctl -w net.ipv4.ip_local_port_range="1024 65535"',
        )
    return Finding(check, shown, "ok", f"{ports} ports for {connections} connections")


def time_wait_reuse(reuse: str | None, timestamps: str | None, port_range: str | None) -> Finding:
    check = "TIME_WAIT reuse"
    if reuse is None:
        return Finding(check, "absent", "n/a", "the kernel does not say")
    ports = _port_count(port_range) if port_range else 0
    capped = (
        f"without it a test with a new connection per request is capped at about {ports // TIME_WAIT_S:,} new "
        f"connections/s ({ports} ports, each held {TIME_WAIT_S} s in TIME_WAIT), then fails to connect"
    )
    shown = f"tcp_tw_reuse {reuse}"
    if reuse == "0":
        return Finding(check, shown, "warn", capped, "sysctl -w net.ipv4.tcp_tw_reuse=1")
    if timestamps == "0":
        return Finding(
            check, f"{shown}, tcp_timestamps 0", "warn", "reuse needs TCP timestamps, which are off: " + capped,
            "sysctl -w net.ipv4.tcp_timestamps=1",
        )
    scope = "on loopback, where Gauntlet loads" if reuse == "2" else "for every destination"
    return Finding(check, shown, "ok", f"ports in TIME_WAIT are reused {scope}")


def governor(value: str | None) -> Finding:
    check = "CPU governor"
    if value is None:
        return Finding(check, "not exposed", "n/a", "no cpufreq here (a virtual machine's host decides)")
    if value != "performance":
        return Finding(
            check, value, "warn",
            "the clock follows the load: the first seconds of a run are slower and repeats vary",
            "cpupower frequency-set -g performance",
        )
    return Finding(check, value, "ok", "the CPUs run at full clock")


def huge_pages(value: str | None) -> Finding:
    check = "transparent huge pages"
    if value is None:
        return Finding(check, "absent", "n/a", "the kernel does not have them")
    if value == "always":
        return Finding(
            check, value, "warn",
            "khugepaged compacts memory behind the servers' backs: latency spikes and a larger RSS",
            "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled",
        )
    return Finding(check, value, "ok", "only programs that ask get huge pages")


def other_processes(busy: dict[str, Any], cores: int) -> Finding:
    check = "busy processes"
    named = busy["top"]
    top = ", ".join(f"{p['name']} (pid {p['pid']}, {p['cpu_cores']:.2f} cores)" for p in named) or "none above 1 %"
    shown = f"{busy['cpu_cores']:.2f} of {cores} cores busy"
    if busy["cpu_cores"] < BUSY_SHARE * cores:
        return Finding(check, shown, "ok", f"the machine is quiet ({top})")
    unnamed = busy["cpu_cores"] - sum(p["cpu_cores"] for p in named)
    if not named:
        return Finding(
            check, shown, "fail",
            "no process stands out: processes too short-lived to be seen, or the kernel (interrupts, I/O), keep the CPUs busy",
            "wait until the machine is quiet (top, vmstat 1 show what runs), then measure",
        )
    rest = f"; {unnamed:.2f} cores by the rest (smaller or short-lived processes, the kernel)" if unnamed >= 0.01 else ""
    return Finding(
        check, shown, "fail",
        f"the load and the server would share the CPUs with them: {top}{rest}",
        f"wait for them to finish, or stop them (kill {' '.join(str(p['pid']) for p in named)}), then measure",
    )


def _port_count(port_range: str) -> int:
    low, high = (int(part) for part in port_range.split())
    return high - low + 1


def _at_least(connections: int) -> int:
    """A round setting comfortably above the need."""
    return max(65535, connections * 2)


def _limit(value: int | None) -> str:
    return "unlimited" if value is None else str(value)
