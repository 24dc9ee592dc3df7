"""The store's schema: the migrations shipped, what a file has had of them, and bringing it up to date.

migrations/NNNN_name.sql are applied in order of their number. Each one applied is recorded in the
file (`applied_migrations`: number, name, SHA-256 of its SQL), so a file migrated by another build
(the same number with other SQL) is recognised and refused, and a migration that landed with a
lower number than one already applied is still applied. `user_version` holds the highest number
applied, which is what a Gauntlet from before the records checks.

Everything here that decides reads only; `apply` is the one writer, called in a transaction.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from gauntlet.errors import GauntletError

MIGRATION_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
#: The tables every Gauntlet store has had since migration 1: a file without them is not a store.
STORE_TABLES = ("runs", "cases", "measurements", "timelines", "histograms")
#: The migrations' own bookkeeping; made by the code that records them, since migration 1 is recorded too.
RECORDS_TABLE = "applied_migrations"
RECORDS_DDL = f"""CREATE TABLE IF NOT EXISTS {RECORDS_TABLE} (
    number INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    applied_unix_ms INTEGER NOT NULL
)"""


@dataclass(frozen=True)
class Migration:
    number: int
    name: str
    sql: str
    sha256: str

    @property
    def file_name(self) -> str:
        return f"{self.number:04d}_{self.name}.sql"


@cache
def migrations() -> tuple[Migration, ...]:
    """Every migration shipped, in order of its number."""
    found = []
    for entry in resources.files("gauntlet.store").joinpath("migrations").iterdir():
        match = MIGRATION_FILE.match(entry.name)
        if match:
            raw = entry.read_bytes()
            found.append(Migration(int(match[1]), match[2], raw.decode(), hashlib.sha256(raw).hexdigest()))
    return tuple(sorted(found, key=lambda migration: migration.number))


SCHEMA_VERSION = migrations()[-1].number


@dataclass(frozen=True)
class Upgrade:
    """What a file needs to be at this version: `apply` (in order), then `record` (apply and, for a file
    from before the records, the migrations its version says it had)."""

    version: int
    apply: tuple[Migration, ...]
    record: tuple[Migration, ...]

    @property
    def new(self) -> bool:
        """An SQLite file with nothing in it yet: a store may be made there."""
        return self.version == 0


def upgrade_of(conn: sqlite3.Connection, path: Path) -> Upgrade:
    """Read the file's schema and say what it needs; refuse (GauntletError) a file that is not a store,
    one from a newer Gauntlet and one migrated by another build. Writes nothing."""
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    if version == 0 and not conn.execute("SELECT 1 FROM sqlite_schema").fetchone():
        return Upgrade(0, migrations(), migrations())
    lacking = [table for table in STORE_TABLES if table not in tables]
    if version == 0 or lacking:
        why = f"it has no {lacking[0]} table" if lacking else "its user_version is 0"
        raise GauntletError(
            f"{str(path)!r} is an SQLite database but not a Gauntlet results database ({why})",
            "Give the results.db that gauntlet wrote, or a path where no file is yet",
        )
    shipped = {migration.number: migration for migration in migrations()}
    if version > max(shipped):
        raise _newer(path, f"store schema {version}")
    if RECORDS_TABLE in tables:
        applied = set()
        for number, name, sha256 in conn.execute(f"SELECT number, name, sha256 FROM {RECORDS_TABLE} ORDER BY number"):
            _check_record(path, shipped.get(number), number, name, sha256)
            applied.add(number)
        recorded = applied
    else:
        # A store from before the records: its version says which migrations it had.
        applied, recorded = {number for number in shipped if number <= version}, set()
    apply = tuple(m for m in migrations() if m.number not in applied)
    return Upgrade(version, apply, tuple(m for m in migrations() if m.number not in recorded))


def apply(conn: sqlite3.Connection, upgrade: Upgrade, now_unix_ms: int) -> None:
    """Run the upgrade's migrations and record them; the caller holds the transaction."""
    for migration in upgrade.apply:
        for statement in _statements(migration.sql):
            conn.execute(statement)
    conn.execute(RECORDS_DDL)
    conn.executemany(
        f"INSERT INTO {RECORDS_TABLE} (number, name, sha256, applied_unix_ms) VALUES (?, ?, ?, ?)",
        [(m.number, m.name, m.sha256, now_unix_ms) for m in upgrade.record],
    )
    version = max([upgrade.version, *(m.number for m in upgrade.apply)])
    conn.execute(f"PRAGMA user_version = {version}")


def _check_record(path: Path, shipped: Migration | None, number: int, name: str, sha256: str) -> None:
    if shipped is None and number > migrations()[-1].number:
        raise _newer(path, f"migration {number:04d}_{name}")
    if shipped is None:
        raise GauntletError(
            f"{str(path)!r} was migrated by another build of Gauntlet (migration {number:04d}_{name}, which this one "
            "does not ship)",
            "Open it with the build that wrote it, or give another --db",
        )
    if (name, sha256) != (shipped.name, shipped.sha256):
        raise GauntletError(
            f"{str(path)!r} was migrated by another build of Gauntlet (its migration {number:04d}_{name} is not this "
            f"one's {shipped.file_name}: SHA-256 {sha256[:12]} here, {shipped.sha256[:12]} shipped)",
            "Open it with the build that wrote it, or give another --db",
        )


def _newer(path: Path, what: str) -> GauntletError:
    return GauntletError(
        f"{str(path)!r} was written by a newer Gauntlet ({what}; this one knows up to {migrations()[-1].number})",
        "Upgrade gauntlet to read it, or give another --db",
    )


def _statements(sql: str) -> Iterator[str]:
    """The script's statements one by one (executescript would commit the open transaction)."""
    pending = ""
    for line in sql.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
