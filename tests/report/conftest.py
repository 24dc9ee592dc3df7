"""A small study measured once per session against the built-in server and stored in a real SQLite
file: the report, export and compare tests read it back."""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from gauntlet.analysis.bottleneck import failed_requests
from gauntlet.model.record import CaseRecord
from gauntlet.report.points import GridPoint, grid_points
from gauntlet.servers.builtin import start_builtin
from gauntlet.store import Store
from tests.conftest import Started
from tests.helpers.measured import SLOW_PAGE_LOAD, load_case, sessions_case

#: Strings a server or a suite could hand over; nothing in the report may run or render them as markup.
HOSTILE_SERVER = "<img src=x onerror=window.__pwned=1><b>nginx</b>"
HOSTILE_SCRIPT = "</pre></details><script>window.__pwned=2</script>[red]rich markup[/red]"


def environment() -> dict[str, object]:
    """What this machine is, in the shape host.snapshot() gives (nested dicts of plain values)."""
    model = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
         if line.startswith("model name")),
        platform.machine(),
    )
    return {
        "cpu": {"model": model, "cores": os.cpu_count()},
        "kernel": platform.release(),
        "python": platform.python_version(),
        "note": HOSTILE_SCRIPT,
    }


def clean(case: CaseRecord) -> CaseRecord:
    """A case the views take for one without failed requests (no errors chart for its group); when
    one failed, the errors and status codes say how."""
    assert case.result is not None, case.error
    assert failed_requests(case.result) == 0, (
        f"{case.key}: requests failed on the built-in server: {case.result['errors']}, {case.result['status_codes']}"
    )
    return case


def study_cases(tmp: Path) -> Iterator[CaseRecord]:
    """Every view's data: concurrency and keep-alive (2 repeats), a file size, worker scaling, HTTPS
    (with timelines), requests that fail, sessions at a valid and an invalid level, a case that failed,
    hostile strings."""
    started = Started()
    try:
        two = started.add(start_builtin(threads=2))
        for connections in (1, 4, 16):
            for keepalive in (True, False):
                for repeat in (0, 1):
                    params = {"group": "static", "workers": 2, "path": "/webtest.html", "keepalive": keepalive,
                              "connections": connections}
                    yield clean(load_case(two, params, repeat=repeat))
        for connections in (1, 4):
            params = {"group": "static", "workers": 2, "path": "/image_large.jpg", "keepalive": True, "connections": connections}
            yield clean(load_case(two, params))
        one = started.add(start_builtin(threads=1))
        # The verdict's reason needs the server's CPU per request, measured over 0.5 s at least
        # (stats.MIN_CPU_WINDOW_S); the latency distribution up to its p99, 1,000 responses (the
        # built-in server answers tens of thousands a second); under a second, no timeline chart.
        for server, workers in ((one, 1), (two, 2)):
            params = {"group": "worker-scaling", "workers": workers, "path": "/webtest.html", "connections": 8}
            yield load_case(server, params, measure_s=0.8)
        tls = started.add(start_builtin(threads=2, tls=True))
        for server in (two, tls):  # long enough for a timeline of three seconds
            params = {"group": "https", "workers": 2, "path": "/webtest.html", "connections": 4}
            yield load_case(server, params, measure_s=2.2)
        for connections in (1, 4):  # every request reset by the server: the failed-requests view
            yield load_case(two, {"group": "faults", "fault": "reset", "connections": connections}, query="?reset=1")
        load = tmp / "slow.yaml"
        load.write_text(SLOW_PAGE_LOAD)
        for users in (2, 30):
            yield sessions_case(two, load, users, {"group": "capacity", "workers": 2})
        for connections in (2, 8):
            case = load_case(two, {"group": "hostile", "path": "/webtest.html", "connections": connections})
            case.params["server"] = HOSTILE_SERVER
            case.config_text = HOSTILE_SCRIPT
            case.labels = [HOSTILE_SCRIPT]
            yield case
        yield CaseRecord(
            params={"group": "hostile", "server": HOSTILE_SERVER, "path": "/webtest.html", "connections": 32},
            config_text=HOSTILE_SCRIPT, error=f"the server did not start: {HOSTILE_SCRIPT}",
        )
    finally:
        started.stop_all_and_check()


@pytest.fixture(scope="session")
def study_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """(database path, run id) of the study; tests must not write to it."""
    tmp = tmp_path_factory.mktemp("study")
    path = tmp / "results.db"
    with Store.open(path) as store:
        run_id = store.begin_run(suite="study", suite_text="servers: [builtin]\n", options={"quick": True},
                                 environment=environment(), planned_cases=25)
        for case in list(study_cases(tmp)):
            store.add_case(run_id, case)
        store.end_run(run_id, "complete")
    return path, run_id


#: The studies' cases (tests/report/test_study_views.py), measured once and kept; removed, they are measured again.
CASES_FILE = Path(__file__).parent / "golden" / "study-cases.json"


def measured_study() -> Iterator[CaseRecord]:
    """Two servers (the built-in one on one thread and on two) through each study in miniature:
    a rate sweep with two repeats; a concurrency sweep without keep-alive whose top level fails
    (timeouts on one server, resets on the other); a soak of 2.5 s."""
    started = Started()
    try:
        servers = {1: started.add(start_builtin(threads=1)), 2: started.add(start_builtin(threads=2))}
        for workers, server in servers.items():
            for rate in (200, 400):
                for repeat in (0, 1):
                    params = {"group": "rate-sweep", "workers": workers, "model": "rate", "rate_per_s": rate, "connections": 8}
                    yield load_case(server, params, repeat=repeat, measure_s=0.6)
        faults = {1: "?delay_ms=200", 2: "?reset=1"}
        for workers, server in servers.items():
            for connections, query in ((2, ""), (4, ""), (6, faults[workers])):
                params = {"group": "concurrency", "workers": workers, "keepalive": False, "connections": connections,
                          "timeout_s": 0.1}
                yield load_case(server, params, query=query, measure_s=0.6)
        for workers, server in servers.items():
            yield load_case(server, {"group": "soak", "workers": workers, "connections": 4}, measure_s=2.5)
    finally:
        started.stop_all_and_check()


@pytest.fixture(scope="module")
def study_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """(database, run id) of the captured cases, stored."""
    if not CASES_FILE.exists():
        CASES_FILE.write_text(json.dumps([asdict(record) for record in measured_study()], indent=1) + "\n")
    records = [CaseRecord(**case) for case in json.loads(CASES_FILE.read_text())]
    path = tmp_path_factory.mktemp("studies") / "results.db"
    with Store.open(path) as store:
        run_id = store.begin_run(suite="studies", suite_text=None, options={}, environment={}, planned_cases=len(records))
        for record in records:
            store.add_case(run_id, record)
        store.end_run(run_id, "complete")
    return path, run_id


def grid_points_of(path: Path, run_id: int) -> list[GridPoint]:
    with Store.open(path, create=False) as store:
        return grid_points(store.cases([run_id]))


@pytest.fixture(scope="module")
def points(study_run: tuple[Path, int]) -> list[GridPoint]:
    return grid_points_of(*study_run)
