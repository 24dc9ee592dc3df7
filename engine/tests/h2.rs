//! HTTP/2: the engine against a small in-test server (tests/common/h2_peer.rs), h2c and h2 over
//! TLS, under each load model, and against hostile servers whose failures count as their own
//! error kinds.

mod common;
#[path = "common/h2_peer.rs"]
mod h2_peer;

use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::Instant;

use common::{plan, Counters, Peer};
use gauntlet_engine::http2::frame::NO_ERROR;
use gauntlet_engine::plan::Io;
use gauntlet_engine::run::{run, RunResult};
use gauntlet_engine::server::{serve as serve_builtin, ServeConfig};
use gauntlet_engine::worker::StopReason;
use h2_peer::{serve, serve_tls, Behaviour, INTERNAL_ERROR, MARKER};

fn normal(stream: TcpStream, counters: &Counters) {
    let _ = serve(stream, counters, Behaviour::Normal);
}

fn h2_run(peer: &Peer, fields: &str) -> RunResult {
    run(plan(&peer.url("/page.html"), &format!(r#""http_version": "2", {fields}"#))).unwrap()
}

fn errors(result: &RunResult, kind: &str) -> u64 {
    result.errors[kind]
}

#[test]
fn h2c_streams_carry_every_request_and_check_content() {
    let peer = Peer::start(normal);
    let fields = format!(r#""connections": 2, "streams_per_connection": 4, "requests": 400, "expect": "{MARKER}""#);
    let result = h2_run(&peer, &fields);
    assert_eq!((result.responses, result.errors_total), (400, 0), "{:?}", result.errors);
    assert_eq!(result.status_codes["200"], 400);
    assert_eq!(peer.requests(), 400);
    assert_eq!((result.counts.connections_opened, peer.connections()), (2, 2));
    let negotiated = &result.negotiated;
    assert_eq!((negotiated.protocol.as_str(), negotiated.streams_per_connection), ("h2", 4));
    assert_eq!(negotiated.tls_version, None);
    let timeline_requests: u64 = result.timeline.iter().map(|s| s.requests).sum();
    assert_eq!(timeline_requests, 400, "the timeline counts streams as requests");
    let wrong = h2_run(&peer, r#""connections": 1, "requests": 20, "expect": "not on the page""#);
    assert_eq!((wrong.responses, errors(&wrong, "content")), (0, 20));
}

fn tls(stream: TcpStream, counters: &Counters) {
    let _ = serve_tls(stream, counters, Behaviour::Normal);
}

#[test]
fn h2_over_tls_is_negotiated_through_alpn() {
    let peer = Peer::start(tls);
    let url = peer.url("/").replace("http://", "https://");
    let plan = plan(&url, r#""http_version": "2", "connections": 2, "streams_per_connection": 10, "requests": 300"#);
    let result = run(plan).unwrap();
    assert_eq!((result.responses, result.errors_total), (300, 0), "{:?}", result.errors);
    assert_eq!(peer.requests(), 300);
    assert_eq!(result.tls.unwrap().handshakes, 2);
    assert_eq!(result.negotiated.tls_version.as_deref(), Some("1.3"));
    assert!(result.negotiated.tls_cipher.unwrap().starts_with("TLS13_"));
}

#[test]
fn a_constant_rate_sends_on_schedule_over_streams() {
    let peer = Peer::start(normal);
    let result =
        h2_run(&peer, r#""connections": 1, "streams_per_connection": 8, "rate_per_s": 400, "duration_us": 1000000"#);
    assert_eq!(result.errors_total, 0, "{:?}", result.errors);
    assert!((380..=420).contains(&result.responses), "{} responses at 400/s for 1 s", result.responses);
    assert_eq!(result.schedule.unwrap().unsent, 0);
}

fn graceful_goaway(stream: TcpStream, counters: &Counters) {
    let _ = serve(stream, counters, Behaviour::GoawayAfter(25, NO_ERROR));
}

fn goaway_on_error(stream: TcpStream, counters: &Counters) {
    let _ = serve(stream, counters, Behaviour::GoawayAfter(25, INTERNAL_ERROR));
}

#[test]
fn streams_a_graceful_goaway_left_unprocessed_are_sent_again_and_only_an_error_goaway_fails_them() {
    let fields = r#""connections": 2, "streams_per_connection": 4, "requests": 300"#;
    let peer = Peer::start(graceful_goaway);
    let result = h2_run(&peer, fields);
    let unprocessed = peer.counters.unprocessed.load(Ordering::SeqCst);
    assert_eq!((result.responses, result.errors_total), (300, 0), "{:?}", result.errors);
    assert_eq!(peer.requests(), 300, "each request processed once");
    assert!(unprocessed >= 11, "at least one stream on each of 11 GOAWAYs: {unprocessed}");
    assert_eq!(result.counts.goaway_resent, unprocessed, "every stream the server did not process was sent again");
    assert_eq!(result.counts.connections_opened, peer.connections());

    // Under a constant rate too; a request sent again keeps its due time (its latency counts from it).
    let peer = Peer::start(graceful_goaway);
    let result = h2_run(&peer, r#""connections": 2, "streams_per_connection": 4, "rate_per_s": 1000, "requests": 300"#);
    let unprocessed = peer.counters.unprocessed.load(Ordering::SeqCst);
    assert_eq!((result.responses, result.errors_total, peer.requests()), (300, 0, 300), "{:?}", result.errors);
    assert_eq!((result.counts.goaway_resent, result.schedule.unwrap().unsent), (unprocessed, 0));

    let peer = Peer::start(goaway_on_error);
    let result = h2_run(&peer, fields);
    let unprocessed = peer.counters.unprocessed.load(Ordering::SeqCst);
    assert!(unprocessed > 0);
    assert_eq!((result.responses, errors(&result, "goaway")), (peer.requests(), unprocessed), "{:?}", result.errors);
    assert_eq!((result.requests, result.errors_total, result.counts.goaway_resent), (300, unprocessed, 0));
}

fn resets(stream: TcpStream, counters: &Counters) {
    let _ = serve(stream, counters, Behaviour::ResetEvery(3));
}

#[test]
fn reset_streams_count_as_stream_reset_and_the_connection_stays() {
    let peer = Peer::start(resets);
    let result = h2_run(&peer, r#""connections": 1, "streams_per_connection": 6, "requests": 300"#);
    assert_eq!((result.responses, errors(&result, "stream_reset")), (200, 100), "{:?}", result.errors);
    assert_eq!(result.errors_total, 100);
    assert_eq!(peer.connections(), 1);
}

fn zero_window(stream: TcpStream, counters: &Counters) {
    let _ = serve(stream, counters, Behaviour::ZeroWindow);
}

#[test]
fn a_window_that_never_opens_ends_in_timeouts_on_time() {
    let peer = Peer::start(zero_window);
    let started = Instant::now();
    // 70 002 bytes: more than the connection window a client may use before SETTINGS arrive.
    let body = "A".repeat(93_336);
    let fields = format!(
        r#""method": "POST", "body_base64": "{body}", "connections": 1, "streams_per_connection": 2,
           "duration_us": 1000000, "timeout_us": 300000"#
    );
    let result = h2_run(&peer, &fields);
    assert!(started.elapsed().as_secs_f64() < 2.0, "the run ended on time");
    assert_eq!(result.stop_reason, StopReason::Duration);
    assert_eq!(result.responses, 0);
    assert!(errors(&result, "timeout") >= 4, "{:?}", result.errors);
    assert_eq!(result.errors_total, errors(&result, "timeout"));
    let unanswered = &result.unanswered;
    assert_eq!((unanswered.count, unanswered.awaiting_response.count), (2, 2), "both streams were stuck at the end");
}

fn oversized(stream: TcpStream, counters: &Counters) {
    let _ = serve(stream, counters, Behaviour::OversizedHeaders);
}

fn malformed(stream: TcpStream, counters: &Counters) {
    let _ = serve(stream, counters, Behaviour::MalformedFrame);
}

#[test]
fn oversized_header_blocks_and_malformed_frames_end_the_connection_as_h2_protocol() {
    for handler in [oversized as fn(TcpStream, &Counters), malformed] {
        let peer = Peer::start(handler);
        let result = h2_run(&peer, r#""connections": 1, "streams_per_connection": 2, "requests": 20"#);
        assert_eq!(result.responses, 0);
        assert_eq!((result.errors_total, errors(&result, "h2_protocol")), (20, 20), "{:?}", result.errors);
        assert!(peer.connections() >= 10, "each error ended its connection: {}", peer.connections());
    }
}

#[test]
fn sessions_carry_a_users_pages_and_cookies_as_streams_of_one_connection_per_target() {
    let (plain, secure) = (Peer::start(normal), Peer::start(tls));
    let https_url = secure.url("/").replace("http://", "https://");
    let login = r#"{"name": "login", "path": "/__gauntlet/session?login=ann", "expect": "cookie=[]"}"#;
    let home = r#"{"name": "home", "path": "/a", "embedded": ["/e1", "/e2", "/e3"]}"#;
    let pay = r#"{"name": "pay", "path": "/__gauntlet/session", "scheme": "https", "embedded": ["/e1", "/e2"],
        "expect": "cookie=[gauntlet_user=ann]"}"#;
    let sessions = format!(
        r#"{{"users": 2, "https_url": "{https_url}", "types": [{{"name": "shop", "weight": 1,
            "think": {{"kind": "fixed", "mean_us": 20000}}, "pages": [{login}, {home}, {pay}]}}]}}"#
    );
    let fields = format!(r#""connections": 8, "duration_us": 500000, "sessions": {sessions}"#);
    let with_streams =
        run(plan(&plain.url("/"), &format!(r#""http_version": "2", "streams_per_connection": 4, {fields}"#)));
    assert!(with_streams.unwrap_err().0.ends_with("drop streams_per_connection (--streams)"));
    let result = h2_run(&plain, &fields);
    assert_eq!(result.errors_total, 0, "{:?}", result.errors);
    let pages = result.sessions.unwrap().pages;
    for name in ["login", "home", "pay"] {
        assert!(pages[name].count >= 5, "{name}: {} pages", pages[name].count);
        assert_eq!((pages[name].errors, pages[name].invalid), (0, 0), "{name} failed its check");
    }
    // The server may have answered a user's last two streams on each target after the interval.
    let served = plain.requests() + secure.requests();
    assert!((0..=8).contains(&(served - result.responses)), "{} of {served}", result.responses);
    let users = (plain.connections(), secure.connections(), result.tls.unwrap().handshakes);
    assert_eq!(users, (2, 2, 2), "each user: one h2c connection, one h2 connection over TLS");
    assert_eq!(result.negotiated.streams_per_connection, 2);
}

#[test]
fn http2_on_io_uring_runs_on_epoll_and_says_why() {
    let peer = Peer::start(normal);
    let result = h2_run(&peer, r#""io": "uring", "connections": 1, "streams_per_connection": 2, "requests": 20"#);
    assert_eq!((result.responses, result.client.io), (20, Io::Epoll));
    assert_eq!(result.client.io_fallback.as_deref(), Some("io_uring carries HTTP/1 only: HTTP/2 runs on epoll"));
}

#[test]
fn an_http1_server_shows_as_h2_protocol_errors() {
    let server = serve_builtin(&ServeConfig::default()).unwrap();
    let url = format!("http://{}/webtest.html", server.local_addr());
    let result = run(plan(&url, r#""http_version": "2", "connections": 1, "requests": 5"#)).unwrap();
    server.stop();
    assert_eq!((result.responses, errors(&result, "h2_protocol")), (0, 5), "{:?}", result.errors);
}
