"""Yaws as a server under test: config rendered from templates/yaws.conf.j2 into a private work dir,
run by the Erlang VM in the foreground (`erl -run yaws`, as Debian's `yaws` script does, without
its interactive shell or daemon mode and without Erlang distribution, so no epmd is left behind).

One OS process; `workers` is the number of Erlang schedulers (`+S N:N`, threads named
`N_scheduler`). The access log is written by a small logger module (templates/gauntlet_yaws_log.erl.j2,
compiled by Yaws at start) because Yaws's own has no client port. Yaws cannot drop privileges:
as root it serves as root.
"""

from __future__ import annotations

from pathlib import Path

from gauntlet.servers.base import ServerInstance, find_binary, program_version, version_in
from gauntlet.servers.erlang_vm import SYS_CONFIG, erl_binary, vm_argv, vm_env
from gauntlet.servers.launch import Launch, launch
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import installed, setting
from gauntlet.servers.tls_pin import tls_pin

EBIN = Path("/usr/lib/yaws/ebin")
#: Yaws's own default keepalive_timeout (30 s).
DEFAULT_KEEPALIVE_TIMEOUT_S = 30
DEFAULT_KEEPALIVE_REQUESTS = 1000


def yaws_binary() -> str | None:
    return find_binary("yaws")


def yaws_version() -> str:
    """From the installed application's directory (/usr/lib/yaws-2.1.1): `yaws --version` starts
    an Erlang VM, a second or more, and every run's environment asks for it."""
    found = sorted(Path("/usr/lib").glob("yaws-*/ebin/yaws.app"))
    if found:
        return version_in(found[-1].parent.parent.name)
    binary = yaws_binary()
    return program_version([binary, "--version"]) if binary else "unknown"


def start_yaws(spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = 15.0) -> ServerInstance:
    """Start Yaws on 127.0.0.1 and return once it answers HTTP.

    Keep-alive off is `keepalive_maxuses = 1`; `keepalive_requests` 0 is `nolimit`. With
    `access_log`, each request is one line `CLIENT_PORT STATUS BYTES "REQUEST"` in
    `workdir/logs/access.log`; the readiness probe is not logged.
    """
    keepalive_timeout_s = setting(spec, "keepalive_timeout_s", DEFAULT_KEEPALIVE_TIMEOUT_S)
    requests = spec.requests_per_connection(DEFAULT_KEEPALIVE_REQUESTS, unlimited=0)
    pin = tls_pin(spec)
    erl = installed(erl_binary() if yaws_binary() and EBIN.is_dir() else None, "yaws", "yaws")

    def argv(config: Path) -> list[str]:
        return [*vm_argv(erl, spec, config.parent), "-pa", str(EBIN), "-run", "yaws", "-conf", str(config)]

    return launch(
        Launch(
            spec=spec,
            template="yaws.conf.j2",
            argv=argv,
            settings={
                "ebin": EBIN,
                "keepalive_timeout_s": keepalive_timeout_s,
                "keepalive_maxuses": (requests or "nolimit") if spec.keepalive else 1,  # 0: unlimited
                "tls_protocols": ", ".join(f"tlsv{version}" for version in reversed(pin.versions)),
            },
            port=port,
            ready_timeout_s=ready_timeout_s,
            env=vm_env,
            extra_templates=SYS_CONFIG
            | ({"gauntlet_yaws_log.erl.j2": "src/gauntlet_yaws_log.erl"} if spec.access_log else {}),
        )
    )
