//! The batch window (plan `io_batch_us`): a load thread's wait may hold responses back up to the
//! window to handle several per wake-up. io_uring asks the kernel for a share of the requests in
//! flight with a minimum wait (`uring::wait`); epoll has no minimum wait, so there the thread
//! naps, then collects what came without blocking (`Nap`), for as long as the responses wanted
//! take to come at the thread's recent pace, at most the window. Both batch only when more than
//! one response is wanted: with few requests in flight a wait is as without a window. Neither
//! batches while a request is opening its connection (the worker's `opening`): a connect's
//! completion and a TLS handshake's replies would wait out the window, and the request would go
//! out that much late. A plan without a window tries one in its warm-up (`batch_trial`).

use std::time::Duration;

use super::batch_trial::{TrialCounter, TRIAL_WINDOW_US};

/// A wait under a window asks for the responses of one in this many requests in flight (with a
/// 200 µs window, 0.56 of the floor's CPU per request on io_uring keep-alive: bench/README.md).
const SHARE: usize = 3;

/// Responses a wait under a window gathers before it returns early: a share of `in_flight`, at
/// least one.
pub fn wanted(in_flight: usize) -> usize {
    (in_flight / SHARE).max(1)
}

/// Naps shorter than this are not taken: the timer would end most of them with one or two
/// responses, and a wake-up per response is what the window saves (20 and 50 µs windows cost
/// 1.01-1.13x the floor's CPU per request: bench/README.md).
const MIN_NAP_US: u64 = 50;

/// The span over which the pace of responses is counted before it is updated.
const PACE_SPAN_US: u64 = 1_000;

/// An epoll thread's nap under a window: as long as the responses wanted take to come at the
/// thread's pace of the last millisecond or so, cut at the window and at the next send, tick or
/// end of the run (`until_next`). A nap as long as the window whatever the pace held a closed
/// loop's few connections idle past their answers, and the server with them (nginx served 0.93x
/// the requests/s at 20 connections: bench/README.md); io_uring's wait returns by itself once
/// the wanted responses came. On trial, it naps only where the trial says the window is on.
pub struct Nap {
    window_us: u64,
    trial: Option<TrialCounter>,
    /// Whether this thread's timers are exact (`set_exact_timers`).
    exact_timers: bool,
    /// (responses ended, µs) over the last full span; None until one has passed.
    pace: Option<(u64, u64)>,
    span_start_us: u64,
    span_ended: u64,
}

impl Nap {
    /// The nap of a thread under a window of `window_us`; None without one (0).
    pub fn for_window(window_us: u64) -> Option<Nap> {
        (window_us > 0).then(|| Nap::new(window_us, None))
    }

    /// The nap of a thread taking part in a trial of the window.
    pub fn on_trial(trial: TrialCounter) -> Nap {
        Nap::new(TRIAL_WINDOW_US, Some(trial))
    }

    fn new(window_us: u64, trial: Option<TrialCounter>) -> Nap {
        Nap { window_us, trial, exact_timers: false, pace: None, span_start_us: 0, span_ended: 0 }
    }

    /// The run started at `start_us`: a fixed window makes the thread's timers exact now, a trial
    /// as its spans turn the window on and off.
    pub fn start(&mut self, start_us: u64) {
        match &mut self.trial {
            Some(trial) => trial.start(start_us),
            None => self.set_exact_timers(true),
        }
    }

    /// A response ended (answered or failed).
    pub fn ended(&mut self) {
        self.span_ended += 1;
        if let Some(trial) = &mut self.trial {
            trial.ended();
        }
    }

    /// When a wait must end so that the trial counts each span apart (its first span's start, or
    /// the end of the span being counted); None without a trial or after it.
    pub fn wake_by_us(&self) -> Option<u64> {
        self.trial.as_ref().and_then(TrialCounter::next_boundary_us)
    }

