"""HTTP/2 from every driver that serves it: h2 through ALPN over HTTPS and h2c with prior knowledge
in clear, driven by h2load (nghttp2) and by the engine with several streams per connection, and the
server's own access log counting exactly the requests each completed, as the lab's log-count
invariant reads it (lighttpd's preface lines left out). Kinds that cannot serve HTTP/2 are refused before anything
starts, with the reason."""

from __future__ import annotations

import io
import re
import shutil
import socket
import ssl
import subprocess

import pytest
from rich.console import Console

from gauntlet.analysis.invariants import SERVER_LOG_COUNT
from gauntlet.errors import GauntletError
from gauntlet.lab.access_log import LoggedRequests
from gauntlet.lab.measure import DEFAULT_SETTINGS, measure_run
from gauntlet.model.loadfile import LoadFile
from gauntlet.plan import Plan
from gauntlet.report.tables import outcomes_table
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.nginx import start_nginx
from gauntlet.servers.process import http_get
from gauntlet.servers.registry import KINDS, start_server
from gauntlet.servers.spec import ServerSpec
from tests.conftest import Start, require_installed

HTTP2_KINDS = [name for name, kind in KINDS.items() if kind.no_http2 is None]
HTTP1_KINDS = [name for name, kind in KINDS.items() if kind.no_http2 is not None]
REQUESTS = 400
#: h2o 2.2 offers h2 through ALPN whatever its config says (it has no switch for it).
ALWAYS_OFFERS_H2 = {"h2o"}


def h2load(url: str, requests: int, connections: int = 4, streams: int = 10) -> tuple[str, int]:
    """(the protocol h2load negotiated, the requests that succeeded)."""
    require_installed("h2load", shutil.which("h2load") is not None, "apt-get install nghttp2-client")
    done = subprocess.run(
        ["h2load", "-n", str(requests), "-c", str(connections), "-m", str(streams), url],
        capture_output=True, text=True, timeout=60, check=False,
    )
    protocol = re.search(r"^Application protocol: (\S+)", done.stdout, re.MULTILINE)
    succeeded = re.search(r"^requests: .* (\d+) succeeded", done.stdout, re.MULTILINE)
    assert protocol and succeeded, done.stdout + done.stderr
    return protocol[1], int(succeeded[1])


