//! Closed-loop runs: the engine's totals against what the server on the other side counted.

mod common;

use std::time::{Duration, Instant};

use common::{http_ok, plan, Peer};
use gauntlet_engine::run::{run, start};
use gauntlet_engine::worker::StopReason;

#[test]
fn keep_alive_sends_exactly_n_requests_over_c_connections() {
    let peer = Peer::start(http_ok);
    let result = run(plan(&peer.url("/x"), r#""connections": 6, "threads": 3, "requests": 1001"#)).unwrap();
    assert_eq!((result.requests, result.responses, result.errors_total), (1001, 1001, 0));
    assert_eq!(peer.requests(), 1001);
    assert_eq!(peer.connections(), 6);
    assert_eq!(result.counts.connections_opened, 6);
    assert_eq!(result.status_codes["200"], 1001);
    assert_eq!(result.latency_us.count, 1001);
    assert_eq!(result.stop_reason, StopReason::Requests);
    assert!(!result.partial);
    let response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello";
    assert_eq!(result.counts.bytes_in, 1001 * response.len() as u64);
}

#[test]
fn no_keep_alive_opens_a_connection_per_request() {
    let peer = Peer::start(http_ok);
    let result =
        run(plan(&peer.url("/"), r#""connections": 4, "threads": 2, "requests": 200, "keepalive": false"#)).unwrap();
    assert_eq!((result.responses, peer.requests(), peer.connections()), (200, 200, 200));
    assert_eq!(result.counts.connections_opened, 200);
}

#[test]
fn calls_per_connection_then_reconnect() {
    let peer = Peer::start(http_ok);
    let result =
        run(plan(&peer.url("/"), r#""connections": 4, "threads": 2, "requests": 100, "calls_per_connection": 10"#))
            .unwrap();
    assert_eq!((result.responses, peer.requests()), (100, 100));
    assert!((10..=14).contains(&peer.connections()), "{} connections", peer.connections());
    assert_eq!(result.counts.connections_opened, peer.connections());
}

#[test]
fn http10_keeps_alive_when_asked() {
    let peer = Peer::start(http_ok);
    let result = run(plan(&peer.url("/"), r#""connections": 2, "requests": 50, "http_version": "1.0""#)).unwrap();
    assert_eq!((result.responses, peer.requests(), peer.connections()), (50, 50, 2));
}

#[test]
fn warm_up_is_run_but_not_counted() {
    let peer = Peer::start(http_ok);
    let result = run(plan(&peer.url("/"), r#""connections": 2, "requests": 300, "warmup_us": 300000"#)).unwrap();
    assert_eq!(result.requests, 300);
    assert!(peer.requests() > 300, "the warm-up sent requests too");
}

#[test]
fn duration_bounds_the_run_and_the_timeline_covers_it() {
    let peer = Peer::start(http_ok);
    let result = run(plan(&peer.url("/"), r#""connections": 2, "threads": 2, "duration_us": 2500000"#)).unwrap();
    assert_eq!(result.stop_reason, StopReason::Duration);
    assert_eq!(result.elapsed_us, 2_500_000);
    let seconds: Vec<_> = result.timeline.iter().map(|e| (e.second, e.span_us)).collect();
    assert_eq!(seconds, vec![(0, 1_000_000), (1, 1_000_000), (2, 500_000)]);
    assert_eq!(result.timeline.iter().map(|e| e.responses).sum::<u64>(), result.responses);
    // In-flight requests at the end are abandoned, never more than one per connection.
    assert!(peer.requests() >= result.responses && peer.requests() <= result.responses + 2);
}

#[test]
fn cancel_stops_within_a_second_and_marks_the_result_partial() {
    let peer = Peer::start(http_ok);
    let handle = start(plan(&peer.url("/"), r#""connections": 2, "duration_us": 30000000"#)).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let asked = Instant::now();
    handle.cancel();
    let result = handle.wait();
    assert!(asked.elapsed() < Duration::from_secs(1));
    assert!(result.partial);
    assert_eq!(result.stop_reason, StopReason::Cancelled);
    assert!(result.responses > 0);
    assert!(result.elapsed_us < 2_000_000);
}

#[test]
fn progress_counts_while_running() {
    let peer = Peer::start(http_ok);
    let handle = start(plan(&peer.url("/"), r#""connections": 2, "duration_us": 800000"#)).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let progress = handle.progress();
    assert!(progress.measuring && progress.totals.responses > 0);
    let result = handle.wait();
    assert!(result.responses >= progress.totals.responses);
}
