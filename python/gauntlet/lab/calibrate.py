"""Gauntlet's engine against the peer load generators (wrk, h2load) on the same target, round by
round with the order alternating: requests/s and client CPU per request of each, and the ratios
engine / peer as medians of the per-round ratios (the machine drifts between rounds far more than
two tools differ within one; MACHINE-NOTES).

Every tool runs as a child process and its CPU is the child's (getrusage RUSAGE_CHILDREN), the
engine's too: `python -m gauntlet.lab.calibrate PLAN_JSON` runs one plan and prints its result, so
the interpreter's start-up counts against the engine but nothing of the CLI does. Loopback only;
every run is bounded in time.
"""

from __future__ import annotations

import json
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.monitor.procfs import sample_process

ENGINE = "gauntlet"
PEERS = ("wrk", "h2load")
#: The peers that speak HTTP/2 (wrk speaks HTTP/1.1 only).
HTTP2_PEERS = ("h2load",)
PEER_PACKAGES = {"wrk": "wrk", "h2load": "nghttp2-client"}
#: Bound on a run beyond its duration (start-up, connection drain).
EXTRA_TIME_S = 30
#: The engine's warm-up before its measured duration, where its default tries the batch window
#: (docs/architecture.md, "The window's trial"); the peers have none, and its CPU comes off.
ENGINE_WARMUP_S = 1


@dataclass(frozen=True)
class Load:
    """What every tool is asked to do."""

    url: str
    connections: int
    threads: int
    duration_s: int
    keepalive: bool = True
    #: HTTP/2 with this many streams per connection (h2 over https, h2c over http); None: HTTP/1.1.
    http2_streams: int | None = None
    #: https: the one cipher suite (IANA name) the engine and h2load are pinned to; None: each its own order.
    cipher: str | None = None
    #: The engine's warm-up before its `duration_s` (where it tries its batch window); the peers have none.
    warmup_s: int = ENGINE_WARMUP_S


@dataclass(frozen=True)
class Sample:
    tool: str
    round: int
    requests: int
    errors: int
    requests_per_s: float
    client_cpu_s: float
    #: None when Gauntlet did not start the server.
    server_cpu_s: float | None

    @property
    def client_us_per_request(self) -> float:
        return self.client_cpu_s * 1e6 / max(self.requests, 1)

    @property
    def server_us_per_request(self) -> float | None:
        return None if self.server_cpu_s is None else self.server_cpu_s * 1e6 / max(self.requests, 1)


#: How to run a tool this module does not know (bench/'s floor client): its command line for a load.
#: Such a tool reports as the engine does, one JSON object with responses, errors_total and requests_per_s.
ExtraTools = Mapping[str, Callable[[Load], list[str]]]


def installed_peers(http2: bool = False) -> list[str]:
    """The peers installed here; with `http2`, only those that speak it."""
    return [peer for peer in (HTTP2_PEERS if http2 else PEERS) if shutil.which(peer) is not None]


def argv(tool: str, load: Load) -> list[str]:
    """The command line of one run of `tool`."""
    if tool == ENGINE:
        # Imported here: the engine's own process (this module as __main__) then starts without pydantic,
        # whose import would count as the engine's CPU.
        from gauntlet.plan import Plan

        from gauntlet.plan import TlsSettings

        plan = Plan(
            url=load.url, connections=load.connections, threads=load.threads, duration_us=load.duration_s * 1_000_000,
            warmup_us=load.warmup_s * 1_000_000 or None, keepalive=load.keepalive, http_version=None if load.http2_streams is None else "2",
            streams_per_connection=load.http2_streams, tls=None if load.cipher is None else TlsSettings(cipher=load.cipher),
        )
        return [sys.executable, "-m", "gauntlet.lab.calibrate", json.dumps(plan.engine_json())]
    close = [] if load.keepalive else ["-H", "Connection: close"]
    if tool == "wrk":
        if load.http2_streams is not None:
            raise GauntletError("wrk speaks HTTP/1.1 only", "Compare HTTP/2 against h2load")
        return ["wrk", f"-t{load.threads}", f"-c{load.connections}", f"-d{load.duration_s}s", *close, load.url]
    if not load.keepalive:
        raise GauntletError("h2load's duration mode never ends with 'Connection: close'", "Compare without it against wrk")
    protocol = ["--h1"] if load.http2_streams is None else [f"-m{load.http2_streams}"]
    from gauntlet.lab.peer_cipher import h2load_cipher

    return [
        "h2load", *protocol, *h2load_cipher(load.cipher), f"-t{load.threads}", f"-c{load.connections}",
        f"-D{load.duration_s}", load.url,
    ]


def parse(tool: str, stdout: str) -> tuple[int, int, float]:
    """(completed requests, errors, requests/s) from a tool's report."""
    if tool not in PEERS:
        result = json.loads(stdout)
        return result["responses"], result["errors_total"], result["requests_per_s"]
    if tool == "wrk":
        requests = int(_find(r"^\s*(\d+) requests in ", stdout, tool))
        requests_per_s = float(_find(r"^Requests/sec:\s*([\d.]+)", stdout, tool))
        socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", stdout)
        non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", stdout)
        errors = sum(int(n) for n in socket_errors.groups()) if socket_errors else 0
        return requests, errors + (int(non_2xx[1]) if non_2xx else 0), requests_per_s
    done = re.search(r"^requests: .*?(\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", stdout, re.MULTILINE)
    if done is None:
        raise GauntletError(f"h2load printed no request counts: {stdout[-300:]!r}", "Run the same h2load by hand")
    requests_per_s = float(_find(r"^finished in [\d.]+\w*, ([\d.]+) req/s", stdout, tool))
    return int(done[1]), sum(int(n) for n in done.groups()[1:]), requests_per_s


