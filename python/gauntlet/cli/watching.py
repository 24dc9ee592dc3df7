"""The options that let a measuring command be watched while it runs (docs/watching.md), and the
observers (lab.observers) they make: the one place `run`, `sweep`, `capacity` and `suite run`
get theirs from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gauntlet.errors import GauntletError

if TYPE_CHECKING:
    from gauntlet.lab.observers import Observer

Out = Annotated[
    list[str] | None,
    typer.Option("--out", help="jsonl:FILE: each case's seconds as JSON lines, appended as they come (repeatable)"),
]

#: `--out` destinations: the prefix before the first ':' and what it writes.
OUT_KINDS = {"jsonl": "each second of each case as a JSON line (docs/watching.md)"}


def observers(out: list[str] | None) -> list[Observer]:
    """The observers the options ask for, each checked before any load (a bad one: one line)."""
    found: list[Observer] = []
    for destination in out or []:
        kind, colon, target = destination.partition(":")
        if not colon or kind not in OUT_KINDS or not target:
            raise GauntletError(
                f"--out {destination!r} names no output",
                "Write it as jsonl:FILE (e.g. --out jsonl:run.jsonl)",
            )
        from gauntlet.report.jsonl import JsonLines

        found.append(JsonLines.open(target))
    return found
