"""The options that let a measuring command be watched while it runs (docs/watching.md), and the
observers (lab.observers) they make: the one place `run`, `sweep`, `capacity` and `suite run`
get theirs from."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

import typer

from gauntlet.errors import GauntletError
from gauntlet.report.output import console

if TYPE_CHECKING:
    from gauntlet.lab.observers import Observer

Out = Annotated[
    list[str] | None,
    typer.Option("--out", help="jsonl:FILE: each case's seconds as JSON lines, appended as they come (repeatable)"),
]

LIVE_OPTION = "--live"
#: A bare --live: loopback, a free port.
LIVE_DEFAULT_ADDRESS = "127.0.0.1:0"
#: What may follow --live as its address: PORT, HOST:PORT, :PORT, [V6] or [V6]:PORT (a URL or a
#: suite's name never looks so).
LIVE_ADDRESS = re.compile(r"\d+|[\w.-]*:\d+|\[[0-9a-fA-F:.]+\](:\d+)?")
Live = Annotated[
    str | None,
    typer.Option(
        LIVE_OPTION, metavar="[ADDR]",
        help="Serve a live page of the run and Prometheus /metrics (default 127.0.0.1 and a free port; docs/watching.md)",
    ),
]

#: `--out` destinations: the prefix before the first ':' and what it writes.
OUT_KINDS = {"jsonl": "each second of each case as a JSON line (docs/watching.md)"}


def with_default_address(args: list[str]) -> list[str]:
    """The command line with each bare `--live` (no address after it) given LIVE_DEFAULT_ADDRESS:
    the address is optional, which typer's options cannot say."""
    found = []
    for index, arg in enumerate(args):
        following = args[index + 1] if index + 1 < len(args) else ""
        bare = arg == LIVE_OPTION and not LIVE_ADDRESS.fullmatch(following)
        found.append(f"{LIVE_OPTION}={LIVE_DEFAULT_ADDRESS}" if bare else arg)
    return found


def observers(out: list[str] | None, live: str | None = None, command: str = "") -> list[Observer]:
    """The observers the options ask for, each checked before any load (a bad one: one line); with
    `live` (--live's address) the live view serves from now on, its address printed at once."""
    found: list[Observer] = []
    if live is not None:
        from gauntlet.live.observer import LiveObserver

        viewer = LiveObserver(command, live)
        console(stderr=True).print(f"live: {viewer.url}", highlight=False, soft_wrap=True)
        found.append(viewer)
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
