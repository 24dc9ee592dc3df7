"""A grid point of a suite, as the expansion hands it to the runner: the server it needs, the
request path, and the load (an engine plan without its URL, or sessions from a load file)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gauntlet.plan import Plan
from gauntlet.servers.spec import ServerSpec

if TYPE_CHECKING:
    from gauntlet.model.loadfile import LoadFile


@dataclass(frozen=True)
class Sessions:
    """A sessions case: the load file, and either a number of simultaneous users or a capacity search."""

    load: LoadFile
    users: int | None = None
    capacity_start: int = 10
    capacity_max_probes: int = 8


@dataclass(frozen=True)
class Case:
    """A grid point: the server it needs, the request path, and the load: an engine plan without its
    URL, or sessions whose plan the load file builds at the target."""

    group: str
    server: ServerSpec
    path: str
    params: dict[str, Any]
    plan: Plan | None = None
    sessions: Sessions | None = None
