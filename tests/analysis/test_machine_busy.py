"""The machine's other work during a case: the arithmetic in a table, and `machine-busy` provoked
for real by a CPU hog beside a case, against the same case without it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from gauntlet.analysis.bottleneck import RATE_NOT_HELD, STEAL_LATE_SENDS_SHARE, assess
from gauntlet.analysis.machine import BUSY_SHARE, MACHINE_BUSY, MachineUse, other_cpu_share
from gauntlet.cli.load_options import LoadOptions
from gauntlet.lab.cpu_window import kernel_threads_cpu_s
from gauntlet.lab.measure import Settings, measure_run
from gauntlet.servers.base import ServerInstance
from gauntlet.store.figures import figures_of
from tests.analysis.test_bottleneck import WINDOW_S, context, result, use

#: The longest a hog may live, should the test die before it stops it.
HOG_LIMIT_S = 60


@pytest.mark.parametrize(
    ("tasks_s", "own_s", "server_s", "share"),
    [
        (10.0, 4.0, 6.0, 0.0),  # client and server took every busy second: no other work
        (11.0, 4.0, 6.0, 0.05),  # one second of 20 core-seconds was another's
        (20.0, 0.5, 0.5, 0.95),
        (9.9, 4.0, 6.0, 0.0),  # resolution: never below zero
    ],
)
def test_the_other_share_leaves_out_the_client_and_the_server(tasks_s: float, own_s: float, server_s: float, share: float) -> None:
    assert other_cpu_share(MachineUse(tasks_s, own_s, cores=2), server_s, WINDOW_S) == pytest.approx(share)


def test_the_kernel_threads_are_the_loads_and_their_share_is_stated() -> None:
    """ksoftirqd carried 1 of the 20 core-seconds of the load's packets: not other work."""
    machine = MachineUse(tasks_s=11.0, own_s=4.0, cores=2, kernel_s=1.0)
    assessed = assess(result(), context(use(), use(cpu_s=6.0), machine=machine))
    assert assessed["machine"]["other_cpu_share"] == 0.0
    assert assessed["machine"]["kernel_threads_share"] == pytest.approx(0.05)


def test_the_kernel_threads_are_told_from_processes() -> None:
    """kthreadd (pid 2) is the kernel's; init (pid 1) and this process are not."""
    found = kernel_threads_cpu_s()
    assert 2 in found and 1 not in found and os.getpid() not in found
    assert all(cpu_s >= 0 for cpu_s in found.values())


def test_steal_is_other_work_and_its_part_is_stated() -> None:
    """The hypervisor ran something else for 2 of the 20 core-seconds; no process of the machine did."""
    machine = MachineUse(tasks_s=10.0, own_s=4.0, cores=2, steal_s=2.0)
    assessed = assess(result(), context(use(), use(cpu_s=6.0), machine=machine))
    assert assessed["machine"]["other_cpu_share"] == pytest.approx(0.1)
    assert assessed["machine"]["steal_share"] == pytest.approx(0.1)
    assert "the hypervisor's steal (10.0%) took 10.0% of the machine's 2 cores" in assessed["reasons"][MACHINE_BUSY]


@pytest.mark.parametrize(("steal_s", "named"), [(0.09, False), (0.1, True), (2.0, True)])
def test_late_sends_name_the_steal_that_can_make_them_late(steal_s: float, named: bool) -> None:
    """0.1 of the 20 core-seconds is 0.5 % steal: from there the reason names it, busy or not."""
    assert STEAL_LATE_SENDS_SHARE == 0.005
    schedule = {"offered_rate_per_s": 1_000.0, "achieved_rate_per_s": 1_000.0, "send_lag_us": {"p99": 3_000}}
    machine = MachineUse(tasks_s=10.0, own_s=4.0, cores=2, steal_s=steal_s)
    reason = assess(result(schedule=schedule), context(use(), use(cpu_s=6.0), machine=machine))["reasons"][RATE_NOT_HELD]
    assert reason.startswith("sent 1,000/s of the 1,000/s offered, send lag p99 3")
    assert ("the hypervisor's steal took" in reason) is named, reason


