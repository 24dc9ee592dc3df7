"""The only importer of the native module: plans in, results out, with progress and Ctrl-C."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from gauntlet import _engine
from gauntlet.errors import GauntletError

PROGRESS_INTERVAL_S = 0.25
#: The signals a command ends on as on Ctrl-C (cli/signals.py).
ENDING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

Plan = dict[str, Any]
Progress = dict[str, int | bool]
#: One second of the result's timeline (docs/results.md), handed over the moment it is final.
Second = dict[str, Any]


@dataclass
class RunOutcome:
    result: dict[str, Any]
    interrupted: bool
    #: The routes to the target, each as gauntlet.route.Route.to_json, when the runner found them
    #: elsewhere (agents report theirs); None: the load ran from this machine.
    routes: list[dict[str, Any]] | None = None


#: What runs a plan: `run` below, or a cluster of agents (gauntlet.agents.cluster) that runs it split.
Runner = Callable[[Plan, Callable[[Progress], None] | None], RunOutcome]
#: Told when the measured interval begins: that instant (time.monotonic µs), and a reading of the
#: responses the engine has counted in the interval so far.
OnMeasuring = Callable[[int, Callable[[], int]], None]


def run(
    plan: Plan,
    on_progress: Callable[[Progress], None] | None = None,
    stop: threading.Event | None = None,
    *,
    on_measuring: OnMeasuring | None = None,
    on_second: Callable[[Second], None] | None = None,
) -> RunOutcome:
    """Run a plan with the GIL released; Ctrl-C (or `stop` being set) cancels it and returns what
    was measured. `on_measuring` is called, from another thread, the moment the measured interval
    begins (OnMeasuring). `on_second` is called, in this thread, with each second of the timeline
    once every load thread is past it (within PROGRESS_INTERVAL_S), in order, every one before the
    result is returned."""
    try:
        handle = _engine.Run(json.dumps(plan))
    except _engine.EngineError as err:
        raise GauntletError.from_engine(str(err)) from None
    ended = threading.Event()
    teller = threading.Thread(target=_tell_measuring, args=(handle, ended, on_measuring), daemon=True)
    # A Ctrl-C between the start and the wait that handles it would leave the engine running, its
    # requests already going out, and lose what it measured: until then it is noted, then replayed.
    deferred = DeferredSignals()
    try:
        try:
            handle.start()
        except _engine.EngineError as err:
            raise GauntletError.from_engine(str(err)) from None
        if on_measuring is not None:
            teller.start()
        return _wait(handle, on_progress, stop, deferred, on_second)
    finally:
        deferred.replay()
        ended.set()
        if teller.is_alive():
            teller.join()


class DeferredSignals:
    """From its creation, the ending signals whose handler is Python's (Ctrl-C's KeyboardInterrupt,
    cli/signals.py's for SIGTERM and SIGHUP) are noted instead of handled; `replay` puts the
    handlers back and hands each noted signal to its own. Only the main thread handles signals:
    elsewhere there is nothing to defer."""

    def __init__(self) -> None:
        self._noted: list[int] = []
        self._handlers: dict[int, Callable[[int, FrameType | None], Any]] = {}
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in ENDING_SIGNALS:
            handler = signal.getsignal(signum)
            if callable(handler):
                self._handlers[signum] = handler
                signal.signal(signum, self._note)

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self._noted.append(signum)

    def replay(self) -> None:
        handlers, self._handlers = self._handlers, {}
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        noted, self._noted = self._noted, []
        for signum in noted:
            handlers[signum](signum, None)


def wait_measuring(handle: _engine.Run, timeout_s: float) -> int | None:
    """Block (GIL released) until the run's measured interval begins: its start in monotonic µs,
    or None if `timeout_s` passes first or the run is cancelled before it begins."""
    return handle.wait_measuring(timeout_s)


def _tell_measuring(handle: _engine.Run, ended: threading.Event, on_measuring: OnMeasuring) -> None:
    while not ended.is_set():
        began_us = wait_measuring(handle, PROGRESS_INTERVAL_S)
        if began_us is not None:
            on_measuring(began_us, lambda: int(handle.progress()["responses"]))
            return


def _wait(
    handle: _engine.Run, on_progress: Callable[[Progress], None] | None, stop: threading.Event | None,
    deferred: DeferredSignals, on_second: Callable[[Second], None] | None,
) -> RunOutcome:
    """The result, once the run ends; a Ctrl-C `deferred` noted is replayed first, here, where it
    cancels the run."""
    interrupted = False
    told_seconds = 0
    while True:
        try:
            deferred.replay()
            result_json = handle.wait(PROGRESS_INTERVAL_S)
            if on_second is not None:
                for second in json.loads(handle.seconds(told_seconds)):
                    told_seconds += 1
                    on_second(second)
            if result_json is not None:
                return RunOutcome(json.loads(result_json), interrupted)
            if stop is not None and stop.is_set() and not interrupted:
                handle.cancel()
                interrupted = True
            if on_progress is not None and not interrupted:
                on_progress(handle.progress())
        except KeyboardInterrupt:
            handle.cancel()
            interrupted = True
        except BaseException:  # a callback's error ends the command: the load stops with it
            handle.cancel()
            raise


def workload_files() -> dict[str, bytes]:
    """The standard workload, byte-exact: file name -> content."""
    return _engine.workload_files()


def tree_index() -> list[tuple[str, int, float]]:
    """The workload tree's files: (path below the server's root, size in bytes, request weight)."""
    return _engine.tree_index()


def tree_mix() -> list[dict[str, Any]]:
    """The workload tree as a plan's `paths` mix: every file's path and request weight."""
    return [{"path": path, "weight": weight} for path, _, weight in tree_index()]


def tree_files() -> dict[str, bytes]:
    """The workload tree, byte-exact: path below the server's root (/tree/...) -> content (51 MB)."""
    return _engine.tree_files()


