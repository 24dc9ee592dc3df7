"""`gauntlet run` end to end, as a subprocess, against the built-in server in its own process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import psutil
import pytest

from gauntlet import schema
from gauntlet.cli.load_options import LoadOptions
from gauntlet.servers.base import ServerInstance
from tests.helpers.builtin_stats import server_stats
from tests.helpers.cli_process import GAUNTLET, Finished, Running, run_cli

SCHEMA = schema.run_result()


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


def test_the_transport_batch_window_and_scheduling_options_reach_the_engine(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    url = f"{builtin_server.url}webtest.html"
    done = run_cli("run", url, "-n", "3000", "-c", "20", "--io", "uring", "--io-batch", "200us", "--scheduling", "normal", "--json", out)
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    assert (result["plan"]["io"], result["plan"]["io_batch_us"], result["responses"]) == ("uring", 200, 3000)
    assert result["client"]["io"] == "uring" or result["client"]["io_fallback"], "io_uring ran, or says why not"
    assert (result["plan"]["scheduling"], result["client"]["scheduling"]) == ("normal", "normal")
    done = run_cli("run", url, "-n", "100", "-c", "2", "--json", out)
    assert done.code == 0, done.stderr
    assert json.loads(out.read_text())["client"]["scheduling"] == "batch", "SCHED_BATCH by default"
    too_long = run_cli("run", url, "-n", "1", "--io-batch", "20ms")
    assert too_long.code == 2 and "Invalid value for '--io-batch': at most 10ms, not 20ms" in too_long.stderr


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


def wait_for_requests(url: str, timeout_s: float = 30.0) -> None:
    """Until the built-in server at `url` has answered a request: the load has begun, however slow the start."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{url}__gauntlet/stats", timeout=5) as response:
            if json.load(response)["requests"] > 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"no request reached {url} in {timeout_s} s")


#: How soon after Ctrl-C the engine's measured interval ends: its threads look for a cancel at least
#: every 100 ms; the rest is the signal reaching the process and the threads being scheduled.
STOPPED_WITHIN_S = 2.0


def interrupted(running: Running) -> tuple[Finished, float]:
    """Ctrl-C, and the instant it was sent on CLOCK_MONOTONIC (the engine's clock too). The command's
    exit is awaited, not timed: what follows the stop (the result written and stored, the server
    stopped) takes what the machine's other work lets it take (8 s at a load average of 16)."""
    signalled_s = time.monotonic()
    return running.interrupt_and_wait(timeout_s=120), signalled_s


def assert_stopped_at_the_signal(result: dict[str, Any], signalled_s: float) -> None:
    stopped_s = result["measured_to_monotonic_us"] / 1e6
    assert stopped_s - signalled_s < STOPPED_WITHIN_S, f"the load ran {stopped_s - signalled_s:.2f} s past Ctrl-C"


