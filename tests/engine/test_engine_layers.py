"""The engine's layers point one way, no file or module takes part in an import cycle, and a
`RunResult` is built in one place.

Read from engine/src as text (nothing is compiled): every `crate::` and `super::` path outside
comments and `#[cfg(test)]` items, `use` or inline, says which file depends on which. A module is a
top-level file or directory of engine/src. A parent's `use child::...` is containment, not an
import, and is not counted. docs/architecture.md draws the same layers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "engine" / "src"

#: Bottom to top: a module may import only from the layers below its own.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("clock", "cookies", "random", "uri", "workload"),
    ("tree",),
    # the plan's types, and what is read from a plan alone
    ("plan",),
    ("limits", "split"),
    # what a thread measures
    ("stats",),
    # the protocols, the requests encoded, then the connections that carry them
    ("http1",),
    ("http2",),
    ("request",),
    ("conn",),
    # when requests are sent, and the thread that sends them
    ("schedule",),
    ("worker",),
    # the result: built from the threads, then results merged, agents, a run
    ("result",),
    ("merge",),
    ("agents", "run", "schema"),
    ("server",),
    ("python", "bin", "fuzzing", "lib"),
)

PATH = re.compile(r"\b(crate|super)((?:::\w+)*)(::\{[^}]*\})?")


def without_tests_and_comments(text: str) -> str:
    """The source without comments and without the item after each `#[cfg(test)]`."""
    text = re.sub(r"//[^\n]*", "", text)
    kept, at = [], 0
    for attribute in re.finditer(r"#\[cfg\(test\)\]", text):
        if attribute.start() < at:
            continue
        kept.append(text[at : attribute.start()])
        depth, at = 0, attribute.end()
        while at < len(text):
            char, at = text[at], at + 1
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    break
            elif char == ";" and depth == 0:
                break
    kept.append(text[at:])
    return "".join(kept)


def module_path(file: str) -> list[str]:
    """`conn/uring.rs` is crate::conn::uring; `conn/mod.rs` is crate::conn; bin/ is its own."""
    parts = file.removesuffix(".rs").split("/")
    if parts[0] == "bin":
        return ["bin"]
    return parts[:-1] if parts[-1] in ("mod", "lib") else parts


def sources() -> dict[str, str]:
    return {str(p.relative_to(SRC)): without_tests_and_comments(p.read_text()) for p in sorted(SRC.rglob("*.rs"))}


def file_of(path: list[str], files: dict[str, str]) -> str | None:
    """The file that defines the longest prefix of `path` that names a module."""
    for end in range(len(path), 0, -1):
        base = "/".join(path[:end])
        for candidate in (f"{base}.rs", f"{base}/mod.rs"):
            if candidate in files:
                return candidate
    return "lib.rs" if not path else None


def imports(file: str, text: str, files: dict[str, str]) -> Iterator[str]:
    """The files that `file` takes a name from."""
    for match in PATH.finditer(text):
        head, tail, group = match.groups()
        segments = [s for s in tail.split("::") if s]
        if not segments and not group:
            continue  # pub(crate), a bare `super`
        base = [] if head == "crate" else module_path(file)[:-1]
        while head == "super" and segments[:1] == ["super"]:
            base, segments = base[:-1], segments[1:]
        names = [n.strip().split("::")[0] for n in (group or "").strip(":{}").split(",") if n.strip()]
        for name in names or [None]:
            target = file_of(base + segments + ([name] if name and name != "self" else []), files)
            if target and target != file:
                yield target


def top(file: str) -> str:
    return file.split("/")[0].removesuffix(".rs")


def file_graph() -> dict[str, set[str]]:
    files = sources()
    return {file: set(imports(file, text, files)) for file, text in files.items()}


def module_graph(files: dict[str, set[str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for file, targets in files.items():
        graph.setdefault(top(file), set()).update(top(t) for t in targets if top(t) != top(file))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, path)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def test_no_file_takes_part_in_an_import_cycle() -> None:
    assert cycles(file_graph()) == []


def test_no_module_takes_part_in_an_import_cycle() -> None:
    assert cycles(module_graph(file_graph())) == []


def test_every_module_has_a_layer_and_imports_only_from_below() -> None:
    layer = {module: i for i, modules in enumerate(LAYERS) for module in modules}
    graph = module_graph(file_graph())
    assert sorted(set(graph) - set(layer)) == [], "give each new module of engine/src a layer in LAYERS"
    upward = sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets if layer[t] >= layer[m])
    assert upward == []


def test_a_run_result_is_built_in_one_place() -> None:
    built = re.compile(r"(?<![\w:])RunResult\s*\{")
    declared = re.compile(r"(struct|for|impl|->)\s*RunResult\s*\{")
    places = [
        file
        for file, text in sources().items()
        for match in built.finditer(text)
        if not declared.search(text[max(0, match.start() - 12) : match.end()])
    ]
    assert len(places) == 1, places


def test_the_reader_sees_the_imports_it_checks() -> None:
    """The graph is not empty by mistake: known imports are in it."""
    graph = file_graph()
    assert "stats/error.rs" in graph["http1/mod.rs"]
    assert "conn/transport.rs" in graph["server/conn.rs"]
    assert "server/mod.rs" in graph["server/conn.rs"]  # use super::{...}
    assert "schedule" in module_graph(graph)["worker"]
