//! What a worker thread measures: counts, bytes, status codes, errors by kind, latency, and the
//! per-second timeline it hands to the coordinator as each second ends.

pub mod counts;
pub mod cpu;
pub mod error;
pub mod latency;
pub mod memory;
pub mod timeline;
pub mod unanswered;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;

use hdrhistogram::Histogram;

use counts::Counts;
use error::{ErrorCounts, ErrorKind, ERROR_KIND_COUNT};
use timeline::SecondStats;
use unanswered::{Stage, UnansweredAges};

/// Status codes are three digits; the array is indexed by the code itself.
pub const STATUS_SLOTS: usize = 1000;

/// A thread's view of one second of the run, sent when that second is over.
pub struct Tick {
    pub thread: usize,
    pub stats: SecondStats,
}

/// Counters a thread publishes for progress displays (one writer each, read any time).
#[derive(Default)]
#[repr(align(64))]
pub struct Live {
    pub requests: AtomicU64,
    pub responses: AtomicU64,
    pub errors: AtomicU64,
    pub bytes_in: AtomicU64,
}

/// Sums of counters over threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub requests: u64,
    pub responses: u64,
    pub errors: u64,
    pub bytes_in: u64,
}

impl Totals {
    pub fn sum(live: &[Live]) -> Totals {
        live.iter().fold(Totals::default(), |t, l| Totals {
            requests: t.requests + l.requests.load(Ordering::Relaxed),
            responses: t.responses + l.responses.load(Ordering::Relaxed),
            errors: t.errors + l.errors.load(Ordering::Relaxed),
            bytes_in: t.bytes_in + l.bytes_in.load(Ordering::Relaxed),
        })
    }
}

/// What sessions count per second besides requests (`Recorder::session`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionEvent {
    /// A user's session began; `counted` when inside the measured interval.
    Arrived { counted: bool },
    /// A user's session ended.
    Finished { counted: bool },
    /// A user arrived when every connection allowed was in use.
    Dropped { counted: bool },
    /// A measured page ended.
    Page { failed: bool },
}

/// A send more than this far behind its schedule counts as late.
pub const LATE_SEND_US: u64 = 1_000;

/// Everything one thread measured, for the measured interval only.
pub struct Recorder {
    /// From each request's intended send time (its due time under a rate; its start otherwise).
    pub latency: Histogram<u64>,
    /// From each request's actual start.
    pub service: Histogram<u64>,
    /// How far behind schedule each request was started (constant rate only).
    pub send_lag: Histogram<u64>,
    /// Requests started; more than `LATE_SEND_US` late.
    pub sent: u64,
    pub late_sends: u64,
    pub responses: u64,
    pub errors: ErrorCounts,
    pub status_codes: Box<[u64; STATUS_SLOTS]>,
    /// Bytes, connections, resends: what a result carries as it is.
    pub counts: Counts,
    /// Requests begun in the measured interval and unanswered at its end.
    pub unanswered: UnansweredAges,
    /// Under a rate: requests due in the measured interval that were never started.
    pub unsent: u64,
    /// TLS handshakes completed, and how many of them resumed a session.
    pub tls_handshakes: u64,
    pub tls_resumed: u64,
    thread: usize,
    measure_start_us: u64,
    second: SecondStats,
    /// Users with a session under way on this thread: each second reports it as it ends.
    users_active: u64,
    /// Dropped by `finish`, which tells the coordinator that this thread is done.
    ticks: Option<Sender<Tick>>,
}

impl Recorder {
    /// A recorder whose seconds count from `measure_start_us` (see `measure_from`).
    pub fn new(thread: usize, measure_start_us: u64, ticks: Sender<Tick>) -> Recorder {
        Recorder {
            latency: latency::new_histogram(),
            service: latency::new_histogram(),
            send_lag: latency::new_histogram(),
            sent: 0,
            late_sends: 0,
            responses: 0,
            errors: [0; ERROR_KIND_COUNT],
            status_codes: Box::new([0; STATUS_SLOTS]),
            counts: Counts::default(),
            unanswered: UnansweredAges::default(),
            unsent: 0,
            tls_handshakes: 0,
            tls_resumed: 0,
            thread,
            measure_start_us,
            second: SecondStats::new(0),
            users_active: 0,
            ticks: Some(ticks),
        }
    }

    /// Count seconds from this instant: known only once the run has started.
    pub fn measure_from(&mut self, measure_start_us: u64) {
        self.measure_start_us = measure_start_us;
    }

