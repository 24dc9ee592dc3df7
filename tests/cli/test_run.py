"""`gauntlet run` end to end, as a subprocess, against the built-in server in its own process."""

from __future__ import annotations

import json
import re
import socket
import time
import urllib.request
from pathlib import Path

import jsonschema
import psutil
import pytest

from gauntlet.servers.base import ServerInstance
from tests.helpers.cli_process import Running, run_cli

SCHEMA = json.loads((Path(__file__).parents[2] / "python/gauntlet/schema/run-result-v1.json").read_text())


def server_stats(server: ServerInstance) -> dict[str, int]:
    """The server's counters; the query's own connection is counted, its request is not."""
    with urllib.request.urlopen(f"{server.url}__gauntlet/stats", timeout=5) as response:
        return json.load(response)


def test_exact_count_matches_the_servers_count_and_the_schema(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_cli("run", f"{builtin_server.url}webtest.html", "-n", "5k", "-c", "10", "-t", "2", "--json", out)
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(result)
    assert (result["requests"], result["responses"], result["status_codes"]) == (5000, 5000, {"200": 5000})
    assert server_stats(builtin_server) == {"requests": 5000, "connections_accepted": 10 + 1}
    assert "requests/s" in done.stdout and "p99.9" in done.stdout


def test_no_keepalive_and_calls_per_connection_reach_the_server(builtin_server: ServerInstance, tmp_path: Path) -> None:
    url = f"{builtin_server.url}hello"
    assert run_cli("run", url, "-n", "300", "-c", "3", "--no-keepalive").code == 0
    assert server_stats(builtin_server) == {"requests": 300, "connections_accepted": 300 + 1}
    assert run_cli("run", url, "-n", "200", "-c", "2", "--calls-per-connection", "10", "--http1.0").code == 0
    stats = server_stats(builtin_server)
    assert stats["requests"] == 500
    assert 300 + 1 + 20 + 1 <= stats["connections_accepted"] <= 300 + 1 + 22 + 1


def test_without_a_url_the_builtin_server_is_started_and_stopped(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_cli("run", "-n", "2000", "-c", "4", "--json", out)
    assert done.code == 0, done.stderr
    pid = int(re.search(r"\(pid (\d+)\)", done.stderr)[1])
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    result = json.loads(out.read_text())
    assert result["responses"] == 2000
    assert result["address"].startswith("127.0.0.1:")
    assert result["plan"]["url"].endswith("/webtest.html")


def test_refused_port_counts_errors_and_exits_1() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = run_cli("run", f"http://127.0.0.1:{port}/", "-n", "20", "-c", "2")
    assert done.code == 1
    assert "connect_refused" in done.stdout
    assert "no request succeeded" in done.stderr
    assert "Traceback" not in done.stderr


def test_ctrl_c_returns_a_partial_result_within_two_seconds(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    with Running("run", builtin_server.url, "-d", "30s", "-c", "4", "--json", out) as running:
        time.sleep(1.5)
        done = running.interrupt_and_wait(timeout_s=10)
    assert done.elapsed_s < 2.0
    assert done.code == 130, done.stderr
    result = json.loads(out.read_text())
    assert result["partial"] and result["stop_reason"] == "cancelled"
    assert result["responses"] > 0
    assert "interrupted" in done.stderr


def test_fault_injection_is_measured(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_cli("run", f"{builtin_server.url}hello?delay_ms=20", "-n", "200", "-c", "10", "--json", out)
    assert done.code == 0, done.stderr
    p50_ms = json.loads(out.read_text())["latency_us"]["p50"] / 1000
    assert 20 <= p50_ms < 25


def test_error_status_is_counted_and_is_not_success(builtin_server: ServerInstance) -> None:
    done = run_cli("run", f"{builtin_server.url}?status=503", "-n", "50", "-c", "2")
    assert done.code == 1
    assert "status 503" in done.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "notaurl", "-n", "5"], "is not a URL"),
        (["run", "http://nope.invalid/", "-n", "5"], "cannot resolve the host"),
        (["run", "http://192.0.2.1/", "-n", "5"], "--allow-remote"),
        (["run", "http://127.0.0.1:1/", "-n", "0"], "zero"),
        (["run", "http://127.0.0.1:1/", "-d", "5x"], "not a duration"),
        (["run", "http://127.0.0.1:1/", "-n", "5", "-H", "nocolon"], "Name: value"),
        (["run", "http://127.0.0.1:1/", "-n", "5", "--body", "/nonexistent/body"], "cannot read the body file"),
        (["run", "http://127.0.0.1:1/", "-n", "5", "-c", "0"], "at least 1"),
        (["run", "http://127.0.0.1:1/", "-n", "5", "-m", "GE T"], "not a valid HTTP method"),
        (["run", "--bogus"], "No such option"),
        (["run", "http://127.0.0.1:1/", "-n", "5", "--tls-version", "1.3"], "Use an https:// URL"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], expected: str) -> None:
    done = run_cli(*args, timeout_s=30)
    assert done.code == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("gauntlet: error: ") and expected in lines[0]
    assert done.stdout == ""


def test_non_http_peers_are_malformed(tmp_path: Path) -> None:
    """An SSH-like banner and garbage: error counts of the right kind, no hang, no traceback."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        with Running("run", f"http://127.0.0.1:{port}/", "-n", "3", "-c", "1", "--json", tmp_path / "r.json") as running:
            for banner in (b"SSH-2.0-OpenSSH_9.2p1\r\n", b"\x00\xff garbage\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort"):
                conn, _ = listener.accept()
                with conn:
                    conn.recv(4096)
                    conn.sendall(banner)
            running.proc.wait(timeout=20)
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["errors"]["malformed"] == 2 and result["errors"]["truncated"] == 1
    assert running.proc.returncode == 1


def test_connections_beyond_the_open_files_limit_are_refused_with_the_fix() -> None:
    """The thesis's ab crashed at 1,024 descriptors; the engine says which limit to raise instead."""
    import resource
    import subprocess
    import sys

    def lower_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    done = subprocess.run(
        [sys.executable, "-m", "gauntlet", "run", "http://127.0.0.1:1/", "-c", "1000", "-n", "10"],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=lower_limit,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "1000 connections need about 1064 open files" in done.stderr and "ulimit -n" in done.stderr


def test_constant_rate_is_held_and_reported(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_cli("run", f"{builtin_server.url}hello", "-R", "1000", "-d", "2s", "-c", "10", "--json", out)
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(result)
    schedule = result["schedule"]
    assert schedule["offered_rate_per_s"] == 1000
    assert abs(schedule["achieved_rate_per_s"] - 1000) <= 20
    assert abs(result["requests"] - 2000) <= 40
    assert "due time" in done.stdout and "actual send" in done.stdout and "offered 1,000/s" in done.stdout


def test_https_with_full_handshakes_and_pinned_cipher(tmp_path: Path) -> None:
    from gauntlet.servers.builtin import start_builtin

    out = tmp_path / "result.json"
    with start_builtin(tls=True) as server:
        assert server.url.startswith("https://")
        done = run_cli(
            "run", f"{server.url}webtest.html", "-n", "300", "-c", "3", "--no-keepalive", "--no-tls-resumption",
            "--tls-version", "1.3", "--cipher", "TLS13_AES_256_GCM_SHA384", "--json", out,
        )
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(result)
    assert result["tls"] == {"handshakes": 300, "resumed": 0}
    assert "300 handshakes, 0 resumed" in done.stdout
    bad = run_cli("run", "https://127.0.0.1:1/", "-n", "1", "--cipher", "RC4")
    assert bad.code == 2 and "cipher suite 'RC4' is unknown" in bad.stderr
