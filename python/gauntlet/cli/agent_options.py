"""`--agents N` and `--scheduler ADDRESS`, shared by the commands that run plans."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated

import typer

from gauntlet import engine
from gauntlet.bounds import AGENTS
from gauntlet.cli.options import bounded
from gauntlet.lab import local_split

Agents = Annotated[
    int | None,
    bounded(AGENTS, "--agents", help="Split the load over N local Dask worker processes (extra \\[distributed])"),
]
Scheduler = Annotated[
    str | None,
    typer.Option("--scheduler", help="Split the load over the workers of this Dask scheduler, tcp://HOST:8786"),
]


@contextlib.contextmanager
def load_runner(agents: int | None, scheduler: str | None) -> Iterator[engine.Runner]:
    """What runs each plan: this machine's engine (in as many processes as the plan's connections
    need), or the agents when either option is given."""
    if agents is None and scheduler is None:
        yield local_split.run
        return
    from gauntlet.agents import cluster

    with cluster(agents, scheduler) as runner:
        yield runner
