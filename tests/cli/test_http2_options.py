"""--http2 and --streams as the engine plan carries them, and `gauntlet run` over HTTP/2 on a server
it starts (the refusals are in test_errors.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gauntlet.cli.load_options import LoadOptions
from gauntlet.model.case import plan_params
from gauntlet.servers.builtin import start_builtin
from gauntlet.servers.spec import ServerSpec
from tests.conftest import require_available
from tests.cli.test_errors import assert_one_line_error
from tests.helpers.cli_process import run_cli

URL = "https://127.0.0.1:1/"


def test_http2_and_its_streams_reach_the_plan() -> None:
    plan = LoadOptions(http2=True, streams=10).plan(URL).engine_json()
    assert (plan["http_version"], plan["streams_per_connection"]) == ("2", 10)
    default = LoadOptions(http2=True).plan(URL).engine_json()
    assert default["http_version"] == "2" and "streams_per_connection" not in default, "the engine's default: 1"
    http1 = LoadOptions().plan(URL).engine_json()
    assert "http_version" not in http1 and "streams_per_connection" not in http1
    # The case's identity: `--http2` is `--http2 --streams 1`; HTTP/1.1 has no streams.
    streams = [plan_params(LoadOptions(http2=True, streams=n).plan(URL), "closed").get("streams") for n in (None, 1, 10)]
    assert streams == [1, 1, 10] and "streams" not in plan_params(LoadOptions().plan(URL), "closed")


def test_run_starts_a_server_that_serves_http2_and_says_what_it_spoke(tmp_path: Path) -> None:
    require_available(ServerSpec("nginx"))
    out = tmp_path / "result.json"
    done = run_cli(
        "run", "--server", "nginx", "--https", "--http2", "--streams", "10", "-n", "2000", "-c", "4", "-t", "1",
        "--json", out, "--no-store", timeout_s=60,
    )
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["negotiated"]["protocol"] == "h2" and result["negotiated"]["streams_per_connection"] == 10
    assert (result["responses"], result["errors_total"]) == (2000, 0)
    assert f"h2, 10 streams/conn, TLS {result['negotiated']['tls_version']} " in done.stdout


@pytest.mark.parametrize("tls", [False, True], ids=["h2c", "h2"])
def test_http2_at_a_url_that_cannot_is_refused_before_the_load(tls: bool) -> None:
    with start_builtin(tls=tls) as server:
        done = run_cli("run", f"{server.url}webtest.html", "--http2", "-n", "10", "-c", "1", "--no-store", timeout_s=30)
    why = "its TLS handshake chose no h2 through ALPN" if tls else "it did not answer the HTTP/2 preface with SETTINGS (h2c, prior knowledge)"
    assert_one_line_error(done, f"does not speak HTTP/2: {why}. Leave --http2 out")


def test_run_load_speaks_http2_with_two_streams_a_user(tmp_path: Path) -> None:
    require_available(ServerSpec("nginx"))
    load, out = tmp_path / "shop.yaml", tmp_path / "result.json"
    load.write_text(
        "sessions:\n  - name: shop\n    think: 20ms\n"
        "    pages: [{name: home, path: /webtest.html, embedded: [/image_small.gif, /image_10k.png]}, {name: more, path: /}]\n"
        "users: 2\nmeasure: 1s\n"
    )
    done = run_cli("run", "--load", load, "--server", "nginx", "--https", "--http2", "--json", out, "--no-store", timeout_s=60)
    assert done.code == 0, done.stderr
    result = json.loads(out.read_text())
    assert (result["negotiated"]["protocol"], result["negotiated"]["streams_per_connection"]) == ("h2", 2)
    assert result["errors_total"] == 0 and result["sessions"]["pages"]["home"]["count"] >= 10
    assert result["connections_opened"] == 2, "one connection a user"
