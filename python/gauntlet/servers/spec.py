"""What a case says about its server: the kind and its settings, in the same words for every driver.

A driver reads the fields that apply to its kind; `None` means the driver's default. The same
names are the suite file's server parameters, the store's case parameters and the report's labels.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from gauntlet.errors import GauntletError


#: Fields that size a server for a run without being one of its settings.
HINTS = frozenset({"expected_connections"})
#: Settings that size or tune a server without changing what it is (its kind, backend, protocol), in
#: the order a case's description names them: findings pair servers across them, the report names them.
SIZING = (
    "workers", "processes", "threads_per_child", "max_request_workers", "min_spare_servers", "max_spare_servers",
    "java_heap_mb", "keepalive_timeout_s", "keepalive_requests", "backend_workers", "backend_threads",
)


@dataclass(frozen=True)
class ServerSpec:
    kind: str
    #: nginx worker_processes, lighttpd server.max-worker, Apache StartServers, built-in threads.
    workers: int | None = None
    #: Apache worker/event: threads in each child process.
    threads_per_child: int | None = None
    #: Apache prefork: the most processes, so the most connections served at once (MaxRequestWorkers
    #: and ServerLimit; None: Debian's 150).
    max_request_workers: int | None = None
    #: Apache prefork: the idle processes it keeps, at least and at most (MinSpareServers and
    #: MaxSpareServers; None: as many as it starts). It forks more while fewer are idle, at most 32
    #: a second, up to `max_request_workers`.
    min_spare_servers: int | None = None
    max_spare_servers: int | None = None
    #: Tomcat: the JVM's largest heap in MiB (-Xmx; None: 256).
    java_heap_mb: int | None = None
    #: Built-in server: processes serving its port (SO_REUSEPORT), each with its own open-files limit.
    processes: int | None = None
    #: Erlang VM (yaws, inets, mochiweb): an idle scheduler spins before it sleeps (the VM's default);
    #: False: `+sbwt none`, it sleeps at once.
    scheduler_busy_wait: bool = True
    keepalive: bool = True
    keepalive_timeout_s: int | None = None
    #: Requests a connection may carry before the server closes it (0: unlimited where allowed).
    keepalive_requests: int | None = None
    access_log: bool = False
    tls: bool = False
    #: Besides its HTTP port, a second port over TLS at once (the instance's `https_url`), where a
    #: load file's `scheme: https` pages go: SPECweb's Ecommerce (apache-*, tomcat).
    also_https: bool = False
    #: HTTP/2 besides HTTP/1.1: h2 through ALPN with `tls`, h2c with prior knowledge without it.
    http2: bool = False
    #: "1.2" or "1.3": the only TLS version the server accepts (None: both).
    tls_version: str | None = None
    #: One cipher suite, by its IANA name (TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256):
    #: the server accepts only that suite, and only its TLS version (servers/tls_pin.py lists them).
    cipher: str | None = None
    #: How dynamic pages are made: None (static only), php-fpm, mod_php, php-cgi, uwsgi, python-cgi,
    #: python-fastcgi (servers/backends/catalog.py).
    backend: str | None = None
    #: How the server reaches a backend pool (php-fpm, uWSGI, fcgiwrap): "unix" (a unix socket) or "tcp" (loopback).
    backend_socket: str = "unix"
    #: FastCGI pool size, uWSGI processes.
    backend_workers: int | None = None
    #: uWSGI threads per process.
    backend_threads: int | None = None
    #: An application served through the backend, on its own database: None or "wordpress" (servers/apps/).
    app: str | None = None
    #: PHP's opcode cache (the thesis's "accelerator"), for php-fpm and mod_php; off: opcache.enable=0.
    opcache: bool = True
    #: WordPress's object cache in APCu (a drop-in object-cache.php), for php-fpm and mod_php.
    apcu: bool = False
    #: How the application reaches its database: "unix" (MariaDB's socket, TCP off) or "tcp" (a loopback port).
    database_socket: str = "unix"
    #: Where the specweb application's PHP sessions are kept: "disk" (a directory in the work dir) or
    #: "memory" (a directory on /dev/shm, a tmpfs: SPECweb's tuned session storage).
    php_sessions: str = "disk"
    #: The specweb application's back end (BeSim): µs each call takes (None: besim.py's default).
    besim_service_time_us: int | None = None
    #: The most connections the server will see at once (measured and idle), set by run, sweep,
    #: capacity and suites from their largest plan: drivers size their connection limits and listen
    #: backlog for it (servers/sizing.py). A hint, not a setting: left out of `params()`.
    expected_connections: int | None = None

    def requests_per_connection(self, default: int, unlimited: int) -> int:
        """keepalive_requests in a server's terms: `default` when unset, and for 0 (no limit) the
        server's own "no limit" value or its largest."""
        if self.keepalive_requests is None:
            return default
        if self.keepalive_requests < 0:
            raise GauntletError(f"{self.kind} needs keepalive_requests of 0 (no limit) or more", "set it to 0 or more")
        return self.keepalive_requests or unlimited

    def with_(self, **changes: Any) -> ServerSpec:
        return replace(self, **changes)

    def params(self) -> dict[str, Any]:
        """The settings that differ from the defaults, for stores and labels (kind included)."""
        defaults = ServerSpec(self.kind)
        return {
            name: value
            for name, value in asdict(self).items()
            if name == "kind" or (name not in HINTS and value != getattr(defaults, name))
        }
