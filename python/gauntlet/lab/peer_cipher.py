"""The cipher suite the peers speak on https. wrk has no option to choose one and speaks OpenSSL's
default order (AES-256-GCM first); the engine and h2load offer AES-128-GCM first. Pinned to the
suite wrk agrees on, every tool encrypts alike. Kept out of `calibrate`, whose module the engine's
own measured process imports."""

from __future__ import annotations

import socket
import ssl
from urllib.parse import urlsplit

from gauntlet.errors import GauntletError
from gauntlet.servers.tls_pin import SUITES


def h2load_cipher(iana_name: str | None) -> list[str]:
    """h2load's option pinning one suite: its OpenSSL name for TLS 1.2, `--tls13-ciphers` for TLS 1.3."""
    if iana_name is None:
        return []
    suite = SUITES[iana_name]
    return [f"--tls13-ciphers={suite.openssl}"] if suite.version == "1.3" else [f"--ciphers={suite.openssl}"]


def wrk_cipher(url: str) -> str:
    """The suite (IANA name) `url`'s server agrees on with a client in OpenSSL's default order, as wrk is."""
    parts = urlsplit(url)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    context.set_ciphers("DEFAULT")
    try:
        with socket.create_connection((parts.hostname, parts.port or 443), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname=parts.hostname) as tls:
                agreed = tls.cipher()
    except OSError as e:
        raise GauntletError(f"could not learn {url}'s cipher suite: {e}", "Check that the server is up and speaks TLS") from e
    by_openssl = {suite.openssl: suite.iana for suite in SUITES.values()}
    if agreed is None or agreed[0] not in by_openssl:
        raise GauntletError(
            f"{url} agreed on {agreed[0] if agreed else 'no suite'} with wrk's OpenSSL defaults, which the engine does not speak",
            "Serve an ECDSA certificate with a TLS 1.3 or ECDHE-ECDSA AES-GCM/ChaCha20 suite",
        )
    return by_openssl[agreed[0]]
