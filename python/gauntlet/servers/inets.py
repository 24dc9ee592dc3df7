"""Erlang's inets httpd as a server under test: its properties rendered from
templates/inets-httpd.config.j2 into a private work dir, started by an Erlang VM in the foreground
(templates/inets-start.erl.j2, `erl -eval`), without distribution, so no epmd is left behind.

One OS process; `workers` is the number of Erlang schedulers. inets's own transfer log has no
client port: with `access_log` a last module in the chain (templates/gauntlet_inets_log.erl.j2,
compiled at start) writes one. inets cannot drop privileges: as root it serves as root.
"""

from __future__ import annotations

from gauntlet.servers.base import ServerInstance
from gauntlet.servers.erlang_vm import SYS_CONFIG, erl_with, eval_argv, ssl_versions, vm_env
from gauntlet.servers.launch import Launch, launch
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import installed, setting
from gauntlet.servers.tls_pin import tls_pin

#: inets's own defaults: keep_alive_timeout 150 s, max_keep_alive_request unlimited. Kept: at its
#: limit inets closes the connection without `Connection: close` on the last response, so a client
#: that reuses it meets a reset (measured: 3 `reset` in 3,500 requests on one connection at 1000).
DEFAULT_KEEPALIVE_TIMEOUT_S = 150
DEFAULT_KEEPALIVE_REQUESTS = 0
#: inets's default max_clients is 150: more concurrent connections get 503. The suites go to thousands.
MAX_CLIENTS = 20_000
START_SCRIPT = "inets-start.erl"


def inets_binary() -> str | None:
    """`erl`, when inets is installed (Debian's erlang-inets)."""
    return erl_with("inets")


def start_inets(spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = 15.0) -> ServerInstance:
    """Start inets httpd on 127.0.0.1 and return once it answers HTTP.

    Keep-alive off is `keep_alive false`; `keepalive_requests` N is `max_keep_alive_request` N - 1
    (inets counts the requests after the first), and 0 (the default) leaves it out (no limit): inets
    closes at its limit without saying so, and the client's next request there is a `reset`. With `access_log`,
    each request is one line `CLIENT_PORT STATUS BYTES "REQUEST"` in `workdir/logs/access.log`;
    the readiness probe is not logged.
    """
    erl = installed(inets_binary(), "inets", "erlang-inets")
    requests = spec.requests_per_connection(DEFAULT_KEEPALIVE_REQUESTS, unlimited=0)

    return launch(
        Launch(
            spec=spec,
            template="inets-httpd.config.j2",
            argv=eval_argv(erl, spec, START_SCRIPT),
            settings={
                "max_clients": MAX_CLIENTS,
                # One request a connection is no keep-alive at all.
                "keepalive": spec.keepalive and requests != 1,
                "keepalive_timeout_s": setting(spec, "keepalive_timeout_s", DEFAULT_KEEPALIVE_TIMEOUT_S),
                # inets counts the requests after a connection's first; 0: no limit, the option left out.
                "keepalive_requests": max(requests - 1, 0),
                "tls_versions": ssl_versions(tls_pin(spec)),
            },
            port=port,
            ready_timeout_s=ready_timeout_s,
            env=vm_env,
            extra_templates={"inets-start.erl.j2": START_SCRIPT, **SYS_CONFIG}
            | ({"gauntlet_inets_log.erl.j2": "src/gauntlet_inets_log.erl"} if spec.access_log else {}),
        )
    )
