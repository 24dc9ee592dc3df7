"""The suite runner against real servers: blocks, repeats with restarts, resume, servers that
cannot start, capacity searches that resume from their stored probes."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import psutil
import pytest

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.lab import suite
from gauntlet.lab.suite import Agenda, SuiteRunner
from gauntlet.model.record import CaseRecord, case_key
from gauntlet.servers.spec import ServerSpec
from gauntlet.suite.expand import expand
from gauntlet.suite.load import load_suite
from tests.conftest import require_available
from tests.helpers.loads import per_user_delay_load

SUITE = """\
name: runner
servers: [builtin, lighttpd]
defaults: {threads: 1, connections: 2}
groups:
  - name: static
    servers: [builtin]
    workload: [ST-1, ST-2]
    connections: [1, 4]
    requests: 300
  - name: broken
    servers: [lighttpd]
    workers: 65
    workload: ST-1
    requests: 100
"""

CAPACITY_LOAD = per_user_delay_load(10)


class ListSink:
    """Keeps every record, and the params and the built-in server's pid of each case started (to see restarts)."""

    def __init__(self) -> None:
        self.records: list[CaseRecord] = []
        self.server_pids: list[int] = []
        self.params: list[dict[str, Any]] = []

    def case_started(self, params: dict[str, Any], repeat: int) -> None:
        self.params.append(params)
        servers = [p.pid for p in psutil.Process().children() if "serve" in p.cmdline()]
        self.server_pids.append(servers[0] if servers else 0)

    def progress(self, progress: engine.Progress) -> None:
        pass

    def case_done(self, record: CaseRecord) -> None:
        self.records.append(record)


def agenda(tmp_path: Path, text: str, **settings: Any) -> Agenda:
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    loaded = load_suite(str(path))
    return Agenda(expand(loaded.suite, ["builtin", "lighttpd"], tmp_path), **settings)


def test_repeats_restart_the_server_and_every_case_is_recorded(tmp_path: Path) -> None:
    planned = agenda(tmp_path, SUITE, repeats=3, restart_every=2)
    assert planned.total() == (4 + 1) * 3
    sink = ListSink()
    SuiteRunner(planned, sink).run()
    static = [r for r in sink.records if r.params["group"] == "static"]
    assert len(static) == 12 and all(r.status == "ok" for r in static)
    assert [r.result["responses"] for r in static] == [300] * 12
    assert sum(r.result["server"]["cpu_us_per_request"] for r in static) > 0, "the monitor saw the server work"
    assert [r.repeat for r in static] == [0] * 4 + [1] * 4 + [2] * 4
    assert {r.server_version for r in static} == {"0.1.0"}
    pids = sink.server_pids[:12]
    assert len(set(pids[:8])) == 1 and len(set(pids[8:])) == 1 and pids[0] != pids[8], "restarted after two repeats"


def test_a_server_that_cannot_start_leaves_an_error_record_per_case(tmp_path: Path) -> None:
    require_available(ServerSpec("lighttpd"))  # the error checked is the driver's, not "not installed"
    sink = ListSink()
    SuiteRunner(agenda(tmp_path, SUITE, repeats=2), sink).run()
    broken = [r for r in sink.records if r.params["group"] == "broken"]
    assert [r.repeat for r in broken] == [0, 1]
    assert all(r.result is None and "lighttpd workers must be 1 to 64" in r.error for r in broken)


def test_a_resumed_plan_runs_only_what_is_missing(tmp_path: Path) -> None:
    first = agenda(tmp_path, SUITE)
    cases = [case for block in first.blocks for case in block.cases]
    done = {(case_key(cases[0].params), 0): None, (case_key(cases[2].params), 0): None}
    resumed = agenda(tmp_path, SUITE, done=done)
    assert resumed.total() == first.total() - 2
    sink = ListSink()
    SuiteRunner(resumed, sink).run()
    assert [r.key for r in sink.records] == [case_key(c.params) for i, c in enumerate(cases) if i not in (0, 2)]


def test_a_capacity_search_stores_each_probe_and_resumes_from_them(tmp_path: Path) -> None:
    (tmp_path / "slow.yaml").write_text(CAPACITY_LOAD)
    text = """\
name: capacity
servers: [builtin]
groups:
  - name: search
    model: sessions
    load: slow.yaml
    capacity: {start: 8, max_probes: 4}
"""
    sink = ListSink()
    SuiteRunner(agenda(tmp_path, text), sink).run()
    probes = [(r.params["users"], r.result["qos"]["valid"]) for r in sink.records]
    # Each user waits 10 ms per simultaneous user: 8 users see 80 ms (GOOD), 16 see 160 ms, 32 see 320 ms.
    assert probes[:3] == [(8, True), (16, True), (32, False)] and len(probes) == 4
    assert all(r.params["capacity"] and r.result["sessions"]["pages"]["slow"]["count"] > 0 for r in sink.records)
    stored = {(r.key, r.repeat): r.result["qos"]["valid"] for r in sink.records}
    finished = agenda(tmp_path, text, done=stored)
    assert finished.total() == 0, "a search whose probes are all stored is done"
    partly = dict(list(stored.items())[:2])
    sink_again = ListSink()
    SuiteRunner(agenda(tmp_path, text, done=partly), sink_again).run()
    assert [r.params["users"] for r in sink_again.records] == [users for users, _ in probes[2:]]


