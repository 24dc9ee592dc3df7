//! The io_uring transport (plan `io: "uring"`) against the built-in server: it counts exactly
//! as epoll does, and it falls back to epoll, saying why, where it cannot run.

use gauntlet_engine::plan::{Io, Plan};
use gauntlet_engine::result::RunResult;
use gauntlet_engine::run::run;
use gauntlet_engine::server::{serve, ServeConfig};

/// (requests, responses, errors, bytes in, bytes out, 200s, latencies counted); the bytes only
/// `with_bytes` (else 0).
fn counts(result: &RunResult, with_bytes: bool) -> (u64, u64, u64, u64, u64, u64, u64) {
    let bytes = |n: u64| if with_bytes { n } else { 0 };
    (
        result.requests,
        result.responses,
        result.errors_total,
        bytes(result.counts.bytes_in),
        bytes(result.counts.bytes_out),
        result.status_codes.get("200").copied().unwrap_or(0),
        result.latency_us.count,
    )
}

fn run_on(io: Io, url: &str, fields: &str) -> RunResult {
    let mut plan = Plan::from_json(&format!(r#"{{"url": "{url}", {fields}}}"#)).unwrap();
    plan.io = io;
    run(plan).unwrap()
}

#[test]
fn uring_counts_exactly_like_epoll_against_the_built_in_server() {
    let server = serve(&ServeConfig { threads: 2, ..ServeConfig::default() }).unwrap();
    // The connections each run may open: with calls per connection capped, how the last calls
    // fall on the four connections decides whether one more is opened (15 at least, 15 + 3 at most).
    let cases = [
        ("/webtest.html", r#""connections": 8, "threads": 2, "requests": 3001"#, 8..=8),
        ("/image_large.jpg", r#""connections": 4, "threads": 2, "requests": 301"#, 4..=4),
        ("/webtest.html", r#""connections": 4, "threads": 1, "requests": 100, "calls_per_connection": 7"#, 15..=18),
    ];
    let mut served = 0;
    for (path, fields, connections) in cases {
        let url = format!("http://{}{path}", server.local_addr());
        let epoll = run_on(Io::Epoll, &url, fields);
        let uring = run_on(Io::Uring, &url, fields);
        assert_eq!((epoll.client.io, uring.client.io), (Io::Epoll, Io::Uring), "{:?}", uring.client.io_fallback);
        // Under a call cap, a connection's 7th call asks to close and is answered so; how many
        // connections reach it before the requests run out is timing, and so are the bytes.
        let with_bytes = !fields.contains("calls_per_connection");
        assert_eq!(counts(&uring, with_bytes), counts(&epoll, with_bytes), "{path} {fields}");
        for result in [&epoll, &uring] {
            assert!(
                connections.contains(&result.counts.connections_opened),
                "{path} {fields}: {}",
                result.counts.connections_opened
            );
        }
        assert_eq!(uring.errors_total, 0, "{:?}", uring.errors);
        served += epoll.requests + uring.requests;
    }
    assert_eq!(server.stats().requests, served, "the server answered every request of both");
    server.stop();
}

#[test]
fn a_batch_window_counts_exactly_too() {
    let server = serve(&ServeConfig { threads: 2, ..ServeConfig::default() }).unwrap();
    let url = format!("http://{}/webtest.html", server.local_addr());
    let fields = r#""connections": 8, "threads": 2, "requests": 3001"#;
    let epoll = run_on(Io::Epoll, &url, fields);
    let batched = run_on(Io::Uring, &url, &format!(r#"{fields}, "io_batch_us": 200"#));
    assert_eq!(batched.client.io, Io::Uring, "{:?}", batched.client.io_fallback);
    assert_eq!(counts(&batched, true), counts(&epoll, true));
    assert_eq!(batched.errors_total, 0, "{:?}", batched.errors);
    server.stop();
}

#[test]
fn a_connection_per_request_runs_on_epoll_and_says_why() {
    let server = serve(&ServeConfig { threads: 1, ..ServeConfig::default() }).unwrap();
    let url = format!("http://{}/webtest.html", server.local_addr());
    for fields in [r#""keepalive": false"#, r#""calls_per_connection": 1"#] {
        let result = run_on(Io::Uring, &url, &format!(r#""connections": 2, "requests": 20, {fields}"#));
        assert_eq!(
            (result.responses, result.counts.connections_opened, result.client.io),
            (20, 20, Io::Epoll),
            "{fields}"
        );
        let reason = result.client.io_fallback.expect("a fallback names its reason");
        assert!(reason.contains("a connection per request"), "{reason}");
    }
    server.stop();
}

#[test]
fn https_on_uring_falls_back_to_epoll_and_says_why() {
    let server = serve(&ServeConfig { threads: 1, tls: true, ..ServeConfig::default() }).unwrap();
    let url = format!("https://127.0.0.1:{}/webtest.html", server.local_addr().port());
    let result = run_on(Io::Uring, &url, r#""connections": 2, "requests": 20"#);
    assert_eq!((result.responses, result.client.io), (20, Io::Epoll));
    let reason = result.client.io_fallback.expect("a fallback names its reason");
    assert!(reason.contains("plain http:// only"), "{reason}");
    server.stop();
}
