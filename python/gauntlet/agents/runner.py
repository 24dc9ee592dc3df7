"""The cluster the agents run on: a local one of N worker processes, or an existing Dask scheduler.

`cluster()` yields an AgentRunner, which runs a plan as `gauntlet.engine.run` does
(`runner(plan, on_progress) -> RunOutcome`), split across its workers. Before each run it checks
the workers: the same Gauntlet version, clocks that agree, a target they can reach.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator

import psutil
from distributed import Client, LocalCluster

import gauntlet
from gauntlet import engine
from gauntlet.agents import actor
from gauntlet.agents.checks import ClockReading, check_clocks, check_loopback_target, check_versions
from gauntlet.agents.controller import AgentRun, AgentsRun
from gauntlet.errors import GauntletError

#: How long to wait for the scheduler, and for the workers asked for to join it.
CONNECT_TIMEOUT_S = 5.0
WORKERS_TIMEOUT_S = 30.0
#: Clock readings per run; the one with the shortest round trip counts.
CLOCK_ROUNDS = 3
INSTALL_EVERYWHERE = "Install the same Gauntlet, with its [distributed] extra, on every node"


def local_hosts() -> set[str]:
    """Every address of this machine's interfaces."""
    return {a.address.split("%")[0] for addresses in psutil.net_if_addrs().values() for a in addresses}


def read_clocks(client: Client, workers: list[str]) -> tuple[dict[str, ClockReading], dict[str, str]]:
    """Each worker's clock offset (from the round with the shortest round trip) and Gauntlet version."""
    readings: dict[str, ClockReading] = {}
    versions: dict[str, str] = {}
    for _ in range(CLOCK_ROUNDS):
        sent_s = time.time()
        facts = client.run(actor.agent_facts, workers=workers, on_error="return")
        back_s = time.time()
        for address, fact in facts.items():
            if isinstance(fact, BaseException):
                raise GauntletError(f"agent {address} cannot run Gauntlet ({type(fact).__name__}: {fact})", INSTALL_EVERYWHERE)
            versions[address] = fact["version"]
            reading = ClockReading(round((fact["unix_time_s"] - (sent_s + back_s) / 2) * 1e6), round((back_s - sent_s) / 2 * 1e6))
            if address not in readings or reading.uncertainty_us < readings[address].uncertainty_us:
                readings[address] = reading
    return readings, versions


class AgentRunner:
    """Runs plans split over `agents` workers of the cluster (every worker when None)."""

    def __init__(self, client: Client, agents: int | None) -> None:
        self.client = client
        self.agents = agents

    def workers(self) -> list[str]:
        """The workers a run uses, once as many as were asked for have joined."""
        wanted = self.agents or 1
        deadline = time.monotonic() + WORKERS_TIMEOUT_S
        while True:
            present = sorted(self.client.nthreads())
            if len(present) >= wanted:
                return present[: self.agents] if self.agents else present
            if time.monotonic() > deadline:
                raise GauntletError(
                    f"the scheduler has {len(present)} workers, fewer than the {wanted} agents asked for",
                    "Start more workers (dask worker SCHEDULER) or ask for fewer --agents",
                )
            time.sleep(0.2)

    def __call__(self, plan: engine.Plan, on_progress: Callable[[engine.Progress], None] | None = None) -> engine.RunOutcome:
        workers = self.workers()
        check_loopback_target(plan["url"], workers, local_hosts())
        readings, versions = read_clocks(self.client, workers)
        check_versions(versions, gauntlet.__version__)
        check_clocks(readings)
        slices = engine.split_plan(plan, len(workers))
        agents = [
            AgentRun(index, address, part, readings[address].offset_us)
            for index, (address, part) in enumerate(zip(workers, slices, strict=True))
        ]
        round_trip_us = 2 * max(r.uncertainty_us for r in readings.values())
        return AgentsRun(self.client, agents, round_trip_us).execute(plan, on_progress)


def connect(scheduler: str) -> Client:
    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, ValueError) as err:
        raise GauntletError(
            f"cannot reach the Dask scheduler at {scheduler} ({err})",
            "Start one with `dask scheduler` and give its address as tcp://HOST:8786",
        ) from None


@contextlib.contextmanager
def cluster(agents: int | None = None, scheduler: str | None = None) -> Iterator[AgentRunner]:
    """A runner on `agents` local worker processes (bound to 127.0.0.1), or on the cluster of the
    Dask scheduler at `scheduler` (`agents` of its workers, or all of them)."""
    if agents is not None and agents < 1:
        raise GauntletError(f"--agents {agents} is not a number of agents", "Give --agents 1 or more")
    if agents is None and scheduler is None:
        raise GauntletError("no cluster was named", "Give --agents N, --scheduler tcp://HOST:8786, or both")
    if scheduler is not None:
        with connect(scheduler) as client:
            yield AgentRunner(client, agents)
        return
    local = LocalCluster(
        n_workers=agents, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
    )
    with local, Client(local, set_as_default=False) as client:
        yield AgentRunner(client, agents)
