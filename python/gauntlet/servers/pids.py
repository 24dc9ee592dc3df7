"""Processes by pid: end them, wait until they are gone. psutil checks each pid against reuse."""

from __future__ import annotations

import time
from collections.abc import Iterable

import psutil


def kill_all(pids: Iterable[int], timeout_s: float) -> None:
    """SIGKILL each process still there (by pid, checked against reuse by psutil) and wait for them."""
    alive = []
    for pid in pids:
        try:
            process = psutil.Process(pid)
            process.kill()
            alive.append(process)
        except psutil.NoSuchProcess:
            pass
    wait_gone(alive, timeout_s)


def running(proc: psutil.Process) -> bool:
    """Alive and not a zombie (an orphan's zombie waits for init to reap it; it holds nothing)."""
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_gone(procs: Iterable[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    """Wait until none of `procs` runs or the timeout passes; return those still running."""
    deadline = time.monotonic() + timeout_s
    alive = list(procs)
    while True:
        alive = [p for p in alive if running(p)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.02)
