"""HTTP/1.1 over TLS on nginx's 83 KB image: the engine's reads a response, and its CPU against wrk's.

    .venv/bin/python bench/tls_image.py [--rounds 3] [--duration 8]

nginx (2 workers, TLS pinned to TLS_AES_256_GCM_SHA384 as in peers.py's https mode) serves
image_large.jpg on 127.0.0.1. First the engine runs 3 s under `strace -c -f` (its system calls a
response; strace slows it, so no CPU figure is taken there), then wrk and the engine run
interleaved rounds as peers.py's do (100 connections, 2 threads, keep-alive): requests/s and the
client's CPU a request, and the engine's / wrk's per round, median. Loopback only, bounded in time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from gauntlet.lab.calibrate import ENGINE, Load, Sample, argv, median_ratio, medians, run_rounds
from gauntlet.servers.nginx import start_nginx
from gauntlet.servers.spec import ServerSpec

STRACE_S = 3
CALLS = ("recvfrom", "epoll_wait")


def calls_per_response(load: Load) -> str:
    """The engine's system calls of CALLS a response, from `strace -c -f` on a short run."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "strace.txt"
        command = ["strace", "-c", "-f", "-o", str(trace), *argv(ENGINE, replace(load, duration_s=STRACE_S))]
        run = subprocess.run(command, capture_output=True, text=True, check=True, timeout=STRACE_S + 30)
        counts = {}
        for line in trace.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 5 and fields[-1] in CALLS and fields[3].isdigit():
                counts[fields[-1]] = int(fields[3])
    responses = max(json.loads(run.stdout)["responses"], 1)
    shares = ", ".join(f"{name} {counts.get(name, 0) / responses:.2f}" for name in CALLS)
    return f"{responses} responses in {STRACE_S} s under strace; a response: {shares}"


def show(sample: Sample) -> None:
    print(
        f"round {sample.round + 1} {sample.tool:9} {sample.requests_per_s:9,.0f} req/s"
        f"  client {sample.client_us_per_request:5.1f} µs/req  nginx {sample.server_us_per_request or 0.0:5.1f} µs/req",
        file=sys.stderr,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=8, help="seconds a run")
    args = parser.parse_args()
    with start_nginx(ServerSpec("nginx", workers=2, tls=True, cipher="TLS_AES_256_GCM_SHA384")) as server:
        load = Load(server.url + "image_large.jpg", 100, 2, args.duration, True)
        print(calls_per_response(load))
        samples = run_rounds(load, [ENGINE, "wrk"], args.rounds, server.pids(), show)
    engine = medians(samples, ENGINE)
    ratio = median_ratio(samples, ENGINE, "wrk", lambda s: s.client_us_per_request)
    print(
        f"gauntlet {engine['requests_per_s']:,.0f} req/s, client {engine['client_cpu_us_per_request']:.1f} µs/req"
        f" ({ratio:.2f} of wrk's), errors {engine['errors']}"
    )


if __name__ == "__main__":
    main()
