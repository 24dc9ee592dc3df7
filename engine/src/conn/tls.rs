//! TLS settings: the client's (any certificate accepted, as wrk and h2load do, but handshake
//! signatures still checked; version, cipher suite and resumption as the plan says) and the
//! built-in server's (a self-signed certificate generated at start; version and cipher suite
//! pinned the same way). Cipher suites go by rustls's names or by their IANA names, which differ
//! only for TLS 1.3 (TLS13_AES_128_GCM_SHA256 is IANA's TLS_AES_128_GCM_SHA256).
//!
//! The client offers AES-128-GCM first, then AES-256-GCM, then ChaCha20-Poly1305, in both versions:
//! the order browsers, Mozilla's server guidelines and h2load (nghttp2) use, so that a server that
//! follows the client's preference (nginx's and OpenSSL's default) agrees on what a browser would
//! get. rustls's own order puts AES-256 first, as OpenSSL's (wrk's) does.

use std::sync::Arc;

use crate::plan::tls::TlsPlan;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, DigitallySignedStruct, ServerConfig, SignatureScheme, SupportedCipherSuite, SupportedProtocolVersion,
};

fn versions(version: Option<&str>) -> Result<Vec<&'static SupportedProtocolVersion>, String> {
    match version {
        None => Ok(vec![&rustls::version::TLS13, &rustls::version::TLS12]),
        Some("1.3") => Ok(vec![&rustls::version::TLS13]),
        Some("1.2") => Ok(vec![&rustls::version::TLS12]),
        Some(other) => Err(format!("TLS version '{other}' is not supported: use 1.2 or 1.3")),
    }
}

/// Whether `name` is the suite's rustls name or its IANA name.
fn is_named(suite: &SupportedCipherSuite, name: &str) -> bool {
    let rustls_name = format!("{:?}", suite.suite());
    name == rustls_name || name == rustls_name.replacen("TLS13_", "TLS_", 1)
}

/// The client's order when the plan names none (the module's doc says why): every suite ring has.
pub const DEFAULT_CIPHERS: &str = "TLS13_AES_128_GCM_SHA256:TLS13_AES_256_GCM_SHA384:TLS13_CHACHA20_POLY1305_SHA256:\
    TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:\
    TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:\
    TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256:TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256";

/// ring's suites named in `ciphers` (one name, or several joined by ':'), in that order.
fn provider(ciphers: Option<&str>) -> Result<CryptoProvider, String> {
    let all = ring::default_provider().cipher_suites;
    let mut provider = ring::default_provider();
    provider.cipher_suites = Vec::new();
    for name in ciphers.unwrap_or(DEFAULT_CIPHERS).split(':') {
        let Some(suite) = all.iter().find(|suite| is_named(suite, name)) else {
            let known: Vec<String> = all.iter().map(|s| format!("{:?}", s.suite())).collect();
            return Err(format!(
                "the cipher suite '{name}' is unknown: use one of {} (or its IANA name), several joined by ':'",
                known.join(", ")
            ));
        };
        provider.cipher_suites.push(*suite);
    }
    Ok(provider)
}

fn mismatch(err: rustls::Error) -> String {
    format!("TLS version and cipher suite do not match ({err}): pick a suite of that version")
}

/// Accepts any certificate (the servers under test use self-signed ones) but checks that the
/// server's handshake signatures are valid, as a full handshake would.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// What a connection's handshake settled on, as the result reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsNegotiated {
    /// "1.2" or "1.3", as a plan names it.
    pub version: String,
    /// The cipher suite by its rustls name (as a plan may name it).
    pub cipher: String,
}

impl TlsNegotiated {
    /// None while the handshake is not over.
    pub fn of(session: &rustls::Connection) -> Option<TlsNegotiated> {
        let version = match session.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => "1.3".to_string(),
            rustls::ProtocolVersion::TLSv1_2 => "1.2".to_string(),
            other => format!("{other:?}"),
        };
        let cipher = format!("{:?}", session.negotiated_cipher_suite()?.suite());
        Some(TlsNegotiated { version, cipher })
    }
}

