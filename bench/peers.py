"""Gauntlet against wrk and the floor on the same nginx, rounds interleaved: requests/s and CPU per request.

    .venv/bin/python bench/peers.py [--rounds 3] [--duration 10] [--warmup 1] [--modes keep-alive,image] [--engines NAMES]

nginx (2 workers, access log off) serves the standard workload on 127.0.0.1. For each mode
(keep-alive on the 168 B webtest.html, a new connection per request, keep-alive over HTTPS with
nginx's TLS 1.2/1.3 and a self-signed certificate, keep-alive on the 83 KB image_large.jpg) every
round runs the floor (bench/floor/floor.c, built here with cc: the cheapest HTTP/1.1 client through
the socket API), wrk, and Gauntlet's engine on epoll, on epoll with a batch window (plan
io_batch_us), on io_uring (plan io: "uring"; not over https), on io_uring with the window
(plain keep-alive modes only) and under the kernel's normal scheduling policy instead of its
default SCHED_BATCH (plan scheduling "normal") with the same connections, threads and duration, the
order reversed every other round; `--engines` runs some of the engine's five only. `--warmup S` gives the engine's
runs S seconds of warm-up before their duration, where its default (`gauntlet`) tries the batch
window and keeps it or not; the engine's CPU in it comes off its client CPU and nginx's is scaled to
the measured share (`calibrate.without_warmup`); wrk and the floor have none. The measuring is
`gauntlet.lab.calibrate`'s (the same as `gauntlet calibrate`): requests/s from each tool's report,
the client's CPU from getrusage(RUSAGE_CHILDREN) around the child process (the engine runs as
`python -m gauntlet.lab.calibrate`), nginx's CPU from /proc of its master and workers. Ratios are
tool / wrk and tool / floor within a round, then the median over rounds. Loopback only; every run is bounded in
time. Raw samples are written to bench/out/peers-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from gauntlet.lab.calibrate import (
    ENGINE, ENGINE_WARMUP_S, Load, Sample, argv, median_ratio, medians, run_rounds, write_samples,
)
from gauntlet.servers.nginx import start_nginx
from gauntlet.servers.spec import ServerSpec

#: mode -> path served; https and no-keep-alive are told apart by the mode's name.
MODES = {
    "keep-alive": "webtest.html",
    "no-keep-alive": "webtest.html",
    "https": "webtest.html",
    "image": "image_large.jpg",
}
FLOOR = "floor"
ENGINE_BATCH = "gauntlet-batch"
ENGINE_URING = "gauntlet-uring"
ENGINE_URING_BATCH = "gauntlet-uring-batch"
ENGINE_NORMAL = "gauntlet-normal"
#: The batch window of ENGINE_BATCH and ENGINE_URING_BATCH: a latency may read up to this late.
BATCH_US = 200
ENGINES = (ENGINE, ENGINE_BATCH, ENGINE_URING, ENGINE_URING_BATCH, ENGINE_NORMAL)
TOOLS = (FLOOR, "wrk", *ENGINES)
OUT_DIR = Path(__file__).parent / "out"
FLOOR_SOURCE = Path(__file__).parent / "floor" / "floor.c"
FLOOR_BINARY = OUT_DIR / "floor"


def build_floor() -> Path:
    """Compile the floor client (cc, OpenSSL for its TLS mode) unless it is up to date."""
    OUT_DIR.mkdir(exist_ok=True)
    if FLOOR_BINARY.exists() and FLOOR_BINARY.stat().st_mtime >= FLOOR_SOURCE.stat().st_mtime:
        return FLOOR_BINARY
    command = ["cc", "-O2", "-o", str(FLOOR_BINARY), str(FLOOR_SOURCE), "-lssl", "-lcrypto", "-lpthread"]
    built = subprocess.run(command, capture_output=True, text=True, check=False)
    if built.returncode != 0:
        sys.exit(f"cannot build the floor client: {built.stderr.strip()[-300:]} (apt-get install build-essential libssl-dev)")
    return FLOOR_BINARY


def engine_argv_with(**fields: object) -> Callable[[Load], list[str]]:
    """The engine's run of the same plan with `fields` added (io_uring, its batch window, its scheduling)."""

    def engine_argv(load: Load) -> list[str]:
        *command, plan_json = argv(ENGINE, load)
        return [*command, json.dumps({**json.loads(plan_json), **fields})]

    return engine_argv


def tools_for(mode: str, engines: Sequence[str] = ENGINES) -> tuple[str, ...]:
    """io_uring carries plain http:// only (over https the engine would fall back to epoll), and a
    connection per request runs on epoll: io_uring with a window there would measure epoll with
    the window again."""
    left_out = {"https": {ENGINE_URING, ENGINE_URING_BATCH}, "no-keep-alive": {ENGINE_URING_BATCH}}.get(mode, set())
    return tuple(tool for tool in TOOLS if tool not in left_out and (tool in engines or tool not in ENGINES))