@pytest.mark.parametrize(("other_s", "flagged"), [(1.0, False), (1.02, True)])
def test_a_case_is_machine_busy_past_the_limit(other_s: float, flagged: bool) -> None:
    """1 s of the 20 core-seconds is 5 %: at the limit, not past it."""
    assert BUSY_SHARE == 0.05
    machine = MachineUse(tasks_s=2.0 + other_s, own_s=1.0, cores=2)
    assessed = assess(result(), context(use(), use(cpu_s=1.0), machine=machine))
    assert (MACHINE_BUSY in assessed["labels"]) is flagged
    assert assessed["machine"]["other_cpu_share"] == pytest.approx(other_s / 20)
    if flagged:
        assert "of the machine's 2 cores" in assessed["reasons"][MACHINE_BUSY]


def test_without_a_watched_server_the_share_is_not_judged() -> None:
    """The server's CPU is unknown, so the other work cannot be told from it."""
    assessed = assess(result(), context(use(), None, machine=MachineUse(20.0, 1.0, 2)))
    assert assessed["machine"] is None and MACHINE_BUSY not in assessed["labels"]


def cpu_s_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime, stime in clock ticks (USER_HZ 100)


@contextmanager
def cpu_hog() -> Iterator[subprocess.Popen[bytes]]:
    """A process that spins one CPU for at most HOG_LIMIT_S, stopped by its pid."""
    spin = f"import time\nend = time.monotonic() + {HOG_LIMIT_S}\nwhile time.monotonic() < end: pass"
    hog = subprocess.Popen([sys.executable, "-c", spin])
    try:
        yield hog
    finally:
        hog.kill()
        hog.wait()


def measured_share(server: ServerInstance) -> tuple[dict[str, object], float]:
    """A light case (100 requests/s) on the built-in server: its `bottleneck` and its elapsed time."""
    plan = LoadOptions(connections=2, threads=1, rate_per_s=100, duration_us=3_000_000).plan(f"{server.url}webtest.html")
    began_s = time.monotonic()
    measured = measure_run(plan, server, Settings())
    return measured.result, time.monotonic() - began_s


def beside_a_hog(server: ServerInstance) -> tuple[dict[str, object], float]:
    """The light case with a hog spinning beside it: its result, and the hog's CPU over the case
    as a share of the machine's cores."""
    with cpu_hog() as hog:
        time.sleep(0.2)  # the interpreter's start is not the hog's spin
        hog_before_s = cpu_s_of(hog.pid)
        busy, elapsed_s = measured_share(server)
        return busy, (cpu_s_of(hog.pid) - hog_before_s) / (elapsed_s * (os.cpu_count() or 1))


def share_of(found: dict[str, object]) -> float:
    return float(found["bottleneck"]["machine"]["other_cpu_share"])  # type: ignore[index]


def test_a_cpu_hog_beside_a_case_makes_it_machine_busy(builtin_server: ServerInstance) -> None:
    busy, hog_share = beside_a_hog(builtin_server)
    # The hog's CPU is counted as other work (the measured window is a little shorter than the call).
    assert share_of(busy) >= 0.8 * hog_share, (share_of(busy), hog_share)
    assert MACHINE_BUSY in busy["bottleneck"]["labels"], busy["bottleneck"]  # type: ignore[index]
    assert figures_of(busy)["machine_other_cpu_share"] == share_of(busy)


def test_the_same_case_without_the_hog_counts_less_other_work(builtin_server: ServerInstance) -> None:
    """The hog's share comes and goes with the hog, however busy the machine is otherwise; on a
    machine whose other work leaves no CPU idle the hog only displaces it, and there is nothing to
    compare (a quiet machine, as in CI, always has room)."""
    quiet, _ = measured_share(builtin_server)
    busy, hog_share = beside_a_hog(builtin_server)
    bottleneck = quiet["bottleneck"]
    ours = sum(side["cpu_cores"] for side in (bottleneck["client"], bottleneck["server"])) / (os.cpu_count() or 1)  # type: ignore[index]
    if 1 - share_of(quiet) - ours < hog_share:
        pytest.skip(f"other work left {1 - share_of(quiet) - ours:.0%} of the CPUs idle: no room for the hog's {hog_share:.0%}")
    assert share_of(busy) - share_of(quiet) >= 0.5 * hog_share, (share_of(busy), share_of(quiet), hog_share)
