"""Runs past one process's files and one address's ports, on this machine.

A connection is a file, and one process may open only so many (RLIMIT_NOFILE's hard limit); one
source address reaches one server port through the ephemeral port range only. `run` (a Runner, as
`engine.run`) gives a plan that needs more ports than one address has the loopback source
addresses 127.B.0.1, 127.B.0.2, ... (the whole 127/8 is local on Linux), and spreads a plan that
needs more files than one process may open over several engine processes here: the agents' split
and merge (`engine.split_plan`, `engine.merge_agents`), each share in `python -m
gauntlet.lab.local_split SHARE.json`, all from one agreed start.
"""

from __future__ import annotations

import ipaddress
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.limits import files_per_process, ports_per_source, processes_for, server_processes_for, sources_for
from gauntlet.plan import DEFAULT_TIMEOUT_US, all_connections

#: The most loopback source addresses a plan is given (127.B.0.1 to 127.B.0.254).
MAX_SOURCES = 254
#: The most engine processes one run is spread over.
MAX_PROCESSES = 64
#: How far ahead the shares' agreed start lies: time for each process to start and open its
#: connections (measured: about 1 s to start, 1 s per 20,000 connections on this 2-core machine).
START_LEAD_US = 2_000_000
START_LEAD_PER_CONNECTION_US = 50
#: After the plan's end, how long the shares may take to hand back their results.
RESULT_GRACE_S = 60.0
SOCKSTAT = Path("/proc/net/sockstat")


def fitted(plan: engine.Plan, time_wait: int | None = None) -> engine.Plan:
    """The plan, with loopback source addresses when its connections need more ports than one
    address has; refused in one line when that cannot be done here. On loopback, when the ports
    that sockets in TIME_WAIT still hold (`time_wait`, by default this machine's) would crowd
    127.0.0.1's range, the run leaves from a fresh block of addresses, where none of them are: a
    run after runs of a new connection per request finds 127.0.0.1's range full of them, and its
    connects then search it for seconds (measured: 8,000 connections, after 53,000 sockets in
    TIME_WAIT, opened none in 3 s)."""
    if plan.get("source_addresses"):
        return plan
    host = urlsplit(plan["url"]).hostname or ""
    try:
        loopback_v4 = ipaddress.ip_address(host).version == 4 and ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback_v4 = host == "localhost"
    held = (time_wait_sockets() if time_wait is None else time_wait) if loopback_v4 else 0
    needed = sources_for(all_connections(plan))
    if needed == 1 and sources_for(all_connections(plan) + held) == 1:
        return plan
    if not loopback_v4 or needed > MAX_SOURCES:
        raise GauntletError(
            f"{all_connections(plan)} connections need {needed} source addresses of {ports_per_source()} ports each "
            f"to reach one server port, and only an IPv4 loopback target gets them here ({MAX_SOURCES} at most)",
            "Load 127.0.0.1, give --source-addresses of this machine's interfaces, or use fewer connections",
        )
    return {**plan, "source_addresses": loopback_sources(needed)}


def time_wait_sockets() -> int:
    """TCP sockets in TIME_WAIT on this machine (/proc/net/sockstat's `tw`); 0 when it does not say."""
    try:
        fields = next(line.split() for line in SOCKSTAT.read_text().splitlines() if line.startswith("TCP:"))
        return int(fields[fields.index("tw") + 1])
    except (OSError, StopIteration, ValueError, IndexError):
        return 0


def loopback_sources(count: int) -> list[str]:
    """`count` addresses 127.B.0.1, 127.B.0.2, ..., with B from this process's id and the runs it
    made before, so that a run (a suite's next case too) does not meet the sockets the previous one
    left in TIME_WAIT on its addresses."""
    block = 1 + (os.getpid() + next(_RUNS)) % 254
    return [f"127.{block}.0.{1 + i}" for i in range(count)]


_RUNS = itertools.count()


