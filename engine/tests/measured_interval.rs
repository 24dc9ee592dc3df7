//! The measured interval on CLOCK_MONOTONIC: `wait_measuring` returns when the warm-up ends, and
//! the result's interval is where the measuring happened, as another clock reader sees it.

mod common;

use std::time::Duration;

use common::{http_ok, plan, Peer};
use gauntlet_engine::run::start;

fn clock_monotonic_us() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000 + now.tv_nsec as u64 / 1_000
}

#[test]
fn wait_measuring_returns_at_the_end_of_the_warm_up() {
    let peer = Peer::start(http_ok);
    let fields = r#""connections": 2, "warmup_us": 400000, "duration_us": 600000"#;
    let before_us = clock_monotonic_us();
    let handle = start(plan(&peer.url("/"), fields)).unwrap();
    let measuring_from_us = handle.wait_measuring(Duration::from_secs(5)).expect("measuring begins");
    let returned_us = clock_monotonic_us();
    assert!(measuring_from_us >= before_us + 400_000, "{} µs after the start", measuring_from_us - before_us);
    assert!(returned_us >= measuring_from_us && returned_us - measuring_from_us < 50_000, "returned {returned_us}");
    let result = handle.wait();
    let after_us = clock_monotonic_us();
    assert_eq!(result.measured_from_monotonic_us, measuring_from_us);
    assert_eq!(result.measured_to_monotonic_us - result.measured_from_monotonic_us, result.elapsed_us);
    assert_eq!(result.elapsed_us, 600_000);
    assert!(result.measured_to_monotonic_us <= after_us);
}

#[test]
fn wait_measuring_times_out_during_the_warm_up_and_ends_on_cancel() {
    let peer = Peer::start(http_ok);
    let handle =
        start(plan(&peer.url("/"), r#""connections": 1, "warmup_us": 5000000, "duration_us": 1000000"#)).unwrap();
    assert_eq!(handle.wait_measuring(Duration::from_millis(100)), None);
    handle.cancel();
    assert_eq!(handle.wait_measuring(Duration::from_secs(5)), None);
    assert!(handle.wait().partial);
}

#[test]
fn a_run_without_warm_up_measures_from_its_start() {
    let peer = Peer::start(http_ok);
    let before_us = clock_monotonic_us();
    let handle = start(plan(&peer.url("/"), r#""connections": 1, "requests": 20"#)).unwrap();
    let from_us = handle.wait_measuring(Duration::from_secs(5)).expect("no warm-up to wait for");
    let result = handle.wait();
    assert!(from_us >= before_us);
    assert_eq!(result.measured_from_monotonic_us, from_us);
    assert!(result.measured_to_monotonic_us >= from_us);
}
