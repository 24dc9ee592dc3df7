//! What a plan fixes about TLS; `crate::conn::tls` makes the client's configuration of it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a plan fixes about TLS; an https URL without it uses the defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TlsPlan {
    /// "1.2" or "1.3"; None: either.
    #[serde(default)]
    pub version: Option<String>,
    /// A cipher suite by its rustls or IANA name (TLS13_AES_128_GCM_SHA256 or
    /// TLS_AES_128_GCM_SHA256), or several joined by ':' in order of preference; None: AES-128-GCM,
    /// AES-256-GCM, ChaCha20-Poly1305 (TLS 1.3's, then TLS 1.2's), as browsers and h2load offer them.
    #[serde(default)]
    pub cipher: Option<String>,
    /// Resume sessions on new connections; false forces a full handshake each time.
    #[serde(default = "resumption_default")]
    pub resumption: bool,
}

fn resumption_default() -> bool {
    true
}

impl Default for TlsPlan {
    fn default() -> TlsPlan {
        TlsPlan { version: None, cipher: None, resumption: resumption_default() }
    }
}
