"""MochiWeb as a server under test. MochiWeb is an Erlang library, not a program: the server is a
small module (templates/gauntlet_mochiweb.erl.j2) that serves the docroot's files with
`serve_file`, rendered into a private work dir, compiled and started by an Erlang VM in the
foreground (templates/mochiweb-start.erl.j2), without distribution, so no epmd is left behind.

One OS process; `workers` is the number of Erlang schedulers. MochiWeb waits 300 s for a kept-alive
connection's next request (a constant of mochiweb_http): `keepalive_timeout_s` is refused. The
module limits the requests of a connection itself, and writes the access log (MochiWeb has none).
"""

from __future__ import annotations

from gauntlet.servers.base import ServerInstance
from gauntlet.servers.erlang_vm import SYS_CONFIG, erl_with, eval_argv, ssl_versions, vm_env
from gauntlet.servers.launch import Launch, launch
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import installed, unsupported
from gauntlet.servers.tls_pin import tls_pin

DEFAULT_KEEPALIVE_REQUESTS = 1000
#: MochiWeb's own default `max` (2048 connections) is below the suites' levels.
MAX_CONNECTIONS = 20_000
START_SCRIPT = "mochiweb-start.erl"


def mochiweb_binary() -> str | None:
    """`erl`, when MochiWeb is installed (Debian's erlang-mochiweb)."""
    return erl_with("mochiweb")


def start_mochiweb(spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = 15.0) -> ServerInstance:
    """Start MochiWeb on 127.0.0.1 and return once it answers HTTP.

    Keep-alive off, and the last request `keepalive_requests` allows (0: no limit), end their
    connection the MochiWeb way (`Connection: close`, then the socket closed). With `access_log`,
    each request is one line `CLIENT_PORT STATUS BYTES "REQUEST"` in `workdir/logs/access.log`;
    the readiness probe is not logged.
    """
    if spec.keepalive_timeout_s is not None:
        raise unsupported("mochiweb", "keepalive_timeout_s", "MochiWeb waits 300 s for the next request, a constant")
    erl = installed(mochiweb_binary(), "mochiweb", "erlang-mochiweb")

    return launch(
        Launch(
            spec=spec,
            template="gauntlet_mochiweb.erl.j2",
            argv=eval_argv(erl, spec, START_SCRIPT),
            settings={
                "max_connections": MAX_CONNECTIONS,
                "keepalive": spec.keepalive,
                "keepalive_requests": spec.requests_per_connection(DEFAULT_KEEPALIVE_REQUESTS, unlimited=0),
                "tls_versions": ssl_versions(tls_pin(spec)),
            },
            port=port,
            ready_timeout_s=ready_timeout_s,
            subdirs=("logs", "src"),
            env=vm_env,
            extra_templates={"mochiweb-start.erl.j2": START_SCRIPT, **SYS_CONFIG}
            | ({"gauntlet_mochiweb_log.erl.j2": "src/gauntlet_mochiweb_log.erl"} if spec.access_log else {}),
        )
    )
