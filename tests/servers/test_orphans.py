"""A Gauntlet killed with SIGKILL leaves no server running and nothing on disk: every kind, and a
backend pool of each sort, is ended by the instance's guard (servers/guard.py), which then removes
the cgroup and the work dir; without a cgroup, the guard ends the trees of the processes it was told of."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from gauntlet.servers.pids import kill_all, wait_gone
from gauntlet.servers.registry import KINDS
from gauntlet.servers.spec import ServerSpec
from tests.conftest import require_app, require_available

#: Starts the server, prints its processes and ports, then waits to be killed.
STARTER = """
import json, sys, time
from gauntlet.servers.registry import start_server
from gauntlet.servers.spec import ServerSpec
server = start_server(ServerSpec(**json.loads(sys.argv[1])))
ports = [server.port, *(b.port for b in server.backends if b.port)]
cgroup = str(server.cgroup.path) if server.cgroup else None
print(json.dumps({"pids": server.pids(), "ports": ports, "dirs": [str(server.workdir), cgroup]}), flush=True)
time.sleep(120)
"""
#: The same without a cgroup: a shell with two children, under a guard told only of the shell.
STARTER_WITHOUT_CGROUP = """
import json, sys, time
from pathlib import Path
import psutil
from gauntlet.servers.premises import Guard, Premises, new_workdir
from gauntlet.servers.process import spawn
workdir = new_workdir("guarded")
premises = Premises(workdir, None, Guard(workdir, None))
shell = spawn(["/bin/sh", "-c", "sleep 60 & sleep 60 & wait"], cwd=workdir, log_path=workdir / "log", premises=premises)
while len(tree := [shell.pid, *(p.pid for p in psutil.Process(shell.pid).children())]) < 3:
    time.sleep(0.01)
print(json.dumps({"pids": tree, "ports": [], "dirs": [str(workdir), None]}), flush=True)
time.sleep(120)
"""
#: Tomcat's JVM runs its shutdown hooks on SIGTERM; the others stop within a second.
GONE_WITHIN_S = 20.0

SPECS = [ServerSpec(kind) for kind in KINDS] + [
    ServerSpec("nginx", backend="php-fpm"),
    ServerSpec("nginx", backend="uwsgi"),
    ServerSpec("nginx", backend="python-cgi"),  # through fcgiwrap
    # WordPress: the server, its PHP (FPM's pool, or mod_php inside Apache) and MariaDB.
    ServerSpec("nginx", backend="php-fpm", app="wordpress"),
    ServerSpec("apache-prefork", backend="mod_php", app="wordpress"),
]


def listening(ports: list[int]) -> list[int]:
    return [c.laddr.port for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN and c.laddr.port in ports]


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: "-".join(filter(None, [spec.kind, spec.backend, spec.app])))
def test_a_killed_gauntlet_leaves_no_server_running(spec: ServerSpec) -> None:
    require_available(spec)
    require_app(spec)
    fields = json.dumps({"kind": spec.kind, "backend": spec.backend, "app": spec.app})
    check_killed_starter_leaves_nothing(STARTER, fields, programs=("mariadbd",) if spec.app else ())


def test_without_a_cgroup_the_guard_ends_the_trees_it_was_told_of() -> None:
    check_killed_starter_leaves_nothing(STARTER_WITHOUT_CGROUP)


def check_killed_starter_leaves_nothing(script: str, *args: str, programs: tuple[str, ...] = ()) -> None:
    """Run `script`, read what it started (`programs` among it), SIGKILL it: every process it
    reported ends, its ports close, its work dir and cgroup go."""
    starter = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True)
    processes: list[psutil.Process] = []
    try:
        assert starter.stdout is not None
        started = json.loads(starter.stdout.readline())
        processes = [psutil.Process(pid) for pid in started["pids"]]
        assert set(programs) <= {p.name() for p in processes}
        starter.kill()
        starter.wait(timeout=10)
        dirs = [Path(d) for d in started["dirs"] if d]
        assert not (alive := wait_gone(processes, GONE_WITHIN_S)), f"still running after {GONE_WITHIN_S} s: {alive}"
        deadline = time.monotonic() + 5
        while (kept := [d for d in dirs if d.exists()]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not kept, f"{kept} left behind"
        assert not listening(started["ports"])
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait(timeout=10)
        if starter.stdout is not None:
            starter.stdout.close()
        kill_all([p.pid for p in wait_gone(processes, 0)], 1.0)
