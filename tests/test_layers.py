"""The package's layers point one way and no module takes part in an import cycle.

Read from the source with ast (nothing is imported): every `import` and `from ... import`, also
those inside functions and under TYPE_CHECKING, since each says which module depends on which.
docs/architecture.md draws the same layers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "python" / "gauntlet"
ROOT = "gauntlet"

#: Bottom to top: a module may import from its own layer and the layers below it. A module belongs
#: to the layer of the longest entry naming it or a package above it (the root package: itself only).
LAYERS: tuple[tuple[str, ...], ...] = (
    # the base: errors, units, the engine's wrapper
    (ROOT, "gauntlet._engine", "gauntlet.errors", "gauntlet.units", "gauntlet.yamlfile", "gauntlet.engine", "gauntlet.limits"),
    # data types: the engine plan and the result's schema, what a case is, what it recorded, what a load file says
    ("gauntlet.plan", "gauntlet.schema", "gauntlet.bounds", "gauntlet.model", "gauntlet.servers.spec"),
    # analysis: pure functions of results
    ("gauntlet.analysis",),
    # the results store
    ("gauntlet.store",),
    # the machine: pages, monitor, the route to a target, servers, the host's snapshot
    ("gauntlet.workload", "gauntlet.monitor", "gauntlet.route"),
    ("gauntlet.servers",),
    ("gauntlet.host", "gauntlet.doctor"),
    # orchestration: suites expanded, agents, then the lab that runs them
    ("gauntlet.suite", "gauntlet.agents"),
    ("gauntlet.lab",),
    # what users see: reports, the public read API, the command line
    ("gauntlet.report", "gauntlet.results", "gauntlet.live"),
    ("gauntlet.cli", "gauntlet.__main__"),
)


def module_name(path: Path, package_dir: Path) -> str:
    parts = [package_dir.name, *path.relative_to(package_dir).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, package_dir: Path, modules: set[str]) -> Iterator[str]:
    """The package's modules that `path` imports, by name."""
    this = module_name(path, package_dir)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                # `from gauntlet import engine` imports a module; `from gauntlet.x import f` a name of x.
                full = f"{base}.{alias.name}"
                if full in modules:
                    yield full
                elif base in modules:
                    yield base


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    files = {module_name(p, package_dir): p for p in package_dir.rglob("*.py")}
    files |= {module_name(p, package_dir): p for p in package_dir.rglob("*.pyi")}
    modules = set(files)
    return {name: set(imported(path, package_dir, modules)) - {name} for name, path in files.items()}


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int | None:
    matches = [
        (len(entry), index)
        for index, layer in enumerate(layers)
        for entry in layer
        if module == entry or (entry != ROOT and module.startswith(entry + "."))
    ]
    return max(matches)[1] if matches else None


def upward_imports(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    problems = []
    for module, targets in sorted(graph.items()):
        own = layer_of(module, layers)
        if own is None:
            problems.append(f"{module} is in no layer: add it to LAYERS")
            continue
        for target in sorted(targets):
            theirs = layer_of(target, layers)
            if theirs is not None and theirs > own:
                problems.append(f"{module} (layer {own}) imports {target} (layer {theirs})")
    return problems


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    assert upward_imports(import_graph(PACKAGE_DIR)) == []


def test_no_module_takes_part_in_an_import_cycle() -> None:
    assert cycles(import_graph(PACKAGE_DIR)) == []


@pytest.fixture
def tangled_package(tmp_path: Path) -> Path:
    """A package with a cycle (a <-> b), an upward import (low -> high) and a module in no layer."""
    package = tmp_path / "gauntlet"
    (package / "low").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "from gauntlet.low import b\n",
        "low/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import thing\n",
        "low/c.py": "def f():\n    from gauntlet.high import g\n",
        "high.py": "from gauntlet.low.a import thing\n",
        "stray.py": "",
    }
    for name, text in files.items():
        (package / name).write_text(text)
    return package


def test_the_checks_see_a_cycle_an_upward_import_and_a_module_in_no_layer(tangled_package: Path) -> None:
    graph = import_graph(tangled_package)
    layers = ((ROOT, "gauntlet.low"), ("gauntlet.high",))
    assert cycles(graph) == [["gauntlet.low.a", "gauntlet.low.b"]]
    assert upward_imports(graph, layers) == [
        "gauntlet.low.c (layer 0) imports gauntlet.high (layer 1)",
        "gauntlet.stray is in no layer: add it to LAYERS",
    ]
