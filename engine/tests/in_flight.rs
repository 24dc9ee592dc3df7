//! Nothing in flight is forgotten: requests a server never answers, handshakes it never
//! completes, connects it refuses, all counted with their ages; and a constant rate's threads
//! take turns so that their sends merged are the one schedule asked for.

mod common;

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{plan, Counters, Peer};
use gauntlet_engine::run::run;

/// Accept, read whatever comes, never answer; hold the connection until the client closes it.
fn silent(mut stream: TcpStream, counters: &Counters) {
    let mut buffer = [0u8; 4096];
    let mut announced = false;
    while let Ok(n) = stream.read(&mut buffer) {
        if n == 0 {
            return;
        }
        if !announced {
            counters.requests.fetch_add(1, Ordering::SeqCst);
            announced = true;
        }
    }
}

#[test]
fn a_silent_server_leaves_every_request_unanswered_with_its_age() {
    let peer = Peer::start(silent);
    let began = Instant::now();
    let result = run(plan(&peer.url("/"), r#""connections": 10, "threads": 2, "duration_us": 1500000"#)).unwrap();
    let wall = began.elapsed();
    assert!(wall < Duration::from_millis(2_500), "the run ends on time: {wall:?}");
    assert_eq!((result.requests, result.responses, result.errors_total), (0, 0, 0));
    let unanswered = &result.unanswered;
    assert_eq!((unanswered.count, unanswered.awaiting_response.count), (10, 10), "{unanswered:?}");
    assert_eq!(unanswered.connecting.count + unanswered.tls_handshake.count, 0);
    // Each was sent at the start and waited the whole interval.
    assert!((1_400_000..=1_500_000).contains(&unanswered.max_age_us), "{unanswered:?}");
    assert!(unanswered.mean_age_us >= 1_400_000.0, "{unanswered:?}");
    assert_eq!((result.counts.connections_opened, peer.connections(), peer.requests()), (10, 10, 10));
}

#[test]
fn a_silent_server_under_a_rate_shows_every_due_request_in_the_latency() {
    // 100/s for 1.5 s on 5 connections: 5 requests go out and hang; the 145 due after them
    // find no free connection. All 150 are in the latency at their age at the end.
    let peer = Peer::start(silent);
    let fields = r#""connections": 5, "threads": 1, "duration_us": 1500000, "rate_per_s": 100"#;
    let result = run(plan(&peer.url("/"), fields)).unwrap();
    let schedule = result.schedule.as_ref().unwrap();
    assert_eq!((result.unanswered.count, schedule.unsent), (5, 145), "{schedule:?}");
    assert_eq!(result.latency_us.count, 150);
    // Due every 10 ms from the start: ages spread evenly from 1.5 s down to about 10 ms.
    assert!((1_490_000..=1_510_000).contains(&result.latency_us.max), "{:?}", result.latency_us);
    assert!((700_000..=800_000).contains(&result.latency_us.p50), "{:?}", result.latency_us);
    assert_eq!(result.responses, 0);
}

#[test]
fn a_handshake_that_never_completes_is_counted_as_such() {
    let peer = Peer::start(silent);
    let url = format!("https://{}/", peer.address);
    let result = run(plan(&url, r#""connections": 3, "threads": 1, "duration_us": 1000000"#)).unwrap();
    assert_eq!((result.requests, result.responses), (0, 0));
    let unanswered = &result.unanswered;
    assert_eq!((unanswered.count, unanswered.tls_handshake.count), (3, 3), "{unanswered:?}");
    assert!(unanswered.tls_handshake.max_age_us >= 900_000, "{unanswered:?}");
    assert_eq!(result.tls.as_ref().unwrap().handshakes, 0);
    assert_eq!((result.counts.connections_opened, peer.requests()), (3, 3), "the ClientHello reached the server");
}

#[test]
fn a_closed_port_is_retried_with_backoff_and_nothing_counts_as_opened() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let result =
        run(plan(&format!("http://127.0.0.1:{port}/"), r#""connections": 2, "duration_us": 1000000"#)).unwrap();
    assert_eq!(result.counts.connections_opened, 0);
    // Per connection in 1 s: waits of 1, 2, 4, ... 64 ms (127 ms in all), then 100 ms each: at
    // most 8 + 9 + 1 connects; at least half that under a loaded machine's slower wakeups.
    let refused = result.counts.connects_refused;
    assert!((2 * 8..=2 * 18).contains(&refused), "{refused} connects refused in 1 s on 2 connections");
    assert_eq!(result.counts.connect_retries, refused - 2, "every connect after each first one is a retry");
    assert_eq!((result.errors["connect_refused"], result.counts.connects_failed), (refused, 0));
    assert!(result.unanswered.count <= 2 && result.unanswered.count == result.unanswered.connecting.count);
}

#[test]
fn a_low_rate_over_two_threads_sends_one_request_not_two() {
    // --rate 0.001 -c 2: the second slot is due 1000 s after the first, whichever thread has it.
    let peer = Peer::start(common::http_ok);
    let fields = r#""connections": 2, "threads": 2, "duration_us": 1000000, "rate_per_s": 0.001"#;
    let result = run(plan(&peer.url("/"), fields)).unwrap();
    assert_eq!((result.responses, peer.requests()), (1, 1));
    assert_eq!(result.schedule.unwrap().unsent, 0);
}

#[test]
fn threads_merged_send_at_the_single_schedule_spacing() {
    // 20/s over 4 threads for 2 s: the server sees a request every 50 ms, not 4 at a time.
    let peer = Peer::start(common::http_ok);
    let fields = r#""connections": 4, "threads": 4, "duration_us": 2000000, "rate_per_s": 20"#;
    let result = run(plan(&peer.url("/"), fields)).unwrap();
    assert_eq!(result.responses, 40);
    let arrivals = peer.arrivals();
    let gaps_ms: Vec<f64> = arrivals.windows(2).map(|w| (w[1] - w[0]).as_secs_f64() * 1e3).collect();
    let off: Vec<&f64> = gaps_ms.iter().filter(|gap| (**gap - 50.0).abs() > 20.0).collect();
    assert!(off.len() <= 2, "gaps between sends (ms): {gaps_ms:?}");
}
