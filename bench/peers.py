"""Gauntlet against wrk on the same nginx, rounds interleaved: requests/s and CPU per request.

    .venv/bin/python bench/peers.py [--rounds 3] [--duration 10]

nginx (2 workers, access log off) serves the standard workload's webtest.html on 127.0.0.1. For each
mode (keep-alive, a new connection per request, and keep-alive over HTTPS with nginx's TLS 1.2/1.3
and a self-signed certificate) every round runs wrk and Gauntlet's engine with the same
connections, threads and duration, alternating which goes first. The measuring is
`gauntlet.lab.calibrate`'s (the same as `gauntlet calibrate`): requests/s from each tool's report,
the client's CPU from getrusage(RUSAGE_CHILDREN) around the child process (the engine runs as
`python -m gauntlet.lab.calibrate`), nginx's CPU from /proc of its master and workers. Ratios are
gauntlet / wrk within a round, then the median over rounds. Loopback only; every run is bounded in
time. Raw samples are written to bench/out/peers-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

from gauntlet.lab.calibrate import ENGINE, Load, Sample, median_ratio, run_rounds
from gauntlet.servers.nginx import start_nginx
from gauntlet.servers.spec import ServerSpec

MODES = ("keep-alive", "no-keep-alive", "https")
TOOLS = ("wrk", ENGINE)
OUT_DIR = Path(__file__).parent / "out"


def ratio_table(title: str, column: str, samples: dict[str, list[Sample]], tools: tuple[str, ...], peer: str) -> str:
    """A markdown table of medians over rounds, one row a (case, tool), ratios against `peer`."""
    lines = [
        title,
        "",
        f"| {column} | tool | req/s | ratio | client µs/req | ratio | nginx µs/req | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for case, measured in samples.items():
        for tool in tools:
            mine = [s for s in measured if s.tool == tool]
            rps_ratio = median_ratio(measured, tool, peer, lambda s: s.requests_per_s)
            cpu_ratio = median_ratio(measured, tool, peer, lambda s: s.client_us_per_request)
            rps = statistics.median(s.requests_per_s for s in mine)
            client_us = statistics.median(s.client_us_per_request for s in mine)
            server_us = statistics.median(s.server_us_per_request or 0.0 for s in mine)
            errors = sum(s.errors for s in mine)
            lines.append(
                f"| {case} | {tool} | {rps:,.0f} | {rps_ratio:.2f} | {client_us:.1f} | "
                f"{cpu_ratio:.2f} | {server_us:.1f} | {errors} |"
            )
    return "\n".join(lines)


def show(case: str, sample: Sample) -> None:
    """One sample's line on stderr, as the rounds go."""
    print(
        f"{case:13} round {sample.round + 1} {sample.tool:8} {sample.requests_per_s:10,.0f} req/s"
        f"  client {sample.client_us_per_request:5.1f} µs/req"
        f"  nginx {sample.server_us_per_request or 0.0:5.1f} µs/req  errors {sample.errors}",
        file=sys.stderr,
    )


def report(name: str, samples: dict[str, list[Sample]], table_text: str) -> None:
    """The raw samples to bench/out/NAME-<time>.json, the table to stdout."""
    OUT_DIR.mkdir(exist_ok=True)
    out_path = OUT_DIR / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out_path.write_text(json.dumps({case: [asdict(s) for s in found] for case, found in samples.items()}, indent=1))
    print(table_text)
    print(f"\nraw samples: {out_path}")


def table(samples: dict[str, list[Sample]], args: argparse.Namespace) -> str:
    title = (
        f"nginx 2 workers, webtest.html, -c{args.connections} -t{args.threads}, "
        f"{args.rounds} interleaved rounds of {args.duration} s; medians over rounds"
    )
    return ratio_table(title, "mode", samples, TOOLS, "wrk")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10, help="seconds per run")
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.rounds < 1 or args.duration < 1:
        parser.error("--rounds and --duration must be at least 1")
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk")

    samples: dict[str, list[Sample]] = {}
    for mode in MODES:
        with start_nginx(ServerSpec("nginx", workers=2, tls=mode == "https")) as server:
            load = Load(server.url + "webtest.html", args.connections, args.threads, args.duration, mode != "no-keep-alive")
            samples[mode] = run_rounds(load, TOOLS, args.rounds, server.pids(), lambda sample, m=mode: show(m, sample))
    report("peers", samples, table(samples, args))


if __name__ == "__main__":
    main()
