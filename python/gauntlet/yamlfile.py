"""YAML files validated by pydantic, with every mistake reported as one line `FILE:LINE: field: message`
before anything runs (load files and suite files)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import BaseModel, BeforeValidator, ValidationError

from gauntlet.errors import GauntletError
from gauntlet.units import parse_duration_us

Model = TypeVar("Model", bound=BaseModel)
Lines = dict[tuple[Any, ...], int]
_HAS_UNIT = re.compile(r"[a-zA-Z]\s*$")
_ZERO = re.compile(r"\s*0+(\.0*)?\s*[a-zA-Z]+\s*")


def duration_us(value: Any) -> int:
    """Durations in YAML files carry their unit: '5s', '500ms', '30m' ('0s' is zero)."""
    if not isinstance(value, str) or not _HAS_UNIT.search(value):
        raise ValueError(f"{value!r} has no unit: write it as 500ms, 5s, 30m or 1h")
    if _ZERO.fullmatch(value):
        return 0
    try:
        return parse_duration_us(value, "duration")
    except GauntletError as err:
        raise ValueError(err.cause) from None


Duration = Annotated[int, BeforeValidator(duration_us)]


def _construct(node: yaml.Node, path: tuple[Any, ...], lines: Lines) -> Any:
    """Plain data from a YAML node, noting the line of every value by its path."""
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        mapping = {}
        for key_node, value_node in node.value:
            key = key_node.value
            mapping[key] = _construct(value_node, (*path, key), lines)
            lines[(*path, key)] = key_node.start_mark.line + 1
        return mapping
    if isinstance(node, yaml.SequenceNode):
        return [_construct(item, (*path, i), lines) for i, item in enumerate(node.value)]
    return yaml.SafeLoader("").construct_object(node)


def _line_of(loc: tuple[Any, ...], lines: Lines) -> int:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1


def read_yaml(path: Path, what: str, doc: str) -> tuple[dict[str, Any], Lines]:
    """The file's mapping and the line of every value in it, by its path of keys and indexes."""
    try:
        text = path.read_text()
    except OSError as err:
        raise GauntletError(f"cannot read the {what} {str(path)!r} ({err.strerror})", "Check the path") from None
    return parse_yaml(text, path, what, doc)


def parse_yaml(text: str, path: Path, what: str, doc: str) -> tuple[dict[str, Any], Lines]:
    """As read_yaml, for text that came from `path` (errors name it)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as err:
        line = err.problem_mark.line + 1 if err.problem_mark else 1
        raise GauntletError(f"{path}:{line}: YAML syntax: {err.problem}", "Fix the YAML at that line") from None
    lines: Lines = {}
    data = _construct(root, (), lines) if root is not None else None
    if not isinstance(data, dict):
        raise GauntletError(f"{path}:1: the {what} is not a mapping", f"Write it as a mapping of fields (see {doc})")
    return data, lines


def validate(
    path: Path, data: dict[str, Any], lines: Lines, model: type[Model], doc: str, context: dict[str, Any] | None = None
) -> Model:
    """`data` as `model`; the first mistake becomes `FILE:LINE: field: message`. `context` reaches the
    model's validators."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as err:
        first = err.errors()[0]
        loc = tuple(part for part in first["loc"] if not (isinstance(part, str) and "[" in part))
        field = ".".join(str(part) for part in loc) or "(top)"
        message = first["msg"].removeprefix("Value error, ")
        raise GauntletError(f"{path}:{_line_of(loc, lines)}: {field}: {message}", f"Fix that field ({doc})") from None

