"""--fail-on on sweep, capacity and suite, as on run: a measured case that crosses a threshold ends
the command with exit 1 and a line naming the case; without --fail-on they keep exit 0."""

from __future__ import annotations

from pathlib import Path

from gauntlet.servers.base import ServerInstance
from tests.helpers.cli_process import run_cli

#: Every response takes longer than a microsecond: a threshold each case crosses.
CROSSED = "p50>1us"


def test_a_sweep_fails_on_the_step_that_crosses(builtin_server: ServerInstance, tmp_path: Path) -> None:
    url = f"{builtin_server.url}webtest.html"
    sweep = ("sweep", "concurrency", url, "--levels", "1,2", "-n", "200", "--no-store")
    assert run_cli(*sweep, "--fail-on", "p50>10s").code == 0
    done = run_cli(*sweep, "--fail-on", CROSSED)
    assert done.code == 1, done.stdout + done.stderr
    assert "gauntlet: failed --fail-on concurrency 1: p50>1us: p50 was" in done.stderr
    assert "gauntlet: failed --fail-on concurrency 2: p50>1us" in done.stderr


def test_a_suite_fails_on_the_case_that_crosses(tmp_path: Path) -> None:
    suite = tmp_path / "tiny.yaml"
    suite.write_text("name: tiny\nservers: [builtin]\ndefaults: {threads: 1}\ngroups:\n  - name: static\n    workload: [ST-1]\n"
                     "    connections: [2]\n"
                     "    requests: 300\n")
    done = run_cli("suite", "run", suite, "--no-store", "-o", tmp_path / "r.html", "--fail-on", CROSSED, timeout_s=180)
    assert done.code == 1, done.stdout + done.stderr
    assert "gauntlet: failed --fail-on " in done.stderr and "p50>1us: p50 was" in done.stderr


def test_capacity_fails_when_the_capacity_found_crosses(builtin_server: ServerInstance, tmp_path: Path) -> None:
    load = tmp_path / "load.yaml"
    load.write_text(
        "sessions:\n  - name: quick\n    pages: [{name: hello, path: /hello}]\nusers: 2\nmax_users: 2\nwarm_up: 100ms\nmeasure: 500ms\n"
        "qos: {good: 1s, tolerable: 10s}\n"
    )
    capacity = ("capacity", load, builtin_server.url, "--start", "2", "--max-probes", "1", "--no-store")
    assert run_cli(*capacity, timeout_s=60).code == 0
    done = run_cli(*capacity, "--fail-on", CROSSED, timeout_s=60)
    assert done.code == 1, done.stdout + done.stderr
    assert "gauntlet: failed --fail-on users 2: p50>1us: p50 was" in done.stderr
