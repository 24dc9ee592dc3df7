//! Constant rate (open loop): the k-th request is due at `start + k / rate`, whatever happened
//! to the ones before it. The due time is computed from the count, never accumulated from waits,
//! so the schedule cannot drift; a request sent late keeps its due time, and its latency counts
//! from it (coordinated omission corrected, as wrk2 does).

/// One thread's share of a constant-rate schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct RateSchedule {
    start_us: u64,
    rate_per_s: f64,
    claimed: u64,
}

impl RateSchedule {
    pub fn new(start_us: u64, rate_per_s: f64) -> RateSchedule {
        RateSchedule { start_us, rate_per_s, claimed: 0 }
    }

    /// When the next request is due.
    pub fn next_due_us(&self) -> u64 {
        self.start_us + (self.claimed as f64 * 1e6 / self.rate_per_s) as u64
    }

    /// Take the next request; returns its due time.
    pub fn claim(&mut self) -> u64 {
        let due_us = self.next_due_us();
        self.claimed += 1;
        due_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_times_follow_the_count() {
        let cases: [(f64, &[u64]); 4] = [
            (1_000.0, &[100, 1_100, 2_100, 3_100]),
            (3.0, &[100, 333_433, 666_766, 1_000_100]),
            (2_000_000.0, &[100, 100, 101, 101]),
            (0.5, &[100, 2_000_100, 4_000_100, 6_000_100]),
        ];
        for (rate, expected) in cases {
            let mut schedule = RateSchedule::new(100, rate);
            let due: Vec<u64> = (0..4).map(|_| schedule.claim()).collect();
            assert_eq!(due, expected, "{rate}/s");
        }
    }

    #[test]
    fn no_drift_after_a_million_requests() {
        let mut schedule = RateSchedule::new(0, 7_000.0);
        for _ in 0..1_000_000 {
            schedule.claim();
        }
        let expected_us = (1_000_000f64 / 7_000.0 * 1e6) as u64;
        assert!(schedule.next_due_us().abs_diff(expected_us) <= 1);
    }

    #[test]
    fn next_due_does_not_claim() {
        let schedule = RateSchedule::new(5, 10.0);
        assert_eq!(schedule.next_due_us(), schedule.next_due_us());
    }
}
