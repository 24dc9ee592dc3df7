"""--repeat, --restart-between and --warmup-requests on `run` and `sweep`, end to end against the
built-in server; counts checked on the server's side."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema

from gauntlet import schema
from gauntlet.servers.base import ServerInstance
from tests.helpers.builtin_stats import server_stats
from gauntlet.units import format_count
from tests.helpers.cli_process import run_cli

SCHEMAS = Path(__file__).parents[2] / "python/gauntlet/schema"
REPEAT = jsonschema.Draft202012Validator(json.loads((SCHEMAS / "repeat-result-v2.json").read_text()))
RUN = jsonschema.Draft202012Validator(schema.run_result())
SWEEP = jsonschema.Draft202012Validator(json.loads((SCHEMAS / "sweep-result-v1.json").read_text()))


def server_pids(stderr: str) -> list[int]:
    return [int(pid) for pid in re.findall(r"server on \S+ \(pid (\d+)\)", stderr)]


def test_three_repeats_with_restarts_keep_every_repeat_and_show_their_estimates(tmp_path: Path) -> None:
    out = tmp_path / "repeats.json"
    # 100,000 requests: each repeat measures over a second or more, more than the server's CPU per
    # request needs (analysis.stats.MIN_CPU_WINDOW_S).
    done = run_cli("run", "-n", "100000", "-c", "4", "--repeat", "3", "--restart-between", "--json", out)
    assert done.code == 0, done.stderr
    found = json.loads(out.read_text())
    REPEAT.validate(found)
    for result in found["repeats"]:
        RUN.validate(result)
    assert [r["responses"] for r in found["repeats"]] == [100_000] * 3
    assert len(set(server_pids(done.stderr))) == 3, "a fresh server for every repeat"
    assert len({r["address"] for r in found["repeats"]}) == 3
    rates = sorted(r["requests_per_s"] for r in found["repeats"])
    estimates = found["estimates"]
    assert estimates["requests_per_s"]["point"] == rates[1]
    assert estimates["requests_per_s"]["low"] <= rates[1] <= estimates["requests_per_s"]["high"]
    assert estimates["requests_per_s"]["n"] == 3 and estimates["server_cpu_us_per_request"]["n"] == 3
    assert estimates["requests_per_s"]["method"] == "bootstrap over repeats"
    assert found["repeats"][found["median_repeat"]]["requests_per_s"] == rates[1]
    assert found["environment"]["cores"] >= 1
    assert "repeat 3 of 3" in done.stdout and "Over 3 repeats" in done.stdout and "95 % interval" in done.stdout
    # The verdict: the median with its interval, and the reason from the repeats' bottleneck labels.
    rate = estimates["requests_per_s"]
    (verdict,) = [line for line in done.stdout.splitlines() if line.startswith("verdict: ")]
    interval = f" [{format_count(rate['low'])}-{format_count(rate['high'])}]" if rate["low"] != rate["high"] else ""
    assert verdict.startswith(f"verdict: {format_count(rate['point'])} requests/s{interval} over 3 repeats; "), verdict
    labels = {label for r in found["repeats"] for label in r["bottleneck"]["labels"]}
    if labels - {"machine-busy"} == {"client-bound"}:
        assert "the load generator's limit, not the server's" in verdict
    else:
        assert verdict.endswith(" µs/request of server CPU"), verdict


def test_without_restarts_one_server_serves_every_repeat_after_one_warm_up(
    builtin_server: ServerInstance, tmp_path: Path
) -> None:
    out = tmp_path / "repeats.json"
    url = f"{builtin_server.url}webtest.html"
    done = run_cli("run", url, "-n", "1000", "-c", "2", "--repeat", "2", "--warmup-requests", "500", "--json", out)
    assert done.code == 0, done.stderr
    found = json.loads(out.read_text())
    assert [r["requests"] for r in found["repeats"]] == [1000, 1000]
    assert server_stats(builtin_server)["requests"] == 500 + 2 * 1000
    assert "server" not in found["repeats"][0], "a server given by URL is not monitored"


def test_restart_between_measures_each_repeat_on_a_new_server(tmp_path: Path) -> None:
    """Through the CLI: each repeat measured in full (the warm-up after each restart is checked
    server by server in tests/lab/test_target.py)."""
    out = tmp_path / "repeats.json"
    done = run_cli("run", "-n", "300", "-c", "2", "--repeat", "2", "--restart-between", "--warmup-requests", "200", "--json", out)
    assert done.code == 0, done.stderr
    timelines = [sum(s["requests"] for s in r["timeline"]) for r in json.loads(out.read_text())["repeats"]]
    assert timelines == [300, 300]


def test_restart_between_needs_a_server_gauntlet_started(builtin_server: ServerInstance) -> None:
    done = run_cli("run", builtin_server.url, "-n", "10", "--repeat", "2", "--restart-between")
    assert done.code == 2
    assert "--restart-between restarts a server Gauntlet started" in done.stderr and "Traceback" not in done.stderr


def test_a_sweep_keeps_every_repeat_of_every_step(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    url = f"{builtin_server.url}webtest.html"
    done = run_cli("sweep", "concurrency", url, "--levels", "1,4", "-n", "400", "--repeat", "2", "--json", out)
    assert done.code == 0, done.stderr
    sweep = json.loads(out.read_text())
    SWEEP.validate(sweep)
    for step in sweep["steps"]:
        assert len(step["repeats"]) == 2 and step["estimates"]["requests_per_s"]["point"] > 0
        assert step["result"] in step["repeats"]
        assert step["result"]["bottleneck"]["labels"] is not None
    assert server_stats(builtin_server)["requests"] == 2 * 2 * 400
    assert done.stdout.count("2 repeats") == 2
