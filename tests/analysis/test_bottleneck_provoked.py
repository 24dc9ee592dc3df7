"""Each bottleneck label provoked for real against the built-in server, and a run where nothing
is saturated gets none. CPU-bound cases use a cgroup CPU quota (and an affinity) on the side that
must saturate, so the other side has CPU to spare even on two shared cores."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gauntlet.analysis.bottleneck import BANDWIDTH_BOUND, CLIENT_BOUND, ERROR_BOUND, RATE_NOT_HELD, SERVER_CPU_BOUND
from gauntlet.analysis.machine import BUSY_SHARE, MACHINE_BUSY
from gauntlet.cli.load_options import LoadOptions
from gauntlet.lab.case import measure as measure_case_record
from gauntlet.lab.measure import Settings, measure_run
from gauntlet.servers.base import ServerInstance
from tests.helpers.cgroups import cpu_quota
from tests.helpers.cli_process import GAUNTLET, run_cli


def bottleneck_of(*args: str | Path, tmp_path: Path, expect_code: int = 0) -> dict[str, Any]:
    out = tmp_path / "result.json"
    done = run_cli("run", *args, "--json", out)
    assert done.code == expect_code, done.stderr
    return json.loads(out.read_text())["bottleneck"] | {"stdout": done.stdout}


def test_a_server_held_to_a_tenth_of_a_core_is_server_cpu_bound(builtin_server: ServerInstance) -> None:
    with cpu_quota(0.1) as group:
        try:  # the group can go only once the server has left it, also when the run failed
            group.add(builtin_server.pids()[0])
            for task in Path(f"/proc/{builtin_server.pids()[0]}/task").iterdir():
                os.sched_setaffinity(int(task.name), {0})
            plan = LoadOptions(connections=8, threads=1, duration_us=1_500_000).plan(f"{builtin_server.url}webtest.html")
            measured = measure_run(plan, builtin_server, Settings())
        finally:
            builtin_server.stop()
    bottleneck = measured.result["bottleneck"]
    assert SERVER_CPU_BOUND in measured.labels, bottleneck
    assert "0.10-core cgroup quota" in bottleneck["reasons"][SERVER_CPU_BOUND]
    server = bottleneck["server"]
    assert server["quota_cores"] == pytest.approx(0.1) and server["cpus"] == [0]
    assert 0.08 <= server["cpu_cores"] <= 0.12, server
    assert server["runnable_cores"] > 5 * server["cpu_cores"], "throttled threads wait for their quota"
    assert measured.result["server"]["cpu_us_per_request"] > 0


def test_a_client_held_to_a_fifth_of_a_core_is_client_bound(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    with cpu_quota(0.2) as group:
        argv = group.wrap([*GAUNTLET, "run", f"{builtin_server.url}webtest.html", "-d", "2s", "-c", "8", "--json", str(out)])
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    bottleneck = json.loads(out.read_text())["bottleneck"]
    assert CLIENT_BOUND in bottleneck["labels"], bottleneck
    assert "0.20-core cgroup quota" in bottleneck["reasons"][CLIENT_BOUND]
    assert bottleneck["server"] is None, "the server was given by URL: not watched"
    assert bottleneck["client"]["quota_cores"] == pytest.approx(0.2)
    assert bottleneck["client"]["cpu_cores"] <= 0.25
    assert CLIENT_BOUND in done.stdout


@pytest.mark.parametrize("fault", ["status=500", "reset=1"])
def test_a_server_that_fails_requests_is_error_bound(builtin_server: ServerInstance, tmp_path: Path, fault: str) -> None:
    url = f"{builtin_server.url}webtest.html?{fault}"
    bottleneck = bottleneck_of(url, "-n", "300", "-c", "2", tmp_path=tmp_path, expect_code=1)
    assert ERROR_BOUND in bottleneck["labels"]
    assert bottleneck["failed_share"] == 1.0 and bottleneck["error_share_limit"] == 0.01
    assert "100.0% of the requests failed" in bottleneck["reasons"][ERROR_BOUND]


def test_a_small_share_of_errors_is_under_a_raised_limit(builtin_server: ServerInstance, tmp_path: Path) -> None:
    """The same failing server with --error-share 1: no error-bound label, however many fail."""
    bottleneck = bottleneck_of(
        f"{builtin_server.url}webtest.html?status=500", "-n", "200", "-c", "2", "--error-share", "1",
        tmp_path=tmp_path, expect_code=1,
    )
    assert ERROR_BOUND not in bottleneck["labels"] and bottleneck["error_share_limit"] == 1.0


def test_a_declared_10_mbit_link_makes_the_run_bandwidth_bound(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_cli("run", f"{builtin_server.url}webtest.html", "-n", "3000", "-c", "4", "--link", "10mbit", "--json", out)
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    bottleneck = result["bottleneck"]
    assert BANDWIDTH_BOUND in bottleneck["labels"]
    bytes_per_request = max(result["bytes_in"], result["bytes_out"]) / result["responses"]
    assert bottleneck["bandwidth_ceiling_per_s"] == pytest.approx(10e6 / (bytes_per_request * 8))
    assert bottleneck["link_bits_per_s"] == 10e6
    assert "10 Mbit/s link" in " ".join(done.stdout.split())


def test_without_a_link_the_ceiling_is_not_applicable(builtin_server: ServerInstance, tmp_path: Path) -> None:
    bottleneck = bottleneck_of(f"{builtin_server.url}webtest.html", "-n", "500", "-c", "2", tmp_path=tmp_path)
    assert bottleneck["bandwidth_ceiling_per_s"] is None and BANDWIDTH_BOUND not in bottleneck["labels"]
    assert bottleneck["path"] == {
        "loopback": True,
        "routes": [{"origin": "this machine", "target": "127.0.0.1", "source": "127.0.0.1", "interface": "lo", "loopback": True}],
    }
    assert "bandwidth ceiling: not applicable (loopback; declare a link with --link 1gbit)" in " ".join(bottleneck["stdout"].split())


def test_an_unreachable_rate_is_not_held(builtin_server: ServerInstance, tmp_path: Path) -> None:
    bottleneck = bottleneck_of(f"{builtin_server.url}webtest.html", "-R", "1000000", "-c", "2", "-d", "1s", tmp_path=tmp_path)
    assert RATE_NOT_HELD in bottleneck["labels"] and bottleneck["rate_held"] is False
    assert "of the 1,000,000/s offered" in bottleneck["reasons"][RATE_NOT_HELD]


def test_a_low_rate_against_the_builtin_server_gets_no_label(tmp_path: Path) -> None:
    """100 requests/s, 2 connections, one load thread: nothing of ours comes near a limit. Gauntlet
    starts the server, so both sides are watched. A machine whose CPUs other work keeps busy is
    labelled so, by the share it measured, and may delay sends past the 10 ms between them (a
    send lag p99 of 299 ms at 91 % other work): then, and only then, rate-not-held is its due."""
    bottleneck = bottleneck_of("-R", "100", "-c", "2", "-t", "1", "-d", "2s", tmp_path=tmp_path)
    busy = bottleneck["machine"]["other_cpu_share"] > BUSY_SHARE
    assert (MACHINE_BUSY in bottleneck["labels"]) is busy, bottleneck["machine"]
    assert set(bottleneck["labels"]) <= ({MACHINE_BUSY, RATE_NOT_HELD} if busy else set()), bottleneck["reasons"]
    assert bottleneck["server"] is not None
    if not busy:
        assert bottleneck["rate_held"] is True and "no bottleneck" in bottleneck["stdout"]


def test_the_label_and_its_figures_reach_the_terminal(builtin_server: ServerInstance, tmp_path: Path) -> None:
    url = f"{builtin_server.url}webtest.html?status=503"
    bottleneck = bottleneck_of(url, "-n", "100", "-c", "1", tmp_path=tmp_path, expect_code=1)
    assert f"{ERROR_BOUND}: {bottleneck['reasons'][ERROR_BOUND]}" in " ".join(bottleneck["stdout"].split())


def test_a_suite_case_record_carries_its_labels(builtin_server: ServerInstance) -> None:
    """lab.case.measure, which the suite runner calls for every case, hands the labels to the store."""
    plan = LoadOptions(connections=2, threads=1, requests=200).plan(f"{builtin_server.url}webtest.html?status=500")
    record = measure_case_record(plan, builtin_server, {"server": "builtin"}).record
    assert record.labels == record.result["bottleneck"]["labels"] and ERROR_BOUND in record.labels
    assert record.result["server"]["samples"] >= 1 and record.result["bottleneck"]["server"]["threads"] >= 1
