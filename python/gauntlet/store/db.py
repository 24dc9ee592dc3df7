"""Open the results database: WAL, durable commits, the schema brought to this version.

The schema version is SQLite's `user_version`; migrations/NNNN_name.sql are applied in order of
their number, each in the same transaction as the version bump, so a crash mid-migration leaves
the previous version intact. A database from a newer Gauntlet is refused, not touched.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from gauntlet.errors import GauntletError

MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
BUSY_TIMEOUT_MS = 10_000


def migrations() -> list[tuple[int, str]]:
    """(version, SQL) of every migration shipped, in order."""
    found = []
    for entry in resources.files("gauntlet.store").joinpath("migrations").iterdir():
        match = MIGRATION_NAME.match(entry.name)
        if match:
            found.append((int(match[1]), entry.read_text()))
    return sorted(found)


SCHEMA_VERSION = migrations()[-1][0]


def connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), at SCHEMA_VERSION."""
    if not create and not path.is_file():
        raise GauntletError(
            f"there is no results database at {str(path)!r}",
            "Run a suite first (gauntlet suite run quick) or give its database with --db",
        )
    if not path.parent.is_dir():
        raise GauntletError(f"the directory of {str(path)!r} does not exist", "Create it or give another --db path")
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as err:
        raise GauntletError(f"cannot open {str(path)!r} ({err})", "Check the path and its permissions") from None
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL: a commit is on disk when it returns, so a finished case survives a crash of the machine too.
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        _migrate(conn, path)
    except sqlite3.OperationalError as err:
        conn.close()
        raise GauntletError(
            f"cannot open {str(path)!r} ({err})", "Check the disk, the permissions and that no other program holds the file"
        ) from None
    except sqlite3.DatabaseError as err:
        conn.close()
        raise GauntletError(
            f"{str(path)!r} is not a Gauntlet results database ({err})", "Give the results.db that gauntlet wrote, or a new file"
        ) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: sqlite3.Connection, path: Path) -> None:
    if _check_version(conn, path) == SCHEMA_VERSION:
        return
    with transaction(conn, path, "migrate the schema"):
        # Read again under the write lock: another process may have migrated in between.
        version = _check_version(conn, path)
        for number, sql in migrations():
            if number > version:
                for statement in _statements(sql):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number}")


def _check_version(conn: sqlite3.Connection, path: Path) -> int:
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise GauntletError(
            f"{str(path)!r} was written by a newer Gauntlet (store schema {version}; this one knows up to "
            f"{SCHEMA_VERSION})",
            "Upgrade gauntlet to read it, or give another --db",
        )
    return version


def _statements(sql: str) -> Iterator[str]:
    """The script's statements one by one (executescript would commit the open transaction)."""
    pending = ""
    for line in sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, path: Path, doing: str) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any error. SQLite's own failures (disk full, locked
    for too long) become a one-line error naming what was being done."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            conn.execute("COMMIT")
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
    except sqlite3.OperationalError as err:
        raise GauntletError(
            f"cannot {doing} in {str(path)!r} ({err})", "Check the disk and that no other program holds the file"
        ) from None
