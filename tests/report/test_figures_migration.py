"""Migrations 0006 and 0008 (the study's stored cases, figures nulled) fill the new figure columns of cases stored before
them from their result JSON (0008 recomputes the failed share with the stuck unanswered requests): the SQL gives what
gauntlet.store.figures gives for a new case."""

from __future__ import annotations

import sqlite3
from importlib import resources
from pathlib import Path

import pytest

from gauntlet.store import Store

MIGRATIONS = ("0006_every_figure.sql", "0008_unanswered_failed.sql")


def statements() -> list[str]:
    """The migrations' statements in order, comment lines left out."""
    found = []
    for name in MIGRATIONS:
        sql = resources.files("gauntlet.store").joinpath("migrations", name).read_text()
        code = "\n".join(line for line in sql.splitlines() if not line.startswith("--"))
        found.extend(statement.strip() for statement in code.split(";\n") if statement.strip())
    return found


def new_columns() -> list[str]:
    return [s.split()[5] for s in statements() if s.startswith("ALTER TABLE measurements ADD COLUMN")]


def backfill_statements() -> list[str]:
    return [s for s in statements() if s.startswith("UPDATE")]


def test_cases_stored_before_get_the_figures_a_new_case_gets(study_db: tuple[Path, int], tmp_path: Path) -> None:
    path, run_id = study_db
    copy = tmp_path / "old.db"
    with sqlite3.connect(path) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    columns = new_columns()
    assert "errors_timeout" in columns and "server_pages_freed_per_request" in columns
    with sqlite3.connect(copy) as conn:
        conn.execute(f"UPDATE measurements SET {', '.join(f'{c} = NULL' for c in columns)}")
        for statement in backfill_statements():
            conn.execute(statement)
    with Store.open(path, create=False) as store:
        expected = {case.case_id: case.figures for case in store.cases([run_id])}
    with Store.open(copy, create=False) as store:
        filled = {case.case_id: case.figures for case in store.cases([run_id])}
    compared = 0
    for case_id, figures in expected.items():
        for column in columns:
            want, got = figures.get(column), filled[case_id].get(column)
            assert (want is None) == (got is None), (case_id, column, want, got)
            if want is not None:
                assert got == pytest.approx(want), (case_id, column)
                compared += 1
    assert compared > 0
