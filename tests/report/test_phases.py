"""The phase view (the thesis's Fig. 4.28 and A.41) from arrival-phase runs stored in a real SQLite
file: its data against the stored runs, its layout against a golden file, and drawn in Chromium."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gauntlet import __version__
from gauntlet.model import loadfile
from gauntlet.lab.case import measure
from gauntlet.analysis.qos import verdict
from gauntlet.model.record import CaseRecord
from gauntlet.report.html import write_report
from gauntlet.report.phases import PANELS, phase_views
from gauntlet.report.points import grid_points
from gauntlet.report.views import phases_table, php_memory_table
from gauntlet.servers.builtin import start_builtin
from gauntlet.store import Store
from gauntlet.units import format_bytes, format_count
from tests.conftest import Started
from tests.helpers.browser import charts_drawn, headless_chromium, open_report, screenshot

GOLDEN = Path(__file__).parent / "golden"
#: Users who fetch two pages 300 ms apart, arriving at 20/s, 60/s, then 30/s.
PHASES_LOAD = """\
sessions:
  - name: reader
    think: 300ms
    pages:
      - {name: home, path: /webtest.html}
      - {name: post, path: '/webtest.html?p=1'}
phases:
  - {users_per_s: 20, duration: 2s}
  - {users_per_s: 60, duration: 1s}
  - {users_per_s: 30, duration: 2s}
