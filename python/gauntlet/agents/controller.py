"""One distributed run, seen from the controller: a pinned slice task per worker, the barrier (every
agent ready, then one start instant published through the scheduler), live progress summed over
the agents, loss of an agent noticed, Ctrl-C passed on, and the results merged (by the engine)."""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from distributed import Client, Future, Variable

from gauntlet import engine
from gauntlet.agents import actor
from gauntlet.errors import GauntletError

#: Every agent must be ready (target probed, engine loaded) within this long.
READY_TIMEOUT_S = 30.0
#: The start instant lies this far ahead of the moment it is published, plus four round trips:
#: time for every waiting agent to hear it and start its threads.
START_LEAD_US = 100_000
#: How often progress is summed and the workers' presence checked.
WATCH_INTERVAL_S = 0.25
#: After a plan bounded in time should have ended, how long its agents may take to hand back results.
RESULT_GRACE_S = 30.0


@dataclass
class AgentRun:
    """One slice of the plan on one Dask worker, and what came of it."""

    index: int
    address: str
    plan: engine.Plan
    #: The worker's clock minus the controller's, as measured before the run.
    clock_offset_us: int
    result: dict[str, Any] | None = None
    #: Why no result came back (the worker died, the task failed); None when one did.
    lost: str | None = None


def merge_results(plan: engine.Plan, start_at_unix_us: int, agents: list[AgentRun]) -> dict[str, Any]:
    """One result of the whole plan (run-result schema), merged by the engine, with `agents`."""
    whole = {**plan, "start_at_unix_us": start_at_unix_us}
    return engine.merge_agents(whole, [asdict(agent) for agent in agents])


def unix_now_us() -> int:
    return time.time_ns() // 1_000


def run_deadline_us(plan: engine.Plan, start_at_us: int) -> int | None:
    """When every agent's result should be back; None for a plan bounded by a request count only."""
    sessions = plan.get("sessions") or {}
    phases_us = sum(p["duration_us"] for p in sessions.get("phases") or [])
    duration_us = plan.get("duration_us") or phases_us
    if not duration_us:
        return None
    load_us = int(plan.get("warmup_us", 0)) + int(duration_us) + int(sessions.get("rampdown_us", 0))
    return start_at_us + load_us + int(plan.get("timeout_us", 0)) + int(RESULT_GRACE_S * 1e6)


def summed_progress(latest: dict[int, dict[str, Any]]) -> engine.Progress:
    counts = ("requests", "responses", "errors", "bytes_in")
    progress: engine.Progress = {key: sum(int(p[key]) for p in latest.values()) for key in counts}
    progress["elapsed_us"] = max((int(p["elapsed_us"]) for p in latest.values()), default=0)
    progress["measuring"] = any(bool(p["measuring"]) for p in latest.values())
    return progress


