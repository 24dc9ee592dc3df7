//! The batch window (plan `io_batch_us`): a load thread's wait may hold responses back up to the
//! window to handle several per wake-up. io_uring asks the kernel for a share of the requests in
//! flight with a minimum wait (`uring::wait`); epoll has no minimum wait, so there the thread
//! naps through the window and then collects what came without blocking (`epoll_nap`). Both
//! batch only when more than one response is wanted: with few requests in flight a wait is as
//! without a window. Neither batches while a request is opening its connection (the worker's
//! `opening`): a connect's completion and a TLS handshake's replies would wait out the window,
//! and the request would go out that much late.

use std::time::Duration;

/// A wait under a window asks for the responses of one in this many requests in flight (with a
/// 200 µs window, 0.56 of the floor's CPU per request on io_uring keep-alive: bench/README.md).
const SHARE: usize = 3;

/// Responses a wait under a window gathers before it returns early: a share of `in_flight`, at
/// least one.
pub fn wanted(in_flight: usize) -> usize {
    (in_flight / SHARE).max(1)
}

/// How long an epoll thread naps before it collects its events: the window while more than one
/// response is wanted, cut short at `until_next` (the next send, tick or end of the run, which
/// the nap must not pass); zero (block in epoll_wait as usual) without a window or with few
/// requests in flight.
pub fn epoll_nap(window_us: u64, in_flight: usize, until_next: Duration) -> Duration {
    if window_us == 0 || wanted(in_flight) < 2 {
        return Duration::ZERO;
    }
    Duration::from_micros(window_us).min(until_next)
}

/// Make this thread's timers fire when asked: the kernel otherwise lets a sleep run up to 50 µs
/// long (its timer slack), which would carry a nap past the next send.
pub fn exact_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes a value in ns and changes the calling thread only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nap_needs_a_window_and_several_responses_wanted() {
        let long = Duration::from_millis(100);
        assert_eq!(epoll_nap(0, 600, long), Duration::ZERO);
        assert_eq!(epoll_nap(200, 5, long), Duration::ZERO, "5 in flight want 1: no batching");
        assert_eq!(epoll_nap(200, 6, long), Duration::from_micros(200));
        assert_eq!(epoll_nap(200, 600, Duration::from_micros(70)), Duration::from_micros(70), "cut at the next send");
        assert_eq!((wanted(0), wanted(2), wanted(600)), (1, 1, 200));
    }
}
