"""Open the results database, for writing or for reading, without ever harming a file that is not ours.

Before anything is written the file is read: a file that is not SQLite, an SQLite file without
Gauntlet's tables, one from a newer Gauntlet and one migrated by another build are refused in one
line and left byte for byte as they were (schema.upgrade_of). Only then does a writer switch the file
to WAL and apply the migrations it lacks, in one transaction with their records, so a crash
mid-migration leaves the previous version intact.

A reader (report, compare, export, gauntlet.results) opens the file read-only and never creates,
migrates or switches it: a store at an older schema is read from a migrated copy in memory.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from gauntlet.errors import GauntletError
from gauntlet.store import schema

SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 10_000
NOT_A_STORE_FIX = "Give the results.db that gauntlet wrote, or a path where no file is yet"


def connect(path: Path, *, create: bool) -> sqlite3.Connection:
    """A writable connection in autocommit mode (transactions are explicit), at SCHEMA_VERSION. With
    `create`, a missing or empty file becomes a new store."""
    if not create or path.exists():
        _check_header(path)
    if not path.parent.is_dir():
        raise GauntletError(f"the directory of {str(path)!r} does not exist", "Create it or give another --db path")
    conn = _open(path, str(path))
    with _sqlite_errors(conn, path):
        upgrade = schema.upgrade_of(conn, path)
        conn.execute("PRAGMA journal_mode = WAL")
        # FULL: a commit is on disk when it returns, so a finished case survives a crash of the machine too.
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        if upgrade.record:
            with transaction(conn, path, "migrate the schema"):
                # Read again under the write lock: another process may have migrated in between.
                again = schema.upgrade_of(conn, path)
                if again.record:
                    schema.apply(conn, again, _now_unix_ms())
    return conn


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write, to a store at any schema this Gauntlet reads."""
    if not _check_header(path):
        raise GauntletError(f"{str(path)!r} is empty, not a Gauntlet results database", NOT_A_STORE_FIX)
    conn = _open(path, read_only_uri(path), uri=True)
    with _sqlite_errors(conn, path):
        conn.execute("PRAGMA query_only = ON")
        upgrade = schema.upgrade_of(conn, path)
        if upgrade.new:
            raise GauntletError(f"{str(path)!r} is an empty SQLite database, not a Gauntlet results database", NOT_A_STORE_FIX)
        if upgrade.apply:
            return _migrated_copy(conn, path, upgrade)
    return conn


def read_only_uri(path: Path) -> str:
    """The URI that opens `path` read-only: `mode=ro`, and `immutable=1` too when the file or its directory
    cannot be written (a read-only medium, where SQLite cannot make the -shm file WAL's readers need).
    Not when a -wal file beside it holds data: an immutable open ignores the WAL and would miss it."""
    uri = f"{path.absolute().as_uri()}?mode=ro"
    writable = os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    wal = path.with_name(path.name + "-wal")
    if not writable and not (wal.is_file() and wal.stat().st_size > 0):
        uri += "&immutable=1"
    return uri


def _check_header(path: Path) -> bool:
    """False for an empty file; refuses a missing file and one that is not SQLite."""
    try:
        with path.open("rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        raise GauntletError(
            f"there is no results database at {str(path)!r}",
            "Run a suite first (gauntlet suite run quick) or give its database with --db",
        ) from None
    except OSError as err:
        raise GauntletError(f"cannot read {str(path)!r} ({err.strerror})", "Check the path and its permissions") from None
    if header and header != SQLITE_HEADER:
        raise GauntletError(f"{str(path)!r} is not a Gauntlet results database (not an SQLite database)", NOT_A_STORE_FIX)
    return bool(header)


def _open(path: Path, database: str, *, uri: bool = False) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(database, uri=uri, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as err:
        raise GauntletError(f"cannot open {str(path)!r} ({err})", "Check the path and its permissions") from None
    conn.row_factory = sqlite3.Row
    return conn


def _migrated_copy(conn: sqlite3.Connection, path: Path, upgrade: schema.Upgrade) -> sqlite3.Connection:
    """The store copied into memory and migrated there: the readers see this version's schema, the file
    stays as it is (it is brought up to date by the next command that writes to it)."""
    memory = _open(path, ":memory:")
    conn.backup(memory)
    conn.close()
    with _sqlite_errors(memory, path), transaction(memory, path, "read an older schema"):
        schema.apply(memory, upgrade, _now_unix_ms())
    memory.execute("PRAGMA query_only = ON")
    return memory


@contextlib.contextmanager
def _sqlite_errors(conn: sqlite3.Connection, path: Path) -> Iterator[None]:
    """SQLite's failures while opening as one-line errors; the connection closed on any error."""
    try:
        yield
    except sqlite3.OperationalError as err:
        conn.close()
        raise GauntletError(
            f"cannot open {str(path)!r} ({err})",
            "Check the disk, the permissions and that no other program holds the file; on a read-only medium, "
            "copy the database (with its -wal file) to a writable directory",
        ) from None
    except sqlite3.DatabaseError as err:
        conn.close()
        raise GauntletError(f"{str(path)!r} is not a Gauntlet results database ({err})", NOT_A_STORE_FIX) from None
    except BaseException:
        conn.close()
        raise


def _now_unix_ms() -> int:
    return time.time_ns() // 1_000_000


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
