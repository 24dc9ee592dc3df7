"""`gauntlet suite run` with repeats (every repeat stored, their interval in the report) and with the
load spread over Dask agents (every case's result carries its agents)."""

from __future__ import annotations

import re
from pathlib import Path

from gauntlet.store import Store
from tests.helpers.cli_process import run_cli

SUITE = """\
name: tiny
servers: [builtin]
defaults: {threads: 1}
groups:
  - name: static
    workload: [ST-1, ST-2]
    connections: [2]
    requests: 600
"""


def suite_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(SUITE)
    return path


def test_repeats_are_all_stored_and_the_report_shows_their_interval(tmp_path: Path) -> None:
    db, report = tmp_path / "results.db", tmp_path / "report.html"
    done = run_cli("suite", "run", suite_file(tmp_path), "--repeat", "3", "--restart-between", "--db", db, "-o", report,
                   timeout_s=300)
    assert done.code == 0, done.stderr
    with Store.open(db, create=False) as store:
        (run,) = store.runs()
        cases = store.cases([run.run_id])
    assert sorted((case.params["workload"], case.repeat) for case in cases) == [
        (workload, repeat) for workload in ("ST-1", "ST-2") for repeat in range(3)
    ]
    assert run.options["restart_every"] == 1 and all(case.result["responses"] == 600 for case in cases)
    html = report.read_text()
    assert "<th>repeats</th>" in html and "<th>95 %</th>" in html
    assert len(re.findall(r"<td[^>]*>3</td>", html)) >= 2, "each case shows its 3 repeats"


def test_a_suite_over_two_agents_keeps_each_agents_figures(tmp_path: Path) -> None:
    db = tmp_path / "results.db"
    done = run_cli("suite", "run", suite_file(tmp_path), "--agents", "2", "--db", db, "-o", tmp_path / "report.html",
                   timeout_s=300)
    assert done.code == 0, done.stderr
    with Store.open(db, create=False) as store:
        cases = store.cases([store.latest_run_id()])
    assert len(cases) == 2
    for case in cases:
        agents = case.result["agents"]
        assert [agent["state"] for agent in agents] == ["completed", "completed"]
        assert sum(agent["requests"] for agent in agents) == case.result["requests"] == 600
        assert case.result["server"]["memory"], "the server and its monitor stay with the controller"
