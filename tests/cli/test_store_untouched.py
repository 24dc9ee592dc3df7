"""The store is never harmed: `report --list`, `report`, `compare`, `export` and `findings`, each a real CLI invocation,
leave the file --db names byte for byte as it was (md5 before and after): a foreign SQLite file, a file
that is not SQLite and an empty one are refused in one line; a results store on a read-only file,
directory or mount is read; one from a newer Gauntlet or migrated by another build is refused before
any write, by the measuring commands too."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.cli_process import GAUNTLET, Finished, run_cli
from tests.helpers.read_only_mount import run_on_read_only_mount

#: Every reading command, with where it may write its own output (`{out}`: a writable directory).
READERS = {
    "report --list": ["report", "--list"],
    "report": ["report", "1", "2", "-o", "{out}/report.html"],
    "compare": ["compare", "1", "2", "--threshold", "1000"],
    "export": ["export", "1", "--format", "csv", "-o", "{out}/run-1.csv"],
    "findings": ["findings", "1"],
}
#: What `findings` says of a store of `gauntlet run`s, once it has read it (it judges suite runs only).
FINDINGS_READ = "run 1 is a `gauntlet run`, not a study suite"
#: A measuring command: it stores, so it opens the file for writing (refused before the load starts).
MEASURING = ["run", "-n", "20", "-c", "1", "-t", "1"]
READ_WRITE = stat.S_IRWXU


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def reader_args(name: str, out: Path, db: Path) -> list[str]:
    return [arg.replace("{out}", str(out)) for arg in READERS[name]] + ["--db", str(db)]


def assert_one_line_refusal(done: Finished, message: str) -> None:
    assert done.code == 2, (done.code, done.stderr)
    assert done.stderr.startswith("gauntlet: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


@pytest.fixture(scope="module")
def results_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store as `gauntlet run` makes it: two runs of the built-in server, WAL, every migration recorded."""
    db = tmp_path_factory.mktemp("made") / "results.db"
    for _ in range(2):
        done = run_cli(*MEASURING, "--db", db, timeout_s=60)
        assert done.code == 0, done.stderr
    return db