def self_signed_certificate() -> tuple[str, str]:
    """A fresh self-signed certificate for localhost and the loopback addresses: (cert, key) PEM."""
    return _engine.self_signed_certificate()


def serve(
    host: str,
    port: int,
    threads: int,
    stall_ms: int,
    stall_every_ms: int,
    tls: bool,
    *,
    tls_version: str | None = None,
    cipher: str | None = None,
    besim_service_time_us: int | None = None,
) -> _engine.Server:
    """The built-in server in this process, listening when this returns. With `tls`, `tls_version`
    ("1.2" or "1.3") and `cipher` (an IANA or rustls suite name) pin what it accepts. With
    `besim_service_time_us` it is also BeSim (servers/apps/besim.py), each call held that long."""
    config = {
        "host": host, "port": port, "threads": threads, "stall_ms": stall_ms, "stall_every_ms": stall_every_ms, "tls": tls,
        "tls_version": tls_version, "cipher": cipher, "besim_service_time_us": besim_service_time_us,
    }
    try:
        return _engine.Server(json.dumps(config))
    except _engine.EngineError as err:
        raise GauntletError.from_engine(str(err)) from None


def merge_histograms(encoded: list[str]) -> str:
    """Encoded latency histograms (a result's `histogram`) merged losslessly into one, encoded alike
    (at the first one's precision)."""
    try:
        return _engine.merge_histograms(encoded)
    except _engine.EngineError as err:
        raise GauntletError.from_engine(str(err)) from None


def split_plan(plan: Plan, parts: int) -> list[Plan]:
    """`parts` plans whose totals are exactly the plan's (connections, requests, rate, session users,
    arrival rates), every other field kept; the engine fills in the defaults."""
    try:
        return [json.loads(share) for share in _engine.split_plan(json.dumps(plan), parts)]
    except _engine.EngineError as err:
        raise GauntletError.from_engine(str(err)) from None


def merge_agents(plan: Plan, agents: list[dict[str, Any]]) -> dict[str, Any]:
    """One result of the whole `plan` from its agents' reports (index, address, clock_offset_us,
    plan, result or None, lost or None), merged losslessly, with each agent's figures in `agents`."""
    try:
        merged: dict[str, Any] = json.loads(_engine.merge_agents(json.dumps(plan), [json.dumps(a) for a in agents]))
    except _engine.EngineError as err:
        raise GauntletError.from_engine(str(err)) from None
    return merged


def histogram_percentiles(encoded: str, quantiles: list[float]) -> list[int]:
    """The latencies (µs) at `quantiles` (0..1) of an encoded histogram; 0 for an empty one."""
    try:
        return _engine.histogram_percentiles(encoded, quantiles)
    except _engine.EngineError as err:
        raise GauntletError.from_engine(str(err)) from None


def histogram_distribution(encoded: str, ticks_per_half_distance: int) -> dict[str, Any]:
    """An encoded histogram's percentile distribution, as HdrHistogram prints it: `steps` of (value
    µs, percentile level 0..1, samples up to it), `ticks_per_half_distance` levels to each halving
    of the distance to 100 %; and mean_us, stdev_us, max_us, count, buckets, sub_buckets,
    significant_digits."""
    try:
        found: dict[str, Any] = json.loads(_engine.histogram_distribution(encoded, ticks_per_half_distance))
    except _engine.EngineError as err:
        raise GauntletError.from_engine(str(err)) from None
    return found


def serve_command(options: list[str], program: list[str]) -> None:
    """`gauntlet serve OPTIONS` in this process until SIGINT or SIGTERM, the engine's one
    implementation of it; `program` runs one more process of it (its siblings)."""
    try:
        _engine.serve_command(options, program)
    except _engine.EngineError as err:
        raise GauntletError.from_engine(str(err)) from None
