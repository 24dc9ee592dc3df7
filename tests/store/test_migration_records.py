"""Migrations carry their name and checksum: a store records which it had, is upgraded from before the
records, takes a migration that landed with a lower number, and refuses one migrated by another build.
Every refusal leaves the file byte for byte as it was. Real SQLite files in tmp_path."""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
from importlib import resources
from pathlib import Path

import pytest

from gauntlet.errors import GauntletError
from gauntlet.model.record import CaseRecord
from gauntlet.store import Store, schema
from gauntlet.store.schema import SCHEMA_VERSION, Migration, migrations

EXTRA = Migration(9998, "extra_column", "ALTER TABLE runs ADD COLUMN extra TEXT;\n", "e" * 64)
LOWER = Migration(9997, "lower_column", "ALTER TABLE runs ADD COLUMN lower TEXT;\n", "d" * 64)


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def records(path: Path) -> list[tuple[int, str, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT number, name, sha256 FROM applied_migrations ORDER BY number").fetchall()


def user_version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def store_with_a_case(path: Path) -> None:
    with Store.open(path) as store:
        run_id = store.begin_run(suite="quick", suite_text=None, options={}, environment={}, planned_cases=1)
        store.add_case(run_id, CaseRecord(params={"server": "nginx"}, error="nginx is not installed"))
        store.end_run(run_id, "complete")


def legacy_store(path: Path, version: int) -> None:
    """A store as a Gauntlet from before the records left it: the migrations up to `version`, no records."""
    with sqlite3.connect(path) as conn:
        for migration in migrations():
            if migration.number <= version:
                conn.executescript(migration.sql)
        conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("INSERT INTO runs (run_id, suite, options_json, environment_json, planned_cases, gauntlet_version,"
                     " started_unix_ms, status) VALUES (1, 'old', '{}', '{}', 0, '0', 0, 'complete')")


def test_a_new_store_records_every_migration_with_the_checksum_of_its_file(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    Store.open(path).close()
    folder = resources.files("gauntlet.store").joinpath("migrations")
    files = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".sql"))
    expected = [(int(name[:4]), name[5:-4], hashlib.sha256(folder.joinpath(name).read_bytes()).hexdigest()) for name in files]
    assert records(path) == expected and len(expected) == len(migrations())
    assert user_version(path) == SCHEMA_VERSION


def test_a_store_from_before_the_records_is_read_untouched_and_upgraded_by_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    legacy_store(path, 6)
    before = md5(path)
    with Store.open_read_only(path) as store:
        assert [run.suite for run in store.runs()] == ["old"]
    assert md5(path) == before, "a reader wrote to the file"
    with Store.open(path, create=False) as store:
        assert [run.suite for run in store.runs()] == ["old"]
    assert [number for number, _, _ in records(path)] == [m.number for m in migrations()]
    assert user_version(path) == SCHEMA_VERSION
    Store.open(path, create=False).close()  # the records it wrote are this build's: it opens again


def test_a_reader_reads_an_older_schema_from_a_migrated_copy_and_leaves_the_file(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    legacy_store(path, 1)
    before = md5(path)
    with Store.open_read_only(path) as store:
        # `command` came with migration 2: the reader sees it, the file does not have it.
        assert [(run.suite, run.command) for run in store.runs()] == [("old", "suite")]
    assert md5(path) == before and user_version(path) == 1


def test_a_new_migration_and_one_that_landed_below_it_are_applied_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "results.db"
    store_with_a_case(path)
    monkeypatch.setattr(schema, "migrations", lambda: (*migrations(), EXTRA))
    Store.open(path, create=False).close()
    assert records(path)[-1] == (EXTRA.number, EXTRA.name, EXTRA.sha256) and user_version(path) == EXTRA.number
    monkeypatch.setattr(schema, "migrations", lambda: (*migrations(), LOWER, EXTRA))
    with Store.open(path, create=False) as store:
        assert store.runs()[0].status == "complete"
    assert [number for number, _, _ in records(path)][-2:] == [LOWER.number, EXTRA.number]
    assert user_version(path) == EXTRA.number, "the version stays the highest number applied"
    with sqlite3.connect(path) as conn:
        assert {"extra", "lower"} <= {row[1] for row in conn.execute("PRAGMA table_info(runs)")}


def test_a_store_migrated_by_another_build_is_refused_and_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "results.db"
    store_with_a_case(path)
    before = md5(path)
    # This build's migration 3 with other SQL: the same number, another build.
    changed = tuple(dataclasses.replace(m, sha256="0" * 64) if m.number == 3 else m for m in migrations())
    monkeypatch.setattr(schema, "migrations", lambda: changed)
    for opening in (Store.open_read_only, lambda p: Store.open(p, create=False)):
        with pytest.raises(GauntletError, match=r"migrated by another build of Gauntlet \(its migration 0003_invariant_breaches") as err:
            opening(path)
        assert "\n" not in str(err.value)
    assert md5(path) == before


def test_a_recorded_migration_this_build_does_not_ship_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.db"
    store_with_a_case(path)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO applied_migrations VALUES (?, 'future', ?, 0)", (SCHEMA_VERSION + 1, "f" * 64))
    before = md5(path)
    with pytest.raises(GauntletError, match=f"written by a newer Gauntlet \\(migration {SCHEMA_VERSION + 1:04d}_future"):
        Store.open(path, create=False)
    monkeypatch.setattr(schema, "migrations", lambda: (*(m for m in migrations() if m.number != 3), EXTRA))
    with pytest.raises(GauntletError, match="another build of Gauntlet \\(migration 0003_invariant_breaches, which this one"):
        Store.open_read_only(path)
    assert md5(path) == before
