"""Every exit has a result: SIGTERM and SIGHUP end a run as Ctrl-C does (partial figures printed and
written, the server Gauntlet started stopped), and --fail-on thresholds set the exit code, the
default failing a run whose server died under it. Through the real CLI, in a subprocess."""

from __future__ import annotations

import json
import signal
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from gauntlet.servers.base import ServerInstance
from tests.conftest import require_available
from gauntlet.servers.spec import ServerSpec
from gauntlet.store import Store
from tests.helpers.builtin_stats import server_stats
from tests.helpers.cli_process import Running, run_cli


def runs(process: psutil.Process, name: str) -> bool:
    try:
        return process.name() == name or process.cmdline()[1:4] == ["-m", "gauntlet", name]
    except psutil.Error:
        return False  # gone meanwhile


def has_config(process: psutil.Process) -> bool:
    try:
        return "-c" in process.cmdline()
    except psutil.Error:
        return False  # gone meanwhile


def started_by(
    cli: Running, name: str, timeout_s: float = 30.0, wanted: Callable[[psutil.Process], bool] = lambda _: True
) -> list[psutil.Process]:
    """The processes below the CLI process named `name` (or running `gauntlet NAME`) that are
    `wanted`, once there are some."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = [p for p in psutil.Process(cli.proc.pid).children(recursive=True) if runs(p, name) and wanted(p)]
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"no {name} process started by the CLI")


@contextmanager
def default_disposition(signum: int) -> Iterator[None]:
    """Processes started inside take `signum`'s default disposition, whatever this test run
    inherited: under nohup SIGHUP is ignored, and the CLI keeps it ignored, by design."""
    previous = signal.signal(signum, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signum, previous)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_mid_run_keeps_the_partial_result(builtin_server: ServerInstance, tmp_path: Path, signum: int) -> None:
    out = tmp_path / "partial.json"
    with default_disposition(signum):
        cli = Running("run", f"{builtin_server.url}webtest.html", "-d", "30s", "-c", "2", "--json", out)
    with cli:
        deadline = time.monotonic() + 20
        while server_stats(builtin_server)["requests"] < 1_000 and time.monotonic() < deadline:
            time.sleep(0.05)
        done = cli.end_with(signum, timeout_s=15)
        code, stdout, stderr = done.code, done.stdout, done.stderr
    assert code == 128 + signum, stderr
    result = json.loads(out.read_text())
    assert result["partial"] is True and result["responses"] > 0
    assert f"{result['responses']:,}" in stdout, "the partial figures are printed"
    assert "interrupted" in stderr and "Traceback" not in stderr


@contextmanager
def nginx_under_load(duration: str, out: Path) -> Iterator[tuple[Running, list[psutil.Process]]]:
    """`gauntlet run --server nginx` 1.5 s into its load, and the nginx processes it started."""
    require_available(ServerSpec("nginx"))
    with Running("run", "--server", "nginx", "--workers", "2", "-d", duration, "-c", "2", "--json", out) as cli:
        # The CLI's version probe (`nginx -v`) is a process named nginx too: wait for the server,
        # whose master runs with its config (-c), then take its workers with it.
        master = started_by(cli, "nginx", wanted=has_config)[0]
        time.sleep(1.5)
        yield cli, [master, *master.children()]


def test_sigterm_stops_the_server_gauntlet_started(tmp_path: Path) -> None:
    out = tmp_path / "partial.json"
    with nginx_under_load("30s", out) as (cli, nginx):
        done = cli.end_with(signal.SIGTERM, timeout_s=30)
        code, stderr = done.code, done.stderr
    assert code == 128 + signal.SIGTERM, stderr
    assert json.loads(out.read_text())["server"]["cpu_us_per_request"] > 0
    _, alive = psutil.wait_procs(nginx, timeout=5)
    assert not alive, f"left running: {alive}"


def test_a_server_killed_mid_run_fails_the_default_threshold(tmp_path: Path) -> None:
    """nginx killed after 1.5 s of 5: the load stops at the exit instead of counting refused
    connects until the deadline, and the run exits 1 saying why (tests/lab/test_server_death.py
    holds the stored case)."""
    out = tmp_path / "died.json"
    with nginx_under_load("5s", out) as (cli, nginx):
        for process in nginx:
            process.kill()
        done = cli.wait(timeout_s=60)
    stderr = done.stderr
    result = json.loads(out.read_text())
    assert result["server_exit"]["process"] == "nginx" and result["elapsed_us"] < 3_000_000, result["server_exit"]
    assert done.code == 1, stderr
    assert "failed --fail-on errors>5%: nginx exited (signal 9, SIGKILL)" in stderr and "Traceback" not in stderr


def test_a_latency_threshold_sets_the_exit_code(builtin_server: ServerInstance) -> None:
    slow = f"{builtin_server.url}webtest.html?delay_ms=20"
    crossed = run_cli("run", slow, "-n", "1000", "-c", "20", "--fail-on", "p99>5ms")
    assert crossed.code == 1 and "failed --fail-on p99>5ms: p99 was " in crossed.stderr, crossed.stderr
    # 40 responses are too few for a p99, but a max under the limit holds every percentile under it.
    held = run_cli("run", slow, "-n", "40", "-c", "2", "--fail-on", "p99>2s", "--fail-on", "errors>0%")
    assert held.code == 0, held.stderr


def test_a_percentile_threshold_on_too_few_responses_fails_saying_so(builtin_server: ServerInstance) -> None:
    """p99 needs 1,000 responses (analysis.stats.percentile_shown): 40 with a max over the limit
    can neither pass nor fail on their p99."""
    slow = f"{builtin_server.url}webtest.html?delay_ms=20"
    done = run_cli("run", slow, "-n", "40", "-c", "2", "--fail-on", "p99>5ms")
    assert done.code == 1, done.stderr
    assert "failed --fail-on p99>5ms: n too small to judge it (40 responses, p99 needs 1,000) and the max was " in done.stderr
    assert "p99 was" not in done.stderr


def test_a_threshold_that_cannot_be_read_is_a_one_line_error(builtin_server: ServerInstance) -> None:
    done = run_cli("run", f"{builtin_server.url}webtest.html", "-n", "10", "--fail-on", "p99>soon")
    assert done.code == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "--fail-on 'p99>soon'" in done.stderr and "Traceback" not in done.stderr


LONG_SUITE = """\
name: long
servers: [builtin]
groups:
  - name: static
    path: /webtest.html
    connections: 2
    duration: 30s
