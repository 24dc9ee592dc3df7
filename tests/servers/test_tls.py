"""TLS version and cipher suite pinned from the spec, against every kind's real server: an engine
client pinned to each version and suite (CLIENT_PINS) gets through exactly when the server's pin
allows it (otherwise its handshakes fail as `tls` errors), and a client offering everything
negotiates the pinned suite. How a pin is spelled for each TLS library: test_tls_pin.py."""

from __future__ import annotations

import socket
import ssl

import pytest

from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.registry import KINDS
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.tls_pin import SUITES, TlsPin, tls_pin
from tests.conftest import Start
from tests.helpers.server_checks import CLIENT_PINS, tls_outcomes

PINS = [
    {"tls_version": "1.2"},
    {"tls_version": "1.3"},
    {"cipher": "TLS_AES_256_GCM_SHA384"},
    {"tls_version": "1.2", "cipher": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
]
#: Per-kind hook: the TLS versions whose suites a kind cannot pin (a one-line refusal instead).
NO_SUITE_PIN = {"caddy": "1.3"}  # Go's TLS picks the TLS 1.3 suite itself


def accepts(pin: TlsPin, client: dict[str, str]) -> bool:
    """Whether a server pinned to `pin` lets an engine client pinned to `client` through."""
    if "version" in client:
        return client["version"] in pin.versions
    suite = SUITES[client["cipher"].replace("TLS13_", "TLS_", 1)]
    return suite.version in pin.versions and pin.suite in (None, suite)


def negotiated(server: ServerInstance) -> tuple[str, str]:
    """(version, suite) that Python's OpenSSL client, offering everything, ends up with."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection((server.host, server.port), timeout=5) as raw, context.wrap_socket(raw) as tls:
        suite, version, _ = tls.cipher()  # type: ignore[misc]
        return version, suite


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("pins", PINS, ids=["-".join(p.values()) for p in PINS])
def test_the_server_accepts_what_is_pinned_and_refuses_the_rest(server: Start, kind: str, pins: dict[str, str]) -> None:
    pin = tls_pin(ServerSpec(kind, tls=True, **pins))
    if pin.suite is not None and NO_SUITE_PIN.get(kind) == pin.suite.version:
        with pytest.raises(GauntletError, match="does not support the cipher suite"):
            server(kind, tls=True, **pins)
        return
    instance = server(kind, tls=True, **pins)
    expected = [3 if accepts(pin, client) else 0 for client in CLIENT_PINS]
    assert tls_outcomes(instance) == expected
    if pin.suite is not None:
        assert negotiated(instance) == (f"TLSv{pin.suite.version}", pin.suite.openssl)