def test_ctrl_c_returns_a_partial_result_within_two_seconds(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    with Running("run", builtin_server.url, "-d", "30s", "-c", "4", "--json", out) as running:
        wait_for_requests(builtin_server.url)
        done, signalled_s = interrupted(running)
    assert done.code == 130, done.stderr
    result = json.loads(out.read_text())
    assert_stopped_at_the_signal(result, signalled_s)
    jsonschema.Draft202012Validator(SCHEMA).validate(result)
    assert result["partial"] and result["stop_reason"] == "cancelled"
    assert result["responses"] > 0
    assert "PARTIAL" in done.stdout and "requests/s" in done.stdout
    assert "interrupted" in done.stderr and "Traceback" not in done.stderr


def test_ctrl_c_without_a_url_also_stops_the_builtin_server(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    with Running("run", "-d", "30s", "-c", "4", "--json", out) as running:
        running.wait_for_stderr(r"builtin server on \S+ \(pid \d+\)", timeout_s=30)
        (url,) = re.findall(r"builtin server on (\S+) ", "".join(running.stderr_lines))
        wait_for_requests(url)
        done, signalled_s = interrupted(running)
    assert done.code == 130, done.stderr
    result = json.loads(out.read_text())
    assert result["partial"]
    assert_stopped_at_the_signal(result, signalled_s)
    pid = int(re.search(r"\(pid (\d+)\)", done.stderr)[1])
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_threads_beyond_connections_are_lowered_to_connections(builtin_server: ServerInstance, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_cli("run", f"{builtin_server.url}hello", "-n", "200", "-c", "2", "-t", "8", "--json", out)
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    # The engine lowers them (plan.rs thread_count); the plan it echoes keeps what was asked.
    assert (result["threads"], result["connections"], result["plan"]["threads"]) == (2, 2, 8)
    assert server_stats(builtin_server) == {"requests": 200, "connections_accepted": 2 + 1}


@pytest.mark.parametrize(
    ("given", "requests", "duration_us"),
    [
        ({}, None, 10_000_000),
        ({"requests": 10_000}, 10_000, None),
        ({"duration_us": 500_000}, None, 500_000),
        ({"requests": 100, "duration_us": 2_000_000}, 100, 2_000_000),
    ],
)
def test_without_n_or_d_the_run_lasts_10s_like_wrk(given: dict[str, int], requests: int | None, duration_us: int | None) -> None:
    plan = LoadOptions(**given).plan("http://127.0.0.1:8080/")
    assert (plan.requests, plan.duration_us) == (requests, duration_us)


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


def test_server_option_starts_that_server_with_its_settings_and_stops_it(tmp_path: Path) -> None:
    from tests.conftest import require_installed
    from gauntlet.servers.registry import availability

    require_installed("nginx", availability("nginx").available, "apt-get install nginx")
    out = tmp_path / "result.json"
    done = run_cli("run", "--server", "nginx", "--workers", "3", "--no-keepalive", "--path", "/image_small.gif",
                   "-n", "600", "-c", "3", "--json", out)
    assert done.code == 0, done.stderr
    pid = int(re.search(r"nginx server on http://127\.0\.0\.1:\d+/ \(pid (\d+)\)", done.stderr)[1])
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    result = json.loads(out.read_text())
    assert (result["responses"], result["status_codes"], result["connections_opened"]) == (600, {"200": 600}, 600)
    assert result["bytes_in"] > 600 * 7_500 and result["plan"]["url"].endswith("/image_small.gif")
    memory = result["server"]["memory"]
    assert (memory["master"]["processes"], memory["worker"]["processes"]) == (1, 3)
    assert "server:" in done.stdout and "µs of CPU per request" in done.stdout


@pytest.mark.parametrize("command", [["run"], ["sweep", "concurrency"], ["capacity"]])
def test_help_keeps_square_brackets_that_rich_would_take_for_markup(command: list[str]) -> None:
    """`[distributed]` (the pip extra) once vanished from `--agents`' help as an unknown rich tag."""
    done = subprocess.run(
        [*GAUNTLET, *command, "--help"], capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "400"},
    )
    assert done.returncode == 0, done.stderr
    assert "Dask worker processes (extra [distributed])" in done.stdout


def test_the_warm_up_tries_the_batch_window_and_the_run_says_what_it_kept(
    builtin_server: ServerInstance, tmp_path: Path
) -> None:
    """By default a warm-up long enough tries the window in spans with and without it; the client's
    line names the window kept and what the trial measured. `--io-batch 0` never tries it."""
    url = f"{builtin_server.url}webtest.html"
    tried, pinned = tmp_path / "tried.json", tmp_path / "pinned.json"
    done = run_cli("run", url, "-c", "60", "-t", "1", "-d", "300ms", "--warmup", "400ms", "--json", tried)
    assert done.code == 0, done.stderr
    client = json.loads(tried.read_text())["client"]
    trial = client["batch_trial"]
    assert [span["window"] for span in trial["spans"]] == [False, True, True, False, False, True, True, False]
    assert all(span["responses"] > 0 for span in trial["spans"]), trial
    assert client["io_batch_us"] == (400 if trial["kept"] else 0)
    kept_words = "batch window 400µs" if trial["kept"] else "no batch window"
    assert re.search(rf"{kept_words} \(the warm-up's trial of 400µs: [\d.]+x the responses at [\d.]+x", done.stdout), done.stdout
    done = run_cli("run", url, "-c", "60", "-t", "1", "-d", "300ms", "--warmup", "400ms", "--io-batch", "0", "--json", pinned)
    assert done.code == 0, done.stderr
    client = json.loads(pinned.read_text())["client"]
    assert (client["batch_trial"], client["io_batch_us"]) == (None, 0)
    assert "batch window" not in done.stdout
