"""The engine's open-loop send lag as it runs by default, under SCHED_BATCH, and with a batch
window, rounds interleaved.

    .venv/bin/python bench/send_lag.py [--rates 2000,10000,30000] [--rounds 3] [--duration 5] [--modes keep-alive,h2]
        [--variants normal,none,batch,window]

A load thread under Linux's SCHED_BATCH (plan `scheduling` "batch", the engine's default in a
closed loop) does not preempt the server when a response wakes it: nginx keeps its core, which
made the engine 1.45x h2load on HTTP/2 at 0.38x the CPU (bench/README.md, "SCHED_BATCH"). But a
thread woken by its send timer does not preempt either, so under a constant rate a request may go
out late (under a rate the engine's default is the normal policy); and a thread napping under a
batch window (plan `io_batch_us`) must wake for each send. This measures both: for each mode (HTTP/1.1
keep-alive on nginx's plain port; HTTP/2 over TLS with 10 streams a connection) and each rate, the
engine at that constant rate as it runs by default (`normal`: its warm-up tries the batch window and
the run keeps it or not, the table's `window µs`), without a window (`none`, the default before that
trial), under the policy (`batch`) and with a 200 µs window (`window`), the order reversed every
other round.
Each run reports its send lag (µs from a request's due time to when the loop started it, the
result's `schedule.send_lag_us`) at p50 and p99, its latency (from the due time) at p50 and p99,
the rate achieved, and the client's and nginx's CPU per request (the client's as
`gauntlet.lab.calibrate` takes it: the child process's, its interpreter's start included). Medians over rounds; `lag p99
ratio` is the variant's / normal's within a round, then the median. nginx runs 2 workers under the
normal policy: only the client's threads change. Loopback only; every run is bounded in time. Raw samples
go to bench/out/send-lag-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from gauntlet.lab.calibrate import EXTRA_TIME_S, children_cpu_s, server_cpu_s, write_samples
from gauntlet.plan import Plan
from gauntlet.servers.nginx import start_nginx
from gauntlet.servers.spec import ServerSpec

OUT_DIR = Path(__file__).parent / "out"
MODES = ("keep-alive", "h2")
VARIANTS = ("normal", "none", "batch", "window")
#: The batch window of the `window` variant, µs.
WINDOW_US = 200
H2_STREAMS = 10
WARMUP_US = 1_000_000


@dataclass(frozen=True)
class LagSample:
    mode: str
    rate_per_s: int
    variant: str
    round: int
    achieved_per_s: float
    send_lag_p50_us: int
    send_lag_p99_us: int
    latency_p50_us: int
    latency_p99_us: int
    errors: int
    client_cpu_us_per_request: float
    server_cpu_us_per_request: float
    #: The window the measured interval ran with (µs; the result's `client.io_batch_us`).
    window_us: int


def plan_json(url: str, mode: str, rate_per_s: int, variant: str, args: argparse.Namespace) -> str:
    h2 = mode == "h2"
    plan = Plan(
        url=url,
        connections=args.connections,
        threads=args.threads,
        rate_per_s=rate_per_s,
        warmup_us=WARMUP_US,
        duration_us=args.duration * 1_000_000,
        http_version="2" if h2 else None,
        streams_per_connection=H2_STREAMS if h2 else None,
        io_batch_us={"window": WINDOW_US, "none": 0}.get(variant),
        scheduling="batch" if variant == "batch" else None,
    )
    return json.dumps(plan.engine_json())


def measure(url: str, pids: list[int], mode: str, rate_per_s: int, variant: str, round_: int,
            args: argparse.Namespace) -> LagSample:
    command = [sys.executable, "-m", "gauntlet.lab.calibrate", plan_json(url, mode, rate_per_s, variant, args)]
    server_before_s, client_before_s = server_cpu_s(pids), children_cpu_s()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=args.duration + WARMUP_US / 1e6 + EXTRA_TIME_S,
        check=False,
    )
    client_s, server_s = children_cpu_s() - client_before_s, server_cpu_s(pids) - server_before_s
    if done.returncode != 0:
        sys.exit(f"the engine failed with status {done.returncode}: {done.stderr.strip()[-300:]}")
    result = json.loads(done.stdout)
    # The CPU covers the warm-up too, which at a constant rate sends as many requests a second as
    # the measured interval: CPU over the requests of both.
    responses = max(result["responses"], 1) * (1 + WARMUP_US / (args.duration * 1e6))
    lag, latency = result["schedule"]["send_lag_us"], result["latency_us"]
    return LagSample(
        mode, rate_per_s, variant, round_, result["schedule"]["achieved_rate_per_s"], lag["p50"], lag["p99"],
        latency["p50"], latency["p99"], result["errors_total"], client_s * 1e6 / responses, server_s * 1e6 / responses,
        result["client"]["io_batch_us"],
    )


def table(samples: list[LagSample], args: argparse.Namespace) -> str:
    lines = [
        f"nginx 2 workers, engine -c{args.connections} -t{args.threads} at a constant rate (h2: {H2_STREAMS} streams"
        f" a connection, TLS), {args.rounds} interleaved rounds of {args.duration} s after 1 s of warm-up; medians",
        "",
        "| mode | rate/s | variant | achieved/s | send lag p50 µs | p99 µs | lag p99 ratio | latency p50 µs | p99 µs"
        " | client µs/req | nginx µs/req | errors | window µs |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode in args.modes:
        for rate in args.rates:
            runs = [s for s in samples if (s.mode, s.rate_per_s) == (mode, rate)]
            normal = {s.round: s for s in runs if s.variant == "normal"}
            for variant in args.variants:
                mine = [s for s in runs if s.variant == variant]

                def median(field: str, mine: list[LagSample] = mine) -> float:
                    return statistics.median(getattr(s, field) for s in mine)

                ratio = statistics.median(
                    s.send_lag_p99_us / max(normal[s.round].send_lag_p99_us, 1) for s in mine
                )
                lines.append(
                    f"| {mode} | {rate:,} | {variant} | {median('achieved_per_s'):,.0f} | {median('send_lag_p50_us'):,.0f}"
                    f" | {median('send_lag_p99_us'):,.0f} | {ratio:.2f} | {median('latency_p50_us'):,.0f}"
                    f" | {median('latency_p99_us'):,.0f} | {median('client_cpu_us_per_request'):.1f}"
                    f" | {median('server_cpu_us_per_request'):.1f} | {sum(s.errors for s in mine)}"
                    f" | {', '.join(str(s.window_us) for s in mine)} |"
                )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rates", default="2000,10000,30000", help="requests/s, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5, help="measured seconds per run")
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    parser.add_argument(
        "--variants", default=",".join(VARIANTS), help=f"comma-separated, of {', '.join(VARIANTS)} (normal always runs)"
    )
    args = parser.parse_args()
    args.modes = args.modes.split(",")
    args.variants = ["normal", *(v for v in args.variants.split(",") if v != "normal")]
    try:
        args.rates = [int(rate) for rate in args.rates.split(",")]
    except ValueError:
        parser.error(f"--rates takes whole requests/s, comma-separated (2000,10000): not {args.rates!r}")
    if unknown := set(args.modes) - set(MODES):
        parser.error(f"unknown mode {', '.join(sorted(unknown))}: choose among {', '.join(MODES)}")
    if unknown := set(args.variants) - set(VARIANTS):
        parser.error(f"unknown variant {', '.join(sorted(unknown))}: choose among {', '.join(VARIANTS)}")
    if args.rounds < 1 or args.duration < 1 or min(args.rates) < 1:
        parser.error("--rounds, --duration and each rate must be at least 1")
    samples: list[LagSample] = []
    for mode in args.modes:
        spec = ServerSpec("nginx", workers=2, tls=mode == "h2", http2=mode == "h2")
        with start_nginx(spec) as server:
            for rate in args.rates:
                for round_ in range(args.rounds):
                    for variant in args.variants if round_ % 2 == 0 else args.variants[::-1]:
                        sample = measure(server.url + "webtest.html", server.pids(), mode, rate, variant, round_, args)
                        samples.append(sample)
                        print(
                            f"{mode:10} {rate:7,}/s round {round_ + 1} {variant:9} lag p50 {sample.send_lag_p50_us:6,}"
                            f" p99 {sample.send_lag_p99_us:6,} µs  latency p99 {sample.latency_p99_us:7,} µs"
                            f"  client {sample.client_cpu_us_per_request:5.1f} µs/req",
                            file=sys.stderr,
                        )
    out_path = write_samples(OUT_DIR, "send-lag", {"samples": samples})
    print(table(samples, args))
    print(f"\nraw samples: {out_path}")


if __name__ == "__main__":
    main()
