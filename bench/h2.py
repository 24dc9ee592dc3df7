"""Gauntlet against h2load on the same nginx over HTTP/2 + TLS, rounds interleaved: requests/s and
client CPU per request.

    .venv/bin/python bench/h2.py [--rounds 3] [--duration 10] [--cipher NAME] [--sched-batch] [--io-batch-us N] [--warmup S]

nginx (2 workers, access log off, `http2 on`, TLS with a self-signed certificate) serves the
standard workload from a config written to a temporary directory (the lab's nginx driver serves
HTTP/1 only). For each page (webtest.html, 168 bytes, and the 83 KB image) every round runs
`h2load -c100 -m10 -t2 -D{D}` and Gauntlet's engine with the same plan (100 connections x 10
streams, 2 threads, http_version "2"), alternating which goes first; both on their default TLS
cipher order (AES-128-GCM first), or both on `--cipher`. The table names the cipher each tool
negotiated, and the script fails if they differ (not like for like). `--io-batch-us N` gives the
engine's plan a batch window (plan `io_batch_us`; h2load has no such setting); `--warmup S` gives
the engine's runs S seconds of warm-up, where its default tries the window and keeps it or not (its
CPU in it taken off: `calibrate.without_warmup`). The CPU measuring is
`gauntlet.lab.calibrate`'s: the client's from getrusage(RUSAGE_CHILDREN) around the child process,
nginx's from /proc. Ratios are gauntlet / h2load within a round, then the median over rounds.
Loopback only; every run is bounded in time. Raw samples go to bench/out/h2-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gauntlet.engine import self_signed_certificate, workload_files
from gauntlet.lab.calibrate import (
    ENGINE,
    ENGINE_WARMUP_S,
    EXTRA_TIME_S,
    Sample,
    children_cpu_s,
    median_ratio,
    medians,
    parse,
    server_cpu_s,
    without_warmup,
    write_samples,
)
from gauntlet.lab.peer_cipher import h2load_cipher
from gauntlet.plan import Plan, TlsSettings
from gauntlet.servers.base import write_docroot
from gauntlet.servers.tls_pin import SUITES

PEER = "h2load"
TOOLS = (PEER, ENGINE)
OUT_DIR = Path(__file__).parent / "out"
# Linux's SCHED_BATCH: a client thread woken by a response does not preempt nginx on its core.
SCHED_BATCH = ["chrt", "--batch", "0"]
PAGES = {"168 B page": "webtest.html", "83 KB image": "image_large.jpg"}
NGINX_CONF = """
worker_processes 2;
pid {work}/nginx.pid;
error_log stderr warn;
events {{ worker_connections 4096; }}
http {{
    types {{ text/html html; image/jpeg jpg; image/gif gif; }}
    access_log off;
    sendfile on;
    tcp_nopush on;
    server_tokens off;
    keepalive_requests 1000000;
    client_body_temp_path {work}/temp;
    server {{
        listen 127.0.0.1:{port} ssl http2;
        http2_max_concurrent_streams 128;
        ssl_certificate {work}/cert.pem;
        ssl_certificate_key {work}/key.pem;
        root {work}/docroot;
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def nginx_h2() -> Iterator[tuple[str, list[int]]]:
    """nginx serving h2 over TLS on a free loopback port: (base URL, pids); stopped at the end."""
    with tempfile.TemporaryDirectory(prefix="gauntlet-h2-bench-") as work_dir:
        work = Path(work_dir)
        work.chmod(0o755)  # nginx's workers (nobody, when started as root) read the docroot
        write_docroot(work / "docroot", workload_files())
        cert, key = self_signed_certificate()
        (work / "cert.pem").write_text(cert)
        (work / "key.pem").write_text(key)
        (work / "temp").mkdir()
        port = free_port()
        (work / "nginx.conf").write_text(NGINX_CONF.format(work=work, port=port))
        argv = ["nginx", "-p", f"{work}/", "-c", str(work / "nginx.conf"), "-e", "stderr", "-g", "daemon off;"]
        server = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and server.poll() is None:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            if server.poll() is not None:
                sys.exit(f"nginx did not start: {server.stderr.read() if server.stderr else ''}")
            time.sleep(0.3)
            children = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True, check=False)
            yield f"https://127.0.0.1:{port}/", [server.pid, *map(int, children.stdout.split())]
        finally:
            server.terminate()
            server.wait(timeout=10)


def argv(tool: str, url: str, args: argparse.Namespace) -> list[str]:
    if tool == PEER:
        return [
            PEER,
            f"-t{args.threads}",
            f"-c{args.connections}",
            f"-m{args.streams}",
            f"-D{args.duration}",
            *h2load_cipher(args.cipher),
            url,
        ]
    plan = Plan(
        url=url,
        connections=args.connections,
        threads=args.threads,
        duration_us=args.duration * 1_000_000,
        http_version="2",
        streams_per_connection=args.streams,
        tls=None if args.cipher is None else TlsSettings(cipher=args.cipher),
        io_batch_us=args.io_batch_us,
        warmup_us=args.warmup * 1_000_000 or None,
    )
    return [sys.executable, "-m", "gauntlet.lab.calibrate", json.dumps(plan.engine_json())]


def negotiated(tool: str, stdout: str) -> str:
    """'TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256': the version and suite (IANA name) a run spoke."""
    if tool == PEER:
        version = re.search(r"^TLS Protocol: TLSv([\d.]+)", stdout, re.MULTILINE)
        cipher = re.search(r"^Cipher: (\S+)", stdout, re.MULTILINE)
        by_openssl = {suite.openssl: name for name, suite in SUITES.items()}
        found = (version[1] if version else "?", by_openssl.get(cipher[1], cipher[1]) if cipher else "?")
    else:
        agreed = json.loads(stdout).get("negotiated", {})
        found = (agreed.get("tls_version") or "?", (agreed.get("tls_cipher") or "?").replace("TLS13_", "TLS_", 1))
    return f"TLS {found[0]} {found[1]}"


def measure(tool: str, round_: int, url: str, pids: list[int], args: argparse.Namespace) -> tuple[Sample, str]:
    server_before_s, client_before_s = server_cpu_s(pids), children_cpu_s()
    done = subprocess.run(
        [*SCHED_BATCH, *argv(tool, url, args)] if args.sched_batch else argv(tool, url, args),
        capture_output=True,
        text=True,
        timeout=args.duration + EXTRA_TIME_S,
        check=False,
    )
    client_cpu_s, server_s = children_cpu_s() - client_before_s, server_cpu_s(pids) - server_before_s
    if done.returncode != 0:
        sys.exit(f"{tool} failed with status {done.returncode}: {done.stderr.strip()[-300:]}")
    requests, errors, requests_per_s = parse(tool, done.stdout)
    if tool != PEER:
        client_cpu_s, server_s = without_warmup(done.stdout, client_cpu_s, server_s)
    return Sample(tool, round_, requests, errors, requests_per_s, client_cpu_s, server_s), negotiated(tool, done.stdout)


def table(samples: dict[str, list[Sample]], ciphers: dict[tuple[str, str], set[str]], args: argparse.Namespace) -> str:
    lines = [
        (
            f"nginx 2 workers, HTTP/2 over TLS, -c{args.connections} -m{args.streams} -t{args.threads}, "
            f"{args.rounds} interleaved rounds of {args.duration} s (engine warm-up {args.warmup} s); medians over rounds"
            + (f"; gauntlet with io_batch_us {args.io_batch_us} (h2load has no such setting)" if args.io_batch_us is not None else "")
        ),
        "",
        "| page | tool | req/s | / h2load | client µs/req | / h2load | nginx µs/req | errors | negotiated |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for page, measured in samples.items():
        for tool in TOOLS:
            m = medians(measured, tool)
            rps_ratio = median_ratio(measured, tool, PEER, lambda s: s.requests_per_s)
            cpu_ratio = median_ratio(measured, tool, PEER, lambda s: s.client_us_per_request)
            lines.append(
                f"| {page} | {tool} | {m['requests_per_s']:,.0f} | {rps_ratio:.2f} | "
                f"{m['client_cpu_us_per_request']:.1f} | {cpu_ratio:.2f} | "
                f"{m['server_cpu_us_per_request'] or 0.0:.1f} | {m['errors']} | "
                f"{', '.join(sorted(ciphers[page, tool]))} |"
            )
    return "\n".join(lines)


def show(page: str, sample: Sample) -> None:
    print(
        f"{page:12} round {sample.round + 1} {sample.tool:8} {sample.requests_per_s:10,.0f} req/s"
        f"  client {sample.client_us_per_request:5.1f} µs/req"
        f"  nginx {sample.server_us_per_request or 0.0:5.1f} µs/req  errors {sample.errors}",
        file=sys.stderr,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=10, help="seconds per run")
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--streams", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cipher", choices=sorted(SUITES), help="pin both tools to this suite (default: each one's own order)")
    parser.add_argument(
        "--sched-batch", action="store_true", help="run both tools under SCHED_BATCH (chrt --batch 0): see bench/README.md"
    )
    parser.add_argument(
        "--io-batch-us",
        type=int,
        help="the engine's batch window, µs (plan io_batch_us; 0: none; absent: its default): see bench/README.md",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=ENGINE_WARMUP_S,
        help="seconds of warm-up before each engine run's duration, where its default tries the batch window; "
        "its CPU is taken off (h2load's has none)",
    )
    args = parser.parse_args()
    if args.rounds < 1 or args.duration < 1:
        parser.error("--rounds and --duration must be at least 1")
    if (args.io_batch_us or 0) < 0 or args.warmup < 0:
        parser.error("--io-batch-us must be 0 (no window) or more, --warmup at least 0")
    needed = [(PEER, "nghttp2-client"), ("nginx", "nginx")] + ([("chrt", "util-linux")] if args.sched_batch else [])
    for binary, package in needed:
        if shutil.which(binary) is None:
            sys.exit(f"{binary} is not installed: apt-get install {package}")
    samples: dict[str, list[Sample]] = {page: [] for page in PAGES}
    ciphers: dict[tuple[str, str], set[str]] = {(page, tool): set() for page in PAGES for tool in TOOLS}
    with nginx_h2() as (base_url, pids):
        for round_ in range(args.rounds):
            for page, path in PAGES.items():
                for tool in TOOLS if round_ % 2 == 0 else TOOLS[::-1]:
                    sample, cipher = measure(tool, round_, base_url + path, pids, args)
                    samples[page].append(sample)
                    ciphers[page, tool].add(cipher)
                    show(page, sample)
    out_path = write_samples(OUT_DIR, "h2", samples)
    print(table(samples, ciphers, args))
    print(f"\nraw samples: {out_path}")
    agreed = {cipher for spoken in ciphers.values() for cipher in spoken}
    if len(agreed) > 1:
        sys.exit(f"not like for like: the tools negotiated {' and '.join(sorted(agreed))}; pin one with --cipher")


if __name__ == "__main__":
    main()
