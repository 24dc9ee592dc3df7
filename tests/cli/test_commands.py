"""`gauntlet serve` and `gauntlet workload write`."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from gauntlet import _engine
from tests.helpers.cli_process import run_cli


def test_workload_write_is_byte_exact(tmp_path: Path) -> None:
    done = run_cli("workload", "write", tmp_path / "docroot")
    assert done.code == 0, done.stderr
    expected = _engine.workload_files()
    assert sorted(p.name for p in (tmp_path / "docroot").iterdir()) == sorted(expected)
    for name, body in expected.items():
        assert (tmp_path / "docroot" / name).read_bytes() == body
    sizes = {name: len(body) for name, body in expected.items()}
    assert sizes == {"webtest.html": 168, "image_small.gif": 7500, "image_large.jpg": 83572, "image_10k.png": 10240}


def served(requests: int, stop_signal: signal.Signals, *options: str) -> str:
    """`gauntlet serve OPTIONS` in a process of its own: its first line's URL asked `requests` times
    for /hello, then `stop_signal`; what it wrote on stderr once it exited (status 0)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gauntlet", "serve", "--threads", "1", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        match = re.fullmatch(r"gauntlet serve: listening on (http://127\.0\.0\.1:\d+/)\n", line)
        assert match, line
        for _ in range(requests):
            with urllib.request.urlopen(f"{match[1]}hello", timeout=5) as response:
                assert response.read() == b"Hello, World!"
        proc.send_signal(stop_signal)
        assert proc.wait(timeout=30) == 0
        return proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_announces_serves_and_stops_on_a_signal(stop_signal: signal.Signals) -> None:
    """Without --port it binds a free port and says which on its first line."""
    errors = served(1, stop_signal)
    assert "stopped after 1 requests" in errors and "Traceback" not in errors


def test_serve_over_two_processes_counts_both_when_it_stops() -> None:
    """`--processes 2`: the engine starts the second as `python -m gauntlet serve` on the same port;
    the kernel spreads new connections over both, and the first's last line adds their counts."""
    errors = served(40, signal.SIGTERM, "--processes", "2")
    assert errors.splitlines()[-1] == "gauntlet serve: stopped after 40 requests on 40 connections", errors


def test_serve_on_a_taken_port_is_one_line() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        done = run_cli("serve", "--port", str(taken.getsockname()[1]), timeout_s=20)
    assert done.code == 2
    assert done.stderr.startswith("gauntlet: error: cannot serve on 127.0.0.1:")
    assert len(done.stderr.strip().splitlines()) == 1
