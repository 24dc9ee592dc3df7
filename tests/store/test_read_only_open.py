"""How a reader opens the file: read-only always, immutable on a read-only medium (where SQLite cannot
make WAL's -shm file), but not when a -wal file holds data an immutable open would not see."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from gauntlet.errors import GauntletError
from gauntlet.store import Store
from gauntlet.store.db import read_only_uri
from tests.helpers.read_only_mount import run_on_read_only_mount

#: Run on the mount: the URI a reader uses there, then the runs it reads.
READ_THERE = (
    "import sys; from pathlib import Path; from gauntlet.store import Store; from gauntlet.store.db import read_only_uri; "
    "path = Path(sys.argv[1]); print(read_only_uri(path)); print([run.suite for run in Store.open_read_only(path).runs()])"
)


def new_run(store: Store, suite: str) -> None:
    store.begin_run(suite=suite, suite_text=None, options={}, environment={}, planned_cases=0)


def test_a_writable_store_is_opened_read_only_but_not_immutable(tmp_path: Path) -> None:
    path = tmp_path / "a store?#%.db"  # characters a URI must escape
    with Store.open(path) as store:
        new_run(store, "first")
    assert read_only_uri(path) == f"{path.absolute().as_uri()}?mode=ro"
    with Store.open_read_only(path) as store:
        assert [run.suite for run in store.runs()] == ["first"]


def test_on_a_read_only_medium_the_open_is_immutable_unless_the_wal_holds_data(tmp_path: Path) -> None:
    checkpointed, pending = tmp_path / "checkpointed", tmp_path / "pending"
    checkpointed.mkdir()
    pending.mkdir()
    with Store.open(checkpointed / "results.db") as store:
        new_run(store, "on disk")
    assert sorted(p.name for p in checkpointed.iterdir()) == ["results.db"]
    with Store.open(pending / "results.db") as store:
        new_run(store, "on disk")
    # Another connection stays open, so the writer's close does not checkpoint: its run is only in the -wal file.
    with contextlib.closing(sqlite3.connect(pending / "results.db")) as holder:
        holder.execute("SELECT count(*) FROM runs").fetchone()
        with Store.open(pending / "results.db") as store:
            new_run(store, "in the wal")
        copy = tmp_path / "copy"
        copy.mkdir()
        for name in ("results.db", "results.db-wal", "results.db-shm"):
            shutil.copy(pending / name, copy / name)
    assert (copy / "results.db-wal").stat().st_size > 0

    done = run_on_read_only_mount(checkpointed, tmp_path / "mnt1", [sys.executable, "-c", READ_THERE, str(tmp_path / "mnt1" / "results.db")])
    assert done.returncode == 0, done.stderr
    uri, runs = done.stdout.splitlines()
    assert runs == "['on disk']" and uri.endswith("?mode=ro&immutable=1")

    done = run_on_read_only_mount(copy, tmp_path / "mnt2", [sys.executable, "-c", READ_THERE, str(tmp_path / "mnt2" / "results.db")])
    assert done.returncode == 0, done.stderr
    uri, runs = done.stdout.splitlines()
    assert runs == "['on disk', 'in the wal']" and uri.endswith("?mode=ro")


def test_a_reader_cannot_write_even_through_the_store(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    Store.open(path).close()
    with Store.open_read_only(path) as store, sqlite3.connect(path) as check:
        before = check.execute("SELECT count(*) FROM runs").fetchone()[0]
        with pytest.raises(GauntletError, match="readonly"):
            new_run(store, "sneaked in")
        assert check.execute("SELECT count(*) FROM runs").fetchone()[0] == before
