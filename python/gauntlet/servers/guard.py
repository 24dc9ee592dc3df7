"""The guard of one server instance: a small process that ends the instance's processes and removes
its work dir and cgroup when Gauntlet dies without stopping it (SIGKILL, the OOM killer, a lost
machine session). Gauntlet starts it and talks to it through premises.Guard.

Gauntlet holds the write end of a pipe that is the guard's stdin and tells it the pids of the
instance's root processes. A normal stop says `dismissed` before closing the pipe, and the guard
exits. End of file without it means Gauntlet is gone: the guard sends SIGTERM to every process in
the instance's cgroup (or, without one, to the roots' trees), SIGKILL to what is left after a
grace period, and removes the cgroup and the work dir.

The kernel's parent-death signal would not do: a server that drops privileges (lighttpd, h2o,
uWSGI, fcgiwrap's children) loses it. Run as a script (`python -I guard.py WORKDIR CGROUP_PROCS`),
outside the cgroup it clears; it imports only a little of the standard library, so that it starts
(and a normal stop waits for its exit) in milliseconds.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path

#: What Gauntlet says after a normal stop.
DISMISSED = "dismissed"
GRACE_S = 3.0
POLL_S = 0.05


def start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks since boot): with the pid, it names one process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def tree_of(roots: dict[int, int]) -> list[int]:
    """The roots that are still the processes we were told of, and all their descendants."""
    alive = [pid for pid, ticks in roots.items() if start_ticks(pid) == ticks]
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (parent := parent_of(int(entry))) is not None:
            children.setdefault(parent, []).append(int(entry))
    found, pending = [], list(alive)
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending.extend(children.get(pid, []))
    return found


def instance_pids(cgroup_procs: Path | None, roots: dict[int, int]) -> list[int]:
    if cgroup_procs is not None:
        try:
            return [int(line) for line in cgroup_procs.read_text().split()]
        except OSError:
            pass
    return tree_of(roots)


def signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def clear(workdir: Path, cgroup_procs: Path | None, roots: dict[int, int]) -> None:
    signal_all(instance_pids(cgroup_procs, roots), signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while (left := instance_pids(cgroup_procs, roots)) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    signal_all(left, signal.SIGKILL)
    if cgroup_procs is not None:
        deadline = time.monotonic() + GRACE_S
        while cgroup_procs.parent.exists() and time.monotonic() < deadline:
            try:
                cgroup_procs.parent.rmdir()
            except OSError:  # a process just killed may hold it for a moment
                time.sleep(POLL_S)
    shutil.rmtree(workdir, ignore_errors=True)


def main(workdir: str, cgroup_procs: str) -> None:
    roots: dict[int, int] = {}
    for line in sys.stdin:
        word = line.strip()
        if word == DISMISSED:
            return
        if (ticks := start_ticks(int(word))) is not None:
            roots[int(word)] = ticks
    clear(Path(workdir), Path(cgroup_procs) if cgroup_procs else None, roots)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    main(*sys.argv[1:])
