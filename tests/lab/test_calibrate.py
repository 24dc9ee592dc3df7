"""Calibration against the peers: their reports parsed (captured from real runs), the per-round
ratios, and `gauntlet calibrate` against the built-in server with whatever peer is installed."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gauntlet.errors import GauntletError
from gauntlet.lab.calibrate import (
    ENGINE, Load, Sample, argv, children_cpu_s, installed_peers, median_ratio, parse, without_warmup,
)
from gauntlet.servers.base import ServerInstance
from gauntlet.store import Store
from gauntlet.servers.spec import ServerSpec
from tests.conftest import require_available, require_installed
from tests.helpers.cli_process import GAUNTLET, run_cli

WRK_REPORT = """\
Running 2s test @ http://127.0.0.1:42869/webtest.html
  2 threads and 20 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     0.97ms    5.59ms  74.96ms   98.46%
    Req/Sec    39.49k    12.59k   71.22k    77.50%
  157244 requests in 2.00s, 49.34MB read
  Socket errors: connect 0, read 3, write 0, timeout 2
  Non-2xx or 3xx responses: 7
Requests/sec:  78455.71
Transfer/sec:     24.62MB
"""
H2LOAD_REPORT = """\
Main benchmark duration is over for thread #0. Stopping all clients.
Stopped all clients for thread #0