"""


def served(serve: psutil.Process) -> int:
    """The requests the built-in server process has counted so far (0 before it listens)."""
    ports = [c.laddr.port for c in serve.net_connections("tcp") if c.status == psutil.CONN_LISTEN]
    if not ports:
        return 0
    with urllib.request.urlopen(f"http://127.0.0.1:{ports[0]}/__gauntlet/stats", timeout=5) as response:
        return int(json.load(response)["requests"])


def test_sigterm_mid_suite_stores_the_partial_case_and_marks_the_run(tmp_path: Path) -> None:
    suite, db = tmp_path / "long.yaml", tmp_path / "results.db"
    suite.write_text(LONG_SUITE)
    with Running("suite", "run", suite, "--db", db, "-o", tmp_path / "report.html") as cli:
        (serve,) = started_by(cli, "serve")  # the built-in server, in its own process
        # Signalled once the case is under way (the server counted requests), not after a fixed time:
        # on a busy machine the engine can take seconds to start.
        deadline = time.monotonic() + 30
        while served(serve) < 1_000 and time.monotonic() < deadline:
            time.sleep(0.05)
        done = cli.end_with(signal.SIGTERM, timeout_s=60)
        code, stderr = done.code, done.stderr
    assert code == 128 + signal.SIGTERM, stderr
    with Store.open(db, create=False) as store:
        run = store.run(store.latest_run_id())
        (case,) = store.cases([run.run_id])
    assert run.status == "interrupted" and case.status == "partial"
    assert case.result is not None and case.result["responses"] > 0
    assert "interrupted" in stderr and "Traceback" not in stderr