def check_processes(processes: int, connections: int, whose: str) -> int:
    """`processes`, or one line naming the limit and how to lift it when there are too many."""
    if processes > MAX_PROCESSES:
        raise GauntletError(
            f"{connections} connections need {processes} {whose} processes of {files_per_process()} open files each "
            f"(the hard limit), more than the {MAX_PROCESSES} one run spreads over",
            "Raise the hard limit (nofile in /etc/security/limits.conf, or LimitNOFILE=) or use fewer connections",
        )
    return processes


def engine_processes(plan: engine.Plan) -> int:
    """Engine processes the plan needs; refused in one line past what this machine allows."""
    return check_processes(processes_for(all_connections(plan)), all_connections(plan), "engine")


def server_processes(connections: int) -> int:
    """Built-in server processes for `connections`; refused in one line past what this machine allows."""
    return check_processes(server_processes_for(connections), connections, "built-in server")


def run(
    plan: engine.Plan,
    on_progress: Callable[[engine.Progress], None] | None = None,
    on_measuring: engine.OnMeasuring | None = None,
    stop: threading.Event | None = None,
    on_second: Callable[[engine.Second], None] | None = None,
) -> engine.RunOutcome:
    """Run `plan` in this process when it fits (`on_measuring`, `stop` and `on_second` as engine.run
    takes them), else over as many local processes as it needs (their results say when measuring
    began, their merged timeline its seconds; `stop` interrupts each)."""
    plan = fitted(plan)
    processes = engine_processes(plan)
    if processes == 1:
        return engine.run(plan, on_progress, stop, on_measuring=on_measuring, on_second=on_second)
    return run_split(plan, processes, on_progress, stop)


def start_lead_us(plan: engine.Plan, processes: int) -> int:
    return START_LEAD_US + START_LEAD_PER_CONNECTION_US * math.ceil(all_connections(plan) / processes)


def deadline_s(plan: engine.Plan, start_at_us: int) -> float | None:
    """When, on time.time's clock, every share should have ended; None for a request count alone."""
    duration_us = plan.get("duration_us")
    if duration_us is None:
        return None
    end_us = start_at_us + int(plan.get("warmup_us") or 0) + int(duration_us) + int(plan.get("timeout_us") or DEFAULT_TIMEOUT_US)
    return end_us / 1e6 + RESULT_GRACE_S


def run_split(
    plan: engine.Plan, processes: int, on_progress: Callable[[engine.Progress], None] | None = None,
    stop: threading.Event | None = None,
) -> engine.RunOutcome:
    """The plan's shares in `processes` processes, merged as a distributed run's agents are;
    `on_progress` gets their progress summed while they run; `stop`, once set, interrupts each
    share as Ctrl-C does."""
    start_at_us = time.time_ns() // 1_000 + start_lead_us(plan, processes)
    whole = {**plan, "start_at_unix_us": start_at_us, "timeline_histograms": True}
    shares = engine.split_plan(whole, processes)
    interrupted = False
    with tempfile.TemporaryDirectory(prefix="gauntlet-split-") as workdir:
        procs = [start_share(Path(workdir), index, share) for index, share in enumerate(shares)]
        ended = threading.Event()
        stopper = threading.Thread(target=interrupt_when, args=(stop, ended, procs), daemon=True)
        if stop is not None:
            stopper.start()
        try:
            deadline = deadline_s(plan, start_at_us)
            if on_progress is not None:
                follow(Path(workdir), procs, on_progress, deadline)
            reports = collect_all(Path(workdir), procs, shares, deadline)
        except KeyboardInterrupt:
            # Ctrl-C reached the shares too (one process group): each hands back what it measured.
            interrupted = True
            reports = collect_all(Path(workdir), procs, shares, time.time() + RESULT_GRACE_S)
        finally:
            ended.set()
            if stopper.is_alive():
                stopper.join()
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    return engine.RunOutcome(engine.merge_agents(whole, reports), interrupted or bool(stop and stop.is_set()))


