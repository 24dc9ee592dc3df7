//! The engine's memory per connection: the process's resident set read before the run's
//! connections exist and while they are all open, over the connections (measured and idle).

use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Resident set size of this process now, from /proc/self/statm; 0 where it cannot be read.
pub fn rss_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|text| text.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    // SAFETY: sysconf only reads a system constant.
    let page_bytes = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64;
    pages * page_bytes
}

/// The highest resident set seen by any thread of the run.
#[derive(Default)]
pub struct PeakRss(AtomicU64);

impl PeakRss {
    /// Read the resident set now and keep it if it is the highest so far.
    pub fn sample(&self) {
        self.0.fetch_max(rss_bytes(), Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What the run's connections cost the engine in memory (Linux's resident set, whole process).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryResult {
    /// The process's resident set before any of the run's connections was opened.
    pub rss_before_bytes: u64,
    /// The highest resident set read while the run's connections were open (at each load
    /// thread's end, before it closed them, and once a second).
    pub rss_peak_bytes: u64,
    /// Connections the figure is over: the plan's connections plus its idle ones.
    pub connections: u64,
    /// (rss_peak_bytes - rss_before_bytes) / connections: the connections' own cost, with the
    /// load threads' buffers and histograms spread over them.
    pub bytes_per_connection: f64,
}

impl MemoryResult {
    pub fn of(rss_before_bytes: u64, rss_peak_bytes: u64, connections: u64) -> MemoryResult {
        let grown = rss_peak_bytes.saturating_sub(rss_before_bytes) as f64;
        MemoryResult {
            rss_before_bytes,
            rss_peak_bytes,
            connections,
            bytes_per_connection: if connections == 0 { 0.0 } else { grown / connections as f64 },
        }
    }

    /// Several processes' figures, their memory and connections added.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a MemoryResult>) -> MemoryResult {
        let (mut before, mut peak, mut connections) = (0, 0, 0);
        for part in parts {
            before += part.rss_before_bytes;
            peak += part.rss_peak_bytes;
            connections += part.connections;
        }
        MemoryResult::of(before, peak, connections)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_grows_with_what_is_held() {
        let before = rss_bytes();
        assert!(before > 0);
        let peak = PeakRss::default();
        let held = std::hint::black_box(vec![1u8; 64 << 20]);
        peak.sample();
        assert!(peak.get() >= before + (60 << 20), "{} then {}", before, peak.get());
        drop(held);
        let figures = MemoryResult::of(1_000, 5_000, 4);
        assert_eq!(figures.bytes_per_connection, 1_000.0);
        let both = MemoryResult::sum([&figures, &MemoryResult::of(0, 4_000, 4)]);
        assert_eq!((both.rss_peak_bytes, both.connections, both.bytes_per_connection), (9_000, 8, 1_000.0));
    }
}
