"""The schemas: the plan's and the result's, generated from the engine's types, valid, closed and
documented, and met by the engine's real output (with the fields Python adds)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from gauntlet import _engine, schema
from gauntlet.servers.base import ServerInstance
from tests.helpers.cli_process import run_cli

ROOT = Path(__file__).parents[2]
SCHEMA = schema.run_result()
PLAN_SCHEMA = schema.plan()
ADDITIONS = json.loads(schema.ADDITIONS_FILE.read_text())
RESULTS_DOC = (ROOT / "docs/results.md").read_text()
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
#: `agents` is the engine's, in a distributed run's merged result only; the others Python adds.
OPTIONAL_FIELDS = {"agents", *ADDITIONS["properties"]}
SESSIONS_BY_USERS = """\
sessions:
  - name: browse
    think: {uniform: [10ms, 30ms]}
    pages:
      - {name: home, path: /webtest.html, embedded: [/image_small.gif]}
      - {name: big, path: /image_large.jpg, download: true}
users: 2
if_modified_since: 0.5
measure: 500ms
"""

SESSIONS_BY_PHASES = """\
sessions:
  - name: reader
    think: {exponential: 20ms}
    pages:
      - {name: main, path: /webtest.html}
phases:
  - {users_per_s: 20, duration: 500ms}
max_users: 10
"""


def object_schemas(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every subschema that lists properties, with where it is."""
    if isinstance(node, dict):
        if "properties" in node:
            yield where, node
        for key, child in node.items():
            yield from object_schemas(child, f"{where}/{key}")
    elif isinstance(node, list):
        for index, child in enumerate(node):
            yield from object_schemas(child, f"{where}/{index}")


def result_of(*args: str | Path, out: Path) -> dict[str, Any]:
    done = run_cli("run", *args, "--json", out)
    assert done.code in (0, 1), done.stderr
    return json.loads(out.read_text())


