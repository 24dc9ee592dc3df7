"""The terminal summary of a stored run: the report's headline tables, read from the store."""

from __future__ import annotations

import shutil
import statistics
from pathlib import Path

from rich.console import Console

from gauntlet.report.points import grid_points
from gauntlet.report.tables import print_summary, worker_count
from gauntlet.servers.base import ServerInstance
from gauntlet.store import Store
from gauntlet.units import format_count
from tests.helpers.cli_process import run_cli
from tests.report.conftest import HOSTILE_SCRIPT


def summary_text(path: Path, run_ids: list[int]) -> str:
    console = Console(record=True, width=300, color_system=None)
    with Store.open(path, create=False) as store:
        print_summary(console, store, *run_ids)
    return console.export_text()


def test_summary_shows_each_case_with_its_figures(study_db: tuple[Path, int]) -> None:
    path, run_id = study_db
    text = summary_text(path, [run_id])
    with Store.open(path, create=False) as store:
        points = grid_points(store.cases([run_id]))
    assert text.startswith(f"run {run_id}: suite study, complete, 25 of 25 cases stored")
    for title in ("Cases", "QoS verdicts", "Capacity", "Cases that did not complete"):
        assert f"\n{title}" in text
    assert "Memory footprint" not in text, "the terminal keeps to the headline tables"
    for point in points:
        rate = point.figure("requests_per_s")
        if rate is not None:
            assert format_count(rate.point) in text
    assert HOSTILE_SCRIPT in text, "stored strings are shown as they are, not read as rich markup"


def test_report_lists_runs_and_summarises_the_latest(study_db: tuple[Path, int], tmp_path: Path) -> None:
    path, run_id = study_db
    out = tmp_path / "latest.html"
    done = run_cli("report", "-o", out, "--db", path, timeout_s=120)
    assert done.code == 0, done.stderr
    assert "Cases" in done.stdout and "QoS verdicts" in done.stdout and out.stat().st_size > 4_000_000


def test_report_list_shows_each_runs_servers_cases_and_requests_per_s(
    study_db: tuple[Path, int], builtin_server: ServerInstance, tmp_path: Path
) -> None:
    """A suite's run and a `gauntlet run` against a URL, each on a line: what measured it, the servers
    or the URL, its cases and its requests/s (the median of each case's repeats; their range)."""
    path, run_id = study_db
    db = tmp_path / "copy.db"
    shutil.copy(path, db)
    url = f"{builtin_server.url}webtest.html"
    assert run_cli("run", url, "-n", "2000", "-c", "2", "--db", db).code == 0
    listed = run_cli("report", "--list", "--db", db)
    assert listed.code == 0, listed.stderr
    lines = listed.stdout.splitlines()
    with Store.open(db, create=False) as store:
        study, command = grid_points(store.cases([run_id])), store.cases([run_id + 1])
    medians = sorted(statistics.median(c.figures["requests_per_s"] for c in p.measured) for p in study if p.measured)
    study_line = next(line for line in lines if line.lstrip().startswith(f"{run_id} "))
    assert "suite study" in study_line and "complete" in study_line and "25 of 25" in study_line, study_line
    assert f"{format_count(medians[0])} to {format_count(medians[-1])}" in study_line and "builtin" in study_line
    (case,) = command
    command_line = next(line for line in lines if line.lstrip().startswith(f"{run_id + 1} "))
    assert "gauntlet run" in command_line and url in command_line and "1 of 1" in command_line, command_line
    assert format_count(case.figures["requests_per_s"]) in command_line


def test_a_summary_piped_to_a_file_keeps_every_column_whole(study_db: tuple[Path, int], tmp_path: Path) -> None:
    """Not a terminal: no 80-column squeeze, so each case's name and labels stay on one line."""
    path, run_id = study_db
    done = run_cli("report", "-o", tmp_path / "r.html", "--db", path, timeout_s=120)
    assert done.code == 0, done.stderr
    with Store.open(path, create=False) as store:
        points = grid_points(store.cases([run_id]))
    lines = done.stdout.splitlines()
    labelled = [p for p in points if p.labels]
    assert labelled, "the study has labelled cases"
    for point in labelled:
        assert any(", ".join(point.labels) in line for line in lines), (point.labels, done.stdout[:2000])
    assert max(len(line) for line in lines) > 80


def test_report_of_an_empty_database_says_so(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    Store.open(path).close()
    done = run_cli("report", "--db", path)
    assert done.code == 2
    assert done.stderr == f"gauntlet: error: '{path}' holds no run yet. Run a suite first (gauntlet suite run quick)\n"
    with Store.open(path) as store:
        run_id = store.begin_run(suite="quick", suite_text=None, options={}, environment={}, planned_cases=3)
    assert summary_text(path, [run_id]).endswith("no case stored yet\n")
    out = tmp_path / "empty.html"
    assert run_cli("report", "-o", out, "--db", path).code == 0
    assert "No chart: the run has no measured case yet." in out.read_text()


def test_the_setup_line_puts_the_worker_unit_in_the_count_s_number() -> None:
    assert worker_count(1, "processes") == "1 process"
    assert worker_count(2, "processes") == "2 processes"
    assert worker_count(1, "threads (GOMAXPROCS)") == "1 thread (GOMAXPROCS)"
    assert worker_count(1, "schedulers") == "1 scheduler"
    assert worker_count(1_000, "threads (at most)") == "1,000 threads (at most)"
