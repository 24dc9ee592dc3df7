"""The distributed path across a network: network namespaces this test creates, joined by a bridge
on a private subnet that exists only inside them. A server runs in one (the built-in server,
counted by its stopped line, or nginx, counted by its access log), a Dask worker in each of two
others, the scheduler and the controller (`gauntlet run`) in a fourth. The counts must be the
server's own, with no error, and the result must name the path the load took: the agents'
veth interfaces, not loopback. Processes are stopped by pid and the namespaces deleted at the end,
also when a test fails.

Needs root and iproute2 (`ip`); without them the test skips with the reason, and fails in CI, which
runs as root with iproute2 installed. To reproduce by hand: docs/distributed.md."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

from gauntlet.servers.builtin import STOPPED
from gauntlet.servers.process import spawn, stop_processes
from tests.agents.merging import VALIDATOR
from tests.agents.test_cli import DASK, scheduler_address
from tests.conftest import missing_here

#: Only inside the namespaces: nothing outside them routes to it, so the load stays there.
SUBNET = "10.213.77"
HOST_NUMBERS = {"ctl": 1, "srv": 2, "w1": 11, "w2": 12}
SERVER_PORT = 8080
SCHEDULER_PORT = 8786
REQUESTS = 10_000
GAUNTLET = [sys.executable, "-m", "gauntlet"]


def ip(*args: str) -> str:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        raise AssertionError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def our_namespaces(prefix: str) -> list[str]:
    return [line.split()[0] for line in ip("netns", "list").splitlines() if line.startswith(prefix)]


@dataclass
class Network:
    """The namespaces (one per role, and a hub holding the bridge) and the processes started in them."""

    prefix: str
    logs: Path
    processes: list[tuple[subprocess.Popen[bytes], list[psutil.Process]]] = field(default_factory=list)

    def namespace(self, role: str) -> str:
        return f"{self.prefix}-{role}"

    @staticmethod
    def address(role: str) -> str:
        return f"{SUBNET}.{HOST_NUMBERS[role]}"

    @staticmethod
    def interface(role: str) -> str:
        return f"gv-{role}"

    def build(self) -> None:
        hub = self.namespace("hub")
        ip("netns", "add", hub)
        ip("-n", hub, "link", "add", "br0", "type", "bridge")
        ip("-n", hub, "link", "set", "br0", "up")
        for role in HOST_NUMBERS:
            inside, peer = self.namespace(role), f"h-{role}"
            ip("netns", "add", inside)
            ip("-n", inside, "link", "set", "lo", "up")
            ip("link", "add", self.interface(role), "netns", inside, "type", "veth", "peer", "name", peer, "netns", hub)
            ip("-n", hub, "link", "set", peer, "master", "br0", "up")
            ip("-n", inside, "addr", "add", f"{self.address(role)}/24", "dev", self.interface(role))
            ip("-n", inside, "link", "set", self.interface(role), "up")

    def argv(self, role: str, *argv: str | Path) -> list[str]:
        return ["ip", "netns", "exec", self.namespace(role), *map(str, argv)]

    def start(self, role: str, name: str, *argv: str | Path) -> subprocess.Popen[bytes]:
        """`argv` in the role's namespace (`ip netns exec` becomes the command: the pid is its own)."""
        proc = spawn(self.argv(role, *argv), cwd=self.logs, log_path=self.logs / f"{name}.log")
        self.processes.append((proc, []))
        return proc

    def stop(self, proc: subprocess.Popen[bytes]) -> None:
        known = [p for started, seen in self.processes if started is proc for p in seen]
        stop_processes(proc, known=known)

    def remember_children(self) -> None:
        """Note every started process's children now: once a parent is gone they cannot be found from it."""
        for proc, seen in self.processes:
            if proc.poll() is None:
                seen.extend(psutil.Process(proc.pid).children(recursive=True))

    def tear_down(self) -> list[str]:
        """Stop every process, delete every namespace; what is still there afterwards."""
        self.remember_children()
        for proc, _ in reversed(self.processes):
            self.stop(proc)
        for namespace in our_namespaces(self.prefix):
            ip("netns", "del", namespace)
        left = [f"pid {p.pid}" for proc, seen in self.processes for p in [*seen] if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        left += [f"pid {proc.pid}" for proc, _ in self.processes if proc.poll() is None]
        return left + [f"namespace {name}" for name in our_namespaces(self.prefix)]


def wait_for_line(path: Path, pattern: str, timeout_s: float) -> re.Match[str]:
    deadline = time.monotonic() + timeout_s
    while True:
        found = re.search(pattern, path.read_text() if path.exists() else "")
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"no line matched {pattern!r} in {path} within {timeout_s} s")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Network]:
    """The namespaces, the scheduler (in ctl) and a worker in each of w1 and w2."""
    if shutil.which("ip") is None:
        missing_here("ip (iproute2) is not installed (apt-get install iproute2)", "CI installs it, so .ci/run is missing it")
    if os.geteuid() != 0:
        missing_here("network namespaces need root", "CI runs as root")
    logs = tmp_path_factory.mktemp("netns")
    lab = Network(f"gnt{os.getpid()}", logs)
    try:
        lab.build()
        address_file = logs / "scheduler.json"
        ctl = lab.address("ctl")
        lab.start("ctl", "scheduler", DASK, "scheduler", "--host", ctl, "--port", SCHEDULER_PORT,
                  "--dashboard-address", f"{ctl}:0", "--scheduler-file", address_file)
        assert scheduler_address(address_file, deadline=time.monotonic() + 60) == f"tcp://{ctl}:{SCHEDULER_PORT}"
        for role in ("w1", "w2"):
            host = lab.address(role)
            lab.start(role, f"worker-{role}", DASK, "worker", f"tcp://{ctl}:{SCHEDULER_PORT}", "--host", host,
                      "--nworkers", "1", "--nthreads", "1", "--no-dashboard", "--dashboard-address", f"{host}:0")
        lab.remember_children()
        yield lab
    finally:
        left = lab.tear_down()
        assert not left, f"left behind: {', '.join(left)}"


