//! The per-second timeline: seconds counted from the start of measurement.

use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
