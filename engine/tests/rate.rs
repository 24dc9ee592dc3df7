//! Constant rate: the rate achieved, the spacing of sends seen by the server, and latency
//! corrected for coordinated omission under an injected stall.

mod common;

use std::time::Instant;

use common::{plan, Peer};
use gauntlet_engine::run::run;
use gauntlet_engine::server::{serve, ServeConfig};

#[test]
fn two_thousand_per_second_for_five_seconds() {
    let _alone = common::timing_alone();
    let peer = Peer::start(common::http_ok);
    let began = Instant::now();
    let result =
        run(plan(&peer.url("/"), r#""connections": 20, "threads": 2, "duration_us": 5000000, "rate_per_s": 2000"#))
            .unwrap();
    let schedule = result.schedule.as_ref().unwrap();
    assert!((schedule.achieved_rate_per_s - 2000.0).abs() <= 40.0, "{schedule:?}");
    assert!((result.requests as f64 - 10_000.0).abs() <= 200.0, "{} requests", result.requests);
    assert!(began.elapsed().as_secs_f64() < 6.0);
    // Every full second of the timeline carries its share of the rate.
    for entry in result.timeline.iter().filter(|e| e.span_us == 1_000_000) {
        assert!((entry.requests as f64 - 2000.0).abs() <= 100.0, "{entry:?}");
    }
    // The server saw the sends evenly spaced: 0.5 ms apart on average, and 20 ms windows (40
    // sends' worth) carrying between half and twice their share. One pause of the host (the
    // client's or the server's thread descheduled) empties a window and crowds the next as the
    // late sends catch up, so two windows may stray; a pattern of bunched sends strays in many.
    let arrivals = peer.arrivals();
    let first = arrivals[0];
    let mut windows = vec![0u32; 250];
    for arrival in &arrivals {
        let window = (arrival.duration_since(first).as_micros() / 20_000) as usize;
        if window < windows.len() {
            windows[window] += 1;
        }
    }
    let strays: Vec<(usize, u32)> =
        windows.iter().copied().enumerate().filter(|&(_, sends)| !(20..=80).contains(&sends)).collect();
    assert!(
        strays.len() <= 2,
        "(window, sends) outside 20-80 per 20 ms: {strays:?}; send lag {:?}",
        schedule.send_lag_us
    );
    let mean_gap_us = arrivals.last().unwrap().duration_since(first).as_micros() as f64 / (arrivals.len() - 1) as f64;
    assert!((mean_gap_us - 500.0).abs() < 15.0, "mean gap {mean_gap_us} µs");
}

#[test]
fn a_stall_shows_in_corrected_latency_and_not_in_service_time() {
    let _alone = common::timing_alone();
    // All responses are held for 500 ms every 2 s. Requests are due evenly, so a quarter of them
    // fall in a stall and wait for its end: from 0 to 500 ms, uniformly. Of all requests, the
    // top 10 % are the top 40 % of the stalled ones (>= 0.6 x 500 = 300 ms) and the top 1 % the
    // top 4 % (>= 0.96 x 500 = 480 ms). One connection: requests due during a stall queue in the
    // client, so their service time is short, and only the latency from the due time shows it.
    let server = serve(&ServeConfig { stall_ms: 500, stall_every_ms: 2000, ..ServeConfig::default() }).unwrap();
    let url = format!("http://{}/hello", server.local_addr());
    let result =
        run(plan(&url, r#""connections": 1, "threads": 1, "duration_us": 6000000, "rate_per_s": 500"#)).unwrap();
    server.stop();
    let (p90_ms, p99_ms) = (result.latency_us.p90 as f64 / 1e3, result.latency_us.p99 as f64 / 1e3);
    assert!((270.0..=330.0).contains(&p90_ms), "corrected p90 {p90_ms} ms");
    assert!((432.0..=528.0).contains(&p99_ms), "corrected p99 {p99_ms} ms");
    assert!(result.service_time_us.p99 < 20_000, "service p99 {} µs", result.service_time_us.p99);
    assert!(result.schedule.as_ref().unwrap().late_sends > 0, "the stall held sends back");
    assert_eq!(result.errors_total, 0);
}

#[test]
fn a_request_count_under_a_rate_is_exact() {
    let _alone = common::timing_alone();
    let peer = Peer::start(common::http_ok);
    let result =
        run(plan(&peer.url("/"), r#""connections": 4, "threads": 2, "requests": 301, "rate_per_s": 1000"#)).unwrap();
    assert_eq!((result.requests, peer.requests()), (301, 301));
    assert!((250_000..400_000).contains(&result.elapsed_us), "{} µs", result.elapsed_us);
}
