"""The CPU of a server's cgroup read by the test itself, every 2 ms, to check the monitor against."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from gauntlet.monitor.cgroup import Cgroup

POLL_S = 0.002


@contextmanager
def cgroup_readings(group: Cgroup) -> Iterator[list[tuple[float, float]]]:
    """(time.monotonic s, CPU s of the group) every 2 ms while the block runs: the test's own reading."""
    readings: list[tuple[float, float]] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            readings.append((time.monotonic(), sum(group.cpu_s())))
            time.sleep(POLL_S)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        yield readings
    finally:
        done.set()
        poller.join()


def cpu_at(readings: list[tuple[float, float]], at_s: float) -> float:
    """The group's CPU at the reading nearest `at_s` (they are 2 ms apart)."""
    nearest_s, cpu_s = min(readings, key=lambda reading: abs(reading[0] - at_s))
    assert abs(nearest_s - at_s) < 0.05, "the poller missed the instant"
    return cpu_s