/// The client's TLS; `alpn` the protocols it offers (["h2"] for HTTP/2, none for HTTP/1).
pub fn client_config(plan: &TlsPlan, alpn: &[&[u8]]) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(provider(plan.cipher.as_deref())?);
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions(plan.version.as_deref())?)
        .map_err(mismatch)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    if !plan.resumption {
        config.resumption = rustls::client::Resumption::disabled();
    }
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// The name the client announces: SNI for a host name, none for an address.
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(host.to_string()).map_err(|e| format!("'{host}' is not a valid TLS server name ({e})"))
}

fn self_signed() -> Result<rcgen::CertifiedKey<rcgen::KeyPair>, String> {
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
    rcgen::generate_simple_self_signed(names).map_err(|e| format!("cannot make a certificate ({e})"))
}

/// A self-signed certificate for localhost and the loopback addresses: (certificate, key) PEM.
pub fn self_signed_pem() -> Result<(String, String), String> {
    let certified = self_signed()?;
    Ok((certified.cert.pem(), certified.signing_key.serialize_pem()))
}

/// The built-in server's TLS: a fresh self-signed certificate; only `version` and `cipher` when
/// given, so that a client offering anything else fails its handshake.
pub fn server_config(version: Option<&str>, cipher: Option<&str>) -> Result<Arc<ServerConfig>, String> {
    let provider = Arc::new(provider(cipher)?);
    let versions = versions(version)?;
    let certified = self_signed()?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.signing_key.serialize_der()));
    let config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(mismatch)?
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)
        .map_err(|e| format!("the certificate was refused ({e})"))?;
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_ciphers_are_checked() {
        assert!(client_config(&TlsPlan::default(), &[]).is_ok());
        let v12 = TlsPlan {
            version: Some("1.2".into()),
            cipher: Some("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()),
            resumption: false,
        };
        assert!(client_config(&v12, &[]).is_ok());
        let bad = TlsPlan { version: Some("1.1".into()), ..TlsPlan::default() };
        assert!(client_config(&bad, &[]).unwrap_err().contains("1.2 or 1.3"));
        let unknown = TlsPlan { cipher: Some("RC4".into()), ..TlsPlan::default() };
        assert!(client_config(&unknown, &[]).unwrap_err().contains("TLS13_AES_128_GCM_SHA256"));
        let mismatch = TlsPlan {
            version: Some("1.3".into()),
            cipher: Some("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()),
            resumption: true,
        };
        assert!(client_config(&mismatch, &[]).is_err());
        let iana = TlsPlan { cipher: Some("TLS_AES_128_GCM_SHA256".into()), ..TlsPlan::default() };
        assert!(client_config(&iana, &[]).is_ok());
        let list =
            TlsPlan { cipher: Some("TLS_AES_256_GCM_SHA384:TLS13_AES_128_GCM_SHA256".into()), ..TlsPlan::default() };
        assert!(client_config(&list, &[]).is_ok());
        let half_known = TlsPlan { cipher: Some("TLS_AES_256_GCM_SHA384:RC4".into()), ..TlsPlan::default() };
        assert!(client_config(&half_known, &[]).unwrap_err().contains("'RC4' is unknown"));
    }

    #[test]
    fn the_default_order_offers_every_suite_aes_128_first() {
        let offered = provider(None).unwrap().cipher_suites;
        assert_eq!(offered.len(), ring::default_provider().cipher_suites.len());
        let names: Vec<String> = offered.iter().map(|s| format!("{:?}", s.suite())).collect();
        assert_eq!(names[0], "TLS13_AES_128_GCM_SHA256");
        assert_eq!(names[3], "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256");
    }

    #[test]
    fn the_server_accepts_a_pin_of_either_version() {
        // The refusals are checked through serve() in tests/tls.rs.
        assert!(server_config(Some("1.3"), Some("TLS_CHACHA20_POLY1305_SHA256")).is_ok());
        assert!(server_config(Some("1.2"), Some("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")).is_ok());
    }

    #[test]
    fn certificates_are_generated() {
        let (cert, key) = self_signed_pem().unwrap();
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(key.contains("PRIVATE KEY"));
        assert!(server_config(None, None).is_ok());
    }
}
