//! Constant rate (open loop): one schedule at the plan's full rate, slot j due at
//! `start + j / rate`, dealt out to the threads in turn (thread k of n takes slots k, k + n,
//! k + 2n, ...), so that the threads' sends merged are exactly the single schedule, at any rate.
//! A due time is computed from the slot's number, never accumulated from waits, so the schedule
//! cannot drift; a request sent late keeps its due time, and its latency counts from it
//! (coordinated omission corrected, as wrk2 does).

use std::ops::Range;

use hdrhistogram::Histogram;

/// One thread's share of a constant-rate schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct RateSchedule {
    start_us: u64,
    rate_per_s: f64,
    thread: u64,
    threads: u64,
    /// This thread's slots taken so far.
    claimed: u64,
}

impl RateSchedule {
    /// Thread `thread` of `threads` sharing `rate_per_s` (the plan's whole rate) from `start_us`.
    pub fn new(start_us: u64, rate_per_s: f64, thread: usize, threads: usize) -> RateSchedule {
        RateSchedule { start_us, rate_per_s, thread: thread as u64, threads: threads as u64, claimed: 0 }
    }

    /// When this thread's `i`-th slot is due.
    pub fn due_us(&self, i: u64) -> u64 {
        let slot = i * self.threads + self.thread;
        self.start_us + (slot as f64 * 1e6 / self.rate_per_s) as u64
    }

    /// When the next request is due.
    pub fn next_due_us(&self) -> u64 {
        self.due_us(self.claimed)
    }

    /// Take the next request; returns its due time.
    pub fn claim(&mut self) -> u64 {
        let due_us = self.next_due_us();
        self.claimed += 1;
        due_us
    }

    /// The first of this thread's slots due at or after `at_us`.
    pub fn first_due_from(&self, at_us: u64) -> u64 {
        let global = at_us.saturating_sub(self.start_us) as f64 * self.rate_per_s / 1e6;
        let mut i = ((global - self.thread as f64) / self.threads as f64).ceil().max(0.0) as u64;
        while i > 0 && self.due_us(i - 1) >= at_us {
            i -= 1;
        }
        while self.due_us(i) < at_us {
            i += 1;
        }
        i
    }

    /// Slots due in [from_us, end_us) that were never claimed, at most `limit` of them.
    pub fn unclaimed(&self, from_us: u64, end_us: u64, limit: u64) -> Range<u64> {
        let first = self.claimed.max(self.first_due_from(from_us));
        let end = self.first_due_from(end_us).max(first);
        first..end.min(first.saturating_add(limit))
    }

