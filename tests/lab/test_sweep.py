"""Sweeps: pure parts in tables, and whole sweeps against the built-in server."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import jsonschema
import pytest

from gauntlet import schema
from gauntlet.errors import GauntletError
from gauntlet.lab.sweep import concurrency_levels, offered_rates
from gauntlet.servers.base import ServerInstance
from tests.helpers.cli_process import Running, run_cli

SCHEMAS = Path(__file__).parents[2] / "python/gauntlet/schema"
SWEEP_SCHEMA = json.loads((SCHEMAS / "sweep-result-v1.json").read_text())
RUN_SCHEMA = schema.run_result()


@pytest.mark.parametrize(
    ("text", "levels"), [("1,10,100", [1, 10, 100]), ("200..1000:200", [200, 400, 600, 800, 1000]), ("5", [5])]
)
def test_levels(text: str, levels: list[int]) -> None:
    assert concurrency_levels(text) == levels


@pytest.mark.parametrize("text", ["1,x", "", "0", "5..1:1", "1..5:0", "1000001", "1..1000000000000:1"])
def test_bad_levels(text: str) -> None:
    with pytest.raises(GauntletError, match="--levels"):
        concurrency_levels(text)


def test_rates() -> None:
    assert offered_rates(1000, 5000, 1000) == [1000, 2000, 3000, 4000, 5000]
    assert offered_rates(0.5, 1.0, 0.25) == [0.5, 0.75, 1.0]
    for low, high, step in [(5000, 1000, 1000), (1000, 5000, 0), (0, 10, 1), (1, 1e12, 1)]:
        with pytest.raises(GauntletError, match="--from"):
            offered_rates(low, high, step)


def server_requests(server: ServerInstance) -> int:
    with urllib.request.urlopen(f"{server.url}__gauntlet/stats", timeout=5) as response:
        return json.load(response)["requests"]


def validate(path: Path) -> dict:
    sweep = json.loads(path.read_text())
    jsonschema.Draft202012Validator(SWEEP_SCHEMA).validate(sweep)
    for step in sweep["steps"]:
        if step["result"] is not None:
            jsonschema.Draft202012Validator(RUN_SCHEMA).validate(step["result"])
    return sweep


def test_concurrency_sweep_measures_each_level(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    done = run_cli("sweep", "concurrency", builtin_server.url, "--levels", "1,10,50", "-n", "500", "--json", out)
    assert done.code == 0, done.stderr
    sweep = validate(out)
    assert [s["level"] for s in sweep["steps"]] == [1, 10, 50]
    assert [s["result"]["requests"] for s in sweep["steps"]] == [500, 500, 500]
    assert [s["result"]["connections_opened"] for s in sweep["steps"]] == [1, 10, 50]
    assert server_requests(builtin_server) == 1500
    assert done.stdout.count("\n") == 4, done.stdout


def test_a_level_beyond_the_open_files_limit_is_refused_and_the_sweep_goes_on(
    builtin_server: ServerInstance, tmp_path: Path
) -> None:
    out = tmp_path / "sweep.json"

    def lower_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    done = subprocess.run(
        [sys.executable, "-m", "gauntlet", "sweep", "concurrency", builtin_server.url,
         "--levels", "5,20000,20", "-n", "200", "--json", str(out)],
        capture_output=True, text=True, timeout=60, preexec_fn=lower_limit,
    )
    assert done.returncode == 0, done.stderr
    steps = validate(out)["steps"]
    assert [s["result"] is None for s in steps] == [False, True, False]
    assert "open files" in steps[1]["refused"] and "limits.conf" in steps[1]["refused"]
    assert "refused" in done.stdout


def test_timed_out_share(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    url = f"{builtin_server.url}hello?delay_ms=300"
    done = run_cli("sweep", "concurrency", url, "--levels", "2", "-n", "4", "--timeout", "100ms", "--json", out)
    assert done.code == 0, done.stderr
    result = validate(out)["steps"][0]["result"]
    assert result["errors"]["timeout"] == result["requests"] == 4
    assert "100.0%" in done.stdout


def test_rate_sweep_holds_each_rate(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    done = run_cli(
        "sweep", "rate", f"{builtin_server.url}hello", "--from", "200", "--to", "600", "--step", "200",
        "-d", "1s", "-c", "20", "--json", out,
    )
    assert done.code == 0, done.stderr
    steps = validate(out)["steps"]
    assert [s["rate_per_s"] for s in steps] == [200, 400, 600]
    for step in steps:
        achieved = step["result"]["schedule"]["achieved_rate_per_s"]
        assert abs(achieved - step["rate_per_s"]) <= 0.05 * step["rate_per_s"], step["rate_per_s"]


@pytest.mark.parametrize(
    "args",
    [
        ["concurrency", "--levels", "1,x", "-n", "5"],
        ["concurrency", "--levels", "", "-n", "5"],
        ["rate", "--from", "500", "--to", "100"],
        ["rate", "--step", "0"],
    ],
)
def test_bad_sweeps_fail_before_any_load(args: list[str]) -> None:
    done = run_cli("sweep", *args, "http://127.0.0.1:1/", timeout_s=30)
    assert done.code == 2
    assert done.stderr.startswith("gauntlet: error: ") and done.stderr.count("\n") == 1
    assert done.stdout == ""


def test_ctrl_c_keeps_the_finished_steps(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    args = ["sweep", "concurrency", builtin_server.url, "--levels", "1,2,3", "-d", "1s", "--json", out]
    with Running(*args) as running:
        deadline = time.monotonic() + 30
        while not (out.exists() and json.loads(out.read_text())["steps"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # into the second step
        done = running.interrupt_and_wait(timeout_s=10)
    assert done.code == 130, done.stderr
    sweep = validate(out)
    assert sweep["interrupted"]
    assert [s["level"] for s in sweep["steps"]] == [1, 2]
    assert not sweep["steps"][0]["result"]["partial"] and sweep["steps"][1]["result"]["partial"]
