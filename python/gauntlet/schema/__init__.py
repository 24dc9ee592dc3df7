"""The committed JSON Schemas. `plan.json` and `run-result-v2.json` are generated from the engine's
Rust types (`make schema`; a test fails when they drift); `run-result-additions-v2.json` holds the
fields Python adds to a result (server, bottleneck, environment)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).parent
PLAN_FILE = SCHEMA_DIR / "plan.json"
ENGINE_RESULT_FILE = SCHEMA_DIR / "run-result-v2.json"
ADDITIONS_FILE = SCHEMA_DIR / "run-result-additions-v2.json"


def _load(path: Path) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(path.read_text())
    return schema


def run_result() -> dict[str, Any]:
    """The schema of a run result as Gauntlet writes it: the engine's, closed, with the optional
    fields Python adds (not required: each appears only in some results)."""
    schema = _load(ENGINE_RESULT_FILE)
    additions = _load(ADDITIONS_FILE)
    schema["properties"].update(additions["properties"])
    schema["$defs"].update(additions["$defs"])
    return schema


def plan() -> dict[str, Any]:
    """The schema of an engine plan, with the defaults the engine fills in."""
    return _load(PLAN_FILE)
