"""Spawning, readiness, stopping and the leftover check, on real processes and sockets."""

from __future__ import annotations

import socket
import sys
import time

import psutil
import pytest

from gauntlet.errors import GauntletError
from gauntlet.servers.nginx import start_nginx
from gauntlet.servers.process import (
    free_port,
    leftovers,
    log_tail,
    spawn,
    stop_processes,
    processes_under,
    wait_ready,
)
from gauntlet.servers.spec import ServerSpec

# Ignores SIGTERM, has a child that ignores it too, serves HTTP on the port given as argv[1].
STUBBORN_SERVER = """
import http.server, signal, subprocess, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
subprocess.Popen(["sleep", "60"])
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), http.server.SimpleHTTPRequestHandler).serve_forever()
"""


def our_nginx_pids() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True) if p.name() == "nginx"}


def test_free_port_can_be_bound():
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
    assert 1024 <= port <= 65535


def test_log_tail_is_one_line(tmp_path):
    log = tmp_path / "error.log"
    log.write_text("first\n\nsecond\nthird\n")
    assert log_tail(log, n_lines=2) == "second | third"
    assert "no log" in log_tail(tmp_path / "missing.log")


def test_log_tail_skips_stack_frames_and_shortens_huge_lines(tmp_path):
    log = tmp_path / "error.log"
    java = ["Caused by: java.net.BindException: Address already in use", "\tat sun.nio.ch.Net.bind0(Native Method)"]
    erlang = "Kernel pid terminated ({badbind," + "x" * 1000 + ",[normal]})"
    log.write_text("\n".join(["start", *java, "\t... 13 more", erlang]) + "\n")
    tail = log_tail(log, n_lines=3)
    assert tail.startswith("start | Caused by: java.net.BindException: Address already in use | Kernel pid terminated (")
    assert tail.endswith(",[normal]})") and len(tail) < 250


def test_nginx_on_a_taken_port_fails_with_its_log_tail(nginx_server):
    nginx_server()  # the fixture's skip/fail when nginx is missing
    before = our_nginx_pids()
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(GauntletError) as failure:
            start_nginx(ServerSpec("nginx"), port=port)
    message = str(failure.value)
    assert "\n" not in message
    assert "nginx exited with status 1" in message
    assert "Address already in use" in message
    assert failure.value.fix
    assert our_nginx_pids() == before


def test_wait_ready_gives_up_at_the_deadline(tmp_path):
    log = tmp_path / "log"
    proc = spawn(["sleep", "30"], cwd=tmp_path, log_path=log)
    try:
        started = time.monotonic()
        with pytest.raises(GauntletError, match="did not answer HTTP .* within 0.5 s"):
            wait_ready(
                proc, name="sleep", host="127.0.0.1", port=free_port(), path="/",
                deadline_s=0.5, log_path=log,
            )
        assert time.monotonic() - started < 3.0
    finally:
        stop_processes(proc, grace_s=2.0)
    assert proc.returncode is not None


def test_wait_ready_reports_an_early_exit_with_the_log(tmp_path):
    log = tmp_path / "log"
    proc = spawn(["sh", "-c", "echo boom >&2; exit 3"], cwd=tmp_path, log_path=log)
    with pytest.raises(GauntletError, match=r"exited with status 3 .*: boom"):
        wait_ready(
            proc, name="sh", host="127.0.0.1", port=free_port(), path="/",
            deadline_s=10.0, log_path=log,
        )


def test_stop_processes_kills_processes_that_ignore_sigterm(tmp_path):
    port = free_port()
    log = tmp_path / "log"
    proc = spawn([sys.executable, "-c", STUBBORN_SERVER, str(port)], cwd=tmp_path, log_path=log)
    try:
        wait_ready(
            proc, name="stub", host="127.0.0.1", port=port, path="/",
            deadline_s=10.0, log_path=log,
        )
        pids = [p.pid for p in processes_under(proc.pid)]
        assert len(pids) == 2, "the server and its sleep child"
        assert leftovers(pids, port), "the check sees live processes"
        started = time.monotonic()
        stop_processes(proc, grace_s=0.5)
        assert time.monotonic() - started < 3.0
    finally:
        stop_processes(proc, grace_s=0.5)
    assert proc.returncode == -9
    assert leftovers(pids, port) == []


def test_leftovers_sees_a_listener(tmp_path):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert leftovers([], port) == [f"port {port} is still listened on (pid {psutil.Process().pid})"]
    assert leftovers([], port) == []


def test_stop_is_idempotent_and_runs_when_the_body_raises(nginx_server):
    nginx_server()  # the fixture's skip/fail when nginx is missing
    with (
        pytest.raises(RuntimeError, match="test body failed"),
        start_nginx(ServerSpec("nginx")) as server,
    ):
        pids, port, workdir = server.pids(), server.port, server.workdir
        assert len(pids) == 3
        raise RuntimeError("test body failed")
    assert leftovers(pids, port) == []
    assert not workdir.exists()
    assert server.pids() == []
    server.stop()
