"""`gauntlet doctor`: each check in tables (pure functions of a snapshot), and the command against
this machine with a lowered `ulimit -n` in the child."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gauntlet import doctor, host
from gauntlet.host import snapshot
from tests.helpers.cli_process import GAUNTLET

QUIET = {"cpu_cores": 0.02, "top": []}


def machine(**changes: Any) -> dict[str, Any]:
    """A well-tuned snapshot (the shape of gauntlet.host.snapshot()), with `changes` applied."""
    sysctls = {
        "net.core.somaxconn": "4096",
        "net.ipv4.tcp_max_syn_backlog": "2048",
        "net.ipv4.ip_local_port_range": "32768 60999",
        "net.ipv4.tcp_tw_reuse": "2",
        "net.ipv4.tcp_timestamps": "1",
    }
    found = {
        "cores": 2,
        "ulimits": {"nofile": [20000, 20000]},
        "sysctls": sysctls | changes.pop("sysctls", {}),
        "cpu_governor": "performance",
        "transparent_hugepages": "madvise",
    }
    return found | changes


def statuses(found: list[doctor.Finding]) -> dict[str, str]:
    return {f.check: f.status for f in found}


def test_a_tuned_quiet_machine_passes_every_check() -> None:
    found = doctor.checks(machine(), 1000, QUIET)
    assert set(statuses(found).values()) == {"ok"} and not doctor.failed(found)
    assert all(f.fix == "" for f in found)


@pytest.mark.parametrize(
    ("nofile", "connections", "status", "fix"),
    [
        ([1024, 1024], 1000, "fail", "prlimit --pid $$ --nofile=2128:2128"),  # the thesis's crash at 1,024
        ([1024, 1024], 900, "ok", ""),
        ([1024, 65536], 1000, "warn", "ulimit -n 65536"),  # the engine raises its own; servers inherit 1,024
        ([None, None], 100_000, "ok", ""),
    ],
)
def test_open_files(nofile: list[int | None], connections: int, status: str, fix: str) -> None:
    found = doctor.open_files(*nofile, connections)
    assert (found.status, found.fix.split("  ")[0]) == (status, fix)


@pytest.mark.parametrize(
    ("sysctls", "connections", "check", "status", "fix"),
    [
        ({"net.core.somaxconn": "128"}, 1000, "accept queue", "fail", "sysctl -w net.core.somaxconn=65535"),
        ({"net.core.somaxconn": "128"}, 100, "accept queue", "ok", ""),
        ({"net.ipv4.tcp_max_syn_backlog": "512"}, 1000, "SYN queue", "warn", "sysctl -w net.ipv4.tcp_max_syn_backlog=65535"),
        (
            {"net.ipv4.ip_local_port_range": "60000 60999"}, 4000, "local ports", "fail",
            'sysctl -w net.ipv4.ip_local_port_range="1024 65535"',
        ),
        ({"net.ipv4.tcp_tw_reuse": "0"}, 100, "TIME_WAIT reuse", "warn", "sysctl -w net.ipv4.tcp_tw_reuse=1"),
        (
            {"net.ipv4.tcp_tw_reuse": "1", "net.ipv4.tcp_timestamps": "0"}, 100, "TIME_WAIT reuse", "warn",
            "sysctl -w net.ipv4.tcp_timestamps=1",
        ),
        ({"net.ipv4.tcp_tw_reuse": "1"}, 100, "TIME_WAIT reuse", "ok", ""),
        ({"net.core.somaxconn": "200000"}, 150_000, "accept queue", "ok", ""),
        ({"net.core.somaxconn": "100"}, 150_000, "accept queue", "fail", "sysctl -w net.core.somaxconn=300000"),
    ],
)
def test_kernel_settings(sysctls: dict[str, str], connections: int, check: str, status: str, fix: str) -> None:
    found = {f.check: f for f in doctor.checks(machine(sysctls=sysctls), connections, QUIET)}[check]
    assert (found.status, found.fix) == (status, fix)


def test_time_wait_says_how_many_new_connections_a_second_it_allows() -> None:
    found = doctor.time_wait_reuse("0", "1", "32768 60999")
    assert "about 470 new connections/s" in found.meaning


def test_a_missing_setting_is_not_applicable() -> None:
    found = {f.check: f.status for f in doctor.checks(machine(sysctls={"net.core.somaxconn": None}), 10, QUIET)}
    assert found["accept queue"] == "n/a"


@pytest.mark.parametrize(
    ("governor", "huge_pages", "expected"),
    [
        ("performance", "never", {"CPU governor": "ok", "transparent huge pages": "ok"}),
        ("powersave", "always", {"CPU governor": "warn", "transparent huge pages": "warn"}),
        (None, None, {"CPU governor": "n/a", "transparent huge pages": "n/a"}),
    ],
)
def test_governor_and_huge_pages(governor: str | None, huge_pages: str | None, expected: dict[str, str]) -> None:
    found = statuses(doctor.checks(machine(cpu_governor=governor, transparent_hugepages=huge_pages), 10, QUIET))
    assert {check: found[check] for check in expected} == expected
    assert not doctor.failed(doctor.checks(machine(cpu_governor=governor, transparent_hugepages=huge_pages), 10, QUIET))


@pytest.mark.parametrize(("busy_cores", "status"), [(0.19, "ok"), (0.2, "fail"), (1.5, "fail")])
def test_busy_processes_on_two_cores(busy_cores: float, status: str) -> None:
    busy = {"cpu_cores": busy_cores, "top": [{"pid": 42, "name": "cc1", "cpu_cores": busy_cores}]}
    found = {f.check: f for f in doctor.checks(machine(), 10, busy)}["busy processes"]
    assert found.status == status and "cc1 (pid 42" in found.meaning


def test_the_checks_read_a_real_snapshot() -> None:
    found = doctor.checks(snapshot(), 10, None)
    assert {f.check for f in found} >= {"open files", "accept queue", "local ports", "TIME_WAIT reuse"}
    assert all(f.status in {"ok", "warn", "fail", "n/a"} for f in found)


def run_doctor(nofile: int, tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """`gauntlet doctor` in a child whose open-files limit (soft and hard) is `nofile`."""
    out = tmp_path / "doctor.json"
    done = subprocess.run(
        [*GAUNTLET, "doctor", *args, "--json", str(out)],
        capture_output=True, text=True, timeout=60, check=False,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile)),
    )
    return done, {f["check"]: f for f in json.loads(out.read_text())["findings"]}


def test_a_lowered_open_files_limit_is_found_with_its_fix(tmp_path: Path) -> None:
    done, found = run_doctor(256, tmp_path, "--connections", "1000")
    assert done.returncode == 1, done.stderr
    assert found["open files"]["status"] == "fail" and found["open files"]["found"] == "ulimit -n: soft 256, hard 256"
    assert "fix open files: prlimit --pid $$ --nofile=2128:2128" in done.stdout
    assert "would be wrong or refused" in done.stdout and "Traceback" not in done.stderr


def test_the_same_limit_is_enough_for_fewer_connections(tmp_path: Path) -> None:
    done, found = run_doctor(256, tmp_path, "-c", "100")
    assert found["open files"]["status"] == "ok"
    assert "fix open files" not in done.stdout
    assert done.returncode == (1 if any(f["status"] == "fail" for f in found.values()) else 0)


def test_busy_processes_are_named_with_their_pids_in_the_fix() -> None:
    busy = {"cpu_cores": 1.2, "top": [{"pid": 42, "name": "cc1", "cpu_cores": 0.8}, {"pid": 43, "name": "ld", "cpu_cores": 0.3}]}
    found = doctor.other_processes(busy, 2)
    assert found.status == "fail" and "kill 42 43" in found.fix and "PID" not in found.fix
    assert "0.10 cores by the rest" in found.meaning


def test_busy_cores_without_a_process_to_blame_say_so() -> None:
    found = doctor.other_processes({"cpu_cores": 0.29, "top": []}, 2)
    assert found.status == "fail" and "no process stands out" in found.meaning and "kill" not in found.fix


BUSY_LOOP = "import time\nend = time.monotonic() + 20\nwhile time.monotonic() < end: pass"


def test_busy_now_blames_other_processes_never_its_own_children() -> None:
    own_child = subprocess.Popen([sys.executable, "-c", BUSY_LOOP])
    # An orphan (its shell exits at once): busy, and no longer below this process.
    shell = subprocess.run(
        ["sh", "-c", f"{sys.executable} -c '{BUSY_LOOP}' >/dev/null 2>&1 & echo $!"],
        capture_output=True, text=True, check=True, timeout=10,
    )
    orphan = int(shell.stdout)
    try:
        blamed = {p["pid"] for p in host.busy_now(interval_s=0.3, windows=2, top=100)["top"]}
        assert own_child.pid not in blamed
        assert orphan in blamed
    finally:
        own_child.kill()
        own_child.wait()
        with contextlib.suppress(ProcessLookupError):  # it ends by itself after 20 s
            os.kill(orphan, signal.SIGKILL)