def floor_argv(load: Load) -> list[str]:
    url = urlsplit(load.url)
    tls = ["-s"] if url.scheme == "https" else []
    return [
        str(FLOOR_BINARY), f"-c{load.connections}", f"-t{load.threads}", f"-d{load.duration_s}",
        f"-k{int(load.keepalive)}", *tls, url.hostname or "127.0.0.1", str(url.port), url.path,
    ]


def requests_per_s(sample: Sample) -> float:
    return sample.requests_per_s


def client_us_per_request(sample: Sample) -> float:
    return sample.client_us_per_request


def table(samples: dict[str, list[Sample]], args: argparse.Namespace, engines: Sequence[str]) -> str:
    lines = [
        (
            f"nginx 2 workers, webtest.html, -c{args.connections} -t{args.threads}, "
            f"{args.rounds} interleaved rounds of {args.duration} s (engine warm-up {args.warmup} s); medians over rounds; "
            f"{ENGINE_BATCH} and {ENGINE_URING_BATCH}: io_batch_us {BATCH_US}"
        ),
        "",
        "| mode | tool | req/s | / wrk | client µs/req | / wrk | / floor | nginx µs/req | errors |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, measured in samples.items():
        for tool in tools_for(mode, engines):
            m = medians(measured, tool)
            lines.append(
                f"| {mode} | {tool} | {m['requests_per_s']:,.0f} | "
                f"{median_ratio(measured, tool, 'wrk', requests_per_s):.2f} | "
                f"{m['client_cpu_us_per_request']:.1f} | {median_ratio(measured, tool, 'wrk', client_us_per_request):.2f} | "
                f"{median_ratio(measured, tool, FLOOR, client_us_per_request):.2f} | "
                f"{m['server_cpu_us_per_request'] or 0.0:.1f} | {m['errors']} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10, help="seconds per run")
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--warmup",
        type=int,
        default=ENGINE_WARMUP_S,
        help="seconds of warm-up before each engine run's duration, where its default tries the batch window; "
        "its CPU is taken off (the peers have none)",
    )
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    parser.add_argument(
        "--engines", default=",".join(ENGINES), help=f"the engine's runs, comma-separated, of {', '.join(ENGINES)}"
    )
    args = parser.parse_args()
    modes, engines = args.modes.split(","), args.engines.split(",")
    if args.rounds < 1 or args.duration < 1 or args.warmup < 0:
        parser.error("--rounds and --duration must be at least 1, --warmup at least 0")
    if unknown := set(modes) - set(MODES):
        parser.error(f"unknown mode {', '.join(sorted(unknown))}: choose among {', '.join(MODES)}")
    if unknown := set(engines) - set(ENGINES):
        parser.error(f"unknown engine run {', '.join(sorted(unknown))}: choose among {', '.join(ENGINES)}")
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk")
    build_floor()
    extra_tools = {
        FLOOR: floor_argv,
        ENGINE_BATCH: engine_argv_with(io_batch_us=BATCH_US),
        ENGINE_URING: engine_argv_with(io="uring"),
        ENGINE_URING_BATCH: engine_argv_with(io="uring", io_batch_us=BATCH_US),
        ENGINE_NORMAL: engine_argv_with(scheduling="normal"),
    }

    samples: dict[str, list[Sample]] = {}
    for mode in modes:
        # wrk and the floor (OpenSSL) offer AES-256-GCM first, the engine AES-128-GCM: nginx is
        # pinned to OpenSSL's choice, so that every tool pays for the same cipher.
        cipher = "TLS_AES_256_GCM_SHA384" if mode == "https" else None
        with start_nginx(ServerSpec("nginx", workers=2, tls=mode == "https", cipher=cipher)) as server:
            load = Load(
                server.url + MODES[mode], args.connections, args.threads, args.duration, mode != "no-keep-alive",
                warmup_s=args.warmup,
            )

            def show(sample: Sample, mode: str = mode) -> None:
                print(
                    f"{mode:13} round {sample.round + 1} {sample.tool:20} {sample.requests_per_s:10,.0f} req/s"
                    f"  client {sample.client_us_per_request:5.1f} µs/req"
                    f"  nginx {sample.server_us_per_request or 0.0:5.1f} µs/req",
                    file=sys.stderr,
                )

            samples[mode] = run_rounds(load, tools_for(mode, engines), args.rounds, server.pids(), show, extra_tools)
    out_path = write_samples(OUT_DIR, "peers", samples)
    print(table(samples, args, engines))
    print(f"\nraw samples: {out_path}")


if __name__ == "__main__":
    main()
