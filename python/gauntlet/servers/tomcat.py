"""Tomcat as a server under test: Debian's Tomcat 10 (CATALINA_HOME) run by `catalina.sh run` in the
foreground with CATALINA_BASE = a private work dir holding its own server.xml (rendered from
templates/tomcat-server.xml.j2), conf/web.xml (the default servlet and the types Gauntlet serves)
and a ROOT webapp whose files are the standard workload.

One JVM; `workers` is the request thread pool (an Executor whose threads are named `worker-N`).
The JVM starts slowly, hence the long ready timeout, and gets a modest heap. Tomcat cannot drop
privileges itself (Debian's service does it with systemd): as root it serves as root.
"""

from __future__ import annotations

import os
from pathlib import Path

from gauntlet.servers.base import ServerInstance
from gauntlet.servers.launch import Launch, launch
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.support import installed, setting
from gauntlet.servers.tls_pin import tls_pin

CATALINA_HOME = Path("/usr/share/tomcat10")
#: A modest heap for 2-core test machines, in MiB, unless the spec's `java_heap_mb` says otherwise.
DEFAULT_HEAP_MB = 256
#: Tomcat exits, rather than runs without its connector, when it cannot bind the port.
JAVA_OPTS = "-Xms64m -Dorg.apache.catalina.startup.EXIT_ON_INIT_FAILURE=true"
#: Tomcat's own pool sizes, used when `workers` is not set.
DEFAULT_MAX_THREADS = 200
DEFAULT_MIN_SPARE_THREADS = 10
#: Tomcat's own keepAliveTimeout default (its connectionTimeout, 20 s).
DEFAULT_KEEPALIVE_TIMEOUT_S = 20
DEFAULT_KEEPALIVE_REQUESTS = 1000
READY_TIMEOUT_S = 60.0


def tomcat_binary() -> str | None:
    catalina = CATALINA_HOME / "bin" / "catalina.sh"
    return str(catalina) if os.access(catalina, os.X_OK) else None


def start_tomcat(
    spec: ServerSpec, *, port: int | None = None, ready_timeout_s: float = READY_TIMEOUT_S
) -> ServerInstance:
    """Start Tomcat on 127.0.0.1 and return once it answers HTTP.

    `spec.workers` sets the request threads (maxThreads = minSpareThreads, all started at once);
    keep-alive off is maxKeepAliveRequests 1, `keepalive_requests` 0 is unlimited (-1). With
    `access_log`, each request is one line `CLIENT_PORT STATUS BYTES "REQUEST"` in
    `workdir/logs/access.log`; the readiness probe is not logged. With `http2`, Http2Protocol
    serves h2 through ALPN over TLS and h2c in clear.
    """
    max_threads = setting(spec, "workers", DEFAULT_MAX_THREADS)
    min_spare_threads = DEFAULT_MIN_SPARE_THREADS if spec.workers is None else max_threads
    keepalive_timeout_s = setting(spec, "keepalive_timeout_s", DEFAULT_KEEPALIVE_TIMEOUT_S)
    heap_mb = setting(spec, "java_heap_mb", DEFAULT_HEAP_MB)
    requests = spec.requests_per_connection(DEFAULT_KEEPALIVE_REQUESTS, unlimited=-1)
    pin = tls_pin(spec)
    catalina = installed(tomcat_binary(), "tomcat", "tomcat10")

    def environment(workdir: Path) -> dict[str, str]:
        return {
            "CATALINA_HOME": str(CATALINA_HOME),
            "CATALINA_BASE": str(workdir),
            "CATALINA_TMPDIR": str(workdir / "temp"),
            "JAVA_OPTS": f"{JAVA_OPTS} -Xmx{heap_mb}m",
        }

    return launch(
        Launch(
            spec=spec,
            template="tomcat-server.xml.j2",
            argv=lambda config: [catalina, "run", "-config", str(config)],
            settings={
                "max_threads": max_threads,
                "min_spare_threads": min_spare_threads,
                "max_keepalive_requests": requests if spec.keepalive else 1,
                "keepalive_timeout_s": keepalive_timeout_s,
                "tls_protocols": ",".join(f"TLSv{version}" for version in pin.versions),
            },
            port=port,
            ready_timeout_s=ready_timeout_s,
            subdirs=("logs", "temp", "webapps", "ready"),
            env=environment,
            extra_templates={"tomcat-web.xml.j2": "conf/web.xml"},
        )
    )
