"""Runs past one process's open files: a plan spread over local engine processes and merged, the
built-in server over several processes, and one line when the machine cannot hold the run."""

from __future__ import annotations

import json
import resource
import socket
import subprocess
from pathlib import Path

import jsonschema
import pytest

from gauntlet import engine, schema
from gauntlet.lab import local_split
from gauntlet.servers.base import ServerInstance
from tests.helpers.builtin_stats import server_stats
from tests.helpers.cli_process import GAUNTLET

#: A hard open-files limit low enough that a run of a few thousand connections needs two processes.
LOW_FILE_LIMIT = 1024


def test_a_plan_over_two_processes_merges_to_the_servers_count(builtin_server: ServerInstance) -> None:
    plan = {"url": f"{builtin_server.url}hello", "connections": 6, "requests": 1500, "idle": {"connections": 10}}
    outcome = local_split.run_split(plan, 2)
    result = outcome.result
    jsonschema.Draft202012Validator(schema.run_result()).validate(result)
    assert not outcome.interrupted
    assert (result["requests"], result["responses"], result["errors_total"]) == (1500, 1500, 0)
    assert server_stats(builtin_server)["requests"] == 1500
    agents = result["agents"]
    assert [a["state"] for a in agents] == ["completed", "completed"]
    assert sum(a["requests"] for a in agents) == 1500
    assert sum(a["slice"]["connections"] for a in agents) == 6
    assert (result["idle"]["opened"], result["idle"]["open_at_end"]) == (10, 10)
    assert result["memory"]["connections"] == 16


def run_with_file_limit(files: int, *args: str | Path, timeout_s: float = 90.0) -> subprocess.CompletedProcess[str]:
    def lower_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))

    return subprocess.run(
        [*GAUNTLET, *map(str, args)], capture_output=True, text=True, timeout=timeout_s, preexec_fn=lower_limit
    )


def test_connections_past_the_file_limit_run_over_processes_on_both_sides(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_with_file_limit(LOW_FILE_LIMIT, "run", "-c", "1500", "-n", "3000", "-t", "1", "--json", out, "--no-store")
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert (result["responses"], result["errors_total"]) == (3000, 0)
    assert [a["slice"]["connections"] for a in result["agents"]] == [750, 750]
    assert result["memory"]["connections"] == 1500
    # The built-in server could hold only 960 of them in one process: it ran two.
    assert result["server"]["max_processes"] == 2


def test_more_connections_than_the_machine_allows_are_one_line() -> None:
    done = run_with_file_limit(LOW_FILE_LIMIT, "run", "-c", "100000", "-d", "1s", "--no-store", timeout_s=30.0)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "hard limit" in lines[0] and "limits.conf" in lines[0], lines[0]


@pytest.mark.parametrize(("connections", "time_wait", "sources"), [
    (100, 0, 0), (30_000, 0, 3), (100_000, 0, 8),
    # Ports TIME_WAIT holds on 127.0.0.1 send the run to a fresh block, sized for its connections.
    (8000, 53_000, 1), (30_000, 53_000, 3),
])
def test_source_addresses_are_added_past_half_a_port_range(connections: int, time_wait: int, sources: int) -> None:
    plan = local_split.fitted({"url": "http://127.0.0.1:8080/", "connections": connections}, time_wait)
    given = plan.get("source_addresses") or []
    assert len(given) == sources
    assert len(set(given)) == sources and all(a.startswith("127.") for a in given)
    if sources:
        again = local_split.fitted({"url": "http://127.0.0.1:8080/", "connections": connections}, time_wait)
        assert not set(again["source_addresses"]) & set(given), "the next run leaves from fresh addresses"


@pytest.mark.slow
def test_thirty_thousand_connections_against_the_builtin_server(tmp_path: Path) -> None:
    """Issue 17's check at this machine's limits (20,000 files a process, 28,232 ports an address):
    12 s here (2 cores shared with other work), most of it starting processes and opening connections."""
    if local_split.files_per_process() > 30_064:
        pytest.skip("one process holds 30,000 connections here: nothing to spread")
    out = tmp_path / "result.json"
    done = run_with_file_limit(local_split.files_per_process(), "run", "-c", "30000", "-d", "3s", "--warmup", "3s",
                               "--json", out, "--no-store", timeout_s=120.0)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["errors_total"] == 0
    assert sum(a["slice"]["connections"] for a in result["agents"]) == 30_000
    assert all(a["state"] == "completed" and a["responses"] > 0 for a in result["agents"]), result["agents"]
    assert len(result["plan"]["source_addresses"]) >= 2
    assert result["server"]["max_processes"] >= 2


def test_a_split_run_on_a_closed_port_counts_every_failed_connect_as_one_process_does() -> None:
    with socket.socket() as holder:  # bound, never listening: the port stays closed and ours
        holder.bind(("127.0.0.1", 0))
        plan = {"url": f"http://127.0.0.1:{holder.getsockname()[1]}/", "connections": 4, "threads": 2, "requests": 40}
        alone = engine.run(plan).result
        split = local_split.run_split(plan, 2).result
    for result in (alone, split):
        assert (result["requests"], result["errors_total"], result["errors"]["connect_refused"]) == (40, 40, 40)
    assert [a["state"] for a in split["agents"]] == ["unreachable", "unreachable"]


def test_connects_left_hanging_from_the_warm_up_are_unanswered_not_silent() -> None:
    """A listener whose accept queue is full drops every SYN: the shares' connects, begun in the
    warm-up, hang past the run's end, and the merged result shows each of them."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = [socket.socket() for _ in range(2)]
        for sock in fillers:  # the first fills the queue (backlog 0 holds one); the second's SYN is dropped
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
        plan = {"url": f"http://127.0.0.1:{port}/", "connections": 6, "threads": 2, "duration_us": 500_000,
                "warmup_us": 500_000, "timeout_us": 5_000_000}
        try:
            result = local_split.run_split(plan, 2).result
        finally:
            for sock in fillers:
                sock.close()
    assert result["unanswered"]["connecting"]["count"] == 6
    assert result["unanswered"]["connecting"]["max_age_us"] >= 1_000_000
    assert [a["state"] for a in result["agents"]] == ["unreachable", "unreachable"]


def test_a_split_run_reports_its_shares_progress_summed(builtin_server: ServerInstance) -> None:
    seen: list[engine.Progress] = []
    plan = {"url": f"{builtin_server.url}hello", "connections": 4, "duration_us": 1_500_000}
    result = local_split.run_split(plan, 2, seen.append).result
    measuring = [p for p in seen if p["measuring"]]
    assert measuring, f"no progress while measuring: {seen}"
    assert all(0 < p["elapsed_us"] <= 1_600_000 for p in measuring)
    requests = [int(p["requests"]) for p in measuring]
    assert requests == sorted(requests) and 0 < requests[-1] <= result["requests"]
