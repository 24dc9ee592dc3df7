"""h2o as a server under test: config rendered from templates/h2o.conf.j2 into a private work dir,
one process running `num-threads` event loops, in the foreground; as root it runs as `nobody`.

h2o 2.2 keeps every HTTP/1.1 connection open unless the client says `Connection: close`, and never
limits the requests on one: a spec asking the server for either is refused (support.py).
"""

from __future__ import annotations

from pathlib import Path

from gauntlet.servers.backends.catalog import Gateway
from gauntlet.servers.base import ServerInstance, find_binary
from gauntlet.servers.launch import Launch, launch
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import installed, setting, unsupported
from gauntlet.servers.tls_pin import tls_pin

#: PHP through a PHP-FPM pool (`file.custom-handler` with `fastcgi.connect`); Gauntlet's h2o driver
#: runs no CGI or uwsgi backends.
BACKENDS: dict[str, Gateway] = {"php-fpm": "fastcgi"}
DEFAULT_THREADS = 2
#: h2o's own default `http1-request-timeout`.
DEFAULT_KEEPALIVE_TIMEOUT_S = 10
MAX_CONNECTIONS = 8192


def h2o_binary() -> str | None:
    return find_binary("h2o")


def start_h2o(spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = 10.0) -> ServerInstance:
    """Start h2o on 127.0.0.1 and return once it answers HTTP.

    `spec.workers` is `num-threads` (default 2); `keepalive_timeout_s` is `http1-request-timeout`.
    With `access_log`, each request is one line `CLIENT_PORT STATUS BYTES "REQUEST"` in
    `workdir/logs/access.log`; the readiness probe is not logged.
    """
    if not spec.keepalive:
        raise unsupported("h2o", "keep-alive off", "h2o 2.2 closes a connection only when the client asks")
    if spec.keepalive_requests:
        raise unsupported("h2o", "keepalive_requests", "h2o 2.2 has no limit on the requests of a connection")
    threads = setting(spec, "workers", DEFAULT_THREADS)
    keepalive_timeout_s = setting(spec, "keepalive_timeout_s", DEFAULT_KEEPALIVE_TIMEOUT_S)
    pin = tls_pin(spec)
    binary = installed(h2o_binary(), "h2o", "h2o")
    # The newest version and a TLS 1.3 suite are pinned in OpenSSL's own config (see the template).
    openssl_conf = {"h2o-openssl.cnf.j2": "openssl.cnf"} if pin.pinned else {}

    def environment(workdir: Path) -> dict[str, str]:
        return {"OPENSSL_CONF": str(workdir / "openssl.cnf")} if openssl_conf else {}

    return launch(
        Launch(
            spec=spec,
            template="h2o.conf.j2",
            argv=lambda config: [binary, "-c", str(config)],
            settings={
                "threads": threads,
                "max_connections": MAX_CONNECTIONS,
                "keepalive_timeout_s": keepalive_timeout_s,
            },
            port=port,
            ready_timeout_s=ready_timeout_s,
            subdirs=("logs", "ready"),
            env=environment,
            gateways=BACKENDS,
            extra_templates=openssl_conf,
        )
    )
