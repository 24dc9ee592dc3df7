"""The machine's noise floors (table noise_floors, migration 0010): written by `gauntlet calibrate
noise`, read by `compare`, the latest measurement of each figure."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from gauntlet.analysis.verdict import NoiseFloor
from gauntlet.store.db import transaction


@dataclass(frozen=True)
class Measured:
    """One calibration's floors, and what and where it measured."""

    floors: dict[str, float]
    pairs: int
    server: str
    load: str
    host: str
    run_id: int | None = None


def add(conn: sqlite3.Connection, path: Path, measured: Measured, measured_unix_ms: int | None = None) -> None:
    at_ms = measured_unix_ms or time.time_ns() // 1_000_000
    with transaction(conn, path, "store the noise floors"):
        conn.executemany(
            "INSERT INTO noise_floors (figure, relative, pairs, server, load, host, measured_unix_ms, run_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(figure, relative, measured.pairs, measured.server, measured.load, measured.host, at_ms, measured.run_id)
             for figure, relative in measured.floors.items()],
        )


LATEST = (
    "SELECT figure, relative, pairs, server, load, host, MAX(measured_unix_ms) AS at_ms FROM noise_floors {where} GROUP BY figure"
)


def latest(conn: sqlite3.Connection, server_kind: str | None = None) -> dict[str, NoiseFloor]:
    """The latest floor of each figure measured, with where, when and how in its source; with
    `server_kind`, one measured on that kind of server where there is one (nginx varies otherwise
    than the built-in server), else the latest of any kind."""
    rows = conn.execute(LATEST.format(where="")).fetchall()
    if server_kind is not None:
        rows += conn.execute(LATEST.format(where="WHERE server = ? OR server LIKE ? || ',%'"), (server_kind, server_kind)).fetchall()
    found = {}
    for row in rows:  # the kind's rows come last: they replace the any-kind ones
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(row["at_ms"] / 1000))
        source = f"measured on {row['host']} {when}, {row['pairs']} A/A pairs on {row['server']}, {row['load']}"
        found[row["figure"]] = NoiseFloor(row["figure"], row["relative"], source)
    return found
