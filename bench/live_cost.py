"""What `--live` costs the client: the gauntlet process's CPU per request, with and without it.

The built-in server runs apart (`gauntlet serve`), so the measured process (`gauntlet run URL`) has
no child and its CPU is the client's alone: the engine's load threads, the Python around them and,
with --live, the live server's thread. While a --live run goes, a watcher does what a browser and
Prometheus would: fetches the page once, then /state (what is new) and /metrics every second. The
two kinds of run alternate, round after round, the order reversed every other round.

Two figures per run: over the whole process (its start, imports and end included: getrusage of
the child), and over the steady state, the measured interval less its first and last STEADY_EDGE_S
(the process's CPU read from /proc/PID/stat around it, the requests from the result's timeline):
what --live adds per request once it runs, without what it adds once per command.

    flock /tmp/gauntlet-cpu.lock .venv/bin/python bench/live_cost.py --rounds 3 --duration 10
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

GAUNTLET = [sys.executable, "-m", "gauntlet"]
STEADY_EDGE_S = 5
TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def watch(url: str, stop: threading.Event) -> int:
    """Fetch as the page and a 1 s Prometheus scrape would, until `stop`; the requests made."""
    deadline = time.monotonic() + 30
    while True:
        with contextlib.suppress(OSError):
            urllib.request.urlopen(url, timeout=5).read()
            break
        if stop.is_set() or time.monotonic() > deadline:
            return 0
        time.sleep(0.05)
    made, since = 1, 0
    while not stop.wait(1.0):
        with contextlib.suppress(OSError):
            since = json.load(urllib.request.urlopen(f"{url}state?since={since}", timeout=5))["next_seq"]
            urllib.request.urlopen(f"{url}metrics", timeout=5).read()
            made += 2
    return made


def cpu_readings(pid: int, stop: threading.Event, found: list[tuple[float, float]]) -> None:
    """(time.monotonic, CPU seconds of the process so far) every 0.1 s until `stop` or its end."""
    while not stop.wait(0.1):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return
        found.append((time.monotonic(), (int(fields[11]) + int(fields[12])) / TICKS_PER_S))


def cpu_at(readings: list[tuple[float, float]], at_s: float) -> float:
    """The process's CPU seconds at `at_s`, between the readings around it."""
    before = max((r for r in readings if r[0] <= at_s), key=lambda r: r[0])
    after = min((r for r in readings if r[0] >= at_s), key=lambda r: r[0])
    if after[0] == before[0]:
        return before[1]
    return before[1] + (after[1] - before[1]) * (at_s - before[0]) / (after[0] - before[0])


def steady_us_per_request(result: dict, readings: list[tuple[float, float]]) -> float:
    """CPU µs per request over the measured interval less its first and last STEADY_EDGE_S."""
    seconds = result["timeline"][STEADY_EDGE_S:-STEADY_EDGE_S]
    from_s = result["measured_from_monotonic_us"] / 1e6 + STEADY_EDGE_S
    to_s = from_s + sum(second["span_us"] for second in seconds) / 1e6
    return (cpu_at(readings, to_s) - cpu_at(readings, from_s)) * 1e6 / sum(second["requests"] for second in seconds)


def one_run(target: str, duration_s: int, connections: int, live: bool, scratch: Path) -> tuple[float, int, int, float]:
    """(CPU seconds of the gauntlet process, requests it measured, requests the watcher made, its
    steady state's CPU µs per request)."""
    result_path = scratch / "result.json"
    args = [*GAUNTLET, "run", target, "-d", f"{duration_s}s", "-c", str(connections), "-t", "2", "--no-store",
            "--json", str(result_path)]
    port = free_port()
    if live:
        args += ["--live", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stop = threading.Event()
    made = [0]
    watcher = threading.Thread(target=lambda: made.__setitem__(0, watch(f"http://127.0.0.1:{port}/", stop)))
    if live:
        watcher.start()
    readings: list[tuple[float, float]] = []
    reader = threading.Thread(target=cpu_readings, args=(proc.pid, stop, readings))
    reader.start()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    stop.set()
    reader.join()
    if live:
        watcher.join()
    stderr = proc.stderr.read() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"gauntlet run failed ({proc.returncode}): {stderr[-2000:]}")
    if live and not re.search(rf"live: http://127\.0\.0\.1:{port}/", stderr):
        raise SystemExit(f"no live address printed: {stderr[-2000:]}")
    result = json.loads(result_path.read_text())
    return usage.ru_utime + usage.ru_stime, result["requests"], made[0], steady_us_per_request(result, readings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10, help="seconds per run")
    parser.add_argument("--connections", type=int, default=50)
    options = parser.parse_args()
    port = free_port()
    server = subprocess.Popen([*GAUNTLET, "serve", "--port", str(port), "--threads", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)
        target = f"http://127.0.0.1:{port}/webtest.html"
        per_request: dict[bool, list[float]] = {False: [], True: []}
        steady: dict[bool, list[float]] = {False: [], True: []}
        with tempfile.TemporaryDirectory() as scratch:
            for index in range(options.rounds):
                for live in (False, True) if index % 2 == 0 else (True, False):
                    cpu_s, requests, made, steady_us = one_run(target, options.duration, options.connections, live, Path(scratch))
                    per_request[live].append(cpu_s * 1e6 / requests)
                    steady[live].append(steady_us)
                    print(f"round {index + 1} {'--live' if live else 'plain '}: {cpu_s:.2f} s CPU, {requests:,} requests, "
                          f"{per_request[live][-1]:.2f} µs/request, steady state {steady_us:.2f} µs/request"
                          + (f", {made} requests to the live server" if live else ""))
        for name, figures in (("whole process", per_request), ("steady state", steady)):
            ratios = [with_live / plain for plain, with_live in zip(figures[False], figures[True], strict=True)]
            print(f"{name}: median client µs/request {statistics.median(figures[False]):.2f} plain, "
                  f"{statistics.median(figures[True]):.2f} with --live; ratio per round {', '.join(f'{r:.3f}' for r in ratios)}, "
                  f"median {statistics.median(ratios):.3f}")
    finally:
        server.terminate()
        server.wait(timeout=20)


if __name__ == "__main__":
    main()
