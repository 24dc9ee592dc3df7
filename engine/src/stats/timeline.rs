//! The per-second timeline: seconds counted from the start of measurement.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::{self, ErrorCounts, ERROR_KIND_COUNT};
use super::latency;

/// Per-second percentiles need less precision than the run's own histogram, and there may be
/// thousands of seconds in flight.
fn new_second_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(latency::LOWEST_US, latency::HIGHEST_US, 2).expect("valid histogram bounds")
}

/// What one thread saw in one second.
#[derive(Debug, Clone)]
pub struct SecondStats {
    pub second: u64,
    pub span_us: u64,
    pub requests: u64,
    pub responses: u64,
    pub errors: u64,
    pub bytes_in: u64,
    pub latency: Histogram<u64>,
    pub error_kinds: ErrorCounts,
    pub users: SecondUsers,
}

/// Sessions in one second: users who arrived, finished or were dropped in it, users active at its
/// end (a gauge, summed over threads), and the measured pages that ended in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SecondUsers {
    pub arrived: u64,
    pub finished: u64,
    pub dropped: u64,
    pub active: u64,
    pub pages: u64,
    pub page_errors: u64,
}

impl SecondUsers {
    fn add(&mut self, other: SecondUsers) {
        self.arrived += other.arrived;
        self.finished += other.finished;
        self.dropped += other.dropped;
        self.active += other.active;
        self.pages += other.pages;
        self.page_errors += other.page_errors;
    }
}

impl SecondStats {
    pub fn new(second: u64) -> SecondStats {
        SecondStats {
            second,
            span_us: 1_000_000,
            requests: 0,
            responses: 0,
            errors: 0,
            bytes_in: 0,
            latency: new_second_histogram(),
            error_kinds: [0; ERROR_KIND_COUNT],
            users: SecondUsers::default(),
        }
    }

    /// Add another thread's view of the same second.
    pub fn absorb(&mut self, other: &SecondStats) {
        self.span_us = self.span_us.max(other.span_us);
        self.requests += other.requests;
        self.responses += other.responses;
        self.errors += other.errors;
        self.bytes_in += other.bytes_in;
        self.latency.add(&other.latency).expect("histograms with the engine's bounds");
        for (mine, theirs) in self.error_kinds.iter_mut().zip(other.error_kinds) {
            *mine += theirs;
        }
        self.users.add(other.users);
    }

    /// The second as reported; `with_histogram` adds its encoded latencies (for merging).
    pub fn entry(&self, with_histogram: bool) -> TimelineEntry {
        let percentile = |q| {
            if self.latency.is_empty() {
                0
            } else {
                self.latency.value_at_quantile(q)
            }
        };
        TimelineEntry {
            second: self.second,
            span_us: self.span_us,
            requests: self.requests,
            responses: self.responses,
            errors: self.errors,
            bytes_in: self.bytes_in,
            p50_us: percentile(0.5),
            p90_us: percentile(0.9),
            p99_us: percentile(0.99),
            max_us: self.latency.max(),
            histogram: with_histogram.then(|| latency::encode(&self.latency)),
            errors_by_kind: error::named(&self.error_kinds).into_iter().filter(|&(_, count)| count > 0).collect(),
            users_arrived: self.users.arrived,
            users_active: self.users.active,
            users_finished: self.users.finished,
            users_dropped: self.users.dropped,
            pages: self.users.pages,
            page_errors: self.users.page_errors,
        }
    }
}

/// One second of the run, as stored and reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TimelineEntry {
    /// Index of the second: 0 is the first second after the warm-up.
    pub second: u64,
    /// Shorter than a second only for the last entry.
    pub span_us: u64,
    /// Requests that ended in this second.
    pub requests: u64,
    /// Responses that ended in this second.
    pub responses: u64,
    /// Errors that ended in this second.
    pub errors: u64,
    /// Bytes read for the requests that ended in this second.
    pub bytes_in: u64,
    /// Median latency of this second's responses (2 significant digits).
    pub p50_us: u64,
    /// 90th percentile latency of this second's responses.
    pub p90_us: u64,
    /// 99th percentile latency of this second's responses.
    pub p99_us: u64,
    /// Highest latency of this second's responses.
    pub max_us: u64,
    /// This second's latencies, encoded as the run's histogram is (at 2 significant digits);
    /// None unless the plan asked for `timeline_histograms`.
    pub histogram: Option<String>,
    /// This second's errors by kind; only the kinds that occurred.
    #[serde(default)]
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Sessions only (0 otherwise, as are the five below): users who arrived and began a session
    /// in this second.
    #[serde(default)]
    pub users_arrived: u64,
    /// Users with a session under way at the second's end, summed over the load threads.
    #[serde(default)]
    pub users_active: u64,
    /// Users who finished their session in this second.
    #[serde(default)]
    pub users_finished: u64,
    /// Users who arrived in this second when every connection allowed was in use.
    #[serde(default)]
    pub users_dropped: u64,
    /// Measured pages that ended in this second.
    #[serde(default)]
    pub pages: u64,
    /// Those of this second's pages that failed.
    #[serde(default)]
    pub page_errors: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::error::ErrorKind;

    #[test]
    fn an_entry_carries_its_histogram_only_when_asked() {
        let mut second = SecondStats::new(4);
        for v in [120, 130, 9_000] {
            latency::record(&mut second.latency, v);
            second.responses += 1;
        }
        assert_eq!(second.entry(false).histogram, None);
        let entry = second.entry(true);
        let decoded = latency::decode(entry.histogram.as_deref().unwrap()).unwrap();
        assert_eq!(decoded.len(), 3);
        assert_eq!((decoded.value_at_quantile(0.5), decoded.max()), (entry.p50_us, entry.max_us));
    }

    #[test]
    fn threads_add_up_their_users_pages_and_error_kinds() {
        let mut a = SecondStats::new(2);
        a.users = SecondUsers { arrived: 3, finished: 1, dropped: 0, active: 5, pages: 4, page_errors: 1 };
        a.error_kinds[ErrorKind::Timeout.index()] = 2;
        let mut b = SecondStats::new(2);
        b.users = SecondUsers { arrived: 1, finished: 2, dropped: 1, active: 2, pages: 3, page_errors: 0 };
        b.error_kinds[ErrorKind::Reset.index()] = 1;
        a.absorb(&b);
        let entry = a.entry(false);
        let users = (entry.users_arrived, entry.users_finished, entry.users_dropped, entry.users_active);
        assert_eq!(users, (4, 3, 1, 7));
        assert_eq!((entry.pages, entry.page_errors), (7, 1));
        let kinds: Vec<_> = entry.errors_by_kind.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(kinds, [("reset", 1), ("timeout", 2)]);
    }
}