@pytest.fixture
def out(tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def copy_store(results_store: Path, folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    return Path(shutil.copy(results_store, folder / "results.db"))


def foreign_sqlite(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (x)")
        conn.execute("INSERT INTO notes VALUES ('mine')")


def empty_sqlite(path: Path) -> None:
    """An SQLite file with its header and nothing in it."""
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE gone (x)")
        conn.execute("DROP TABLE gone")


FOREIGN = {
    "an SQLite file without Gauntlet's tables": (foreign_sqlite, "is an SQLite database but not a Gauntlet results database (it has no runs table)"),
    "a file that is not SQLite": (lambda path: path.write_text("id,name\n1,mine\n" * 100), "is not a Gauntlet results database (not an SQLite database)"),
}


@pytest.mark.parametrize("kind", FOREIGN)
def test_a_file_that_is_not_a_store_is_refused_by_every_command_and_unchanged(kind: str, tmp_path: Path, out: Path) -> None:
    make, message = FOREIGN[kind]
    folder = tmp_path / "files"
    folder.mkdir()
    path = folder / "o.db"
    make(path)
    before, listing = md5(path), sorted(folder.iterdir())
    for name in READERS:
        assert_one_line_refusal(run_cli(*reader_args(name, out, path)), message)
        assert md5(path) == before, f"{name} wrote to {kind}"
    assert_one_line_refusal(run_cli(*MEASURING, "--db", path), message)
    assert md5(path) == before and sorted(folder.iterdir()) == listing


@pytest.mark.parametrize(
    ("make", "message"),
    [(Path.touch, "is empty, not a Gauntlet results database"), (empty_sqlite, "is an empty SQLite database, not a")],
    ids=["an empty file", "an SQLite file with nothing in it"],
)
def test_an_empty_file_is_refused_by_readers_and_becomes_a_store_for_a_measuring_command(
    make: Callable[[Path], None], message: str, tmp_path: Path, out: Path
) -> None:
    path = tmp_path / "o.db"
    make(path)
    before = md5(path)
    for name in ("report --list", "export"):
        assert_one_line_refusal(run_cli(*reader_args(name, out, path)), message)
    assert md5(path) == before
    done = run_cli(*MEASURING, "--db", path, timeout_s=60)
    assert done.code == 0 and "stored as run 1" in done.stderr, done.stderr


#: The exit of a reader that read the store: compare's 1 says it found a regression between the two
#: runs (of 20 requests each, a figure can move past any threshold by chance), which it read to say so.
READ_EXITS = {"compare": (0, 1)}


def read_every_way(db: Path, out: Path) -> None:
    for name in READERS:
        done = run_cli(*reader_args(name, out, db))
        if name == "findings":
            assert_one_line_refusal(done, FINDINGS_READ)
        else:
            assert done.code in READ_EXITS.get(name, (0,)), (name, done.stderr)
        assert name != "compare" or "cases compared" in done.stdout, done.stdout
    assert (out / "report.html").stat().st_size > 0 and (out / "run-1.csv").read_text().count("\n") == 2


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[list[Path]]:
    """Paths made read-only by the test; write access given back at its end, so tmp_path can go."""
    made: list[Path] = []
    yield made
    for path in made:
        path.chmod(path.stat().st_mode | READ_WRITE)


@pytest.mark.parametrize("which", ["the file and its directory", "a copy's directory"])
def test_a_read_only_store_is_read_by_every_command_and_unchanged(
    which: str, results_store: Path, tmp_path: Path, out: Path, read_only: list[Path]
) -> None:
    db = copy_store(results_store, tmp_path / "store")
    read_only.extend([db.parent, db] if which == "the file and its directory" else [db.parent])
    for path in read_only:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    before = md5(db)
    read_every_way(db, out)
    assert md5(db) == before
    listed = run_cli("report", "--list", "--db", db)
    rows = [line.split() for line in listed.stdout.splitlines() if line.split()[:1] in (["1"], ["2"])]
    assert [row[:4] for row in rows] == [["1", "gauntlet", "run", "builtin"], ["2", "gauntlet", "run", "builtin"]], listed.stdout
    assert all("complete" in row for row in rows), listed.stdout


def test_a_store_on_a_read_only_mount_is_read_by_every_command_and_unchanged(
    results_store: Path, tmp_path: Path, out: Path
) -> None:
    source = copy_store(results_store, tmp_path / "medium").parent
    before = md5(source / "results.db")
    mount_point = tmp_path / "mnt"
    for name in READERS:
        done = run_on_read_only_mount(source, mount_point, [*GAUNTLET, *reader_args(name, out, mount_point / "results.db")])
        assert done.returncode in ((2,) if name == "findings" else READ_EXITS.get(name, (0,))), (name, done.stderr)
        assert name != "findings" or FINDINGS_READ in done.stderr, done.stderr
    assert md5(source / "results.db") == before and sorted(p.name for p in source.iterdir()) == ["results.db"]
    assert (out / "run-1.csv").read_text().count("\n") == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("PRAGMA user_version = 99", "was written by a newer Gauntlet (store schema 99"),
        ("UPDATE applied_migrations SET sha256 = '" + "0" * 64 + "' WHERE number = 3",
         "was migrated by another build of Gauntlet (its migration 0003_invariant_breaches"),
    ],
    ids=["newer", "tampered"],
)
def test_a_store_this_gauntlet_cannot_trust_is_refused_before_any_write(
    change: str, message: str, results_store: Path, tmp_path: Path, out: Path
) -> None:
    db = copy_store(results_store, tmp_path / "store")
    with sqlite3.connect(db) as conn:
        # Out of WAL, so that the writer's switch to WAL, were it made before the check, would show.
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute(change)
    before = md5(db)
    for name in READERS:
        assert_one_line_refusal(run_cli(*reader_args(name, out, db)), message)
    assert_one_line_refusal(run_cli(*MEASURING, "--db", db), message)
    assert md5(db) == before
