"""`--live [ADDR]` on the measuring commands: the option, and the observer it makes (live.observer),
whose address is printed at once. The address is optional, which typer's options cannot say: a
bare `--live` is given its default address before typer reads the command line."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from gauntlet.live.observer import LiveObserver

OPTION = "--live"
#: A bare --live: loopback, a free port.
DEFAULT_ADDRESS = "127.0.0.1:0"
#: What may follow --live as its address: PORT, HOST:PORT, :PORT, [V6] or [V6]:PORT (a URL or a
#: suite's name never looks so).
ADDRESS = re.compile(r"\d+|[\w.-]*:\d+|\[[0-9a-fA-F:.]+\](:\d+)?")

Live = Annotated[
    str | None,
    typer.Option(
        OPTION, metavar="[ADDR]",
        help="Serve a live page of the run and Prometheus /metrics (default 127.0.0.1 and a free port; docs/watching.md)",
    ),
]


def with_default_address(args: list[str]) -> list[str]:
    """The command line with each bare `--live` (no address after it) given DEFAULT_ADDRESS."""
    found = []
    for index, arg in enumerate(args):
        following = args[index + 1] if index + 1 < len(args) else ""
        found.append(f"{OPTION}={DEFAULT_ADDRESS}" if arg == OPTION and not ADDRESS.fullmatch(following) else arg)
    return found


def live_observer(command: str, address: str | None, err: Console) -> LiveObserver | None:
    """The live view's observer, serving from now on (its address printed); None without --live."""
    if address is None:
        return None
    from gauntlet.live.observer import LiveObserver

    observer = LiveObserver(command, address)
    err.print(f"live: {observer.url}", highlight=False, soft_wrap=True)
    return observer