NGINX_CONF = """daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 1024; }}
http {{
    access_log {dir}/access.log;
    keepalive_requests 1000000;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{ listen {address}:{port}; location / {{ return 200 "hello"; }} }}
}}
"""


def listening(pid: int, port: int) -> bool:
    """Whether a socket listens on `port` in the network namespace of process `pid` (its /proc/PID/net/tcp)."""
    try:
        rows = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except FileNotFoundError:
        return False
    return any(row.split()[1].endswith(f":{port:04X}") and row.split()[3] == "0A" for row in rows)


@dataclass
class Served:
    """A server in the srv namespace; `requests()` stops it and says how many requests it counted."""

    network: Network
    proc: subprocess.Popen[bytes]
    kind: str

    def requests(self) -> int:
        self.network.stop(self.proc)
        if self.kind == "nginx":
            return len((self.network.logs / "nginx" / "access.log").read_text().splitlines())
        return int(wait_for_line(self.network.logs / "serve.log", STOPPED.pattern, timeout_s=10)["requests"])


def start_nginx(network: Network) -> subprocess.Popen[bytes]:
    nginx = shutil.which("nginx")
    if nginx is None:
        missing_here("nginx is not installed (apt-get install nginx)", "CI installs every server, so .ci/run is missing it")
    workdir = network.logs / "nginx"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir()
    conf = workdir / "nginx.conf"
    conf.write_text(NGINX_CONF.format(dir=workdir, address=network.address("srv"), port=SERVER_PORT))
    proc = network.start("srv", "nginx", nginx, "-p", workdir, "-e", workdir / "error.log", "-c", conf)
    deadline = time.monotonic() + 30
    while not listening(proc.pid, SERVER_PORT):
        assert proc.poll() is None and time.monotonic() < deadline, (workdir / "error.log").read_text()
        time.sleep(0.05)
    return proc


def start_builtin(network: Network) -> subprocess.Popen[bytes]:
    log = network.logs / "serve.log"
    log.unlink(missing_ok=True)
    proc = network.start("srv", "serve", *GAUNTLET, "serve", "--host", network.address("srv"), "--port", SERVER_PORT)
    wait_for_line(log, r"listening on http://", timeout_s=60)
    return proc


@pytest.fixture(params=["builtin", "nginx"])
def server(network: Network, request: pytest.FixtureRequest) -> Iterator[Served]:
    """The built-in server (`gauntlet serve`, counted by its stopped line) or nginx (counted by its
    access log) in the srv namespace on its veth address."""
    proc = start_nginx(network) if request.param == "nginx" else start_builtin(network)
    network.remember_children()  # nginx's worker: the teardown checks it is gone too
    yield Served(network, proc, request.param)
    network.stop(proc)


def run_in_ctl(network: Network, tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    out = tmp_path / "r.json"
    url = f"http://{network.address('srv')}:{SERVER_PORT}/hello"
    argv = network.argv("ctl", *GAUNTLET, "run", url, "--allow-remote", "-n", str(REQUESTS), "-c", "8", "-t", "1",
                        *args, "--json", out)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    VALIDATOR.validate(result)
    return result, " ".join(done.stdout.split())


def test_agents_in_two_namespaces_load_a_server_in_a_third(network: Network, server: Served, tmp_path: Path) -> None:
    result, stdout = run_in_ctl(network, tmp_path, "--scheduler", f"tcp://{network.address('ctl')}:{SCHEDULER_PORT}",
                                "--agents", "2")
    assert server.requests() == result["requests"] == result["responses"] == REQUESTS
    assert result["errors_total"] == 0 and result["status_codes"] == {"200": REQUESTS}
    assert sorted(a["address"].rsplit(":", 1)[0] for a in result["agents"]) == [f"tcp://{SUBNET}.11", f"tcp://{SUBNET}.12"]
    path = result["bottleneck"]["path"]
    assert path["loopback"] is False
    routes = sorted(path["routes"], key=lambda route: route["source"])
    assert [(r["target"], r["source"], r["interface"], r["loopback"]) for r in routes] == [
        (network.address("srv"), network.address(role), network.interface(role), False) for role in ("w1", "w2")
    ]
    assert {r["origin"] for r in routes} == {a["address"] for a in result["agents"]}
    ways = "; ".join(f"{network.address('srv')} via {r['interface']} from {r['origin']}" for r in path["routes"])
    assert f"bandwidth ceiling: not measured (path to {ways}; declare a link with --link 1gbit)" in stdout


def test_the_controller_alone_loads_the_server_across_its_veth(network: Network, server: Served, tmp_path: Path) -> None:
    """Without agents the load leaves from the controller's namespace: its route is the one reported."""
    result, stdout = run_in_ctl(network, tmp_path)
    assert server.requests() == result["requests"] == REQUESTS and result["errors_total"] == 0
    assert result["bottleneck"]["path"] == {
        "loopback": False,
        "routes": [{"origin": "this machine", "target": network.address("srv"), "source": network.address("ctl"),
                    "interface": network.interface("ctl"), "loopback": False}],
    }
    assert f"not measured (path to {network.address('srv')} via gv-ctl from this machine;" in stdout
