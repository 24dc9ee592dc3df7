"""TLS version and cipher suite pinned from the spec, against each real server: the pinned
version and suite are what a client negotiates, the other version is refused (the engine reports
`tls` errors), and so is a client that offers only another suite of the same version."""

from __future__ import annotations

import socket
import ssl

import pytest

from gauntlet import engine
from gauntlet.errors import GauntletError
from gauntlet.servers.base import ServerInstance
from gauntlet.servers.registry import KINDS
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.tls import CIPHER_SUITES, tls_pin
from tests.conftest import Start

#: Kinds whose driver cannot pin TLS yet (a one-line error, tested in test_contract.py).
NO_PINNING = {"builtin"}
PINNING_KINDS = [kind for kind in KINDS if kind not in NO_PINNING]
#: (pinned suite, another suite of the same version that the server must then refuse)
PINS = {
    "1.2": ("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
    "1.3": ("TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256"),
}
OTHER_VERSION = {"1.2": "1.3", "1.3": "1.2"}
REQUESTS = 20


def negotiated(server: ServerInstance) -> tuple[str, str]:
    """(version, cipher) that Python's OpenSSL client, offering everything, ends up with."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection((server.host, server.port), timeout=5) as raw, context.wrap_socket(raw) as tls:
        cipher, version, _ = tls.cipher()  # type: ignore[misc]
        return version, cipher


def run_with(server: ServerInstance, **tls: str) -> dict:
    return engine.run({"url": f"{server.url}webtest.html", "connections": 2, "requests": REQUESTS, "tls": tls}).result


@pytest.mark.parametrize("kind", PINNING_KINDS)
@pytest.mark.parametrize("version", PINS)
def test_a_pinned_server_speaks_only_its_version_and_suite(server: Start, kind: str, version: str) -> None:
    pinned, other_suite = (CIPHER_SUITES[name] for name in PINS[version])
    instance = server(kind, tls=True, cipher=pinned.iana)
    assert negotiated(instance) == (f"TLSv{version}", pinned.openssl)
    accepted = run_with(instance, **instance.spec.tls_pin().engine_plan())
    assert (accepted["responses"], accepted["errors_total"]) == (REQUESTS, 0), accepted["errors"]
    for refused in (run_with(instance, version=OTHER_VERSION[version]), run_with(instance, cipher=other_suite.rustls)):
        assert refused["responses"] == 0 and refused["errors"].get("tls", 0) > 0, refused["errors"]


@pytest.mark.parametrize("kind", PINNING_KINDS)
def test_a_pinned_version_without_a_suite_refuses_the_other(server: Start, kind: str) -> None:
    instance = server(kind, tls=True, tls_version="1.2")
    assert negotiated(instance)[0] == "TLSv1.2"
    assert run_with(instance, version="1.2")["errors_total"] == 0
    assert run_with(instance, version="1.3")["errors"].get("tls", 0) > 0


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"tls": True, "cipher": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, "needs an RSA certificate"),
        ({"tls": True, "cipher": "TLS_RSA_WITH_RC4_128_SHA"}, "needs an RSA certificate"),
        ({"tls": True, "cipher": "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"}, "not one the engine and the servers both speak"),
        ({"tls": True, "tls_version": "1.3", "cipher": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}, "a TLS 1.2 suite"),
        ({"tls": True, "tls_version": "1.1"}, "TLS version '1.1' is not supported"),
        ({"cipher": "TLS_AES_128_GCM_SHA256"}, "tls is off"),
    ],
)
def test_bad_pins_are_one_line_errors(fields: dict, match: str) -> None:
    with pytest.raises(GauntletError, match=match) as raised:
        ServerSpec("nginx", **fields)
    assert "\n" not in str(raised.value)


def test_a_suite_pins_its_own_version() -> None:
    assert tls_pin(None, "TLS_AES_256_GCM_SHA384").versions == ("1.3",)
    assert tls_pin(None, None).versions == ("1.2", "1.3") and tls_pin(None, None).engine_plan() == {}
    assert tls_pin("1.2", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256").engine_plan() == {
        "version": "1.2",
        "cipher": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    }
