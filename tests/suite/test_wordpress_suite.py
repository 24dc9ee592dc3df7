"""The wordpress suite: the thesis's arrival phases in three lengths, each server path a case of its
own, and the load scaled by its busiest phase for a capacity search (run against a real server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gauntlet.errors import GauntletError
from gauntlet.model import loadfile
from gauntlet.servers.base import ServerInstance
from gauntlet.suite.expand import expand
from gauntlet.suite.load import load_suite
from tests.helpers.cli_process import run_cli

KINDS = ["nginx", "lighttpd", "apache-prefork", "apache-event"]
THESIS = [(100, 1_800_000_000), (450, 600_000_000), (200, 1_200_000_000)]


def phases_of(quick: bool = False, full: bool = False) -> dict[str, list[tuple[float, int]]]:
    """Each server's phases (users/s, µs) and the backend it runs PHP through, as the suite expands."""
    loaded = load_suite("wordpress", quick, full)
    cases = [case for block in expand(loaded.suite, KINDS, loaded.path.parent) for case in block.cases]
    found = {}
    for case in cases:
        assert case.sessions is not None and case.sessions.users is None and case.sessions.capacity_start is None
        phases = case.sessions.load.phases or []
        found[f"{case.params['server']} {case.params['backend']}"] = [(p.users_per_s, p.duration) for p in phases]
    return found


def test_four_paths_in_three_lengths() -> None:
    default, quick, full = phases_of(), phases_of(quick=True), phases_of(full=True)
    assert sorted(default) == ["apache-event php-fpm", "apache-prefork mod_php", "lighttpd php-fpm", "nginx php-fpm"]
    # Rates / 10 and durations / 30 by default, / 120 with --quick; --full is the thesis's hour.
    assert set(map(tuple, full.values())) == {tuple(THESIS)}
    assert set(map(tuple, default.values())) == {tuple((r / 10, d // 30) for r, d in THESIS)}
    assert set(map(tuple, quick.values())) == {tuple((r / 10, d // 120) for r, d in THESIS)}


def test_each_case_is_named_by_its_phases() -> None:
    loaded = load_suite("wordpress")
    case = expand(loaded.suite, ["nginx"], loaded.path.parent)[0].cases[0]
    assert case.params["phases"] == "10/s for 60s, 45/s for 20s, 20/s for 40s"
    assert (case.params["workers"], case.params["backend_workers"], case.params["model"]) == (2, 4, "sessions")
    assert case.params["keepalive_timeout_s"] == 15, "longer than the 5 s think time"


def test_one_variant_at_a_time() -> None:
    with pytest.raises(GauntletError, match="two variants"):
        load_suite("wordpress", quick=True, full=True)


def test_a_level_scales_every_phase_by_the_busiest_one() -> None:
    load = loadfile.load(loadfile.find("thesis-wordpress", Path(".")))
    assert load.level_name == "peak_users_per_s"
    scaled = load.at_level(90)
    assert [p.users_per_s for p in scaled.phases or []] == [20, 90, 40]
    assert [p.duration for p in scaled.phases or []] == [d for _, d in THESIS]


def test_capacity_over_phases_probes_the_peak_rate(builtin_server: ServerInstance, tmp_path: Path) -> None:
    """Two probes against the built-in server, the second at the ceiling (max_users): every probe's
    plan carries the phases scaled by its level, and each is judged phase by phase."""
    load = tmp_path / "phases.yaml"
    load.write_text(
        "sessions: [{name: r, think: 100ms, pages: [{name: home, path: /webtest.html}, {name: post, path: /image_small.gif}]}]\n"
        "phases: [{users_per_s: 5, duration: 1s}, {users_per_s: 20, duration: 1s}]\nmax_users: 40\n"
    )
    out = tmp_path / "capacity.json"
    done = run_cli("capacity", load, builtin_server.url, "--start", "20", "--max-probes", "2", "--json", out, timeout_s=60)
    assert done.code == 0, done.stderr
    answer = json.loads(out.read_text())
    assert [p["peak_users_per_s"] for p in answer["probes"]] == [20, 40]
    for probe in answer["probes"]:
        phases = probe["result"]["sessions"]["phases"]
        assert [p["users_per_s"] for p in phases] == [probe["peak_users_per_s"] / 4, probe["peak_users_per_s"]]
        assert probe["valid"] and all(p["users_arrived"] > 0 for p in phases)
    assert answer["capacity"] == {"peak_users_per_s": 40, "first_invalid": None}
    assert "new users/s at the peak" in done.stdout and "max_users held" in " ".join(done.stdout.split())