def test_a_capacity_search_warms_its_server_up_before_the_first_probe(tmp_path: Path) -> None:
    """The warm-up runs once per server started, before the first probe measured there: its pages
    and the server's CPU per page go with that probe, none with the others; a resumed search on a
    fresh server warms it up again."""
    (tmp_path / "slow.yaml").write_text(CAPACITY_LOAD)
    text = """\
name: warm
servers: [builtin]
groups:
  - name: search
    model: sessions
    load: slow.yaml
    capacity: {start: 8, max_probes: 3, warm_up: 1s}
"""
    sink = ListSink()
    SuiteRunner(agenda(tmp_path, text), sink).run()
    warm_ups = [r.result.get("warm_up") for r in sink.records]
    first = warm_ups[0]
    assert first is not None and warm_ups[1:] == [None] * (len(warm_ups) - 1), warm_ups
    assert first["users"] == 8 and first["pages"] > 0 and first["server_cpu_ms_per_page"] > 0
    assert 0.9 <= first["duration_s"] <= 1.5, "the warm-up run lasts its warm_up"
    stored = {(r.key, r.repeat): r.result["qos"]["valid"] for r in sink.records}
    sink_again = ListSink()
    SuiteRunner(agenda(tmp_path, text, done=dict(list(stored.items())[:1])), sink_again).run()
    assert sink_again.records[0].result.get("warm_up") is not None


BREAKING_SEARCH = """\
name: broken
servers: [builtin]
groups:
  - name: search
    model: sessions
    load: slow.yaml
    capacity: {start: 8, max_probes: 4, warm_up: 1s}
"""


def search_that_breaks_its_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, then: Any = None) -> ListSink:
    """BREAKING_SEARCH with the built-in server frozen (SIGSTOP) after the 32-user probe, as a
    server that collapsed under a level stays up but answers nothing; `then()` runs after it."""
    monkeypatch.setattr(suite, "ANSWER_AFTER_PROBE_S", 1.0)
    (tmp_path / "slow.yaml").write_text(CAPACITY_LOAD)
    sink = ListSink()

    def freeze_after_32(plan_json: str, on_progress: Any) -> engine.RunOutcome:
        outcome = engine.run(plan_json, on_progress)
        if sink.params[-1].get("users") == 32:
            os.kill(sink.server_pids[-1], signal.SIGSTOP)
            if then is not None:
                then()
        return outcome

    SuiteRunner(agenda(tmp_path, BREAKING_SEARCH), sink, freeze_after_32).run()
    return sink


def test_a_capacity_probe_after_one_that_broke_the_server_runs_on_a_server_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe that broke the server says so, and the next level runs on a new server, warmed
    up again, not on the frozen one."""
    sink = search_that_breaks_its_server(tmp_path, monkeypatch)
    assert [p["users"] for p in sink.params] == [8, 16, 32, 24]
    broke, after = sink.records[2], sink.records[3]
    assert broke.result["qos"] == broke.result["qos"] | {"valid": False, "server_answered_after": False}
    assert sink.server_pids[3] != sink.server_pids[2], "the probe after it ran on a new server"
    assert after.result["sessions"]["pages"]["slow"]["count"] > 0 and after.result["errors_total"] == 0
    assert after.result.get("warm_up") is not None, "the new server was warmed up before it was measured"
    assert [r.result["qos"].get("server_answered_after") for r in sink.records[:2]] == [None, None], "valid probes"


def test_a_capacity_search_whose_server_cannot_start_again_stops_and_a_resume_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No level is measured on the broken server: the search ends with an error record that says
    why, and the run is not done (a resume probes the next level)."""

    def cannot_start(spec: ServerSpec) -> None:
        raise GauntletError("builtin cannot start: no port", "free one")

    sink = search_that_breaks_its_server(tmp_path, monkeypatch, lambda: monkeypatch.setattr(suite, "start_server", cannot_start))
    assert [p.get("users") for p in sink.params] == [8, 16, 32, None]
    stopped = sink.records[3]
    assert stopped.result is None
    assert stopped.error == "the capacity search stopped before 24 users: builtin cannot start: no port. free one"
    assert not psutil.pid_exists(sink.server_pids[2]), "the frozen server was stopped"
    probes = {(r.key, r.repeat): r.result["qos"]["valid"] for r in sink.records[:3]}
    assert agenda(tmp_path, BREAKING_SEARCH, done=probes).total() == 1, "the search is not done"


def test_a_dynamic_case_records_its_backend_and_unsupported_pairs_say_why(tmp_path: Path) -> None:
    from gauntlet.servers.registry import availability, combination, kind_of
    from tests.conftest import require_installed

    require_installed("nginx with php-fpm", combination(kind_of("nginx"), "php-fpm").available, "apt-get install nginx php-fpm")
    text = """\
name: php
servers: [nginx]
groups:
  - name: php
    workload: [DT-1]
    backend: [php-fpm, mod_php]
    connections: [2]
    requests: 200
"""
    sink = ListSink()
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    SuiteRunner(Agenda(expand(load_suite(str(path)).suite, ["nginx"], tmp_path)), sink).run()
    fpm, mod_php = sink.records
    assert fpm.result["responses"] == 200 and fpm.result["status_codes"] == {"200": 200}
    assert fpm.server_version.startswith(f"{availability('nginx').version}; php-fpm 8.")
    assert "# ---- php-fpm" in fpm.config_text, "the pool's rendered config is kept with the server's"
    assert mod_php.result is None and "mod_php on nginx is unsupported" in mod_php.error


def test_a_variant_that_shortens_think_times_says_so() -> None:
    """specweb-dynamic's quick variant scales its load files' think times by 0.25; the default does not."""
    for quick, expected in ((True, ["think times x0.25"]), (False, [])):
        loaded = load_suite("specweb-dynamic", quick=quick)
        blocks = expand(loaded.suite, [entry.kind for entry in loaded.suite.servers], loaded.path.parent)
        lines = Agenda(blocks).departures()
        assert [line.split(" of ")[0] for line in lines] == expected, lines
        assert all(c.params.get("think_scale") == (0.25 if quick else None) for b in blocks for c in b.cases)
