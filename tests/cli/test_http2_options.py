"""--http2 and --streams as the engine plan carries them (the refusals are in test_errors.py)."""

from __future__ import annotations

from gauntlet.cli.load_options import LoadOptions

URL = "https://127.0.0.1:1/"


def test_http2_and_its_streams_reach_the_plan() -> None:
    plan = LoadOptions(http2=True, streams=10).plan(URL).engine_json()
    assert (plan["http_version"], plan["streams_per_connection"]) == ("2", 10)
    default = LoadOptions(http2=True).plan(URL).engine_json()
    assert default["http_version"] == "2" and "streams_per_connection" not in default, "the engine's default: 1"
    http1 = LoadOptions().plan(URL).engine_json()
    assert "http_version" not in http1 and "streams_per_connection" not in http1
