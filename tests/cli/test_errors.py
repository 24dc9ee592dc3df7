"""Bad input and failing targets: one line on stderr with the cause and the fix, the right exit code,
never a traceback. Every target here is on loopback or is refused before any connect."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from gauntlet.servers.base import ServerInstance
from tests.helpers.builtin_stats import server_stats
from tests.helpers.cli_process import Finished, Running, run_cli

CLOSED = "http://127.0.0.1:1/"
SHIPPED_LOAD = str(Path(__file__).parents[2] / "python/gauntlet/model/loads/banking-like.yaml")
#: A DNS label longer than 63 bytes: the resolver refuses it without sending a query, so the
#: "cannot resolve" path is taken with no packet leaving the machine (nope.invalid would be asked).
UNRESOLVABLE = f"http://{'a' * 64}.invalid/"


def assert_one_line_error(done: Finished, expected: str) -> None:
    assert done.code == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("gauntlet: error: ") and expected in lines[0], lines[0]
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["run", "notaurl", "-n", "5"], "is not a URL"),
        (["run", "ftp://127.0.0.1/", "-n", "5"], "Only http:// and https://"),
        (["run", "http:///", "-n", "5"], "has no valid host"),
        (["run", "http://127.0.0.1:99999/", "-n", "5"], "A port is a number from 1 to 65535"),
        (["run", UNRESOLVABLE, "-n", "5"], "cannot resolve the host"),
        (["run", CLOSED, "-n", "0"], "'-n' / '--requests': at least 1, not 0"),
        (["run", CLOSED, "-n", "10q"], "not a count"),
        (["run", CLOSED, "-d", "5x"], "not a duration"),
        (["run", CLOSED, "-d", "1s", "--timeout", "0"], "'--timeout': at least 1us, not 0"),
        (["run", CLOSED, "-d", "1s", "--warmup", "soon"], "'--warmup': 'soon' is not a duration"),
        (["run", CLOSED, "-d", "1000000h"], "'-d' / '--duration': at most 720h, not 1000000h"),
        (["run", CLOSED, "-n", "99999999999999999999999"], "'-n' / '--requests': at most 1,000,000,000,000"),
        (["run", CLOSED, "-n", "5", "--rate", "nan"], "'-R' / '--rate': must be a finite number above 0"),
        (["compare", "99999999999999999999", "1"], "'RUN_A': at most 9,223,372,036,854,775,807"),
        (["run", CLOSED, "-n", "5", "-H", "nocolon"], "Name: value"),
        (["run", CLOSED, "-n", "5", "-H", "Bad Name: v"], "not a valid header name"),
        (["run", CLOSED, "-n", "5", "-H", "X-A: 1\r\nX-Injected: 2"], "line break"),
        (["run", CLOSED, "-n", "5", "--body", "/nonexistent/body"], "cannot read the body file"),
        (["run", CLOSED, "-n", "5", "--body", "/"], "cannot read the body file"),
        (["run", CLOSED, "-n", "5", "--json", "/nonexistent/dir/r.json"], "cannot write the result"),
        (["run", CLOSED, "-n", "5", "-c", "0"], "at least 1"),
        (["run", CLOSED, "-n", "5", "-c", "-5"], "at least 1"),
        (["run", CLOSED, "-n", "5", "-t", "0"], "at least 1"),
        (["run", CLOSED, "-n", "5", "--calls-per-connection", "0"], "--calls-per-connection"),
        (["run", CLOSED, "-n", "5", "-m", "GE T"], "not a valid HTTP method"),
        (["run", CLOSED, "-n", "5", "--tls-version", "1.3"], "Use an https:// URL"),
        (["run", CLOSED, "-n", "5", "--server", "nginx"], "not for a URL"),
        (["run", CLOSED, "-n", "5", "--workers", "2"], "not for a URL"),
        (["run", "-n", "5", "--server", "nginix"], "'nginix' is not a server kind"),
        (["run", CLOSED, "-n", "5", "--streams", "10"], "--streams is the number of HTTP/2 streams per connection. Add --http2"),
        (["run", CLOSED, "-n", "5", "--http2", "--http1.0"], "--http2 and --http1.0 ask for two protocols"),
        (["run", CLOSED, "-n", "5", "--http2", "--streams", "0"], "'--streams': at least 1, not 0"),
        (["run", "-n", "5", "--http2"], "builtin cannot serve HTTP/2: it speaks HTTP/1.x only"),
        (["run", "-n", "5", "--http2", "--server", "apache-prefork"], "apache-prefork cannot serve HTTP/2: mod_http2"),
        (["sweep", "concurrency", "--levels", "1", "--http2"], "builtin cannot serve HTTP/2"),
        (["calibrate", "--streams", "4"], "--streams is the number of HTTP/2 streams"),
        (["run", CLOSED, "--load", SHIPPED_LOAD, "--http2", "--streams", "4"], "--streams does not apply to a load file's sessions"),
        (["capacity", SHIPPED_LOAD, CLOSED, "--http2", "--streams", "4"], "--streams does not apply to a load file's sessions"),
        (["run", "--bogus"], "No such option"),
        (["bogus"], "No such command"),
        (["serve", "--port", "70000"], "--port"),
        (["workload", "write", "/proc/gauntlet-not-writable"], "cannot write into"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], expected: str) -> None:
    assert_one_line_error(run_cli(*args, timeout_s=30), expected)


@pytest.mark.parametrize("url", ["http://192.0.2.1/", "http://10.0.0.1:8080/", "http://[2001:db8::1]/"])
def test_a_target_off_this_machine_is_refused_before_any_connect(url: str) -> None:
    """Documentation and private addresses: the check is on the resolved address, before the load."""
    done = run_cli("run", url, "-n", "5", "-c", "1", timeout_s=30)
    assert_one_line_error(done, "--allow-remote")
    assert "is not on this machine" in done.stderr
    assert done.elapsed_s < 10


def test_an_unwritable_json_path_is_refused_before_any_load(builtin_server: ServerInstance, tmp_path: Path) -> None:
    done = run_cli("run", f"{builtin_server.url}hello", "-n", "100", "--json", tmp_path / "missing" / "r.json")
    assert_one_line_error(done, "cannot write the result")
    assert server_stats(builtin_server)["requests"] == 0


def test_refused_port_counts_errors_and_exits_1(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        out = tmp_path / "r.json"
        done = run_cli("run", f"http://127.0.0.1:{port}/", "-n", "20", "-c", "2", "--json", out)
    assert done.code == 1
    result = json.loads(out.read_text())
    assert result["errors"]["connect_refused"] == result["errors_total"] == result["requests"] == 20
    assert result["responses"] == 0 and result["status_codes"] == {}
    assert "connect_refused" in done.stdout
    assert done.stderr.strip().splitlines() == [
        "stored as run 1 in results.db (gauntlet report --db results.db 1)",
        "gauntlet: no request succeeded (no 2xx or 3xx response); see the outcomes above",
    ]


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
    """The thesis's ab crashed at 1,024 descriptors; the lab spreads a run over up to 64 local
    processes, and past that says which limit to raise."""

    def lower_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    done = subprocess.run(
        [sys.executable, "-m", "gauntlet", "run", CLOSED, "-c", "20000", "-n", "10"],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=lower_limit,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "20000 connections need 106 engine processes of 256 open files each" in done.stderr
    assert "limits.conf" in done.stderr


def test_a_closed_stdout_is_not_a_write_error_or_a_traceback(tmp_path: Path) -> None:
    """`gauntlet workload write DIR | head -0`: the files are written, the listing has nowhere to go."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "gauntlet", "workload", "write", tmp_path], stdout=write_end, stderr=subprocess.PIPE,
            text=True, timeout=30,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (1, "")
    assert (tmp_path / "image_large.jpg").stat().st_size == 83_572