    /// Record the age at `end_us` of each slot in `slots` (all due before it) in `histogram`,
    /// a bucket of the histogram at a time: the cost follows the buckets, not the slot count.
    pub fn record_ages(&self, slots: Range<u64>, end_us: u64, histogram: &mut Histogram<u64>) {
        let mut upto = slots.end;
        while upto > slots.start {
            let age_us = end_us.saturating_sub(self.due_us(upto - 1)).max(1);
            // Ages below `bucket_end_us` are recorded as `age_us`: the slots due after end - bucket_end.
            let bucket_end_us = histogram.next_non_equivalent(age_us);
            let from = match end_us.checked_sub(bucket_end_us) {
                Some(due_after_us) => self.first_due_from(due_after_us + 1).clamp(slots.start, upto - 1),
                None => slots.start,
            };
            histogram.saturating_record_n(age_us, upto - from);
            upto = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::latency;

    #[test]
    fn due_times_follow_the_count() {
        let cases: [(f64, &[u64]); 4] = [
            (1_000.0, &[100, 1_100, 2_100, 3_100]),
            (3.0, &[100, 333_433, 666_766, 1_000_100]),
            (2_000_000.0, &[100, 100, 101, 101]),
            (0.5, &[100, 2_000_100, 4_000_100, 6_000_100]),
        ];
        for (rate, expected) in cases {
            let mut schedule = RateSchedule::new(100, rate, 0, 1);
            let due: Vec<u64> = (0..4).map(|_| schedule.claim()).collect();
            assert_eq!(due, expected, "{rate}/s");
        }
    }

    #[test]
    fn threads_merged_are_the_single_schedule() {
        // (rate, threads): the threads' due times, merged, equal one thread's at the full rate.
        let cases = [(0.001, 2), (3.0, 2), (1_000.0, 3), (7_777.7, 4), (2_000_000.0, 5)];
        for (rate, threads) in cases {
            let mut single = RateSchedule::new(50, rate, 0, 1);
            let expected: Vec<u64> = (0..60).map(|_| single.claim()).collect();
            let mut merged: Vec<u64> = (0..threads)
                .flat_map(|k| {
                    let mut share = RateSchedule::new(50, rate, k, threads);
                    (0..60 / threads).map(move |_| share.claim())
                })
                .collect();
            merged.sort();
            assert_eq!(merged, expected, "{rate}/s over {threads} threads");
        }
    }

    #[test]
    fn a_low_rate_over_two_threads_is_not_a_burst() {
        // --rate 0.001 -c 2: one request at the start, the next 1000 s later (on thread 1).
        let (zero, one) = (RateSchedule::new(0, 0.001, 0, 2), RateSchedule::new(0, 0.001, 1, 2));
        assert_eq!((zero.next_due_us(), one.next_due_us()), (0, 1_000_000_000));
    }

    #[test]
    fn no_drift_after_a_million_requests() {
        let mut schedule = RateSchedule::new(0, 7_000.0, 0, 1);
        for _ in 0..1_000_000 {
            schedule.claim();
        }
        let expected_us = (1_000_000f64 / 7_000.0 * 1e6) as u64;
        assert!(schedule.next_due_us().abs_diff(expected_us) <= 1);
    }

    #[test]
    fn next_due_does_not_claim() {
        let schedule = RateSchedule::new(5, 10.0, 1, 3);
        assert_eq!(schedule.next_due_us(), schedule.next_due_us());
    }

    #[test]
    fn first_due_from_inverts_due() {
        for (rate, thread, threads) in [(3.0, 0, 1), (1_000.0, 1, 3), (2_000_000.0, 2, 4), (0.5, 1, 2)] {
            let schedule = RateSchedule::new(1_000, rate, thread, threads);
            for at_us in [0, 1_000, 1_001, 5_555, 1_333_333, 9_000_000, 123_456_789] {
                let i = schedule.first_due_from(at_us);
                assert!(schedule.due_us(i) >= at_us, "{rate} {at_us}");
                assert!(i == 0 || schedule.due_us(i - 1) < at_us, "{rate} {at_us}");
            }
        }
    }

    #[test]
    fn unclaimed_slots_are_those_due_in_the_window() {
        // 1000/s over 2 threads: thread 1's slots are due at 1 ms, 3 ms, 5 ms, ...
        let mut schedule = RateSchedule::new(0, 1_000.0, 1, 2);
        schedule.claim();
        let cases = [((0, 10_000, u64::MAX), 1..5), ((4_000, 10_000, u64::MAX), 2..5), ((0, 10_000, 2), 1..3)];
        for ((from_us, end_us, limit), expected) in cases {
            assert_eq!(schedule.unclaimed(from_us, end_us, limit), expected, "{from_us} {end_us} {limit}");
        }
        assert_eq!(schedule.unclaimed(20_000, 10_000, u64::MAX).count(), 0);
    }

    #[test]
    fn ages_recorded_in_bulk_equal_ages_recorded_one_by_one() {
        for (rate, thread, threads, end_us) in
            [(1_000.0, 0, 1, 3_000_000), (250_000.0, 1, 2, 2_000_000), (3.0, 0, 1, 9_000_000)]
        {
            let schedule = RateSchedule::new(0, rate, thread, threads);
            let slots = schedule.unclaimed(0, end_us, u64::MAX);
            let (mut bulk, mut single) = (latency::new_histogram(), latency::new_histogram());
            schedule.record_ages(slots.clone(), end_us, &mut bulk);
            for i in slots.clone() {
                latency::record(&mut single, end_us - schedule.due_us(i));
            }
            assert_eq!(bulk.len(), slots.end - slots.start);
            assert_eq!(bulk, single, "{rate}/s");
        }
    }
}
