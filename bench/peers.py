"""Gauntlet against wrk on the same nginx, rounds interleaved: requests/s and CPU per request.

    .venv/bin/python bench/peers.py [--rounds 3] [--duration 10]

nginx (2 workers, access log off) serves the standard workload's webtest.html on 127.0.0.1. For each
mode (keep-alive, a new connection per request, and keep-alive over HTTPS with nginx's TLS 1.2/1.3
and a self-signed certificate) every round runs wrk and `gauntlet run` with the same
connections, threads and duration, alternating which goes first. Measured per run:
- requests/s and completed requests, from wrk's output and gauntlet's JSON result;
- the client's CPU (user+sys), from getrusage(RUSAGE_CHILDREN) around the subprocess;
- nginx's CPU, from /proc/<pid>/stat of its master and workers around the run.
Ratios are gauntlet / wrk within a round, then the median over rounds: the machine drifts between
rounds far more than two tools differ within one. Loopback only; every run is bounded in time.
Raw samples are written to bench/out/peers-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from gauntlet.servers.nginx import start_nginx
from gauntlet.servers.spec import ServerSpec

MODES = ("keep-alive", "no-keep-alive", "https")
TOOLS = ("wrk", "gauntlet")
OUT_DIR = Path(__file__).parent / "out"
CLK_TCK = os.sysconf("SC_CLK_TCK")
EXTRA_TIME_S = 30  # bound on a run beyond its duration (start-up, connection drain)


@dataclass
class Sample:
    mode: str
    tool: str
    round: int
    requests: int
    errors: int
    requests_per_s: float
    client_cpu_s: float
    server_cpu_s: float

    @property
    def client_us_per_request(self) -> float:
        return self.client_cpu_s * 1e6 / max(self.requests, 1)

    @property
    def server_us_per_request(self) -> float:
        return self.server_cpu_s * 1e6 / max(self.requests, 1)


def cpu_s_of(pids: list[int]) -> float:
    """utime + stime of the processes, from /proc/<pid>/stat (fields 14 and 15, in clock ticks)."""
    ticks = 0
    for pid in pids:
        stat = Path(f"/proc/{pid}/stat").read_text()
        fields = stat[stat.rindex(")") + 2 :].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / CLK_TCK


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_bounded(argv: list[str], duration_s: int) -> str:
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=duration_s + EXTRA_TIME_S, check=False
    )
    if done.returncode != 0:
        sys.exit(f"{argv[0]} failed with status {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def wrk_argv(url: str, mode: str, args: argparse.Namespace) -> list[str]:
    argv = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{args.duration}s", url]
    return argv + (["-H", "Connection: close"] if mode == "no-keep-alive" else [])


def parse_wrk(stdout: str) -> tuple[int, int, float]:
    """(completed requests, errors, requests/s) from wrk's report."""
    requests = int(re.search(r"^\s*(\d+) requests in ", stdout, re.MULTILINE)[1])
    requests_per_s = float(re.search(r"^Requests/sec:\s*([\d.]+)", stdout, re.MULTILINE)[1])
    socket_errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", stdout
    )
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", stdout)
    errors = sum(int(n) for n in socket_errors.groups()) if socket_errors else 0
    return requests, errors + (int(non_2xx[1]) if non_2xx else 0), requests_per_s


def gauntlet_argv(url: str, mode: str, args: argparse.Namespace, json_path: Path) -> list[str]:
    argv = [sys.executable, "-m", "gauntlet", "run", url, "-c", str(args.connections)]
    argv += ["-t", str(args.threads), "-d", f"{args.duration}s", "--json", str(json_path)]
    return argv + (["--no-keepalive"] if mode == "no-keep-alive" else [])


def measure(tool: str, mode: str, round_: int, url: str, pids: list[int], args) -> Sample:
    with tempfile.TemporaryDirectory(prefix="gauntlet-bench-") as tmp:
        json_path = Path(tmp) / "out.json"
        if tool == "wrk":
            argv = wrk_argv(url, mode, args)
        else:
            argv = gauntlet_argv(url, mode, args, json_path)
        server_before_s, client_before_s = cpu_s_of(pids), children_cpu_s()
        stdout = run_bounded(argv, args.duration)
        client_cpu_s = children_cpu_s() - client_before_s
        server_cpu_s = cpu_s_of(pids) - server_before_s
        if tool == "wrk":
            requests, errors, requests_per_s = parse_wrk(stdout)
        else:
            result = json.loads(json_path.read_text())
            requests, errors = result["responses"], result["errors_total"]
            requests_per_s = result["requests_per_s"]
    return Sample(mode, tool, round_, requests, errors, requests_per_s, client_cpu_s, server_cpu_s)


def median_ratio(samples: list[Sample], mode: str, value) -> float:
    """Median over rounds of value(gauntlet) / value(wrk) within the same round."""
    by_round: dict[int, dict[str, Sample]] = {}
    for s in samples:
        if s.mode == mode:
            by_round.setdefault(s.round, {})[s.tool] = s
    return statistics.median(value(r["gauntlet"]) / value(r["wrk"]) for r in by_round.values())


def table(samples: list[Sample], args: argparse.Namespace) -> str:
    lines = [
        (
            f"nginx 2 workers, webtest.html, -c{args.connections} -t{args.threads}, "
            f"{args.rounds} interleaved rounds of {args.duration} s; medians over rounds"
        ),
        "",
        "| mode | tool | req/s | ratio | client µs/req | ratio | nginx µs/req | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode in MODES:
        for tool in TOOLS:
            mine = [s for s in samples if s.mode == mode and s.tool == tool]
            if tool == "wrk":
                rps_ratio = cpu_ratio = "1.00"
            else:
                rps_ratio = f"{median_ratio(samples, mode, lambda s: s.requests_per_s):.2f}"
                cpu_ratio = f"{median_ratio(samples, mode, lambda s: s.client_us_per_request):.2f}"
            rps = statistics.median(s.requests_per_s for s in mine)
            client_us = statistics.median(s.client_us_per_request for s in mine)
            server_us = statistics.median(s.server_us_per_request for s in mine)
            errors = sum(s.errors for s in mine)
            lines.append(
                f"| {mode} | {tool} | {rps:,.0f} | {rps_ratio} | {client_us:.1f} | "
                f"{cpu_ratio} | {server_us:.1f} | {errors} |"
            )
    return "\n".join(lines)


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

    samples: list[Sample] = []
    for mode in MODES:
        with start_nginx(ServerSpec("nginx", workers=2, tls=mode == "https")) as server:
            url = server.url + "webtest.html"
            pids = server.pids()
            for round_ in range(args.rounds):
                order = TOOLS if round_ % 2 == 0 else TOOLS[::-1]
                for tool in order:
                    sample = measure(tool, mode, round_, url, pids, args)
                    samples.append(sample)
                    print(
                        f"{mode:13} round {round_ + 1} {tool:8} {sample.requests_per_s:10,.0f} req/s"
                        f"  client {sample.client_us_per_request:5.1f} µs/req"
                        f"  nginx {sample.server_us_per_request:5.1f} µs/req",
                        file=sys.stderr,
                    )
    OUT_DIR.mkdir(exist_ok=True)
    out_path = OUT_DIR / f"peers-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out_path.write_text(json.dumps([asdict(s) for s in samples], indent=1))
    print(table(samples, args))
    print(f"\nraw samples: {out_path}")


if __name__ == "__main__":
    main()
