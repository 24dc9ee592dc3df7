"""A process Gauntlet started for a case that exits mid-run ends the case at once, as an error that
names the exit: nginx (master and workers killed by the pids the lab reports), PHP-FPM under
WordPress, the built-in server in a suite (which records it and starts the server again for its
next case). A worker that its master replaces is no exit: that run completes."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

import psutil

from gauntlet import engine
from gauntlet.lab.suite import Agenda, SuiteRunner
from gauntlet.model.record import CaseRecord
from gauntlet.servers.spec import ServerSpec
from gauntlet.suite.expand import expand
from gauntlet.suite.load import load_suite
from tests.conftest import require_app, require_available
from tests.helpers.cli_process import Finished, Running

#: Into the run when the test kills: well inside the 10 s it was asked for.
KILL_AFTER_S = 2.0
#: From the kill to the command's exit: the load stopped, the server's leftovers stopped, the case stored.
ENDS_WITHIN_S = 5.0


def stored(db: Path) -> tuple[str, dict[str, Any]]:
    with sqlite3.connect(db) as conn:
        (run_status,) = conn.execute("SELECT status FROM runs").fetchone()
        status, error = conn.execute("SELECT status, error FROM cases").fetchone()
    return run_status, {"status": status, "error": error}


def kill_tree(pid: int) -> None:
    """SIGKILL to the process and its descendants, by pid: the workers first, then their master."""
    for process in [*psutil.Process(pid).children(recursive=True), psutil.Process(pid)]:
        os.kill(process.pid, signal.SIGKILL)


def run_and_kill(tmp_path: Path, args: list[str], victim: str, ready_timeout_s: float = 60.0) -> tuple[Finished, float]:
    """`gauntlet run ARGS -d 10s`; `victim` is a pattern of the announced line whose group is the
    pid to kill with its tree, KILL_AFTER_S after the announcement. The command's end, and the
    seconds from the kill to it."""
    command = ["run", *args, "-d", "10s", "--db", tmp_path / "r.db", "--json", tmp_path / "r.json"]
    with Running(*command) as running:
        running.wait_for_stderr(victim, timeout_s=ready_timeout_s)
        pid = int(next(m for line in running.stderr_lines if (m := re.search(victim, line)))[1])
        time.sleep(KILL_AFTER_S)
        kill_tree(pid)
        killed = time.monotonic()
        done = running.wait(timeout_s=30)
    return done, time.monotonic() - killed


def check_stored_as_the_exit(tmp_path: Path, done: Finished, after_kill_s: float, process: str) -> None:
    exited = f"{process} exited (signal 9, SIGKILL)"
    assert after_kill_s < ENDS_WITHIN_S, f"the case ran on {after_kill_s:.1f} s after the kill"
    result = json.loads((tmp_path / "r.json").read_text())
    server_exit = result["server_exit"]
    assert (server_exit["process"], server_exit["signal"], server_exit["exit_code"]) == (process, 9, None), server_exit
    assert 0.5 * KILL_AFTER_S * 1e6 < server_exit["after_us"] < 3 * KILL_AFTER_S * 1e6, server_exit
    assert result["elapsed_us"] < server_exit["after_us"] + 1_000_000, "the load stopped at the exit"
    run_status, case = stored(tmp_path / "r.db")
    assert case["status"] == "error" and case["error"].startswith(exited) and "s into the measurement" in case["error"]
    assert run_status == "failed"
    assert done.code == 1 and f"gauntlet: failed --fail-on errors>5%: {exited}" in done.stderr, done.stderr
    assert "Throughput" not in done.stdout and exited in done.stdout, "no headline past the exit"


def test_nginx_killed_mid_run_is_stored_as_an_error_that_names_the_exit(tmp_path: Path) -> None:
    require_available(ServerSpec("nginx"))
    done, after_kill_s = run_and_kill(tmp_path, ["--server", "nginx", "-c", "20", "-t", "2"], r"nginx server on \S+ \(pid (\d+)\)")
    check_stored_as_the_exit(tmp_path, done, after_kill_s, "nginx")


def test_php_fpm_killed_under_wordpress_is_stored_as_an_error_that_names_it(tmp_path: Path) -> None:
    spec = ServerSpec("nginx", backend="php-fpm", app="wordpress")
    require_available(spec)
    require_app(spec)
    args = ["--server", "nginx", "--app", "wordpress", "-c", "4", "-t", "1"]
    done, after_kill_s = run_and_kill(tmp_path, args, r"php-fpm pid (\d+)", ready_timeout_s=180.0)
    check_stored_as_the_exit(tmp_path, done, after_kill_s, "php-fpm")


def test_a_worker_its_master_replaces_is_no_exit_of_the_server(tmp_path: Path) -> None:
    require_available(ServerSpec("nginx"))
    command = ["run", "--server", "nginx", "--workers", "2", "-c", "4", "-t", "1", "-d", "3s", "--db", tmp_path / "r.db"]
    with Running(*command) as running:
        running.wait_for_stderr(r"nginx server on \S+ \(pid \d+\)", timeout_s=60)
        master = int(next(m for line in running.stderr_lines if (m := re.search(r"\(pid (\d+)\)", line)))[1])
        time.sleep(1.0)
        os.kill(psutil.Process(master).children()[0].pid, signal.SIGKILL)
        done = running.wait(timeout_s=30)
    run_status, case = stored(tmp_path / "r.db")
    assert (run_status, case["status"], case["error"]) == ("complete", "ok", None), done.stderr
    assert done.code in (0, 1) and "exited" not in done.stderr, done.stderr


def test_the_repeat_after_an_exit_starts_the_server_again_and_the_headline_leaves_the_exit_out(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    announced = r"builtin server on \S+ \(pid (\d+)\)"
    command = ["run", "--repeat", "3", "-d", "2s", "-c", "2", "-t", "1", "--db", tmp_path / "r.db", "--json", out]
    with Running(*command) as running:
        running.wait_for_stderr(announced, timeout_s=60)
        pid = int(next(m for line in running.stderr_lines if (m := re.search(announced, line)))[1])
        time.sleep(1.0)
        os.kill(pid, signal.SIGKILL)
        done = running.wait(timeout_s=60)
    found = json.loads(out.read_text())
    first, *rest = found["repeats"]
    assert first["server_exit"]["signal"] == 9, first.get("server_exit")
    assert len(rest) == 2 and all("server_exit" not in r and r["responses"] > 0 for r in rest)
    counted = statistics.median(r["requests_per_s"] for r in rest)
    assert found["estimates"]["requests_per_s"]["point"] == counted and found["median_repeat"] != 0, "the exit is in no headline"
    assert len(set(re.findall(announced, done.stderr))) == 2, "started again after the exit"
    assert done.code == 1 and "builtin exited (signal 9, SIGKILL)" in done.stderr


SESSIONS = """\
sessions:
  - name: one
    pages: [{name: page, path: /webtest.html}]