def _find(pattern: str, text: str, tool: str) -> str:
    found = re.search(pattern, text, re.MULTILINE)
    if found is None:
        raise GauntletError(f"{tool}'s report has no {pattern!r}: {text[-300:]!r}", f"Run the same {tool} by hand")
    return found[1]


def server_cpu_s(pids: Sequence[int]) -> float:
    """User + system CPU of the server's processes so far (threads included)."""
    samples = [sample_process(pid) for pid in pids]
    return sum(s.user_s + s.system_s for s in samples if s is not None)


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(
    tool: str, round_: int, load: Load, server_pids: Sequence[int] | None, extra_tools: ExtraTools | None = None
) -> Sample:
    """One bounded run of `tool` against `load.url`, with its CPU and the server's."""
    command = extra_tools[tool](load) if extra_tools and tool in extra_tools else argv(tool, load)
    server_before_s, client_before_s = server_cpu_s(server_pids or []), children_cpu_s()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=load.duration_s + EXTRA_TIME_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise GauntletError(f"{tool} ran past {load.duration_s + EXTRA_TIME_S} s", f"Run the same {tool} by hand") from None
    client_cpu = children_cpu_s() - client_before_s
    server_cpu = server_cpu_s(server_pids) - server_before_s if server_pids else None
    if done.returncode != 0:
        raise GauntletError(f"{tool} failed with status {done.returncode}: {done.stderr.strip()[-300:]}", "Run it by hand")
    requests, errors, requests_per_s = parse(tool, done.stdout)
    if tool not in PEERS:
        client_cpu, server_cpu = without_warmup(done.stdout, client_cpu, server_cpu)
    return Sample(tool, round_, requests, errors, requests_per_s, client_cpu, server_cpu)


def without_warmup(stdout: str, client_cpu_s: float, server_cpu_s: float | None) -> tuple[float, float | None]:
    """An engine run's client and server CPU less its warm-up's (plan `warmup_us`): the load threads' CPU in
    it (their whole CPU less the measured interval's, as the result gives both) comes off the client's, and
    the server's is scaled to the measured interval's share of the run. As given for a run without one, and
    for the floor's report."""
    result = json.loads(stdout)
    warmup_us = result["plan"].get("warmup_us", 0) if "client" in result else 0
    if not warmup_us:
        return client_cpu_s, server_cpu_s
    measured_cpu_us = result["client"]["cpu_us_per_request"] * (result["responses"] + result["errors_total"])
    warmup_cpu_s = (result["client"]["cpu_us"] - measured_cpu_us) / 1e6
    measured_share = result["elapsed_us"] / (result["elapsed_us"] + warmup_us)
    return client_cpu_s - warmup_cpu_s, None if server_cpu_s is None else server_cpu_s * measured_share


def run_rounds(
    load: Load,
    tools: Sequence[str],
    rounds: int,
    server_pids: Sequence[int] | None,
    on_sample: Callable[[Sample], None] | None = None,
    extra_tools: ExtraTools | None = None,
) -> list[Sample]:
    """Every tool once per round, the order reversed every other round."""
    samples = []
    for round_ in range(rounds):
        for tool in tools if round_ % 2 == 0 else tools[::-1]:
            sample = measure(tool, round_, load, server_pids, extra_tools)
            samples.append(sample)
            if on_sample is not None:
                on_sample(sample)
    return samples


def median_ratio(samples: Sequence[Sample], tool: str, other: str, value: Callable[[Sample], float]) -> float:
    """Median over rounds of value(tool) / value(other) within the same round."""
    by_round: dict[int, dict[str, Sample]] = {}
    for sample in samples:
        by_round.setdefault(sample.round, {})[sample.tool] = sample
    return statistics.median(value(r[tool]) / value(r[other]) for r in by_round.values() if tool in r and other in r)


def medians(samples: Sequence[Sample], tool: str) -> dict[str, Any]:
    """One tool's medians over its rounds, and its errors added up."""
    mine = [s for s in samples if s.tool == tool]
    server = [s.server_us_per_request for s in mine if s.server_us_per_request is not None]
    return {
        "requests_per_s": statistics.median(s.requests_per_s for s in mine),
        "client_cpu_us_per_request": statistics.median(s.client_us_per_request for s in mine),
        "server_cpu_us_per_request": statistics.median(server) if server else None,
        "errors": sum(s.errors for s in mine),
    }


def write_samples(out_dir: Path, prefix: str, samples: Mapping[str, Sequence[Sample]]) -> Path:
    """Every sample, grouped as given, to a timestamped JSON file in `out_dir`; its path."""
    out_dir.mkdir(exist_ok=True)
    out_path = out_dir / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out_path.write_text(json.dumps({group: [asdict(s) for s in found] for group, found in samples.items()}, indent=1))
    return out_path


def summary(samples: Sequence[Sample], peers: Sequence[str]) -> dict[str, Any]:
    """Each tool's medians, and the engine's ratios to each peer (JSON-able)."""
    tools = {tool: medians(samples, tool) for tool in (ENGINE, *peers)}
    ratios = {
        peer: {
            "requests_per_s": median_ratio(samples, ENGINE, peer, lambda s: s.requests_per_s),
            "client_cpu_us_per_request": median_ratio(samples, ENGINE, peer, lambda s: s.client_us_per_request),
        }
        for peer in peers
    }
    return {"tools": tools, "ratios": ratios, "samples": [asdict(s) for s in samples]}


if __name__ == "__main__":
    print(json.dumps(engine.run(json.loads(sys.argv[1])).result))