    /// How long to nap before collecting at `now_us` with `in_flight` requests wanting a
    /// response: zero (block in epoll_wait as usual) with few requests in flight, before the
    /// pace is known, or when the wanted responses come sooner than a nap is worth.
    pub fn length(&mut self, now_us: u64, in_flight: usize, until_next: Duration) -> Duration {
        self.keep_pace(now_us);
        if let Some(trial) = &mut self.trial {
            let window = trial.window_at(now_us);
            if window != self.exact_timers {
                self.set_exact_timers(window);
            }
            if !window {
                return Duration::ZERO;
            }
        }
        let Some((ended, span_us)) = self.pace.filter(|_| wanted(in_flight) >= 2) else {
            return Duration::ZERO;
        };
        let window_ns = self.window_us * 1_000;
        let nap_ns =
            (wanted(in_flight) as u64 * span_us * 1_000).checked_div(ended).map_or(window_ns, |ns| ns.min(window_ns));
        if nap_ns < MIN_NAP_US * 1_000 {
            return Duration::ZERO;
        }
        Duration::from_nanos(nap_ns).min(until_next)
    }

    fn keep_pace(&mut self, now_us: u64) {
        let span_us = now_us.saturating_sub(self.span_start_us);
        if span_us < PACE_SPAN_US {
            return;
        }
        if self.span_start_us > 0 {
            self.pace = Some((self.span_ended, span_us));
        }
        (self.span_start_us, self.span_ended) = (now_us, 0);
    }

    /// Make this thread's timers fire when asked (or as by default again): the kernel otherwise
    /// lets a sleep run up to 50 µs long (its timer slack), which would carry a nap past the next
    /// send.
    fn set_exact_timers(&mut self, exact: bool) {
        // SAFETY: PR_SET_TIMERSLACK takes a value in ns (0: the thread's default) and changes the
        // calling thread only.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, libc::c_ulong::from(exact)) };
        self.exact_timers = exact;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A nap at `now_us` after `ended` responses spread over the span before it.
    fn nap_after(window_us: u64, ended: u64, in_flight: usize, until_next: Duration) -> Duration {
        let mut nap = Nap::for_window(window_us).unwrap();
        nap.length(1_000, in_flight, until_next);
        (0..ended).for_each(|_| nap.ended());
        nap.length(1_000 + PACE_SPAN_US, in_flight, until_next)
    }

    #[test]
    fn a_nap_lasts_while_the_wanted_responses_come_at_most_the_window() {
        let long = Duration::from_millis(100);
        // 40 responses a ms: one every 25 µs.
        assert_eq!(nap_after(200, 40, 24, long), Duration::from_micros(200), "8 wanted take 200 µs");
        assert_eq!(nap_after(200, 40, 12, long), Duration::from_micros(100), "4 wanted take 100 µs");
        assert_eq!(nap_after(200, 40, 600, long), Duration::from_micros(200), "200 wanted: the window");
        assert_eq!(
            nap_after(200, 40, 600, Duration::from_micros(70)),
            Duration::from_micros(70),
            "cut at the next send"
        );
        assert_eq!(nap_after(200, 40, 6, long), Duration::from_micros(50), "2 wanted come in 50 µs");
        assert_eq!(nap_after(200, 41, 6, long), Duration::ZERO, "2 wanted come in under 50 µs: not worth a nap");
        assert_eq!(nap_after(200, 40, 5, long), Duration::ZERO, "5 in flight want 1: no batching");
        assert!(Nap::for_window(0).is_none(), "no window, no nap");
        assert_eq!(nap_after(200, 0, 600, long), Duration::from_micros(200), "nothing came: the window");
        assert_eq!((wanted(0), wanted(2), wanted(600)), (1, 1, 200));
    }

    #[test]
    fn no_nap_before_a_span_has_shown_the_pace() {
        let mut nap = Nap::for_window(200).unwrap();
        assert_eq!(nap.length(1_000, 600, Duration::from_millis(100)), Duration::ZERO);
        (0..40).for_each(|_| nap.ended());
        assert_eq!(nap.length(1_000 + PACE_SPAN_US - 1, 600, Duration::from_millis(100)), Duration::ZERO);
    }
}
