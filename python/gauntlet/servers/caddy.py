"""Caddy as a server under test: a Caddyfile rendered from templates/Caddyfile.j2 into a private work
dir, `caddy run` in the foreground: one Go process, no admin endpoint, no automatic HTTPS.

Go's runtime runs Caddy's goroutines on GOMAXPROCS threads, which `workers` sets. Go's HTTP server
has no limit on the requests of one connection, and its TLS fixes the TLS 1.3 cipher suites itself:
a spec asking for either is refused. Caddy cannot drop privileges: as root it serves as root.
"""

from __future__ import annotations

from pathlib import Path

from gauntlet.servers.backends.catalog import Gateway
from gauntlet.servers.base import ServerInstance, find_binary
from gauntlet.servers.launch import Launch, launch
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import installed, setting, unsupported
from gauntlet.servers.tls_pin import tls_pin

#: PHP through a PHP-FPM pool (`php_fastcgi`); Caddy forks no CGI and speaks no uwsgi.
BACKENDS: dict[str, Gateway] = {"php-fpm": "fastcgi"}
#: Caddy's own default idle timeout (5 minutes).
DEFAULT_KEEPALIVE_TIMEOUT_S = 300


def caddy_binary() -> str | None:
    return find_binary("caddy")


def start_caddy(spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = 10.0) -> ServerInstance:
    """Start Caddy on 127.0.0.1 and return once it answers HTTP.

    `spec.workers` is GOMAXPROCS (default: Go's, one per CPU); `keepalive_timeout_s` is the idle
    timeout; keep-alive off makes every response say `Connection: close`, after which Go closes
    the connection. With `access_log`, each request is one JSON line in `workdir/logs/access.log`
    (`request.remote_port` is the client port); the readiness probe is not logged.
    """
    if spec.keepalive_requests:
        raise unsupported("caddy", "keepalive_requests", "Go's HTTP server has no limit on a connection's requests")
    pin = tls_pin(spec)
    if pin.suite is not None and pin.tls13_cipher is not None:
        raise unsupported("caddy", f"the cipher suite {pin.suite.iana}", "Go's TLS picks the TLS 1.3 suite itself")
    gomaxprocs = setting(spec, "workers", 0)  # 0: Go's own choice, one per CPU
    keepalive_timeout_s = setting(spec, "keepalive_timeout_s", DEFAULT_KEEPALIVE_TIMEOUT_S)
    binary = installed(caddy_binary(), "caddy", "caddy")

    def environment(workdir: Path) -> dict[str, str]:
        # Caddy keeps its state (autosave.json, certificates) under HOME and the XDG directories.
        env = {"HOME": str(workdir), "XDG_CONFIG_HOME": f"{workdir}/config", "XDG_DATA_HOME": f"{workdir}/data"}
        if gomaxprocs:
            env["GOMAXPROCS"] = str(gomaxprocs)
        return env

    return launch(
        Launch(
            spec=spec,
            template="Caddyfile.j2",
            argv=lambda config: [binary, "run", "--config", str(config), "--adapter", "caddyfile"],
            settings={
                "keepalive": spec.keepalive,
                "keepalive_timeout_s": keepalive_timeout_s,
            },
            port=port,
            ready_timeout_s=ready_timeout_s,
            env=environment,
            gateways=BACKENDS,
        )
    )
