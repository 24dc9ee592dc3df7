//! The one monotonic clock of the crate: every timestamp is microseconds since the first call.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

static BASE: OnceLock<Instant> = OnceLock::new();

/// Monotonic microseconds since the process first asked for the time.
pub fn now_us() -> u64 {
    BASE.get_or_init(Instant::now).elapsed().as_micros() as u64
}

/// CLOCK_MONOTONIC (what Python's `time.monotonic` reads) minus `now_us`, read once: `Instant` is
/// that clock on Linux, so an engine timestamp plus this offset is the system's monotonic time.
static MONOTONIC_OFFSET_US: OnceLock<u64> = OnceLock::new();

fn clock_monotonic_us() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000 + now.tv_nsec as u64 / 1_000
}

/// An engine timestamp (`now_us`) as CLOCK_MONOTONIC microseconds, comparable across processes.
pub fn monotonic_us(engine_us: u64) -> u64 {
    let offset_us = *MONOTONIC_OFFSET_US.get_or_init(|| {
        let engine_now_us = now_us();
        clock_monotonic_us().saturating_sub(engine_now_us)
    });
    engine_us + offset_us
}

/// Wall-clock microseconds since 1970.
pub fn unix_now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// A kernel timestamp (CLOCK_REALTIME, ns since 1970, as SO_TIMESTAMPNS gives it) on the engine's
/// clock: now on the engine's clock, less the stamp's age on the wall clock. Both clocks advance
/// alike over an age (NTP slews the wall clock by at most 500 ppm: 0.1 µs over 200 µs), so the
/// error is the few tens of ns between the two clock reads. A stamp the wall clock puts in the
/// future (the clock was stepped back) is now.
pub fn engine_us_of_realtime_ns(stamp_ns: u64) -> u64 {
    let engine_now_us = now_us();
    let age_us = realtime_ns().saturating_sub(stamp_ns) / 1_000;
    engine_now_us.saturating_sub(age_us)
}

fn realtime_ns() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

/// A wall-clock instant (µs since 1970) as CLOCK_MONOTONIC microseconds on this machine: where
/// an interval measured by agents (whose clocks agree with this one, checked before the run) lies
/// on the clock this machine's monitor reads.
pub fn monotonic_us_of_unix_us(unix_us: u64) -> u64 {
    (unix_us + clock_monotonic_us()).saturating_sub(unix_now_us())
}

#[cfg(test)]
mod tests {
    use super::{
        clock_monotonic_us, engine_us_of_realtime_ns, monotonic_us, monotonic_us_of_unix_us, now_us, realtime_ns,
        unix_now_us,
    };

    #[test]
    fn never_goes_back() {
        let mut last = now_us();
        for _ in 0..10_000 {
            let now = now_us();
            assert!(now >= last);
            last = now;
        }
    }

    #[test]
    fn monotonic_matches_the_system_clock() {
        let before_us = clock_monotonic_us();
        let engine_now = monotonic_us(now_us());
        let after_us = clock_monotonic_us();
        // The offset is read once, so it may lag the engine clock by the microsecond it took.
        assert!(engine_now + 2 >= before_us && engine_now <= after_us + 2, "{before_us} {engine_now} {after_us}");
    }

    #[test]
    fn a_wall_clock_instant_maps_onto_the_monotonic_clock() {
        let before_us = clock_monotonic_us();
        let mapped_us = monotonic_us_of_unix_us(unix_now_us() + 1_000_000);
        let after_us = clock_monotonic_us();
        // A second from now on the wall clock is a second from now on CLOCK_MONOTONIC.
        assert!(mapped_us + 2 >= before_us + 1_000_000 && mapped_us <= after_us + 1_000_002, "{before_us} {mapped_us}");
    }

    #[test]
    fn a_kernel_timestamp_maps_onto_the_engine_clock() {
        // The engine's clock starts at 0 on its first read: let it pass a millisecond first.
        now_us();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let before_us = now_us();
        let mapped_us = engine_us_of_realtime_ns(realtime_ns() - 1_000_000);
        let after_us = now_us();
        // A millisecond ago on the wall clock is a millisecond ago on the engine's.
        assert!(mapped_us + 1_000 + 2 >= before_us && mapped_us + 1_000 <= after_us + 2, "{before_us} {mapped_us}");
        let future_us = engine_us_of_realtime_ns(realtime_ns() + 1_000_000);
        assert!(future_us >= after_us && future_us <= now_us(), "a stamp ahead of the clock is now");
    }
}
