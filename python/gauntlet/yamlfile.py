"""YAML files validated by pydantic, with every mistake reported as one line `FILE:LINE: field: message`
before anything runs (load files and suite files). Whatever the bytes, the outcome is the model or a
GauntletError: never another exception."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from gauntlet.errors import GauntletError

Model = TypeVar("Model", bound=BaseModel)
Lines = dict[tuple[Any, ...], int]
#: Far more than any suite or load file holds; aliases that repeat whole parts can expand past it.
VALUES_MAX = 100_000
#: The largest suite or load file read: the largest shipped one is 3.5 kB, and a file past this is
#: not one anyone wrote (PyYAML takes seconds on a few MB before it could refuse them).
FILE_BYTES_MAX = 1 << 20
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{kind}" for kind in ("null", "bool", "int", "float", "str", "timestamp", "binary"))
_PLAIN_VALUES = "Write plain values (numbers, strings, true/false, lists and mappings), without !tags"


class _Builder:
    """Plain data from composed YAML nodes, noting the line of every value by its path of keys and
    indexes; refuses what pydantic cannot be given (tags, keys that are not names, cycles)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: Lines = {}
        self.values = 0
        self.open: set[int] = set()

    def error(self, node: yaml.Node, cause: str, fix: str) -> GauntletError:
        return GauntletError(printable(f"{self.path}:{node.start_mark.line + 1}: {cause}"), fix)

    def unsupported(self, node: yaml.Node) -> GauntletError:
        tag = node.tag.replace("tag:yaml.org,2002:", "!!")
        return self.error(node, f"the tag {tag} is not supported", _PLAIN_VALUES)

    def value(self, node: yaml.Node, at: tuple[Any, ...]) -> Any:
        self.values += 1
        if self.values > VALUES_MAX:
            raise self.error(node, f"the file expands to more than {VALUES_MAX:,} values", "Use fewer aliases (*name)")
        self.lines[at] = node.start_mark.line + 1
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        if id(node) in self.open:
            raise self.error(node, "an alias refers to a value that holds it", "Remove the recursive alias")
        if node.tag not in (_MAP_TAG, _SEQ_TAG):
            raise self.unsupported(node)
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.value(item, (*at, index)) for index, item in enumerate(node.value)]
            return self.mapping(node, at)
        finally:
            self.open.discard(id(node))

    def mapping(self, node: yaml.MappingNode, at: tuple[Any, ...]) -> dict[str, Any]:
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.error(key_node, "a key is a list or a mapping", "Keys are names: write name: value")
            key = key_node.value
            if key in mapping:
                raise self.error(key_node, f"the key '{key}' appears twice in one mapping", "Keep one of them")
            mapping[key] = self.value(value_node, (*at, key))
            self.lines[(*at, key)] = key_node.start_mark.line + 1
        return mapping

    def scalar(self, node: yaml.ScalarNode) -> Any:
        if node.tag not in _SCALAR_TAGS:
            raise self.unsupported(node)
        try:
            return yaml.SafeLoader("").construct_object(node)
        except (yaml.YAMLError, ValueError, TypeError, OverflowError):
            kind = node.tag.rpartition(":")[2]
            raise self.error(node, f"{node.value!r} is not a valid {kind}", _PLAIN_VALUES) from None


def printable(text: str) -> str:
    """`text` on one line: line breaks and other control characters from the file escaped."""
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


def _line_of(loc: tuple[Any, ...], lines: Lines) -> int:
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1


def read_text(path: Path, what: str) -> str:
    """The file's text; it must be UTF-8 and at most FILE_BYTES_MAX bytes, which is all that is read."""
    try:
        with path.open("rb") as file:
            raw = file.read(FILE_BYTES_MAX + 1)
    except OSError as err:
        raise GauntletError(f"cannot read the {what} {str(path)!r} ({err.strerror})", "Check the path") from None
    if len(raw) > FILE_BYTES_MAX:
        raise GauntletError(
            f"{path}: the {what} is {_size_of(path)}over the limit of {FILE_BYTES_MAX:,} bytes (1 MiB)",
            "Give a suite or load file of a few kB, as the shipped ones are",
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise GauntletError(
            f"{path}:{line}: the {what} is not UTF-8 text (byte 0x{raw[err.start]:02x})", "Save it as UTF-8"
        ) from None


def _size_of(path: Path) -> str:
    """'N bytes, ' as the file's directory entry says; nothing for a pipe or a device, which has no size."""
    size = path.stat().st_size
    return f"{size:,} bytes, " if size > FILE_BYTES_MAX else ""


def read_yaml(path: Path, what: str, doc: str) -> tuple[dict[str, Any], Lines]:
    """The file's mapping and the line of every value in it, by its path of keys and indexes."""
    return parse_yaml(read_text(path, what), path, what, doc)


def _compose(text: str, path: Path) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as err:
        line = err.problem_mark.line + 1 if err.problem_mark else 1
        problem = err.problem or err.context
        raise GauntletError(f"{path}:{line}: YAML syntax: {problem}", "Fix the YAML at that line") from None
    except yaml.reader.ReaderError as err:
        line = text[: err.position].count("\n") + 1
        raise GauntletError(
            f"{path}:{line}: the character U+{err.character:04X} is not allowed in YAML",
            'Remove it, or write it escaped in a double-quoted string ("\\x01")',
        ) from None
    except RecursionError:
        raise _too_deep(path) from None


def _too_deep(path: Path) -> GauntletError:
    return GauntletError(f"{path}: lists or mappings are nested too deep", "Nest them less")


def parse_yaml(text: str, path: Path, what: str, doc: str) -> tuple[dict[str, Any], Lines]:
    """As read_yaml, for text that came from `path` (errors name it)."""
    root = _compose(text, path)
    builder = _Builder(path)
    try:
        data = builder.value(root, ()) if root is not None else None
    except RecursionError:
        raise _too_deep(path) from None
    if not isinstance(data, dict):
        raise GauntletError(f"{path}:1: the {what} is not a mapping", f"Write it as a mapping of fields (see {doc})")
    return data, builder.lines


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
        cause = printable(f"{path}:{_line_of(loc, lines)}: {field}: {message}")
        raise GauntletError(cause, f"Fix that field ({doc})") from None
