"""Before a load at a URL over HTTP/2: does the server there speak it? Over https, a TLS handshake
offering h2 alone through ALPN; over http, the HTTP/2 preface (h2c, prior knowledge), answered with
SETTINGS. A server that does not is refused in one line before the load, not measured as a run
whose every request fails. Only loopback targets are probed: a remote one is the engine's to allow
(--allow-remote) or refuse, before any connect."""

from __future__ import annotations

import socket
import ssl
from urllib.parse import urlsplit

from gauntlet.agents.checks import is_loopback
from gauntlet.errors import GauntletError
from gauntlet.servers.process import PROBE_TIMEOUT_S, settings_answer_preface, unverified_tls

DEFAULT_PORTS = {"http": 80, "https": 443}


def require_http2(url: str, timeout_s: float = PROBE_TIMEOUT_S * 4) -> None:
    """Refuse `url` when its server is reachable and does not speak HTTP/2; a server that cannot be
    reached is left to the engine, which counts the failed connects."""
    parts = urlsplit(url)
    if parts.hostname is None or parts.scheme not in DEFAULT_PORTS or not is_loopback(parts.hostname):
        return
    tls = parts.scheme == "https"
    try:
        sock = socket.create_connection((parts.hostname, parts.port or DEFAULT_PORTS[parts.scheme]), timeout=timeout_s)
    except OSError:
        return
    with sock:
        if tls:
            speaks, how = _alpn_h2(sock, parts.hostname), "its TLS handshake chose no h2 through ALPN"
        else:
            speaks, how = _settings_first(sock), "it did not answer the HTTP/2 preface with SETTINGS (h2c, prior knowledge)"
    if not speaks:
        raise GauntletError(
            f"{url} does not speak HTTP/2: {how}",
            "Leave --http2 out, or load a server that speaks it (`gauntlet servers` lists the kinds that do)",
        )


def _alpn_h2(sock: socket.socket, host: str) -> bool:
    context = unverified_tls()
    context.set_alpn_protocols(["h2"])
    try:
        with context.wrap_socket(sock, server_hostname=host) as tls:
            return tls.selected_alpn_protocol() == "h2"
    except (OSError, ssl.SSLError):
        return False


def _settings_first(sock: socket.socket) -> bool:
    try:
        return settings_answer_preface(sock)
    except OSError:
        return False
