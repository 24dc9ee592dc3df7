"""`--agents` and `--scheduler` on the commands, as a user runs them: the CLI in a subprocess, a
local cluster of worker processes or a `dask scheduler` + `dask worker` started as the docs say,
all on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from gauntlet.servers.base import ServerInstance
from gauntlet.servers.process import spawn, stop_processes
from tests.agents.merging import VALIDATOR
from tests.helpers.builtin_stats import server_stats
from tests.helpers.cli_process import Running, run_cli

DASK = Path(sys.executable).with_name("dask")
WITHOUT_DISTRIBUTED = "import sys; sys.modules['distributed'] = None; from gauntlet.cli import main; main(sys.argv[1:])"


@pytest.mark.parametrize(
    "args",
    [
        ["run", "http://127.0.0.1:1/", "-n", "10", "--agents", "2"],
        ["run", "http://127.0.0.1:1/", "-n", "10", "--scheduler", "tcp://127.0.0.1:1"],
        ["sweep", "rate", "http://127.0.0.1:1/", "--agents", "2"],
        ["capacity", "load.yaml", "http://127.0.0.1:1/", "--agents", "2"],
    ],
)
def test_without_the_extra_the_flags_say_how_to_install_it(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "load.yaml").write_text("sessions: [{name: a, think: 1s, pages: [{name: p, path: /}]}]\nusers: 1\nmeasure: 1s\n")
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_DISTRIBUTED, *args], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'gauntlet[distributed]'" in lines[0], done.stderr
    assert lines[0].startswith("gauntlet: error: --agents and --scheduler need Dask distributed")


def test_run_with_agents_against_the_builtin_server_it_started(tmp_path: Path) -> None:
    """The server and its monitor stay with the controller; the result has both `server` and `agents`."""
    done = run_cli("run", "-n", "3000", "-c", "4", "-t", "1", "--agents", "2", "--json", tmp_path / "r.json", timeout_s=120)
    assert done.code == 0, done.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    VALIDATOR.validate(result)
    assert result["requests"] == 3000 and len(result["agents"]) == 2
    assert result["server"]["samples"] >= 1
    assert "Agents" in done.stdout and done.stdout.count(" ok ") == 2


def test_ctrl_c_cancels_every_agent_and_keeps_what_they_measured(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    with Running("run", builtin_server.url, "-d", "60s", "-c", "4", "--agents", "2", "--json", out) as running:
        deadline = time.monotonic() + 60
        while server_stats(builtin_server)["requests"] < 1000 and time.monotonic() < deadline:
            time.sleep(0.1)
        done = running.interrupt_and_wait(timeout_s=30)
    assert done.code == 130, done.stderr
    result = json.loads(out.read_text())
    VALIDATOR.validate(result)
    assert result["partial"] is True and result["stop_reason"] == "cancelled"
    assert [a["state"] for a in result["agents"]] == ["cancelled", "cancelled"]
    assert result["requests"] == sum(a["requests"] for a in result["agents"]) > 0
    # The server saw every counted request, plus at most the 4 connections' requests cut short.
    assert 0 <= server_stats(builtin_server)["requests"] - result["requests"] <= 4
    assert result["elapsed_us"] < 50_000_000


def test_a_sweep_with_agents_keeps_a_refused_level_and_measures_the_next(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    done = run_cli("sweep", "concurrency", f"{builtin_server.url}hello", "--levels", "1,4", "-n", "400", "--agents", "2",
                   "--json", out, timeout_s=120)
    assert done.code == 0, done.stderr
    one, four = json.loads(out.read_text())["steps"]
    assert one["result"] is None and "1 connections for 2 agents" in one["refused"]
    assert four["result"]["requests"] == 400 and [a["requests"] for a in four["result"]["agents"]] == [200, 200]


def test_sessions_with_agents_split_the_users(builtin_server: ServerInstance, tmp_path: Path) -> None:
    load = tmp_path / "load.yaml"
    load.write_text(
        "sessions:\n  - name: browse\n    think: {uniform: [10ms, 30ms]}\n    pages:\n"
        "      - {name: home, path: /webtest.html, embedded: [/image_small.gif]}\n"
        "users: 4\nmeasure: 1s\n"
    )
    out = tmp_path / "r.json"
    done = run_cli("run", "--load", load, builtin_server.url, "--agents", "2", "--json", out, timeout_s=120)
    assert done.code in (0, 1), done.stderr
    result = json.loads(out.read_text())
    VALIDATOR.validate(result)
    assert [a["slice"]["users"] for a in result["agents"]] == [2, 2]
    assert result["plan"]["sessions"]["users"] == 4
    home = result["sessions"]["pages"]["home"]
    assert home["count"] > 0 and home["good"] + home["tolerable"] + home["fail"] == home["count"]
    assert home["errors"] == 0


def scheduler_address(address_file: Path, deadline: float) -> str:
    """The address in the scheduler file, once the scheduler has written all of it (it creates the
    file before it fills it)."""
    while True:
        try:
            return str(json.loads(address_file.read_text())["address"])
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture
def dask_cluster(tmp_path: Path) -> Iterator[str]:
    """`dask scheduler` and `dask worker` (2 worker processes) as docs/distributed.md starts them, on
    127.0.0.1 (their HTTP endpoints too); stopped by pid with their whole trees."""
    address_file = tmp_path / "scheduler.json"
    scheduler = spawn(
        [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", "127.0.0.1:0",
         "--scheduler-file", str(address_file)],
        cwd=tmp_path, log_path=tmp_path / "scheduler.log",
    )
    workers = None
    try:
        address = scheduler_address(address_file, deadline=time.monotonic() + 30)
        workers = spawn(
            [str(DASK), "worker", address, "--host", "127.0.0.1", "--nworkers", "2", "--nthreads", "1", "--no-dashboard",
             "--dashboard-address", "127.0.0.1:0"],
            cwd=tmp_path, log_path=tmp_path / "workers.log",
        )
        yield address
        pids = {p.pid for proc in (workers, scheduler) for p in [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]}
        listeners = {c.laddr.ip for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN and c.pid in pids}
        assert listeners == {"127.0.0.1"}, f"the scheduler and workers listen on {listeners}"
    finally:
        known = [p for proc in (workers, scheduler) if proc is not None for p in psutil.Process(proc.pid).children(recursive=True)]
        for proc in (workers, scheduler):
            if proc is not None:
                stop_processes(proc, known=known)
        assert not [p.pid for p in known if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def test_run_on_an_existing_scheduler(dask_cluster: str, builtin_server: ServerInstance, tmp_path: Path) -> None:
    before = server_stats(builtin_server)["requests"]
    out = tmp_path / "r.json"
    done = run_cli("run", f"{builtin_server.url}hello", "-n", "2001", "-c", "4", "--scheduler", dask_cluster, "--agents", "2",
                   "--json", out, timeout_s=120)
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    assert server_stats(builtin_server)["requests"] - before == result["requests"] == 2001
    assert len({a["address"] for a in result["agents"]}) == 2


def test_an_unreachable_scheduler_is_one_line(tmp_path: Path) -> None:
    done = run_cli("run", "http://127.0.0.1:1/", "-n", "10", "--scheduler", "tcp://127.0.0.1:1", timeout_s=60)
    assert done.code == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in done.stderr