class AgentsRun:
    def __init__(self, client: Client, agents: list[AgentRun], round_trip_us: int) -> None:
        self.client = client
        self.agents = agents
        self.round_trip_us = round_trip_us
        self.run_id = uuid.uuid4().hex
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.start = Variable(actor.start_variable_name(self.run_id), client=client)
        self.futures: dict[int, Future[dict[str, Any]]] = {}
        #: Each agent's route to the target (gauntlet.route.Route.to_json), as its probe found it.
        self.routes: dict[int, dict[str, Any]] = {}
        self.start_at_us = 0
        #: Set whenever a slice task ends, so that its result is taken at once.
        self.task_ended = threading.Event()

    def execute(self, plan: engine.Plan, on_progress: Callable[[engine.Progress], None] | None) -> engine.RunOutcome:
        topic = actor.topic(self.run_id)
        self.client.subscribe_topic(topic, lambda event: self.events.put(event[1]))
        try:
            for agent in self.agents:
                self.futures[agent.index] = self.client.submit(
                    actor.run_slice, self.run_id, agent.index, agent.plan, READY_TIMEOUT_S + 10,
                    key=f"gauntlet-agent-{self.run_id}-{agent.index}", workers=[agent.address],
                    allow_other_workers=False, pure=False,
                )
                self.futures[agent.index].add_done_callback(lambda _: self.task_ended.set())
            self.wait_until_ready()
            self.start_at_us = unix_now_us() + START_LEAD_US + 4 * self.round_trip_us
            self.start.set({"start_at_unix_us": self.start_at_us})
            interrupted = self.watch(plan, on_progress)
        finally:
            if not self.start_at_us:  # refused, failed or interrupted before the start: free the agents
                self.start.set({"abort": "the controller stopped before the start"})
            self.client.unsubscribe_topic(topic)
            self.client.cancel([f for f in self.futures.values() if not f.done()])
            self.start.delete()
        routes = [self.routes[index] for index in sorted(self.routes)]
        return engine.RunOutcome(merge_results(plan, self.start_at_us, self.agents), interrupted, routes)

    def wait_until_ready(self) -> None:
        """The barrier: return once every agent has said it is ready; refuse the run (nothing was
        sent yet) if one fails, leaves or stays silent."""
        ready: set[int] = set()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while len(ready) < len(self.agents):
            try:
                event = self.events.get(timeout=WATCH_INTERVAL_S)
                if event["kind"] == "ready":
                    ready.add(event["index"])
                    self.routes[event["index"]] = event["route"]
                continue
            except queue.Empty:
                pass
            present = self.present_workers()
            for agent in self.agents:
                why = self.failure(agent) or self.absence(agent, present)
                if why is not None:
                    raise GauntletError(f"agent {agent.address} cannot run its slice: {why}", "Fix that agent or leave it out")
            if time.monotonic() > deadline:
                silent = ", ".join(a.address for a in self.agents if a.index not in ready)
                raise GauntletError(f"the agents {silent} were not ready within {READY_TIMEOUT_S:g} s", "Check their logs")

    def failure(self, agent: AgentRun) -> str | None:
        future = self.futures[agent.index]
        if future.status == "error":
            return str(future.exception())
        if future.status == "cancelled":
            return "its task was cancelled"
        return None

    def present_workers(self) -> set[str]:
        return set(self.client.nthreads())

    @staticmethod
    def absence(agent: AgentRun, present: set[str]) -> str | None:
        if agent.address in present:
            return None
        return "its worker left the cluster (the process died or was stopped)"

    def watch(self, plan: engine.Plan, on_progress: Callable[[engine.Progress], None] | None) -> bool:
        """Until every agent has handed back a result or is lost; True when Ctrl-C cut the run short."""
        latest: dict[int, dict[str, Any]] = {}
        pending = {agent.index: agent for agent in self.agents}
        deadline_us = run_deadline_us(plan, self.start_at_us)
        interrupted = False
        while pending:
            try:
                self.task_ended.wait(WATCH_INTERVAL_S)
                self.task_ended.clear()
                self.collect(pending, deadline_us)
                while not self.events.empty():
                    event = self.events.get_nowait()
                    if event["kind"] == "progress":
                        latest[event["index"]] = event
                if on_progress is not None and latest and not interrupted:
                    on_progress(summed_progress(latest))
            except KeyboardInterrupt:
                interrupted = True
                addresses = [agent.address for agent in pending.values()]
                self.client.run(actor.cancel_run, self.run_id, workers=addresses, on_error="ignore")
        return interrupted

    def collect(self, pending: dict[int, AgentRun], deadline_us: int | None) -> None:
        """Take the results that are back; mark the agents that are gone or overdue as lost."""
        seconds_in = max(0.0, (unix_now_us() - self.start_at_us) / 1e6)
        present = self.present_workers()
        for index, agent in list(pending.items()):
            future = self.futures[index]
            if future.status == "finished":
                agent.result = future.result()
            else:
                agent.lost = self.failure(agent) or self.absence(agent, present)
                if agent.lost is None and deadline_us is not None and unix_now_us() > deadline_us:
                    agent.lost = "no result came back after the plan's end"
                if agent.lost is None:
                    continue
                agent.lost += f" ({seconds_in:.1f} s after the start)"
            del pending[index]