finished in 2.00s, 85837.00 req/s, 26.93MB/s
requests: 171674 total, 171694 started, 171674 done, 171670 succeeded, 4 failed, 1 errored, 2 timeout
status codes: 171674 2xx, 0 3xx, 0 4xx, 0 5xx
"""


def test_wrk_report() -> None:
    assert parse("wrk", WRK_REPORT) == (157244, 3 + 2 + 7, 78455.71)


def test_h2load_report() -> None:
    assert parse("h2load", H2LOAD_REPORT) == (171670, 4 + 1 + 2, 85837.0)


def test_a_report_without_figures_is_a_clear_error() -> None:
    with pytest.raises(GauntletError, match="wrk's report has no"):
        parse("wrk", "wrk: unable to connect\n")
    with pytest.raises(GauntletError, match="h2load printed no request counts"):
        parse("h2load", "")


def test_every_tool_gets_the_same_load() -> None:
    load = Load("http://127.0.0.1:8080/webtest.html", connections=100, threads=2, duration_s=5)
    assert argv("wrk", load) == ["wrk", "-t2", "-c100", "-d5s", load.url]
    assert argv("h2load", load) == ["h2load", "--h1", "-t2", "-c100", "-D5", load.url]
    engine_argv = argv(ENGINE, load)
    assert engine_argv[:3] == [sys.executable, "-m", "gauntlet.lab.calibrate"]
    plan = json.loads(engine_argv[3])
    assert (plan["url"], plan["connections"], plan["threads"], plan["duration_us"], plan["keepalive"]) == (
        load.url, 100, 2, 5_000_000, True,
    )
    assert plan["warmup_us"] == 1_000_000 and "io_batch_us" not in plan, "the engine's default, tried in its warm-up"
    closing = Load(load.url, 100, 2, 5, keepalive=False)
    assert argv("wrk", closing)[-3:] == ["-H", "Connection: close", load.url]
    with pytest.raises(GauntletError, match="h2load's duration mode"):
        argv("h2load", closing)


def test_http2_goes_to_h2load_alone_with_the_same_streams() -> None:
    load = Load("https://127.0.0.1:8443/webtest.html", connections=100, threads=2, duration_s=5, http2_streams=10)
    assert argv("h2load", load) == ["h2load", "-m10", "-t2", "-c100", "-D5", load.url]
    plan = json.loads(argv(ENGINE, load)[3])
    assert (plan["http_version"], plan["streams_per_connection"]) == ("2", 10)
    with pytest.raises(GauntletError, match="wrk speaks HTTP/1.1 only"):
        argv("wrk", load)


def test_calibrate_http2_against_h2load_on_nginx_over_https(tmp_path: Path) -> None:
    require_installed("h2load", installed_peers(http2=True) == ["h2load"], "apt-get install nghttp2-client")
    require_available(ServerSpec("nginx"))
    out = tmp_path / "calibration.json"
    done = run_cli(
        "calibrate", "--http2", "--streams", "10", "--rounds", "1", "-d", "1s", "-c", "10", "--json", out, "--no-store",
        timeout_s=120,
    )
    assert done.code == 0, done.stderr
    found = json.loads(out.read_text())
    assert found["load"]["http2_streams"] == 10 and found["load"]["url"].startswith("https://127.0.0.1:")
    assert "nginx server on https://127.0.0.1:" in done.stderr
    assert set(found["ratios"]) == {"h2load"} and len(found["samples"]) == 2
    for tool in (ENGINE, "h2load"):
        figures = found["tools"][tool]
        assert figures["requests_per_s"] > 0 and figures["errors"] == 0 and figures["server_cpu_us_per_request"] > 0
    assert all(math.isfinite(ratio) and ratio > 0 for ratio in found["ratios"]["h2load"].values())


def sample(tool: str, round_: int, requests_per_s: float, client_cpu_s: float) -> Sample:
    return Sample(tool, round_, int(requests_per_s), 0, requests_per_s, client_cpu_s, None)


def test_ratios_are_medians_of_per_round_ratios() -> None:
    """Round 2 is slow for both tools: the within-round ratio is steady, the raw medians are not."""
    samples = [
        sample(ENGINE, 0, 100.0, 1.0), sample("wrk", 0, 80.0, 1.0),
        sample(ENGINE, 1, 50.0, 1.0), sample("wrk", 1, 40.0, 1.0),
        sample(ENGINE, 2, 90.0, 1.0), sample("wrk", 2, 100.0, 1.0),
    ]
    assert median_ratio(samples, ENGINE, "wrk", lambda s: s.requests_per_s) == pytest.approx(1.25)
    assert median_ratio(samples, ENGINE, "wrk", lambda s: s.client_us_per_request) == pytest.approx(0.8)


def test_calibrate_against_the_builtin_server_gives_a_finite_ratio_per_peer(tmp_path: Path) -> None:
    peers = installed_peers()
    require_installed("wrk or h2load", bool(peers), "apt-get install wrk nghttp2-client")
    out = tmp_path / "calibration.json"
    db = tmp_path / "results.db"
    done = run_cli("calibrate", "--rounds", "1", "-d", "1s", "-c", "10", "--json", out, "--db", db, timeout_s=120)
    assert done.code == 0, done.stderr
    found = json.loads(out.read_text())
    with Store.open(db, create=False) as store:
        (run,) = store.runs()
    assert (run.suite, run.status, run.options["ratios"]) == ("calibrate", "complete", found["ratios"])
    assert run.environment["tools"] == found["environment"]["tools"]
    assert set(found["ratios"]) == set(peers)
    for ratios in found["ratios"].values():
        for ratio in ratios.values():
            assert math.isfinite(ratio) and ratio > 0
    for tool in (ENGINE, *peers):
        figures = found["tools"][tool]
        assert figures["requests_per_s"] > 0 and figures["errors"] == 0
        assert figures["client_cpu_us_per_request"] > 0 and figures["server_cpu_us_per_request"] > 0
    assert len(found["samples"]) == 1 + len(peers)
    assert found["environment"]["tools"]["wrk"] is not None or "wrk" not in peers
    assert "ratios: gauntlet / tool within each round" in " ".join(done.stdout.split())


def test_calibrate_on_https_pins_every_tool_to_the_suite_wrk_agrees_on(tmp_path: Path) -> None:
    """wrk speaks OpenSSL's default order (AES-256 first), the engine AES-128 first: the suite
    `openssl s_client` (OpenSSL's defaults, as wrk) agrees on is the one the engine then speaks."""
    from gauntlet.servers.builtin import start_builtin
    from gauntlet.servers.tls_pin import SUITES

    require_installed("wrk", "wrk" in installed_peers(), "apt-get install wrk")
    out = tmp_path / "calibration.json"
    with start_builtin(tls=True) as server:
        address = server.url.removeprefix("https://").rstrip("/")
        probe = subprocess.run(
            ["openssl", "s_client", "-connect", address], input="", capture_output=True, text=True, timeout=30, check=False
        )
        openssl_name = probe.stdout.split("Cipher is ", 1)[1].split()[0]
        (wrk_suite,) = [suite.iana for suite in SUITES.values() if suite.openssl == openssl_name]
        url = f"{server.url}webtest.html"
        done = run_cli("calibrate", url, "--rounds", "1", "-d", "1s", "-c", "4", "--json", out, "--no-store", timeout_s=120)
        engine = subprocess.run(
            argv(ENGINE, Load(url, connections=1, threads=1, duration_s=1, cipher=wrk_suite)),
            capture_output=True, text=True, timeout=60, check=True,
        )
    assert done.code == 0, done.stderr
    assert json.loads(out.read_text())["load"]["cipher"] == wrk_suite
    assert f"every tool on {wrk_suite}" in " ".join(done.stdout.split())
    negotiated = json.loads(engine.stdout)["negotiated"]["tls_cipher"]
    assert negotiated.replace("TLS13_", "TLS_", 1) == wrk_suite


def test_calibrate_without_any_peer_says_what_to_install() -> None:
    done = subprocess.run(
        [*GAUNTLET, "calibrate", "--rounds", "1", "-d", "1s"],
        capture_output=True, text=True, timeout=60, check=False, env={**os.environ, "PATH": "/nonexistent"},
    )
    assert done.returncode == 2
    assert done.stderr == (
        "gauntlet: error: no peer load generator is installed (wrk, h2load). "
        "Install one: apt-get install wrk nghttp2-client\n"
    )


def test_the_engines_warm_up_cpu_comes_off_its_client_cpu(builtin_server: ServerInstance) -> None:
    """What is left of the child's CPU is at least the measured interval's load-thread CPU (the
    child ran those threads) and not much more (the interpreter's start-up, about 0.07 s)."""
    load = Load(f"{builtin_server.url}webtest.html", connections=10, threads=2, duration_s=1)
    before_s = children_cpu_s()
    done = subprocess.run(argv(ENGINE, load), capture_output=True, text=True, timeout=60, check=True)
    child_s = children_cpu_s() - before_s
    result = json.loads(done.stdout)
    measured_s = result["client"]["cpu_us_per_request"] * (result["responses"] + result["errors_total"]) / 1e6
    client_s, server_s = without_warmup(done.stdout, child_s, 2.0)
    assert measured_s - 1e-3 <= client_s <= measured_s + 0.5, (client_s, measured_s, child_s)
    assert client_s < child_s and server_s == pytest.approx(1.0, rel=0.01), "the server's CPU: 1 s measured of 2"
    assert without_warmup('{"responses": 5, "errors_total": 0, "requests_per_s": 5.0}', 1.5, None) == (1.5, None), "the floor's report"