def test_the_schemas_are_draft_2020_12_and_name_the_engines_version() -> None:
    for checked in (SCHEMA, PLAN_SCHEMA):
        jsonschema.Draft202012Validator.check_schema(checked)
        assert checked["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["properties"]["schema"]["const"] == _engine.RESULT_SCHEMA == SCHEMA["$id"] == "gauntlet.run-result/2"


def test_every_object_is_closed_and_a_result_requires_all_its_fields() -> None:
    """The CLI adds the optional fields: `server` when it started the server itself, `agents` when
    agents ran the plan, `bottleneck` and `invariants` always, `environment` with --json."""
    for where, node in object_schemas(SCHEMA):
        optional = OPTIONAL_FIELDS if where == "#" else set()
        assert node.get("additionalProperties") is False, where
        assert sorted(node["required"]) == sorted(set(node["properties"]) - optional), where
    for where, node in object_schemas(PLAN_SCHEMA):
        assert node.get("additionalProperties") is False, where


def test_a_plan_requires_only_the_url_and_gives_the_engines_defaults() -> None:
    fields = PLAN_SCHEMA["properties"]
    assert PLAN_SCHEMA["required"] == ["url"]
    assert all("default" in field for name, field in fields.items() if name not in PLAN_SCHEMA["required"])
    assert (fields["connections"]["default"], fields["threads"]["default"]) == (50, 2)
    assert (fields["timeout_us"]["default"], fields["method"]["default"]) == (15_000_000, "GET")
    assert fields["duration_us"]["x-default-when-unbounded"] == 10_000_000
    assert fields["connections"]["minimum"] == 1


def test_every_field_has_a_description() -> None:
    undocumented = [
        f"{where}/{name}"
        for checked in (SCHEMA, PLAN_SCHEMA)
        for where, node in object_schemas(checked)
        for name, field in node["properties"].items()
        if "description" not in field and "const" not in field  # a variant's tag names itself
    ]
    assert not undocumented


def test_docs_results_names_every_field_of_the_result_and_the_plan() -> None:
    """Every field of the engine's schemas, and the first level of what Python adds (the server's
    figures are defined in docs/metrics.md)."""
    named = set(re.findall(r"`([a-z0-9_]+)`", RESULTS_DOC))
    additions = ADDITIONS["properties"]
    fields = {
        *(name for checked in (json.loads(schema.ENGINE_RESULT_FILE.read_text()), PLAN_SCHEMA)
          for _, node in object_schemas(checked) for name in node["properties"]),
        *additions,
        *additions["bottleneck"]["properties"],
        *additions["invariants"]["properties"],
        *ADDITIONS["$defs"]["cpu_side"]["properties"],
        *additions["environment"]["properties"],
    }
    assert fields - named == set()


def test_a_plan_the_engine_ran_meets_the_plan_schema(builtin_server: ServerInstance, tmp_path: Path) -> None:
    result = result_of(f"{builtin_server.url}hello", "-n", "20", "-c", "2", out=tmp_path / "r.json")
    jsonschema.Draft202012Validator(PLAN_SCHEMA).validate(result["plan"])
    with pytest.raises(jsonschema.ValidationError, match="connections"):
        jsonschema.Draft202012Validator(PLAN_SCHEMA).validate({**result["plan"], "connections": 0})


def test_an_unknown_field_is_rejected(builtin_server: ServerInstance, tmp_path: Path) -> None:
    result = result_of(f"{builtin_server.url}hello", "-n", "20", "-c", "2", out=tmp_path / "r.json")
    VALIDATOR.validate(result)
    for extended in ({**result, "extra": 1}, {**result, "plan": {**result["plan"], "extra": 1}}):
        with pytest.raises(jsonschema.ValidationError, match="extra"):
            VALIDATOR.validate(extended)


def test_every_plan_option_is_in_a_valid_result(builtin_server: ServerInstance, tmp_path: Path) -> None:
    body = tmp_path / "body.txt"
    body.write_bytes(b"a=1&b=2")
    result = result_of(
        f"{builtin_server.url}hello", "-n", "50", "-c", "3", "-t", "1", "-m", "post", "-H", "X-Test: 1",
        "--body", body, "--http1.0", "--calls-per-connection", "5", "--warmup", "200ms", "--timeout", "3s",
        out=tmp_path / "r.json",
    )
    VALIDATOR.validate(result)
    plan = result["plan"]
    assert (plan["method"], plan["headers"], plan["body_base64"]) == ("POST", [["X-Test", "1"]], "YT0xJmI9Mg==")
    assert (plan["http_version"], plan["calls_per_connection"], plan["warmup_us"], plan["timeout_us"]) == (
        "1.0", 5, 200_000, 3_000_000,
    )


def test_errors_only_and_no_keepalive_results_are_valid(builtin_server: ServerInstance, tmp_path: Path) -> None:
    refused = result_of("http://127.0.0.1:1/", "-n", "5", "-c", "1", out=tmp_path / "refused.json")
    VALIDATOR.validate(refused)
    assert refused["errors"]["connect_refused"] == 5 and refused["latency_us"]["count"] == 0
    closing = result_of(f"{builtin_server.url}hello", "-d", "300ms", "-c", "2", "--no-keepalive", out=tmp_path / "c.json")
    VALIDATOR.validate(closing)
    assert closing["stop_reason"] == "duration" and closing["timeline"]


def test_a_rate_result_is_valid(builtin_server: ServerInstance, tmp_path: Path) -> None:
    result = result_of(f"{builtin_server.url}hello", "-R", "200", "-d", "500ms", "-c", "4", out=tmp_path / "r.json")
    VALIDATOR.validate(result)
    assert result["schedule"]["offered_rate_per_s"] == 200


def test_a_run_on_the_builtin_server_it_started_has_valid_server_figures(tmp_path: Path) -> None:
    result = result_of("-n", "2000", "-c", "4", out=tmp_path / "r.json")
    VALIDATOR.validate(result)
    assert result["server"]["samples"] >= 1 and result["server"]["memory"]


@pytest.mark.parametrize("load_text", [SESSIONS_BY_USERS, SESSIONS_BY_PHASES], ids=["users", "phases"])
def test_session_results_are_valid(builtin_server: ServerInstance, tmp_path: Path, load_text: str) -> None:
    load = tmp_path / "load.yaml"
    load.write_text(load_text)
    result = result_of("--load", load, builtin_server.url, out=tmp_path / "r.json")
    VALIDATOR.validate(result)
    assert result["sessions"]["users_started"] > 0 and result["plan"]["sessions"]["types"]
