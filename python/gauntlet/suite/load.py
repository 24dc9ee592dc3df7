"""Suite files: by a shipped suite's name or a path, YAML checked field by field before anything
starts, in the full or the quick variant."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gauntlet.errors import GauntletError
from gauntlet.model.claims import Claim
from gauntlet.servers.backends.catalog import BACKENDS
from gauntlet.servers.registry import KINDS
from gauntlet.suite.model import Suite
from gauntlet.yamlfile import Lines, parse_yaml, read_text, validate

SHIPPED = Path(__file__).parent / "builtin"
DOC = "docs/suites.md"


VARIANTS = ("quick", "full")


@dataclass(frozen=True)
class LoadedSuite:
    suite: Suite
    path: Path
    text: str
    quick: bool
    full: bool = False


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


def with_variant(data: dict[str, Any], lines: Lines, variant: str) -> tuple[dict[str, Any], Lines]:
    """The groups with the fields of `variant` (quick, full) in place; a replaced field keeps the
    line it came from."""
    quick = data.get(variant)
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
            if key[:2] == (variant, group["name"]) and len(key) > 2:
                merged_lines[("groups", index, *key[2:])] = line
    return {**data, "groups": merged_groups}, merged_lines


def load_suite(name_or_file: str, quick: bool = False, full: bool = False) -> LoadedSuite:
    path = suite_path(name_or_file)
    return parse_suite(read_text(path, "suite file"), path, quick, full)


def parse_suite(text: str, path: Path, quick: bool = False, full: bool = False) -> LoadedSuite:
    """Every variant is checked, so a mistake in `quick` shows before a default run too. `path` is
    where the text came from: errors name it, and load files are found next to it."""
    if quick and full:
        raise GauntletError("--quick and --full ask for two variants at once", "Give one of them")
    data, lines = parse_yaml(text, path, "suite file", DOC)
    context = {"kinds": list(KINDS), "backend_pages": {name: backend.page.path for name, backend in BACKENDS.items()}}
    suites = {"default": validate(path, data, lines, Suite, DOC, context)}
    for variant in VARIANTS:
        suites[variant] = validate(path, *with_variant(data, lines, variant), Suite, DOC, context)
    chosen = "quick" if quick else "full" if full else "default"
    return LoadedSuite(suites[chosen], path, text, quick, full)


def run_claims(suite_name: str, suite_text: str | None) -> tuple[list[Claim], str]:
    """The claims a stored suite run is judged by, and where they came from: the suite file as it
    was run, else (a run from before its suite had claims) the shipped suite of that name."""
    shipped = SHIPPED / f"{suite_name}.yaml"
    if suite_text is not None:
        claims = parse_suite(suite_text, shipped if shipped.is_file() else Path(f"{suite_name}.yaml")).suite.findings
        if claims:
            return claims, "the suite file as it was run"
    if shipped.is_file():
        claims = load_suite(suite_name).suite.findings
        if claims:
            return claims, f"the shipped suite '{suite_name}' (the run's own file had no findings)"
    raise GauntletError(
        f"the suite '{suite_name}' states no findings to judge",
        "Add a findings: list of claims to the suite file (docs/findings.md), or judge a run of a shipped study",
    )
