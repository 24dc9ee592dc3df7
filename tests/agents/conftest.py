"""A local Dask cluster of worker processes on 127.0.0.1 (dashboard on a loopback port the OS
picks), shared by a module's tests; once closed, none of its processes and none of its ports
may be left."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import psutil
import pytest

from gauntlet import agents
from gauntlet.agents.runner import AgentRunner

WORKERS = 3


def cluster_processes() -> set[int]:
    """This process's children, but multiprocessing's resource tracker, which lives as long as we do."""
    pids = set()
    for child in psutil.Process(os.getpid()).children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(child.cmdline()):
                pids.add(child.pid)
    return pids


def listening_ports(pids: set[int]) -> set[int]:
    return {c.laddr.port for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN and c.pid in pids}


@pytest.fixture(scope="module")
def agents3() -> Iterator[AgentRunner]:
    """A runner on three local worker processes; `AgentRunner(agents3.client, 2)` uses two of them."""
    before = cluster_processes()
    with agents.cluster(agents=WORKERS) as runner:
        assert isinstance(runner, AgentRunner)
        started = cluster_processes() - before
        assert len(started) >= WORKERS
        ports = listening_ports({os.getpid(), *started})
        listeners = [c.laddr.ip for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN and c.laddr.port in ports]
        assert set(listeners) == {"127.0.0.1"}, "everything binds 127.0.0.1"
        yield runner
    left = cluster_processes() - before
    assert not left, f"cluster processes left behind: {left}"
    assert not ports & listening_ports({os.getpid()}), "the cluster's ports are still listened on"
    assert callable(agents.cluster), "importing the runner module leaves the package's cluster() in place"