users: 2
measure: 10s
qos: {good: 1s, tolerable: 2s}
"""


def test_sessions_whose_server_exits_are_stored_as_an_error_and_fail(tmp_path: Path) -> None:
    load = tmp_path / "load.yaml"
    load.write_text(SESSIONS)
    announced = r"builtin server on \S+ \(pid (\d+)\)"
    with Running("run", "--load", load, "--db", tmp_path / "r.db") as running:
        running.wait_for_stderr(announced, timeout_s=60)
        pid = int(next(m for line in running.stderr_lines if (m := re.search(announced, line)))[1])
        time.sleep(KILL_AFTER_S)
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        done = running.wait(timeout_s=60)
    assert time.monotonic() - killed < ENDS_WITHIN_S
    run_status, case = stored(tmp_path / "r.db")
    assert (run_status, case["status"]) == ("failed", "error") and case["error"].startswith("builtin exited (signal 9, SIGKILL)")
    assert done.code == 1 and "builtin exited (signal 9, SIGKILL)" in done.stderr, done.stderr


SUITE = """\
name: death
servers: [builtin]
defaults: {threads: 1, connections: 2}
groups:
  - name: static
    workload: ST-1
    connections: [1, 2]
    duration: 3s
"""


class KillingSink:
    """Kills the built-in server (this process's `serve` child) with SIGKILL once the first case is
    measuring; keeps every record and the server's pid when each case started."""

    def __init__(self) -> None:
        self.records: list[CaseRecord] = []
        self.server_pids: list[int | None] = []
        self._killed = False

    def _server_pid(self) -> int | None:
        return next((p.pid for p in psutil.Process().children() if "serve" in p.cmdline()), None)

    def case_started(self, params: dict[str, Any], repeat: int) -> None:
        self.server_pids.append(self._server_pid())

    def progress(self, progress: engine.Progress) -> None:
        pid = self.server_pids[0]
        if progress["measuring"] and int(progress["elapsed_us"]) > 500_000 and not self._killed and pid is not None:
            self._killed = True
            os.kill(pid, signal.SIGKILL)

    def case_done(self, record: CaseRecord) -> None:
        self.records.append(record)


def test_a_suite_records_the_exit_and_starts_the_server_again_for_the_next_case(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(SUITE)
    sink = KillingSink()
    began = time.monotonic()
    SuiteRunner(Agenda(expand(load_suite(str(path)).suite, ["builtin"], tmp_path)), sink).run()
    first, second = sink.records
    assert first.status == "error" and first.error is not None and first.error.startswith("builtin exited (signal 9, SIGKILL)")
    assert first.result is not None and first.result["elapsed_us"] < 2_000_000, "the first case ended at the exit"
    assert second.status == "ok" and second.result is not None and second.result["responses"] > 0
    assert None not in sink.server_pids and sink.server_pids[0] != sink.server_pids[1], "a new server for the next case"
    assert time.monotonic() - began < 3 + 2 + 10, "the first case did not run to its deadline"
