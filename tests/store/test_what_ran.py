"""Migration 0005: what ran, per case. Cases stored under schema 4 gain the kind and the backend
their params name (a server Gauntlet started) and nothing they cannot know; new cases take every
column from the result, against a real SQLite file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from gauntlet.store import Store
from gauntlet.store.schema import migrations
from gauntlet.store.write import what_ran

SETUP = {
    "kind": "inets", "version": "25.2.3", "workers": 2, "worker_unit": "schedulers", "backend": None,
    "backend_version": None, "tls": True, "config_sha256": "ab" * 32, "config_bytes": 900,
}


def test_cases_of_schema_4_gain_what_their_params_say(db_path: Path) -> None:
    with sqlite3.connect(db_path) as conn:
        for migration in migrations()[:4]:
            conn.executescript(migration.sql)
        conn.execute("PRAGMA user_version = 4")
        conn.execute("INSERT INTO runs (run_id, suite, options_json, environment_json, planned_cases, gauntlet_version,"
                     " started_unix_ms, status) VALUES (1, 'old', '{}', '{}', 2, '0', 0, 'complete')")
        params = {"server": "nginx", "backend": "php-fpm"}
        conn.execute("INSERT INTO cases (case_id, run_id, key, repeat, params_json, status, config_text, labels_json,"
                     " started_unix_ms, ended_unix_ms) VALUES (1, 1, 'a', 0, ?, 'error', 'worker_processes 2;', '[]', 0, 0)",
                     (json.dumps(params),))
        conn.execute("INSERT INTO cases (case_id, run_id, key, repeat, params_json, status, labels_json,"
                     " started_unix_ms, ended_unix_ms) VALUES (2, 1, 'b', 0, ?, 'error', '[]', 0, 0)",
                     (json.dumps({"url": "http://127.0.0.1:1/"}),))
    with Store.open(db_path) as store:
        started, url = store.cases([1])
    assert (started.server_kind, started.backend, started.server_workers, started.config_sha256) == (
        "nginx", "php-fpm", None, None,
    )
    assert (url.server_kind, url.backend, url.tls_version) == (None, None, None)


def test_the_columns_come_from_the_setup_and_the_negotiated_tls() -> None:
    """The TLS pair is the engine's `negotiated` (a run through the CLI: tests/cli/test_server_setup.py)."""
    negotiated = {"protocol": "http/1.1", "tls_version": "TLSv1.3", "tls_cipher": "TLS13_AES_256_GCM_SHA384"}
    assert what_ran({"server_setup": SETUP, "negotiated": negotiated}) == {
        "server_kind": "inets", "server_workers": 2, "backend": None, "config_sha256": "ab" * 32,
        "tls_version": "TLSv1.3", "tls_cipher": "TLS13_AES_256_GCM_SHA384",
    }
    assert set(what_ran(None).values()) == {None} == set(what_ran({"negotiated": None}).values())
