"""Migration 0008: requests stuck unanswered count as failed. Cases stored before gain
`unanswered_failed` and a `failed_share` recomputed from their result JSON, by the same rule as
new cases (store.figures, analysis.bottleneck.stuck_unanswered), against a real SQLite file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from gauntlet.store import Store
from gauntlet.store.schema import migrations
from gauntlet.store.figures import FIGURES

MIGRATION = 8


def pending(count: int, mean_age_us: float) -> dict[str, Any]:
    return {"count": count, "max_age_us": int(mean_age_us), "mean_age_us": mean_age_us}


def result(responses: int, slowest_us: int, connecting: dict[str, Any], awaiting: dict[str, Any]) -> dict[str, Any]:
    count = connecting["count"] + awaiting["count"]
    return {
        "responses": responses, "errors_total": 10, "service_time_us": {"count": responses, "max": slowest_us},
        "unanswered": {"count": count, "max_age_us": 0, "mean_age_us": 0.0, "connecting": connecting,
                       "tls_handshake": pending(0, 0.0), "awaiting_response": awaiting},
    }


RESULTS = {
    "in flight": (result(990, 5_000, pending(0, 0.0), pending(20, 2_000.0)), 0, 10 / 1_000),
    "stuck": (result(990, 5_000, pending(30, 900_000.0), pending(20, 2_000.0)), 30, 40 / 1_030),
    "nothing answered": (result(0, 0, pending(8, 10.0), pending(2, 10.0)), 10, 1.0),
}


def test_cases_stored_before_gain_their_stuck_requests_by_the_same_rule_as_new_ones(db_path: Path) -> None:
    earlier = [migration for migration in migrations() if migration.number < MIGRATION]
    with sqlite3.connect(db_path) as conn:
        for migration in earlier:
            conn.executescript(migration.sql)
        conn.execute(f"PRAGMA user_version = {earlier[-1].number}")
        conn.execute("INSERT INTO runs (run_id, suite, options_json, environment_json, planned_cases, gauntlet_version,"
                     " started_unix_ms, status) VALUES (1, 'old', '{}', '{}', 3, '0', 0, 'complete')")
        for case_id, (found, _, _) in enumerate(RESULTS.values(), start=1):
            conn.execute("INSERT INTO cases (case_id, run_id, key, repeat, params_json, status, labels_json,"
                         " started_unix_ms, ended_unix_ms) VALUES (?, 1, ?, 0, '{}', 'ok', '[]', 0, 0)", (case_id, str(case_id)))
            conn.execute("INSERT INTO measurements (case_id, responses, errors_total, failed_share, result_json)"
                         " VALUES (?, ?, ?, ?, ?)",
                         (case_id, found["responses"], found["errors_total"], 0.0, json.dumps(found)))
    with Store.open(db_path) as store:
        cases = store.cases([1])
    for case, (name, (found, stuck, share)) in zip(cases, RESULTS.items(), strict=True):
        assert case.figures["unanswered_failed"] == stuck == FIGURES["unanswered_failed"](found), name
        assert case.figures["failed_share"] == pytest.approx(share) == FIGURES["failed_share"](found), name
