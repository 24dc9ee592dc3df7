//! An agreed start: runs given the same wall-clock instant begin together, however early they
//! were started; a start too far ahead is refused; a cancel during the wait ends the run at once.

mod common;

use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{plan, Peer};
use gauntlet_engine::run::{run, start, MAX_START_DELAY_US};
use gauntlet_engine::worker::StopReason;

fn unix_now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as u64
}

#[test]
fn runs_started_apart_begin_at_the_agreed_instant() {
    let peer = Peer::start(common::http_ok);
    let start_at_us = unix_now_us() + 600_000;
    let fields = format!(r#""connections": 2, "requests": 50, "start_at_unix_us": {start_at_us}"#);
    let early = start(plan(&peer.url("/"), &fields)).unwrap();
    assert!(!early.progress().measuring);
    thread::sleep(Duration::from_millis(300));
    let late = start(plan(&peer.url("/"), &fields)).unwrap();
    assert_eq!(peer.requests(), 0, "nothing is sent before the agreed start");
    let (early, late) = (early.wait(), late.wait());
    for result in [&early, &late] {
        assert!(result.started_unix_ms * 1_000 + 1_000 >= start_at_us, "started {} ms", result.started_unix_ms);
        assert!(result.started_unix_ms * 1_000 <= start_at_us + 50_000, "started {} ms", result.started_unix_ms);
        assert_eq!(result.plan.start_at_unix_us, Some(start_at_us));
    }
    assert!(early.started_unix_ms.abs_diff(late.started_unix_ms) <= 20);
    assert_eq!(peer.requests(), 100);
}

#[test]
fn a_start_in_the_past_begins_at_once() {
    let peer = Peer::start(common::http_ok);
    let began = Instant::now();
    let fields = format!(r#""connections": 1, "requests": 5, "start_at_unix_us": {}"#, unix_now_us() - 5_000_000);
    let result = run(plan(&peer.url("/"), &fields)).unwrap();
    assert_eq!(result.requests, 5);
    assert!(began.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_start_too_far_ahead_is_refused() {
    let fields = format!(
        r#""connections": 1, "requests": 5, "start_at_unix_us": {}"#,
        unix_now_us() + MAX_START_DELAY_US + 10_000_000
    );
    let err = start(plan("http://127.0.0.1:9/", &fields)).err().expect("refused");
    assert!(err.0.contains("ahead") && err.0.contains("clocks"), "{err}");
}

#[test]
fn a_cancel_during_the_wait_ends_the_run_without_a_request() {
    let peer = Peer::start(common::http_ok);
    let fields = format!(r#""connections": 2, "requests": 50, "start_at_unix_us": {}"#, unix_now_us() + 30_000_000);
    let handle = start(plan(&peer.url("/"), &fields)).unwrap();
    let began = Instant::now();
    handle.cancel();
    let result = handle.wait();
    assert!(began.elapsed() < Duration::from_secs(1));
    assert_eq!((result.stop_reason, result.partial, result.requests), (StopReason::Cancelled, true, 0));
    assert_eq!(peer.requests(), 0);
}

#[test]
fn timeline_seconds_carry_their_histograms_when_asked() {
    let peer = Peer::start(common::http_ok);
    let fields = r#""connections": 2, "duration_us": 1500000, "rate_per_s": 200, "timeline_histograms": true"#;
    let result = run(plan(&peer.url("/"), fields)).unwrap();
    assert_eq!(result.timeline.len(), 2);
    for entry in &result.timeline {
        let histogram = gauntlet_engine::stats::latency::decode(entry.histogram.as_deref().unwrap()).unwrap();
        assert_eq!(histogram.len(), entry.responses);
        assert_eq!(histogram.value_at_quantile(0.99), entry.p99_us);
    }
    // Every measured send has its lag: the requests that ended, and the last ones if their answer
    // had not come by the end.
    let lag = gauntlet_engine::stats::latency::decode(&result.schedule.unwrap().send_lag_histogram).unwrap();
    assert_eq!(lag.len(), result.requests + result.unanswered.count);
    let plain = run(plan(&peer.url("/"), r#""connections": 1, "requests": 3"#)).unwrap();
    assert!(plain.timeline.iter().all(|entry| entry.histogram.is_none()));
}