    pub fn errors_total(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Responses by status code, the codes seen only.
    pub fn status_code_counts(&self) -> BTreeMap<String, u64> {
        let seen = self.status_codes.iter().enumerate().filter(|(_, &count)| count > 0);
        seen.map(|(code, &count)| (code.to_string(), count)).collect()
    }

    /// A request was started `lag_us` after it was due.
    pub fn sent(&mut self, lag_us: u64) {
        self.sent += 1;
        self.late_sends += u64::from(lag_us > LATE_SEND_US);
        latency::record(&mut self.send_lag, lag_us);
    }

    pub fn response(&mut self, status: u16, latency_us: u64, service_us: u64) {
        self.responses += 1;
        self.status_codes[usize::from(status).min(STATUS_SLOTS - 1)] += 1;
        latency::record(&mut self.latency, latency_us);
        latency::record(&mut self.service, service_us);
        self.second.requests += 1;
        self.second.responses += 1;
        latency::record(&mut self.second.latency, latency_us);
    }

    pub fn tls_handshake(&mut self, resumed: bool) {
        self.tls_handshakes += 1;
        self.tls_resumed += u64::from(resumed);
    }

    pub fn error(&mut self, kind: ErrorKind) {
        self.errors[kind.index()] += 1;
        self.second.requests += 1;
        self.second.errors += 1;
        self.second.error_kinds[kind.index()] += 1;
    }

    /// A session event: users arriving and finishing also move the count of active users.
    pub fn session(&mut self, event: SessionEvent) {
        let users = &mut self.second.users;
        match event {
            SessionEvent::Arrived { counted } => {
                self.users_active += 1;
                users.arrived += u64::from(counted);
            }
            SessionEvent::Finished { counted } => {
                self.users_active = self.users_active.saturating_sub(1);
                users.finished += u64::from(counted);
            }
            SessionEvent::Dropped { counted } => users.dropped += u64::from(counted),
            SessionEvent::Page { failed } => {
                users.pages += 1;
                users.page_errors += u64::from(failed);
            }
        }
    }

    /// A connect attempt failed with `kind` (refused, or anything else).
    pub fn connect_failed(&mut self, kind: ErrorKind) {
        match kind {
            ErrorKind::ConnectRefused => self.counts.connects_refused += 1,
            _ => self.counts.connects_failed += 1,
        }
    }

    /// A request had no answer by the end of the interval, `age_us` after it began.
    pub fn unanswered(&mut self, stage: Stage, age_us: u64) {
        self.unanswered[stage as usize].add(age_us);
    }

    /// `bytes` arrived that no request asked for.
    pub fn unsolicited(&mut self, bytes: u64) {
        self.counts.unsolicited += 1;
        self.counts.unsolicited_bytes += bytes;
    }

    pub fn bytes_in(&mut self, bytes: u64) {
        self.counts.bytes_in += bytes;
        self.second.bytes_in += bytes;
    }

    /// Hand over every second that has ended by `now_us`, empty ones included, so that the
    /// coordinator hears about each second from each thread.
    pub fn roll(&mut self, now_us: u64) {
        let Some(since_us) = now_us.checked_sub(self.measure_start_us) else {
            return;
        };
        let current = since_us / 1_000_000;
        while self.second.second < current {
            let next = SecondStats::new(self.second.second + 1);
            let mut done = std::mem::replace(&mut self.second, next);
            done.users.active = self.users_active;
            self.send(done);
        }
    }

    /// Hand over the last, partial second.
    pub fn finish(&mut self, end_us: u64) {
        self.roll(end_us);
        let second_start_us = self.measure_start_us + self.second.second * 1_000_000;
        if end_us > second_start_us {
            let mut last = std::mem::replace(&mut self.second, SecondStats::new(u64::MAX));
            last.span_us = end_us - second_start_us;
            last.users.active = self.users_active;
            self.send(last);
        }
        self.ticks = None;
    }

    fn send(&self, stats: SecondStats) {
        if let Some(ticks) = &self.ticks {
            // The coordinator outlives its workers; a send can only fail once it has gone.
            let _ = ticks.send(Tick { thread: self.thread, stats });
        }
    }

    pub fn publish(&self, live: &Live) {
        live.requests.store(self.responses + self.errors_total(), Ordering::Relaxed);
        live.responses.store(self.responses, Ordering::Relaxed);
        live.errors.store(self.errors_total(), Ordering::Relaxed);
        live.bytes_in.store(self.counts.bytes_in, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn seconds_are_handed_over_in_order_with_empty_ones() {
        let (tx, rx) = channel();
        let mut r = Recorder::new(3, 1_000, tx);
        r.response(200, 10, 10);
        r.roll(1_000 + 2_500_000);
        r.error(ErrorKind::Timeout);
        r.finish(1_000 + 2_750_000);
        let ticks: Vec<Tick> = rx.try_iter().collect();
        let seconds: Vec<_> = ticks.iter().map(|t| (t.thread, t.stats.second, t.stats.span_us)).collect();
        assert_eq!(seconds, vec![(3, 0, 1_000_000), (3, 1, 1_000_000), (3, 2, 750_000)]);
        assert_eq!(ticks[0].stats.responses, 1);
        assert_eq!(ticks[2].stats.errors, 1);
    }

    #[test]
    fn each_second_reports_the_users_active_at_its_end() {
        let (tx, rx) = channel();
        let mut r = Recorder::new(0, 0, tx);
        r.session(SessionEvent::Arrived { counted: true });
        r.session(SessionEvent::Arrived { counted: true });
        r.session(SessionEvent::Page { failed: false });
        r.roll(1_000_000);
        r.session(SessionEvent::Finished { counted: true });
        r.session(SessionEvent::Page { failed: true });
        r.session(SessionEvent::Dropped { counted: true });
        r.finish(1_500_000);
        let seconds: Vec<_> = rx.try_iter().map(|t| t.stats.users).collect();
        assert_eq!((seconds[0].arrived, seconds[0].active, seconds[0].pages), (2, 2, 1));
        let last = seconds[1];
        assert_eq!((last.finished, last.dropped, last.active, last.pages, last.page_errors), (1, 1, 1, 1, 1));
    }

    #[test]
    fn nothing_is_rolled_before_measurement_starts() {
        let (tx, rx) = channel();
        let mut r = Recorder::new(0, 5_000_000, tx);
        r.roll(1_000);
        assert!(rx.try_recv().is_err());
    }
}