def interrupt_when(stop: threading.Event, ended: threading.Event, procs: list[subprocess.Popen[bytes]]) -> None:
    """Once `stop` is set (before `ended`), SIGINT to every share still running: each hands back
    what it measured, as after a Ctrl-C."""
    while not ended.is_set():
        if stop.wait(engine.PROGRESS_INTERVAL_S):
            for proc in procs:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGINT)
            return


def start_share(workdir: Path, index: int, share: engine.Plan) -> subprocess.Popen[bytes]:
    plan_path = workdir / f"share-{index}.json"
    plan_path.write_text(json.dumps(share))
    out = (workdir / f"share-{index}.out").open("wb")
    err = (workdir / f"share-{index}.err").open("wb")
    with out, err:
        return subprocess.Popen([sys.executable, "-m", "gauntlet.lab.local_split", str(plan_path)], stdout=out, stderr=err)


def follow(
    workdir: Path, procs: list[subprocess.Popen[bytes]], on_progress: Callable[[engine.Progress], None],
    deadline: float | None,
) -> None:
    """Until every share has ended (or the deadline), their progress summed every
    PROGRESS_INTERVAL_S once every share has reported (a sum over some would jump when the rest
    come in): counts add up, the measured time is the longest, measuring once all are."""
    while any(proc.poll() is None for proc in procs) and (deadline is None or time.time() < deadline):
        time.sleep(engine.PROGRESS_INTERVAL_S)
        read = [read_progress(workdir / f"share-{index}.progress") for index in range(len(procs))]
        shares = [share for share in read if share is not None]
        if len(shares) < len(read):
            continue
        summed: engine.Progress = {
            name: sum(int(share[name]) for share in shares) for name in ("requests", "responses", "errors", "bytes_in")
        }
        summed["elapsed_us"] = max(int(share["elapsed_us"]) for share in shares)
        summed["measuring"] = all(bool(share["measuring"]) for share in shares)
        on_progress(summed)


def read_progress(path: Path) -> engine.Progress | None:
    """A share's last progress, None before its first."""
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def write_progress(path: Path, progress: engine.Progress) -> None:
    """Replaced whole, so that the parent never reads half of it."""
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(progress))
    partial.replace(path)


def collect_all(
    workdir: Path, procs: list[subprocess.Popen[bytes]], shares: list[engine.Plan], deadline: float | None
) -> list[dict[str, Any]]:
    return [collect(workdir, proc, index, share, deadline) for index, (proc, share) in enumerate(zip(procs, shares, strict=True))]


def collect(
    workdir: Path, proc: subprocess.Popen[bytes], index: int, share: engine.Plan, deadline: float | None
) -> dict[str, Any]:
    """The share's report for `engine.merge_agents`: its result, or why none came back."""
    timeout_s = None if deadline is None else max(0.0, deadline - time.time())
    report: dict[str, Any] = {"index": index, "address": f"local process {proc.pid}", "clock_offset_us": 0, "plan": share}
    try:
        status = proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return {**report, "result": None, "lost": "no result came back after the plan's end"}
    output = (workdir / f"share-{index}.out").read_text()
    if status != 0 or not output.strip():
        errors = (workdir / f"share-{index}.err").read_text().strip().splitlines()
        why = errors[-1] if errors else f"exit status {status}"
        return {**report, "result": None, "lost": f"its process failed ({why})"}
    return {**report, "result": json.loads(output), "lost": None}


def main(plan_path: str) -> int:
    """One share: run the plan in this process, its progress beside the plan (share-N.progress),
    and print its result."""
    progress_path = Path(plan_path).with_suffix(".progress")
    try:
        outcome = engine.run(json.loads(Path(plan_path).read_text()), lambda p: write_progress(progress_path, p))
    except GauntletError as err:
        print(f"gauntlet: {err}", file=sys.stderr)
        return 2
    print(json.dumps(outcome.result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
