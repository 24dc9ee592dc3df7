"""Suite files: by a shipped suite's name or a path, YAML checked field by field before anything
starts, in the full or the quick variant."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gauntlet.errors import GauntletError
from gauntlet.servers.backends.catalog import BACKENDS
from gauntlet.servers.registry import KINDS
from gauntlet.suite.model import Suite
from gauntlet.yamlfile import Lines, parse_yaml, read_text, validate

SHIPPED = Path(__file__).parent / "builtin"
DOC = "docs/suites.md"


@dataclass(frozen=True)
class LoadedSuite:
    suite: Suite
    path: Path
    text: str
    quick: bool


def shipped_names() -> list[str]:
    return sorted(path.stem for path in SHIPPED.glob("*.yaml"))


def suite_path(name_or_file: str) -> Path:
    """A path to an existing file, else the shipped suite of that name."""
    given = Path(name_or_file)
    if given.suffix in (".yaml", ".yml") or given.exists():
        return given
    shipped = SHIPPED / f"{name_or_file}.yaml"
    if shipped.is_file():
        return shipped
    raise GauntletError(
        f"there is no suite '{name_or_file}'",
        f"Name a shipped suite ({', '.join(shipped_names())}) or a suite file (.yaml)",
    )


def with_quick(data: dict[str, Any], lines: Lines) -> tuple[dict[str, Any], Lines]:
    """The groups with their `quick` fields in place; a replaced field keeps the line it came from."""
    quick = data.get("quick")
    groups = data.get("groups")
    if not isinstance(quick, dict) or not isinstance(groups, list):
        return data, lines
    merged_lines = dict(lines)
    merged_groups = []
    for index, group in enumerate(groups):
        overrides = quick.get(group.get("name")) if isinstance(group, dict) else None
        if not isinstance(overrides, dict):
            merged_groups.append(group)
            continue
        merged_groups.append({**group, **overrides})
        for key, line in lines.items():
            if key[:2] == ("quick", group["name"]) and len(key) > 2:
                merged_lines[("groups", index, *key[2:])] = line
    return {**data, "groups": merged_groups}, merged_lines


def load_suite(name_or_file: str, quick: bool = False) -> LoadedSuite:
    path = suite_path(name_or_file)
    return parse_suite(read_text(path, "suite file"), path, quick)


def parse_suite(text: str, path: Path, quick: bool = False) -> LoadedSuite:
    """Both variants are checked, so a mistake in `quick` shows before a full run too. `path` is where
    the text came from: errors name it, and load files are found next to it."""
    data, lines = parse_yaml(text, path, "suite file", DOC)
    context = {"kinds": list(KINDS), "backend_pages": {name: backend.page.path for name, backend in BACKENDS.items()}}
    full = validate(path, data, lines, Suite, DOC, context)
    short = validate(path, *with_quick(data, lines), Suite, DOC, context)
    return LoadedSuite(short if quick else full, path, text, quick)
