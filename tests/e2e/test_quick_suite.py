"""The main job end to end: `gauntlet suite run quick --quick` on every installed server, the store
holding exactly the expected cases, the report made from the store alone and drawn in Chromium;
a suite killed with SIGKILL keeps its finished cases and `--resume` measures the rest."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from gauntlet.model.record import case_key
from gauntlet.lab.suite import prepare, new_options
from gauntlet.servers.pids import wait_gone
from gauntlet.store import Store
from gauntlet.suite.load import load_suite
from tests.helpers.browser import charts_drawn, headless_chromium, open_report, screenshot
from tests.helpers.cli_process import GAUNTLET, Finished, run_cli

SUITE_TIMEOUT_S = 1200


def expected_keys(servers: list[str] | None = None) -> set[tuple[str, int]]:
    """(key, repeat) of every case the quick variant runs on the installed servers."""
    loaded = load_suite("quick", quick=True)
    prepared = prepare(loaded, new_options(loaded, servers, None, False), {})
    cases = [case for block in prepared.agenda.blocks for case in block.cases]
    return {(case_key(case.params), repeat) for case in cases for repeat in range(prepared.agenda.repeats)}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Finished]:
    tmp = tmp_path_factory.mktemp("quick")
    db, report = tmp / "results.db", tmp / "report.html"
    done = run_cli("suite", "run", "quick", "--quick", "--db", db, "-o", report, timeout_s=SUITE_TIMEOUT_S)
    return db, report, done


def test_the_store_holds_exactly_the_quick_suites_cases(quick_run: tuple[Path, Path, Finished]) -> None:
    db, report, done = quick_run
    assert done.code == 0, done.stderr[-3000:]
    with Store.open(db, create=False) as store:
        (run,) = store.runs()
        cases = store.cases([run.run_id])
    assert (run.suite, run.status) == ("quick", "complete")
    assert {(case.key, case.repeat) for case in cases} == expected_keys()
    failed = [(case.params, case.error) for case in cases if case.status != "ok"]
    assert failed == []
    for case in cases:
        result = case.result
        assert result["responses"] > 0 and result["errors_total"] <= 0.01 * result["requests"], case.params
        assert result["server"]["memory"], "the monitor watched every server"
        assert case.server_version and case.config_text
    assert sum(case.result["server"]["cpu_us_per_request"] for case in cases) > 0
    assert run.environment["servers"]["builtin"], "the run keeps the machine it ran on"
    assert report.exists() and f"report: {report}" in done.stdout


def test_the_report_is_made_from_the_store_alone_and_draws(quick_run: tuple[Path, Path, Finished], tmp_path: Path) -> None:
    db, _, done = quick_run
    assert done.code == 0
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    out = tmp_path / "report.html"
    assert run_cli("report", "-o", out, "--db", copy, timeout_s=120).code == 0
    with headless_chromium() as browser:
        page = open_report(browser, out)
        assert charts_drawn(page) >= 2
        text = page.inner_text("body")
        assert "builtin, keep-alive, ST-1" in text
        with Store.open(copy, create=False) as store:
            kinds = {case.params["server"] for case in store.cases([store.latest_run_id()])}
        assert all(f"{kind}, no keep-alive, ST-3" in text for kind in kinds), kinds
        screenshot(page, "quick-report.png")
        page.close()


def _stored_cases(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM cases").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


@pytest.fixture
def killed_suite(tmp_path: Path) -> Iterator[tuple[Path, list[Any]]]:
    """A quick suite on the built-in server, SIGKILLed once two cases are stored; whatever the guards
    of its servers left running is ended by pid afterwards."""
    db = tmp_path / "results.db"
    proc = subprocess.Popen([*GAUNTLET, "suite", "run", "quick", "--quick", "--servers", "builtin", "--db", str(db),
                             "-o", str(tmp_path / "report.html")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 120
        while _stored_cases(db) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        children = psutil.Process(proc.pid).children(recursive=True)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        yield db, children
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for child in children:
            if child.is_running():
                child.kill()


def test_sigkill_keeps_the_finished_cases_and_resume_measures_the_rest(killed_suite: tuple[Path, list[Any]]) -> None:
    db, children = killed_suite
    assert not (left := wait_gone(children, 10.0)), f"the server's guard did not end {left}"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with Store.open(db, create=False) as store:
        (run,) = store.runs()
        kept = {(case.key, case.repeat) for case in store.cases([run.run_id]) if case.status == "ok"}
    expected = expected_keys(["builtin"])
    assert run.status == "running", "killed: nobody marked it"
    assert 2 <= len(kept) < len(expected) and kept <= expected
    done = run_cli("suite", "run", "--resume", str(run.run_id), "--db", db, "-o", db.parent / "resumed.html",
                   timeout_s=SUITE_TIMEOUT_S)
    assert done.code == 0, done.stderr[-3000:]
    assert f"{len(expected) - len(kept)} cases" in done.stderr
    with Store.open(db, create=False) as store:
        cases = store.cases([run.run_id])
        assert store.run(run.run_id).status == "complete"
    assert {(case.key, case.repeat) for case in cases} == expected and len(cases) == len(expected)
