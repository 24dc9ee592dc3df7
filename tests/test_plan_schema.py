"""gauntlet.plan.Plan against the plan schema the engine prints (`gauntlet-engine schema plan`,
committed as python/gauntlet/schema/plan.json): the same fields, of the same JSON types, required
alike, in every nested type. The comparison itself is checked on a small schema of that shape."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from gauntlet.plan import Plan

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "python" / "gauntlet" / "schema" / "plan.json"
PYTHON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", tuple: "array"}


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _variants(schema: dict[str, Any], defs: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema's alternatives, references resolved (an Option is its type or null)."""
    schema = _resolve(schema, defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return [v for alternative in schema[key] for v in _variants(alternative, defs)]
    return [schema]


def json_types(schema: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    found: set[str] = set()
    for variant in _variants(schema, defs):
        kind = variant.get("type")
        if kind is None and ("const" in variant or "enum" in variant):
            values = [variant["const"]] if "const" in variant else variant["enum"]
            kind = sorted({PYTHON_TYPES[type(v)] for v in values if v is not None})
        found |= set([kind] if isinstance(kind, str) else kind or [])
    return found - {"null"}


def python_types(annotation: Any) -> tuple[set[str], type[BaseModel] | None]:
    """The JSON types of a field's annotation (None left out), and the model it holds, if any."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        found: set[str] = set()
        model = None
        for arg in get_args(annotation):
            if arg is not type(None):
                kinds, model = python_types(arg)
                found |= kinds
        return found, model
    if origin is Literal:
        return {PYTHON_TYPES[type(v)] for v in get_args(annotation)}, None
    if origin in (list, tuple):
        inner = [python_types(arg)[1] for arg in get_args(annotation)]
        return {"array"}, next((m for m in inner if m is not None), None)
    if origin is dict:
        return {"object"}, None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {"object"}, annotation
    return {PYTHON_TYPES[annotation]}, None


def _object_of(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The object (or array of objects) a field holds, its tagged variants merged: the union of
    their properties, required what all of them require."""
    variants = [v for v in _variants(schema, defs) if v.get("type") != "null"]
    # An optional list is {"type": ["array", "null"], "items": ...}.
    variants = [_resolve(v["items"], defs) if "items" in v else v for v in variants]
    objects = [o for v in variants for o in _variants(v, defs)]
    properties = {name: prop for o in objects for name, prop in o.get("properties", {}).items()}
    required = set.intersection(*(set(o.get("required", [])) for o in objects)) if objects else set()
    return {"properties": properties, "required": sorted(required)}


def differences(model: type[BaseModel], schema: dict[str, Any], defs: dict[str, Any], where: str) -> list[str]:
    found = []
    properties = schema.get("properties", {})
    if set(model.model_fields) != set(properties):
        found.append(f"{where}: fields {sorted(model.model_fields)} vs the engine's {sorted(properties)}")
    required = {name for name, info in model.model_fields.items() if info.is_required()}
    if required != set(schema.get("required", [])):
        found.append(f"{where}: required {sorted(required)} vs the engine's {sorted(schema.get('required', []))}")
    for name, info in model.model_fields.items():
        if name not in properties:
            continue
        mine, inner = python_types(info.annotation)
        theirs = json_types(properties[name], defs)
        if mine != theirs:
            found.append(f"{where}.{name}: {sorted(mine)} vs the engine's {sorted(theirs)}")
        if inner is not None:
            found += differences(inner, _object_of(properties[name], defs), defs, f"{where}.{name}")
    return found


def compare(model: type[BaseModel], schema: dict[str, Any]) -> list[str]:
    defs = schema.get("$defs", schema.get("definitions", {}))
    return differences(model, _object_of(schema, defs), defs, model.__name__)


def test_the_plan_model_is_the_engines_plan() -> None:
    assert compare(Plan, json.loads(SCHEMA_PATH.read_text())) == []


class Tls(BaseModel):
    version: str | None = None


class Small(BaseModel):
    url: str
    connections: int
    tls: Tls | None = None
    http_version: Literal["1.1", "1.0"] | None = None


SMALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["url", "connections"],
    "properties": {
        "url": {"type": "string"},
        "connections": {"type": "integer", "format": "uint", "minimum": 0},
        "tls": {"anyOf": [{"$ref": "#/$defs/TlsPlan"}, {"type": "null"}], "default": None},
        "http_version": {"$ref": "#/$defs/HttpVersion", "default": "1.1"},
    },
    "$defs": {
        "TlsPlan": {"type": "object", "properties": {"version": {"type": ["string", "null"]}}},
        "HttpVersion": {"oneOf": [{"type": "string", "const": "1.1"}, {"type": "string", "const": "1.0"}]},
    },
}


def test_the_comparison_sees_a_field_a_type_and_a_required_field_that_differ() -> None:
    assert compare(Small, SMALL_SCHEMA) == []
    drifted = json.loads(json.dumps(SMALL_SCHEMA))
    drifted["properties"]["connections"]["type"] = "number"
    drifted["required"] = ["url"]
    drifted["$defs"]["TlsPlan"]["properties"]["cipher"] = {"type": "string"}
    assert compare(Small, drifted) == [
        "Small: required ['connections', 'url'] vs the engine's ['url']",
        "Small.connections: ['integer'] vs the engine's ['number']",
        "Small.tls: fields ['version'] vs the engine's ['cipher', 'version']",
    ]
