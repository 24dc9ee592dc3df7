"""The TLS version and cipher suite a case pins, in the words of each server's TLS library.

A ServerSpec names a suite by its IANA name (or by rustls's, which differs for TLS 1.3 only), which
Go (Caddy), Java (Tomcat) and the engine take as they are; OpenSSL (h2o) and Erlang's ssl (Yaws)
call the same suites otherwise. The servers present the ECDSA P-256 certificate the engine makes,
so only the TLS 1.3 suites and the ECDHE_ECDSA suites of TLS 1.2 can be agreed on: any other name
is refused before a server starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from gauntlet.errors import GauntletError
from gauntlet.servers.spec import ServerSpec

VERSIONS = ("1.2", "1.3")


@dataclass(frozen=True)
class Suite:
    iana: str
    #: The TLS version the suite belongs to.
    version: str
    openssl: str
    #: Yaws's `ciphers` term: {KeyExchange, Cipher, Mac, Prf}.
    erlang: str


SUITES = {
    suite.iana: suite
    for suite in (
        Suite("TLS_AES_128_GCM_SHA256", "1.3", "TLS_AES_128_GCM_SHA256", "{any,aes_128_gcm,aead,sha256}"),
        Suite("TLS_AES_256_GCM_SHA384", "1.3", "TLS_AES_256_GCM_SHA384", "{any,aes_256_gcm,aead,sha384}"),
        Suite(
            "TLS_CHACHA20_POLY1305_SHA256", "1.3", "TLS_CHACHA20_POLY1305_SHA256", "{any,chacha20_poly1305,aead,sha256}"
        ),
        Suite(
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "1.2",
            "ECDHE-ECDSA-AES128-GCM-SHA256",
            "{ecdhe_ecdsa,aes_128_gcm,aead,sha256}",
        ),
        Suite(
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "1.2",
            "ECDHE-ECDSA-AES256-GCM-SHA384",
            "{ecdhe_ecdsa,aes_256_gcm,aead,sha384}",
        ),
        Suite(
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "1.2",
            "ECDHE-ECDSA-CHACHA20-POLY1305",
            "{ecdhe_ecdsa,chacha20_poly1305,aead,sha256}",
        ),
    )
}


@dataclass(frozen=True)
class TlsPin:
    #: The versions the server may speak, oldest first: both, or the one pinned.
    versions: tuple[str, ...]
    #: The one suite it may use (None: the server's defaults).
    suite: Suite | None

    @property
    def pinned(self) -> bool:
        return self.suite is not None or self.versions != VERSIONS

    @property
    def oldest(self) -> str:
        return self.versions[0]

    @property
    def newest(self) -> str:
        return self.versions[-1]

    @property
    def tls12_cipher(self) -> str | None:
        """OpenSSL's name of the pinned suite when it is a TLS 1.2 one (a cipher list)."""
        return self.suite.openssl if self.suite and self.suite.version == "1.2" else None

    @property
    def tls13_cipher(self) -> str | None:
        """The pinned suite when it is a TLS 1.3 one (OpenSSL's separate Ciphersuites setting)."""
        return self.suite.openssl if self.suite and self.suite.version == "1.3" else None


def tls_pin(spec: ServerSpec) -> TlsPin:
    """What `spec` pins; a pinned suite implies its version. Bad or contradictory pins are refused."""
    version, cipher = spec.tls_version, spec.cipher
    if (version or cipher) and not spec.tls:
        raise GauntletError(
            f"{spec.kind}: a TLS version or cipher suite was given for plain HTTP", "set tls, or drop the pin"
        )
    if version is not None and version not in VERSIONS:
        raise GauntletError(f"TLS version '{version}' is not supported", "use 1.2 or 1.3")
    if cipher is None:
        return TlsPin((version,) if version else VERSIONS, None)
    # rustls (the engine) calls the TLS 1.3 suites TLS13_*: the same suites.
    suite = SUITES.get(cipher.replace("TLS13_", "TLS_", 1))
    if suite is None:
        raise GauntletError(
            f"the cipher suite '{cipher}' cannot serve the ECDSA certificate Gauntlet makes",
            f"use one of {', '.join(SUITES)}",
        )
    if version is not None and version != suite.version:
        raise GauntletError(
            f"{cipher} is a TLS {suite.version} suite, not a TLS {version} one",
            f"pin TLS {suite.version}, or pick a TLS {version} suite",
        )
    return TlsPin((suite.version,), suite)
