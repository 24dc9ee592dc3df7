"""TLS version and cipher suite pinning: the spec names a suite by its IANA name, each server and
the engine want their own spelling.

Only suites both sides can speak are offered: the engine (rustls) does ECDHE with AES-GCM or
ChaCha20-Poly1305, and the certificate Gauntlet generates is ECDSA P-256, so TLS 1.2 suites are
the ECDHE_ECDSA ones. TLS 1.3 suites are named the same in IANA and OpenSSL.
"""

from __future__ import annotations

from dataclasses import dataclass

from gauntlet.errors import GauntletError

VERSIONS = ("1.2", "1.3")


@dataclass(frozen=True)
class CipherSuite:
    iana: str
    version: str
    #: OpenSSL's name (nginx ssl_ciphers, Apache SSLCipherSuite, lighttpd CipherString).
    openssl: str
    #: The engine's name (rustls), for a plan's `tls.cipher`.
    rustls: str


CIPHER_SUITES: dict[str, CipherSuite] = {
    suite.iana: suite
    for suite in (
        CipherSuite("TLS_AES_128_GCM_SHA256", "1.3", "TLS_AES_128_GCM_SHA256", "TLS13_AES_128_GCM_SHA256"),
        CipherSuite("TLS_AES_256_GCM_SHA384", "1.3", "TLS_AES_256_GCM_SHA384", "TLS13_AES_256_GCM_SHA384"),
        CipherSuite(
            "TLS_CHACHA20_POLY1305_SHA256", "1.3", "TLS_CHACHA20_POLY1305_SHA256", "TLS13_CHACHA20_POLY1305_SHA256"
        ),
        CipherSuite(
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
            "1.2",
            "ECDHE-ECDSA-AES128-GCM-SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        ),
        CipherSuite(
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "1.2",
            "ECDHE-ECDSA-AES256-GCM-SHA384",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        ),
        CipherSuite(
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
            "1.2",
            "ECDHE-ECDSA-CHACHA20-POLY1305",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        ),
    )
}


@dataclass(frozen=True)
class TlsPin:
    """What a server accepts: these versions, and at most one suite (of the one version it pins)."""

    versions: tuple[str, ...] = VERSIONS
    suite: CipherSuite | None = None

    @property
    def tls12_cipher(self) -> str | None:
        """OpenSSL's name of the pinned TLS 1.2 suite."""
        return self.suite.openssl if self.suite and self.suite.version == "1.2" else None

    @property
    def tls13_cipher(self) -> str | None:
        """The pinned TLS 1.3 suite (OpenSSL's Ciphersuites)."""
        return self.suite.openssl if self.suite and self.suite.version == "1.3" else None

    def engine_plan(self) -> dict[str, str]:
        """The engine plan's `tls` fields that make the client offer exactly this."""
        plan: dict[str, str] = {}
        if len(self.versions) == 1:
            plan["version"] = self.versions[0]
        if self.suite is not None:
            plan["cipher"] = self.suite.rustls
        return plan


def cipher_suite(iana: str) -> CipherSuite:
    try:
        return CIPHER_SUITES[iana]
    except KeyError:
        why = (
            "it needs an RSA certificate and Gauntlet's are ECDSA P-256"
            if "_RSA_" in iana
            else "it is not one the engine and the servers both speak"
        )
        raise GauntletError(
            f"cannot pin the cipher suite {iana}: {why}", f"use one of {', '.join(CIPHER_SUITES)}"
        ) from None


def tls_pin(version: str | None, cipher: str | None) -> TlsPin:
    """The versions and suite a server is pinned to; a suite pins its own version."""
    if version is not None and version not in VERSIONS:
        raise GauntletError(f"TLS version '{version}' is not supported", "use 1.2 or 1.3")
    if cipher is None:
        return TlsPin((version,) if version else VERSIONS)
    suite = cipher_suite(cipher)
    if version is not None and version != suite.version:
        raise GauntletError(
            f"the cipher suite {cipher} is a TLS {suite.version} suite, not TLS {version}",
            f"pick a TLS {version} suite or set tls_version to {suite.version}",
        )
    return TlsPin((suite.version,), suite)