max_users: 200
"""
PHASE_BOUNDS_S = [(0.0, 2.0), (2.0, 3.0), (3.0, 5.0)]


def phased_cases(tmp: Path) -> Iterator[CaseRecord]:
    """The load on the built-in server with one thread and with two: two servers of one chart."""
    path = tmp / "phases.yaml"
    path.write_text(PHASES_LOAD)
    load = loadfile.load(path)
    started = Started()
    try:
        for threads in (1, 2):
            server = started.add(start_builtin(threads=threads))
            params = {"group": "phases", "server": "builtin", "workers": threads, "model": "sessions",
                      "load": "phases", "phases": load.phases_text()}
            record = measure(load.to_plan(server.url), server, params, server_version=__version__).record
            assert record.result is not None, record.error
            yield record
    finally:
        started.stop_all_and_check()


def stored_run(path: Path, records: list[CaseRecord]) -> int:
    """The records as one complete run in the SQLite file at `path`; its run id."""
    with Store.open(path) as store:
        run_id = store.begin_run(suite="phases", suite_text=None, options={}, environment={}, planned_cases=len(records))
        for record in records:
            store.add_case(run_id, record)
        store.end_run(run_id, "complete")
    return run_id


@pytest.fixture(scope="module")
def phased_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    tmp = tmp_path_factory.mktemp("phases")
    return tmp / "results.db", stored_run(tmp / "results.db", list(phased_cases(tmp)))


def captured_points(tmp_path: Path) -> list[Any]:
    """The captured case (golden/phases-case.json) stored and read back."""
    captured = json.loads((GOLDEN / "phases-case.json").read_text())
    return stored_points(tmp_path / "results.db", stored_run(tmp_path / "results.db", [CaseRecord(**captured)]))


def stored_points(path: Path, run_id: int) -> list[Any]:
    with Store.open(path, create=False) as store:
        return grid_points(store.cases([run_id]))


def test_the_view_holds_what_the_runs_stored(phased_db: tuple[Path, int]) -> None:
    points = stored_points(*phased_db)
    phases, roles = phase_views(points)
    assert (phases.chart_id, roles.chart_id) == ("phases-1", "phase-roles-1")
    traces = phases.figure["data"]
    assert [t["name"] for t in traces] == ["1 worker"] * len(PANELS) + ["2 workers"] * len(PANELS)
    for point, first in zip(points, (0, len(PANELS)), strict=True):
        result = point.measured[0].result
        sessions, timeline = result["sessions"], result["timeline"]
        arrivals, pages = traces[first], traces[first + 1]
        # Rates per second of each second's span add back up to the run's own counts.
        spans = [s["span_us"] / 1e6 for s in timeline]
        assert round(sum(y * s for y, s in zip(arrivals["y"], spans, strict=True))) == sessions["users_started"] > 40
        measured_pages = sum(page["count"] for page in sessions["pages"].values())
        assert round(sum(y * s for y, s in zip(pages["y"], spans, strict=True))) == measured_pages
        assert sum(p["users_arrived"] for p in sessions["phases"]) == sessions["users_started"]
        cpu, rss = traces[first + 3], traces[first + 4]
        samples = result["server"]["timeline"]
        assert cpu["y"] == [p["cpu_percent"] for p in samples] and rss["y"] == [p["rss_bytes"] / 1e6 for p in samples]
        assert min(rss["y"]) > 1
    shapes = phases.figure["layout"]["shapes"]
    assert [(s["x0"], s["x1"]) for s in shapes] == PHASE_BOUNDS_S
    labels = [a["text"] for a in phases.figure["layout"]["annotations"]]
    assert labels == ["phase 1: 20/s", "phase 2: 60/s", "phase 3: 30/s"]
    assert {t["name"] for t in roles.figure["data"]} == {"1 worker: server", "2 workers: server"}


def skeleton(figure: dict[str, Any]) -> dict[str, Any]:
    """The figure without the measured values: what the golden file fixes."""
    return {
        "layout": figure["layout"],
        "data": [{k: (len(v) if k in ("x", "y") else v) for k, v in trace.items()} for trace in figure["data"]],
    }


def test_data_and_layout_match_the_golden_file(tmp_path: Path) -> None:
    """A stored arrival run (captured from a real one: nginx + PHP-FPM, 3 phases) read back from
    SQLite gives the same figures as the golden file, values included. GAUNTLET_UPDATE_GOLDEN=1
    writes the file anew (review its diff)."""
    points = captured_points(tmp_path)
    figures = {chart.chart_id: {"title": chart.title, "figure": chart.figure} for chart in phase_views(points)}
    golden = GOLDEN / "phases-view.json"
    if os.environ.get("GAUNTLET_UPDATE_GOLDEN") == "1":
        golden.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
        pytest.fail(f"{golden.name} written anew: review its diff, then run without GAUNTLET_UPDATE_GOLDEN")
    expected = json.loads(golden.read_text())
    assert {k: skeleton(v["figure"]) for k, v in figures.items()} == {k: skeleton(v["figure"]) for k, v in expected.items()}
    assert json.loads(json.dumps(figures)) == expected


def test_the_phases_table_says_which_phase_held(phased_db: tuple[Path, int]) -> None:
    points = stored_points(*phased_db)
    table = phases_table(points)
    assert [row[:2] for row in table.rows] == [
        [name, phase] for name in ("1 worker", "2 workers") for phase in ("1: 20/s", "2: 60/s", "3: 30/s")
    ]
    for point, rows in zip(points, (table.rows[:3], table.rows[3:]), strict=True):
        result = point.measured[0].result
        phases = result["sessions"]["phases"]
        assert [row[3] for row in rows] == [format_count(p["users_arrived"]) for p in phases]
        judged = verdict(result["sessions"])
        for k, row in enumerate(rows, 1):
            held = all(p.valid for p in judged.pages if p.name.endswith(f"in phase {k}"))
            assert row[2] == ("held" if held else "BROKE") and row[-1] == "none"


def test_the_php_workers_memory_is_stored_and_shown(tmp_path: Path) -> None:
    """Table A.12 from the captured nginx + PHP-FPM case: the pool's memory per process."""
    captured = json.loads((GOLDEN / "phases-case.json").read_text())
    backend = captured["result"]["server"]["memory"]["backend"]
    assert captured["result"]["server"]["php_role"] == "backend" and backend["processes"] == 3
    points = captured_points(tmp_path)
    assert points[0].measured[0].figures["php_worker_rss_bytes"] == backend["rss_bytes"] // 3
    table = php_memory_table(points)
    assert table.rows == [["nginx", "backend", format_bytes(backend["rss_bytes"] // 3), format_bytes(backend["vm_size_bytes"] // 3)]]


def test_a_run_without_phases_has_no_phase_view(study_db: tuple[Path, int]) -> None:
    assert phase_views(stored_points(*study_db)) == []


def test_chromium_draws_the_phase_view(phased_db: tuple[Path, int], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    with Store.open(phased_db[0], create=False) as store:
        write_report(store, [phased_db[1]], out)
    with headless_chromium() as browser:
        page = open_report(browser, out)
        assert charts_drawn(page) >= 3
        for chart_id in ("phases-1", "phase-roles-1"):
            chart = page.query_selector(f"#{chart_id}")
            bands = chart.evaluate("div => div.querySelectorAll('.layer-below .shapelayer path').length")
            assert bands == len(PHASE_BOUNDS_S), chart_id
        screenshot(page, "report-phases.png")
        page.close()
