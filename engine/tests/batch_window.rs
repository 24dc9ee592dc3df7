//! The batch window (plan `io_batch_us`) on epoll: HTTP/1 and HTTP/2, plain and TLS, count
//! exactly while the thread naps, and each latency is when the kernel received the answer
//! (rx_timestamps.rs checks those latencies against the server's); a constant rate keeps its
//! schedule under it. A plan without a window tries one in its warm-up.

mod common;
#[path = "common/h2_peer.rs"]
#[allow(dead_code)]
mod h2_peer;

use std::net::TcpStream;

use common::{Counters, Peer};
use gauntlet_engine::conn::batch_trial::{BatchTrial, TRIAL_WINDOW_US};
use gauntlet_engine::plan::{Io, Plan};
use gauntlet_engine::run::{run, RunResult};
use gauntlet_engine::server::{serve as serve_builtin, ServeConfig};
use h2_peer::{serve, serve_tls, Behaviour};

const WINDOW_US: u64 = 2_000;
const REQUESTS: u64 = 2_000;
const IN_FLIGHT: u64 = 60;

// Nagle off, as servers set it: with Nagle on, a connection's second answer waits for the ACK of
// its first, which the client's kernel delays until the napping thread reads.
fn h2c(stream: TcpStream, counters: &Counters) {
    stream.set_nodelay(true).unwrap();
    let _ = serve(stream, counters, Behaviour::Normal);
}

fn h2_tls(stream: TcpStream, counters: &Counters) {
    stream.set_nodelay(true).unwrap();
    let _ = serve_tls(stream, counters, Behaviour::Normal);
}

/// A run on epoll (whatever GAUNTLET_TEST_IO says) with the window: one thread with IN_FLIGHT
/// requests in flight, a third of which take long enough to come for the thread to nap.
fn windowed(url: &str, fields: &str) -> RunResult {
    let json =
        format!(r#"{{"url": "{url}", "threads": 1, "requests": {REQUESTS}, "io_batch_us": {WINDOW_US}, {fields}}}"#);
    let mut plan = Plan::from_json(&json).unwrap();
    plan.io = Io::Epoll;
    run(plan).unwrap()
}

/// Exact counts while the thread napped, every response timed by the kernel.
fn check(what: &str, result: &RunResult, served: u64) {
    assert_eq!((result.responses, result.errors_total, served), (REQUESTS, 0, REQUESTS), "{what}: {:?}", result.errors);
    assert_eq!(result.client.io, Io::Epoll, "{what}");
    assert!(result.counts.batch_naps > 0, "{what}: the thread never napped");
    assert_eq!(result.counts.rx_timestamped, REQUESTS, "{what}: responses timed by the kernel");
}

#[test]
fn http1_plain_and_tls_count_exactly_under_a_window() {
    let _alone = common::timing_alone();
    for tls in [false, true] {
        let server = serve_builtin(&ServeConfig { threads: 1, tls, ..ServeConfig::default() }).unwrap();
        let scheme = if tls { "https" } else { "http" };
        let url = format!("{scheme}://127.0.0.1:{}/webtest.html", server.local_addr().port());
        let result = windowed(&url, &format!(r#""connections": {IN_FLIGHT}"#));
        let served = server.stats().requests;
        server.stop();
        check(scheme, &result, served);
    }
}

#[test]
fn http2_h2c_and_tls_count_exactly_under_a_window() {
    let _alone = common::timing_alone();
    for (scheme, handler) in [("http", h2c as common::Handler), ("https", h2_tls)] {
        let peer = Peer::start(handler);
        let url = peer.url("/page.html").replace("http://", &format!("{scheme}://"));
        let streams = IN_FLIGHT / 2;
        let result =
            windowed(&url, &format!(r#""http_version": "2", "connections": 2, "streams_per_connection": {streams}"#));
        check(&format!("h2 {scheme}"), &result, peer.requests());
    }
}

#[test]
fn a_constant_rate_keeps_its_schedule_under_a_window() {
    let _alone = common::timing_alone();
    // Each response is held 20 ms: at 1,000/s about 20 requests are in flight, so the thread
    // naps; a nap must end at the next send, 1 ms away, not after the 10 ms window (sends would
    // then lag by 5 ms in the median). Sends lag more on a loaded machine with or without a window.
    let server = serve_builtin(&ServeConfig { threads: 1, ..ServeConfig::default() }).unwrap();
    let url = format!("http://{}/webtest.html?delay_ms=20", server.local_addr());
    let json = format!(
        r#"{{"url": "{url}", "threads": 1, "connections": 60, "rate_per_s": 1000, "duration_us": 1000000, "io_batch_us": 10000}}"#
    );
    let result = run(Plan::from_json(&json).unwrap()).unwrap();
    server.stop();
    let schedule = result.schedule.as_ref().unwrap();
    assert_eq!((result.errors_total, schedule.unsent), (0, 0), "{:?}", result.errors);
    assert!((950..=1050).contains(&result.responses), "{} responses at 1,000/s for 1 s", result.responses);
    assert!(schedule.send_lag_us.p50 < 1_500, "sends lag the schedule: {:?}", schedule.send_lag_us);
    assert!(result.latency_us.p50 >= 20_000, "p50 {} µs under a 20 ms delay", result.latency_us.p50);
}

/// A run on epoll against the built-in server, IN_FLIGHT connections on one thread.
fn on_builtin(fields: &str) -> RunResult {
    let server = serve_builtin(&ServeConfig { threads: 1, ..ServeConfig::default() }).unwrap();
    let url = format!("http://{}/webtest.html", server.local_addr());
    let json =
        format!(r#"{{"url": "{url}", "threads": 1, "connections": {IN_FLIGHT}, "duration_us": 300000, {fields}}}"#);
    let mut plan = Plan::from_json(&json).unwrap();
    plan.io = Io::Epoll;
    let result = run(plan).unwrap();
    server.stop();
    assert_eq!(result.errors_total, 0, "{fields}: {:?}", result.errors);
    result
}

#[test]
fn a_plan_without_a_window_tries_one_in_its_warm_up() {
    let _alone = common::timing_alone();
    let result = on_builtin(r#""warmup_us": 400000"#);
    let trial = result.client.batch_trial.as_ref().expect("a trial in the warm-up");
    let order: Vec<bool> = trial.spans.iter().map(|span| span.window).collect();
    assert_eq!(order, [false, true, true, false, false, true, true, false]);
    assert!(trial.spans.iter().all(|span| span.responses > 0 && span.cpu_us > 0), "{trial:?}");
    assert!(result.counts.batch_naps > 0, "the thread never napped in the spans with the window: {trial:?}");
    assert_eq!(trial.kept, BatchTrial::window_wins(&trial.spans), "{trial:?}");
    assert_eq!(result.client.io_batch_us, if trial.kept { TRIAL_WINDOW_US } else { 0 });

    let (explicit_none, short_warmup) =
        (on_builtin(r#""warmup_us": 400000, "io_batch_us": 0"#), on_builtin(r#""warmup_us": 200000"#));
    for (what, result) in [("io_batch_us 0", explicit_none), ("a warm-up of 200 ms", short_warmup)] {
        assert!(result.client.batch_trial.is_none(), "{what}: no trial");
        assert_eq!((result.counts.batch_naps, result.client.io_batch_us), (0, 0), "{what}: no window");
    }
}
