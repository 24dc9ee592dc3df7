"""docs/architecture.md names every module of the tree: each Python module under python/gauntlet
by its path there (`lab/local_split.py`, a package as `cli/`), each engine module under engine/src
by its path there (`conn/uring.rs`, a directory module as `conn/`). A module added, moved or
renamed without its line in the page fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "python" / "gauntlet"
ENGINE_SRC = ROOT / "engine" / "src"


def python_modules() -> list[str]:
    """Every module of the package: a package by its folder, the others by their file; files in
    folders that are no package (the CGI pages, templates) are data."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if not all((PACKAGE / folder / "__init__.py").exists() for folder in relative.parents):
            continue
        if path.name == "__init__.py":
            if relative.parent != Path("."):
                names.append(f"{relative.parent.as_posix()}/")
        else:
            names.append(relative.as_posix())
    return names


def engine_modules() -> list[str]:
    """Every module of the crate: a directory module (mod.rs) by its folder, the others by their file."""
    return sorted(
        f"{path.relative_to(ENGINE_SRC).parent.as_posix()}/" if path.name == "mod.rs" else path.relative_to(ENGINE_SRC).as_posix()
        for path in ENGINE_SRC.rglob("*.rs")
    )


def named(text: str, name: str) -> bool:
    """`name` stands in `text` as a path of its own, not as the tail of a longer one (`doctor.py`
    is not named by `cli/doctor.py`)."""
    return re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w-])", text) is not None


def test_the_trees_have_the_modules_the_test_expects() -> None:
    python, engine = python_modules(), engine_modules()
    assert {"lab/local_split.py", "limits.py", "cli/", "servers/apps/", "lab/calibrate.py"} <= set(python)
    assert "workload/pages/page.py" not in python, "a CGI page is no module"
    assert {"conn/", "plan/json_error.rs", "bin/gauntlet-engine.rs", "lib.rs", "server/siblings.rs"} <= set(engine)


def test_the_architecture_page_names_every_module() -> None:
    text = DOC.read_text()
    missing = [name for name in [*python_modules(), *engine_modules()] if not named(text, name)]
    assert not missing, f"docs/architecture.md does not name: {', '.join(missing)}"


def test_the_module_tables_name_no_module_that_is_gone() -> None:
    """Every path in the page's module tables (from "## Every module" on) is a module of its tree."""
    tables = DOC.read_text().partition("## Every module")[2]
    python_part, _, engine_part = tables.partition("### engine/src")
    for part, root, modules in ((python_part, PACKAGE, python_modules()), (engine_part, ENGINE_SRC, engine_modules())):
        named_paths = set(re.findall(r"`([\w/.-]+(?:\.py|\.rs|/))`", part))
        gone = {name for name in named_paths - set(modules) if not (name.endswith("/") and (root / name).is_dir())}
        assert not gone, f"docs/architecture.md names modules that are gone: {sorted(gone)}"


def test_a_name_is_not_taken_from_a_longer_path() -> None:
    assert named("`doctor.py` checks", "doctor.py")
    assert not named("`cli/doctor.py` parses", "doctor.py")
    assert not named("python/gauntlet/cli/ holds", "cli/")
    assert not named("`plan.rss`", "plan.rs")