def alpn(server: ServerInstance) -> str | None:
    """What the server picks when a client offers h2 and HTTP/1.1."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    context.set_alpn_protocols(["h2", "http/1.1"])
    with socket.create_connection((server.host, server.port), timeout=5) as raw, context.wrap_socket(raw) as tls:
        return tls.selected_alpn_protocol()


@pytest.mark.parametrize("tls", [True, False], ids=["h2", "h2c"])
@pytest.mark.parametrize("kind", HTTP2_KINDS)
def test_the_server_serves_http2_and_logs_each_request_once(server: Start, kind: str, tls: bool) -> None:
    instance = server(kind, http2=True, tls=tls, access_log=True)
    url = f"{instance.url}webtest.html"
    logged = LoggedRequests(instance)
    logged.mark(lambda: 0)  # before the engine's first request: none counted yet
    protocol, succeeded = h2load(url, REQUESTS)
    assert (protocol, succeeded) == ("h2" if tls else "h2c", REQUESTS)
    count = logged.since_mark({"responses": succeeded})
    assert count is not None and count.lines == REQUESTS
    plan = Plan(url=url, connections=4, threads=1, requests=REQUESTS, http_version="2", streams_per_connection=10)
    logged.mark(lambda: 0)  # before the engine's first request (none counted yet): no warm-up, all are measured
    result = measure_run(plan, instance, DEFAULT_SETTINGS).result
    assert (result["responses"], result["errors_total"]) == (REQUESTS, 0)
    assert result["negotiated"]["protocol"] == "h2" and result["negotiated"]["streams_per_connection"] == 10
    assert (result["negotiated"]["tls_version"] is not None) == tls
    count = logged.since_mark(result)
    assert count is not None and count.lines == REQUESTS
    assert result["invariants"]["checks"][SERVER_LOG_COUNT]["held"] is True
    if tls:
        assert alpn(instance) == "h2"
    if tls or kind != "nginx":  # nginx 1.22's h2c port speaks HTTP/2 alone
        answer = http_get(instance.host, instance.port, "/webtest.html", tls=tls)
        assert answer is not None and answer[0] == 200, "HTTP/1.1 is still served beside HTTP/2"


def test_nginx_at_its_requests_per_connection_limit_has_the_streams_it_left_sent_again(server: Start) -> None:
    """At keepalive_requests nginx sends a graceful GOAWAY (NO_ERROR): the streams above its last
    stream id were not processed, so they go again on a new connection and are no errors. (Apache's
    MaxKeepAliveRequests does not bound an HTTP/2 connection's streams.)"""
    instance = server("nginx", http2=True, tls=True, access_log=True, keepalive_requests=50)
    # Streams must be in flight past nginx's limit when its GOAWAY comes. Under SCHED_BATCH (the
    # closed loop's default) the client often waits out nginx's slice, reads the 50th answer and
    # the GOAWAY together and sends nothing past them (goaway_resent 0 in 3 of 14 runs; 0 of 8
    # under the normal policy).
    plan = Plan(url=f"{instance.url}webtest.html", connections=2, threads=1, requests=REQUESTS, http_version="2",
                streams_per_connection=10, scheduling="normal")
    logged = LoggedRequests(instance)
    logged.mark(lambda: 0)  # before the engine's first request: none counted yet
    result = measure_run(plan, instance, DEFAULT_SETTINGS).result
    assert (result["responses"], result["errors_total"]) == (REQUESTS, 0), result["errors"]
    assert result["goaway_resent"] > 0 and result["connections_opened"] >= REQUESTS // 50
    count = logged.since_mark(result)
    assert count is not None and count.lines == REQUESTS, "each request processed once"
    shown = Console(file=io.StringIO(), width=120)
    shown.print(outcomes_table(result))
    text = shown.file.getvalue()
    row = next(line.split() for line in text.splitlines() if "graceful GOAWAY" in line)
    assert row[-1] == str(result["goaway_resent"]) and "error goaway" not in text


#: Two users, each with a page and its images on the plan's target and an https page on the
#: second target (the same server): one HTTP/2 connection per user and target.
SESSIONS = {
    "sessions": [{"name": "shop", "think": "20ms", "pages": [
        {"name": "home", "path": "/webtest.html", "embedded": ["/image_small.gif", "/image_10k.png"]},
        {"name": "pay", "path": "/webtest.html", "scheme": "https", "embedded": ["/image_small.gif"]},
    ]}],
    "users": 2,
    "measure": "1s",
}


@pytest.mark.parametrize("kind", ["nginx", "h2o"])
def test_sessions_over_http2_keep_a_user_on_one_connection_per_target_and_the_log_agrees(server: Start, kind: str) -> None:
    instance = server(kind, http2=True, tls=True, access_log=True)
    plan = LoadFile.model_validate(SESSIONS).to_plan(instance.url).model_copy(update={"http_version": "2"})
    logged = LoggedRequests(instance)
    logged.mark(lambda: 0)  # before the engine's first request: no warm-up, every request is measured
    result = measure_run(plan, instance, DEFAULT_SETTINGS).result
    assert result["errors_total"] == 0, result["errors"]
    assert (result["negotiated"]["protocol"], result["negotiated"]["streams_per_connection"]) == ("h2", 2)
    pages = result["sessions"]["pages"]
    assert pages["home"]["count"] >= 10 and pages["pay"]["count"] >= 10, pages
    assert result["connections_opened"] == 4, "each user: one connection to each target, kept across its sessions"
    # Streams open at the end were answered after the interval (logged, counted unanswered), and a
    # user whose page ended at the very end may have sent its next requests, unmeasured: up to its
    # 2 streams on each of its 2 connections.
    in_flight = result["unanswered"]["awaiting_response"]["count"]
    count = logged.since_mark({"responses": result["requests"] + in_flight})
    assert count is not None and 0 <= count.lines - (result["requests"] + in_flight) <= 2 * 2 * SESSIONS["users"]


@pytest.mark.parametrize("kind", sorted(set(HTTP2_KINDS) - ALWAYS_OFFERS_H2))
def test_without_http2_the_server_offers_only_http1(server: Start, kind: str) -> None:
    assert alpn(server(kind, tls=True)) in (None, "http/1.1")


@pytest.mark.parametrize("kind", HTTP1_KINDS)
def test_a_kind_without_http2_is_refused_before_anything_starts(kind: str) -> None:
    with pytest.raises(GauntletError) as refused:
        start_server(ServerSpec(kind, http2=True))
    assert refused.value.cause == f"{kind} cannot serve HTTP/2: {KINDS[kind].no_http2}"
    assert "leave --http2 out" in refused.value.fix


def test_nginx_refuses_h2c_with_a_backend_it_could_not_check() -> None:
    with pytest.raises(GauntletError, match="nginx does not support h2c with a backend: .* use --https"):
        start_nginx(ServerSpec("nginx", http2=True, backend="php-fpm"))
