//! HTTPS: the engine against the built-in server over TLS, with full handshakes and resumption,
//! pinned versions and cipher suites on either side, and TLS failures counted as their own kind.

mod common;

use gauntlet_engine::plan::Plan;
use gauntlet_engine::run::run;
use gauntlet_engine::server::routes::{Route, Routes};
use gauntlet_engine::server::{serve, ServeConfig, ServeError, ServerHandle};

fn https_server() -> ServerHandle {
    serve(&ServeConfig { tls: true, ..ServeConfig::default() }).unwrap()
}

fn plan(server: &ServerHandle, fields: &str) -> Plan {
    let url = format!("https://127.0.0.1:{}/webtest.html", server.local_addr().port());
    Plan::from_json(&format!(r#"{{"url": "{url}", "threads": 2, {fields}}}"#)).unwrap()
}

#[test]
fn keep_alive_over_tls_does_one_handshake_per_connection() {
    let server = https_server();
    let result = run(plan(&server, r#""connections": 4, "requests": 2000"#)).unwrap();
    assert_eq!((result.responses, result.errors_total), (2000, 0), "{:?}", result.errors);
    assert_eq!(server.stats().requests, 2000);
    let tls = result.tls.unwrap();
    assert_eq!(tls.handshakes, 4);
    let routes = Routes::new();
    let Route::Static(page) = routes.find("/webtest.html") else { panic!("a static page") };
    assert_eq!(result.counts.bytes_in, 2000 * page.bytes(true, false).len() as u64, "decrypted bytes are counted");
    server.stop();
}

#[test]
fn what_was_negotiated_is_reported_when_every_handshake_was_in_the_warm_up() {
    let server = https_server();
    let result = run(plan(&server, r#""connections": 2, "warmup_us": 200000, "duration_us": 200000"#)).unwrap();
    assert_eq!(result.errors_total, 0, "{:?}", result.errors);
    assert_eq!(result.tls.unwrap().handshakes, 0, "kept-alive connections opened in the warm-up");
    let negotiated = &result.negotiated;
    assert_eq!(
        (negotiated.tls_version.as_deref(), negotiated.tls_cipher.as_deref()),
        (Some("1.3"), Some("TLS13_AES_128_GCM_SHA256"))
    );
    server.stop();
}

#[test]
fn a_connection_per_request_resumes_sessions_unless_told_not_to() {
    let server = https_server();
    let resumed = run(plan(&server, r#""connections": 2, "requests": 200, "keepalive": false"#)).unwrap();
    let tls = resumed.tls.unwrap();
    assert_eq!((resumed.responses, tls.handshakes), (200, 200));
    assert!(tls.resumed >= 190, "{} of 200 resumed", tls.resumed);
    let full =
        run(plan(&server, r#""connections": 2, "requests": 200, "keepalive": false, "tls": {"resumption": false}"#))
            .unwrap();
    let tls = full.tls.unwrap();
    assert_eq!((full.responses, tls.handshakes, tls.resumed), (200, 200, 0));
    assert_eq!(server.stats().connections_accepted, 400);
    server.stop();
}

#[test]
fn version_and_cipher_can_be_pinned() {
    let server = https_server();
    for (tls, version, cipher) in [
        (
            r#"{"version": "1.2", "cipher": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}"#,
            "1.2",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        ),
        (r#"{"version": "1.3", "cipher": "TLS13_CHACHA20_POLY1305_SHA256"}"#, "1.3", "TLS13_CHACHA20_POLY1305_SHA256"),
        // By default AES-128-GCM comes first, as browsers and h2load offer it; a list is an order.
        ("{}", "1.3", "TLS13_AES_128_GCM_SHA256"),
        (
            r#"{"cipher": "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"}"#,
            "1.3",
            "TLS13_CHACHA20_POLY1305_SHA256",
        ),
    ] {
        let result = run(plan(&server, &format!(r#""connections": 2, "requests": 50, "tls": {tls}"#))).unwrap();
        assert_eq!((result.responses, result.errors_total), (50, 0), "{tls}: {:?}", result.errors);
        let negotiated = &result.negotiated;
        assert_eq!((negotiated.protocol.as_str(), negotiated.streams_per_connection), ("http/1.1", 1));
        assert_eq!(
            (negotiated.tls_version.as_deref(), negotiated.tls_cipher.as_deref()),
            (Some(version), Some(cipher))
        );
    }
    // The server's certificate is ECDSA: an RSA-only suite cannot be agreed on; the server's
    // alert ends the handshake.
    let refused = r#""connections": 1, "requests": 3, "tls": {"version": "1.2", "cipher": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}"#;
    let result = run(plan(&server, refused)).unwrap();
    assert_eq!((result.responses, result.errors["tls"]), (0, 3), "{:?}", result.errors);
    assert_eq!(result.tls.unwrap().handshakes, 0);
    server.stop();
}

#[test]
fn tls_to_a_plain_server_is_a_tls_error() {
    let server = serve(&ServeConfig::default()).unwrap();
    let result = run(plan(&server, r#""connections": 1, "requests": 3"#)).unwrap();
    assert_eq!(result.errors["tls"], 3, "{:?}", result.errors);
    server.stop();
}

fn pinned_server(version: Option<&str>, cipher: Option<&str>) -> ServerHandle {
    let config = ServeConfig {
        tls: true,
        tls_version: version.map(str::to_string),
        cipher: cipher.map(str::to_string),
        ..ServeConfig::default()
    };
    serve(&config).unwrap()
}

/// (responses, tls errors) of 4 requests on one connection with these client TLS settings.
fn outcome(server: &ServerHandle, tls: &str) -> (u64, u64) {
    let result = run(plan(server, &format!(r#""connections": 1, "requests": 4, "tls": {tls}"#))).unwrap();
    (result.responses, result.errors.get("tls").copied().unwrap_or(0))
}

#[test]
fn a_server_pinned_to_one_version_refuses_the_other() {
    let v12 = pinned_server(Some("1.2"), None);
    assert_eq!(outcome(&v12, r#"{"version": "1.2"}"#), (4, 0));
    assert_eq!(outcome(&v12, r#"{"version": "1.3"}"#), (0, 4));
    assert_eq!(outcome(&v12, "{}"), (4, 0), "a client offering both agrees on 1.2");
    v12.stop();
    let v13 = pinned_server(Some("1.3"), None);
    assert_eq!(outcome(&v13, r#"{"version": "1.3"}"#), (4, 0));
    assert_eq!(outcome(&v13, r#"{"version": "1.2"}"#), (0, 4));
    assert_eq!(v13.stats().requests, 4);
    v13.stop();
}

#[test]
fn a_server_pinned_to_one_cipher_refuses_the_others() {
    // IANA's name for rustls's TLS13_AES_256_GCM_SHA384; the server then speaks TLS 1.3 only.
    let server = pinned_server(None, Some("TLS_AES_256_GCM_SHA384"));
    assert_eq!(outcome(&server, r#"{"cipher": "TLS13_AES_256_GCM_SHA384"}"#), (4, 0));
    assert_eq!(outcome(&server, r#"{"cipher": "TLS_AES_256_GCM_SHA384"}"#), (4, 0));
    assert_eq!(outcome(&server, r#"{"cipher": "TLS13_AES_128_GCM_SHA256"}"#), (0, 4));
    assert_eq!(outcome(&server, r#"{"version": "1.2"}"#), (0, 4));
    server.stop();
    let v12 = pinned_server(Some("1.2"), Some("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"));
    assert_eq!(outcome(&v12, r#"{"cipher": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"}"#), (4, 0));
    assert_eq!(outcome(&v12, r#"{"cipher": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}"#), (0, 4));
    v12.stop();
}

#[test]
fn pins_that_cannot_work_are_refused_before_binding() {
    let refused = |config: ServeConfig| match serve(&config) {
        Err(ServeError::Tls(message)) => message,
        Err(other) => panic!("not a TLS refusal: {other}"),
        Ok(_) => panic!("served with {config:?}"),
    };
    let pinned = |version: &str, cipher: &str| ServeConfig {
        tls: true,
        tls_version: Some(version.into()),
        cipher: Some(cipher.into()),
        ..ServeConfig::default()
    };
    assert!(refused(pinned("1.2", "TLS_AES_128_GCM_SHA256")).contains("do not match"));
    assert!(refused(pinned("1.1", "TLS_AES_128_GCM_SHA256")).contains("use 1.2 or 1.3"));
    assert!(refused(pinned("1.3", "RC4-MD5")).contains("is unknown"));
    let plain = ServeConfig { tls_version: Some("1.3".into()), ..ServeConfig::default() };
    assert!(refused(plain).contains("plain HTTP"));
}
