"""The same plan spread over several machines: Dask distributed workers run its slices.

An optional extra (`pip install 'gauntlet[distributed]'`). `cluster(agents=N)` starts N local
worker processes, `cluster(scheduler="tcp://HOST:8786")` uses an existing cluster; either yields a
runner with the signature of `gauntlet.engine.run`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from gauntlet import engine
from gauntlet.errors import GauntletError

INSTALL_HINT = "Install it with: pip install 'gauntlet[distributed]'"


@contextlib.contextmanager
def cluster(agents: int | None = None, scheduler: str | None = None) -> Iterator[engine.Runner]:
    """A runner for `agents` local workers or the workers of `scheduler`; fails with one line
    saying how to install the extra when Dask distributed is missing."""
    try:
        from gauntlet.agents.runner import cluster as dask_cluster
    except ImportError as err:
        if err.name is None or err.name.split(".")[0] not in ("dask", "distributed"):
            raise
        raise GauntletError(f"--agents and --scheduler need Dask distributed, which cannot be imported ({err})", INSTALL_HINT) from None
    with dask_cluster(agents, scheduler) as runner:
        yield runner


__all__ = ["INSTALL_HINT", "cluster"]
