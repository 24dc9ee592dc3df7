"""What a distributed run costs on top of a plain one: the local cluster's start-up and, per run,
the wall time of `runner(plan)` against `engine.run(plan)` for the same small plan.

    .venv/bin/python bench/agents_overhead.py [--agents 2,3] [--runs 5] [--requests 2000]

The built-in server (1 thread) serves /hello on 127.0.0.1; the plan is a closed loop of 6
connections and --requests requests, split over the agents. The per-run overhead is the barrier (clock readings,
pinned tasks, every agent ready), the agreed start's lead time and the results' return and merge.
Loopback only; every run is bounded by its request count.
"""

from __future__ import annotations

import argparse
import statistics
import time

from gauntlet import agents, engine
from gauntlet.servers.builtin import start_builtin


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="2,3", help="cluster sizes, comma-separated")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--requests", type=int, default=2_000)
    options = parser.parse_args()
    server = start_builtin(threads=1)
    try:
        plan = {"url": f"{server.url}hello", "connections": 6, "threads": 1, "requests": options.requests}
        plain = []
        for _ in range(options.runs):
            began = time.monotonic()
            engine.run(plan)
            plain.append(time.monotonic() - began)
        print(f"plain run of {options.requests} requests: median {median_ms(plain):.0f} ms")
        for size in (int(n) for n in options.agents.split(",")):
            began = time.monotonic()
            with agents.cluster(agents=size) as runner:
                up_s = time.monotonic() - began
                runs = []
                for _ in range(options.runs):
                    began = time.monotonic()
                    runner(plan)
                    runs.append(time.monotonic() - began)
                began = time.monotonic()
            down_s = time.monotonic() - began
            print(
                f"{size} agents: cluster up {up_s:.2f} s, down {down_s:.2f} s; run median {median_ms(runs):.0f} ms, "
                f"overhead {median_ms(runs) - median_ms(plain):.0f} ms per run"
            )
    finally:
        server.stop()


if __name__ == "__main__":
    main()
