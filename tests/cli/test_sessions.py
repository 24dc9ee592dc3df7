"""`gauntlet run --load` and `gauntlet capacity` against the built-in server."""

from __future__ import annotations

import json
from pathlib import Path

from gauntlet.servers.base import ServerInstance
from tests.helpers.cli_process import run_cli

TWO_PAGES = """\
sessions:
  - name: browse
    think: 50ms
    pages:
      - {name: home, path: /webtest.html, embedded: [/image_small.gif, /image_10k.png]}
      - {name: hello, path: /hello}
users: 4
if_modified_since: 0.5
warm_up: 200ms
measure: 1s
"""

#: Each user keeps one connection open; the server holds each page 40 ms per open connection,
#: so n users see pages of 40 n ms and a little more. GOOD is under 400 ms: 9 users are valid with
#: 40 ms to spare for the machine's jitter, and 10 users are not.
SLOWER_WITH_EACH_USER = """\
sessions:
  - name: wait
    pages: [{{name: slow, path: '/hello?delay_per_connection_ms=40'}}]
users: 1
warm_up: {warm_up}
measure: {measure}
qos: {{good: 400ms, tolerable: 10s}}
"""


def test_run_load_prints_pages_and_the_verdict(builtin_server: ServerInstance, tmp_path: Path) -> None:
    load = tmp_path / "load.yaml"
    load.write_text(TWO_PAGES)
    out = tmp_path / "result.json"
    done = run_cli("run", "--load", load, builtin_server.url, "--json", out)
    assert done.code == 0, done.stderr
    assert "QoS: VALID" in done.stdout and "home" in done.stdout and "hello" in done.stdout
    result = json.loads(out.read_text())
    pages = result["sessions"]["pages"]
    assert pages["home"]["count"] > 10 and abs(pages["home"]["count"] - pages["hello"]["count"]) <= 4
    assert result["sessions"]["not_modified"] > 0
    assert result["status_codes"]["304"] == result["sessions"]["not_modified"]


def test_bad_load_file_fails_before_any_load(tmp_path: Path) -> None:
    load = tmp_path / "load.yaml"
    load.write_text(TWO_PAGES.replace("think: 50ms", "think: 50"))
    done = run_cli("run", "--load", load, "http://127.0.0.1:1/")
    assert done.code == 2
    assert done.stderr == f"gauntlet: error: {load}:3: sessions.0.think: 50 has no unit: write it as 500ms, 5s, 30m or 1h. Fix that field (docs/load-files.md)\n"


def test_capacity_brackets_the_known_answer(builtin_server: ServerInstance, tmp_path: Path) -> None:
    """9 users are valid and 10 are not (SLOWER_WITH_EACH_USER)."""
    load = tmp_path / "load.yaml"
    load.write_text(SLOWER_WITH_EACH_USER.format(warm_up="500ms", measure="2s"))
    out = tmp_path / "capacity.json"
    done = run_cli("capacity", load, builtin_server.url, "--start", "4", "--max-probes", "10", "--json", out, timeout_s=120)
    assert done.code == 0, done.stderr
    answer = json.loads(out.read_text())
    assert answer["capacity"] == {"users": 9, "first_invalid": 10}, [(p["users"], p["valid"]) for p in answer["probes"]]
    assert "capacity: 9 simultaneous sessions" in done.stdout


def test_capacity_probes_carry_their_bottleneck(builtin_server: ServerInstance, tmp_path: Path) -> None:
    """Every reply is a 500: the one probe fails QoS, and its line and stored result say error-bound."""
    load = tmp_path / "load.yaml"
    load.write_text(
        "sessions:\n"
        "  - name: failing\n"
        "    pages: [{name: broken, path: '/hello?status=500'}]\n"
        "users: 2\n"
        "warm_up: 100ms\n"
        "measure: 500ms\n"
    )
    out = tmp_path / "capacity.json"
    done = run_cli("capacity", load, builtin_server.url, "--start", "2", "--max-probes", "1", "--json", out, timeout_s=60)
    assert done.code == 0, done.stderr
    [probe] = json.loads(out.read_text())["probes"]
    assert probe["valid"] is False
    assert "error-bound" in probe["result"]["bottleneck"]["labels"]
    assert "invalid" in done.stdout and "error-bound" in done.stdout


def test_capacity_warms_the_server_up_before_its_first_probe(builtin_server: ServerInstance, tmp_path: Path) -> None:
    """`--warm-up` runs the start level once, unmeasured, and the first probe carries its summary."""
    load = tmp_path / "load.yaml"
    load.write_text(SLOWER_WITH_EACH_USER.format(warm_up="100ms", measure="600ms"))
    out = tmp_path / "capacity.json"
    args = ("capacity", load, builtin_server.url, "--start", "9", "--max-probes", "1", "--warm-up", "800ms", "--json", out)
    done = run_cli(*args, timeout_s=120)
    assert done.code == 0, done.stderr
    assert "warm-up: 9 users for 0.8 s, not measured" in done.stderr
    first, *others = json.loads(out.read_text())["probes"]
    warm_up = first["result"]["warm_up"]
    assert warm_up["users"] == 9 and warm_up["duration_s"] >= 0.8 and warm_up["pages"] > 9
    assert others and all("warm_up" not in probe["result"] for probe in others)
