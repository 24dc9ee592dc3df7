"""The TLS pins of a ServerSpec, in each TLS library's words: pure, no server needed."""

from __future__ import annotations

import pytest

from gauntlet.errors import GauntletError
from gauntlet.servers.spec import ServerSpec
from gauntlet.servers.tls_pin import SUITES, VERSIONS, TlsPin, tls_pin


def pin_of(tls_version: str | None = None, cipher: str | None = None) -> TlsPin:
    return tls_pin(ServerSpec("h2o", tls=True, tls_version=tls_version, cipher=cipher))


def test_nothing_pinned_is_both_versions_and_the_servers_suites() -> None:
    pin = pin_of()
    assert (pin.versions, pin.suite, pin.pinned) == (VERSIONS, None, False)
    assert tls_pin(ServerSpec("h2o")).versions == VERSIONS


@pytest.mark.parametrize("version", VERSIONS)
def test_a_version_alone(version: str) -> None:
    pin = pin_of(tls_version=version)
    assert (pin.versions, pin.oldest, pin.newest, pin.suite, pin.pinned) == ((version,), version, version, None, True)


@pytest.mark.parametrize(
    ("cipher", "version", "openssl", "erlang"),
    [
        ("TLS_AES_256_GCM_SHA384", "1.3", "TLS_AES_256_GCM_SHA384", "{any,aes_256_gcm,aead,sha384}"),
        (
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "1.2",
            "ECDHE-ECDSA-CHACHA20-POLY1305",
            "{ecdhe_ecdsa,chacha20_poly1305,aead,sha256}",
        ),
    ],
)
def test_a_suite_implies_its_version_and_has_every_librarys_name(cipher, version, openssl, erlang) -> None:
    pin = pin_of(cipher=cipher)
    assert pin.versions == (version,)
    assert (pin.suite.iana, pin.suite.openssl, pin.suite.erlang) == (cipher, openssl, erlang)
    assert pin_of(cipher=cipher, tls_version=version) == pin


def test_rustls_names_of_tls13_suites_are_the_same_suites() -> None:
    assert pin_of(cipher="TLS13_CHACHA20_POLY1305_SHA256") == pin_of(cipher="TLS_CHACHA20_POLY1305_SHA256")


def test_every_suite_is_named_for_its_version() -> None:
    for suite in SUITES.values():
        assert suite.version in VERSIONS
        assert ("ECDHE_ECDSA" in suite.iana) == (suite.version == "1.2") == suite.erlang.startswith("{ecdhe_ecdsa,")


@pytest.mark.parametrize(
    ("fields", "cause"),
    [
        ({"tls_version": "1.1"}, "TLS version '1.1' is not supported"),
        ({"cipher": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}, "cannot serve the ECDSA certificate"),
        ({"cipher": "TLS_AES_128_GCM_SHA256", "tls_version": "1.2"}, "is a TLS 1.3 suite, not a TLS 1.2 one"),
    ],
)
def test_pins_that_cannot_work_are_refused(fields: dict, cause: str) -> None:
    with pytest.raises(GauntletError, match=cause):
        pin_of(**fields)


def test_a_pin_on_plain_http_is_refused() -> None:
    with pytest.raises(GauntletError, match="plain HTTP"):
        tls_pin(ServerSpec("caddy", tls_version="1.3"))
