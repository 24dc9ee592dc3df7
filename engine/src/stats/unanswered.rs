//! Requests that were begun in the measured interval and had no answer when it ended: counted
//! by the stage they were stuck in, with their ages, so that a server that accepts and never
//! answers (or never finishes a TLS handshake) shows as such instead of as an empty result.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where an unanswered request was when the measured interval ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Its connection was connecting (or waiting to connect again after a failed connect).
    Connecting,
    /// Its connection was connected and its TLS handshake had not completed.
    TlsHandshake,
    /// Its request was written, or being written, and the response had not completed.
    AwaitingResponse,
}

pub const STAGE_COUNT: usize = 3;

/// Count and ages (from each request's start) of unanswered requests at one stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ages {
    pub count: u64,
    pub sum_us: u64,
    pub max_us: u64,
}

impl Ages {
    pub fn add(&mut self, age_us: u64) {
        self.count += 1;
        self.sum_us += age_us;
        self.max_us = self.max_us.max(age_us);
    }

    pub fn absorb(&mut self, other: &Ages) {
        self.count += other.count;
        self.sum_us += other.sum_us;
        self.max_us = self.max_us.max(other.max_us);
    }

    fn result(&self) -> PendingResult {
        let mean_age_us = if self.count == 0 { 0.0 } else { self.sum_us as f64 / self.count as f64 };
        PendingResult { count: self.count, max_age_us: self.max_us, mean_age_us }
    }
}

/// One thread's unanswered requests, by stage.
pub type UnansweredAges = [Ages; STAGE_COUNT];

/// Unanswered requests at one stage: how many, and their ages at the end.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PendingResult {
    /// Unanswered requests at this stage.
    pub count: u64,
    /// The oldest one's age at the end, from the request's start (its connect, when it needed
    /// one) to the end of the interval.
    pub max_age_us: u64,
    /// Their mean age at the end.
    pub mean_age_us: f64,
}

impl PendingResult {
    /// The ages back from a result (their sum from the mean), to be merged with others.
    fn ages(&self) -> Ages {
        Ages {
            count: self.count,
            sum_us: (self.mean_age_us * self.count as f64).round() as u64,
            max_us: self.max_age_us,
        }
    }
}

/// Requests begun in the measured interval and unanswered at its end (or cancel), as a result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UnansweredResult {
    /// Unanswered requests, all stages.
    pub count: u64,
    /// The oldest one's age at the end, from its start.
    pub max_age_us: u64,
    /// Their mean age at the end.
    pub mean_age_us: f64,
    /// Its connect had not completed, or it waited out a connect backoff.
    pub connecting: PendingResult,
    /// Connected, its TLS handshake not complete.
    pub tls_handshake: PendingResult,
    /// Written or being written, its response not complete.
    pub awaiting_response: PendingResult,
}

impl UnansweredResult {
    /// Every thread's ages, merged.
    pub fn of<'a>(threads: impl IntoIterator<Item = &'a UnansweredAges>) -> UnansweredResult {
        let mut stages = UnansweredAges::default();
        for ages in threads {
            for (total, stage) in stages.iter_mut().zip(ages) {
                total.absorb(stage);
            }
        }
        let mut all = Ages::default();
        stages.iter().for_each(|stage| all.absorb(stage));
        let PendingResult { count, max_age_us, mean_age_us } = all.result();
        UnansweredResult {
            count,
            max_age_us,
            mean_age_us,
            connecting: stages[Stage::Connecting as usize].result(),
            tls_handshake: stages[Stage::TlsHandshake as usize].result(),
            awaiting_response: stages[Stage::AwaitingResponse as usize].result(),
        }
    }

    /// Several results' unanswered requests (agents'), merged by stage.
    pub fn merge<'a>(results: impl IntoIterator<Item = &'a UnansweredResult>) -> UnansweredResult {
        let stages: Vec<UnansweredAges> = results
            .into_iter()
            .map(|r| [r.connecting.ages(), r.tls_handshake.ages(), r.awaiting_response.ages()])
            .collect();
        UnansweredResult::of(&stages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_merge_by_stage() {
        let mut a = UnansweredAges::default();
        a[Stage::Connecting as usize].add(100);
        a[Stage::AwaitingResponse as usize].add(3_000_000);
        let mut b = UnansweredAges::default();
        b[Stage::AwaitingResponse as usize].add(1_000_000);
        b[Stage::TlsHandshake as usize].add(50);
        let result = UnansweredResult::of([&a, &b]);
        assert_eq!((result.count, result.max_age_us), (4, 3_000_000));
        assert_eq!(result.mean_age_us, 4_000_150.0 / 4.0);
        assert_eq!(result.awaiting_response, PendingResult { count: 2, max_age_us: 3_000_000, mean_age_us: 2e6 });
        assert_eq!((result.connecting.count, result.tls_handshake.max_age_us), (1, 50));
        assert_eq!(UnansweredResult::of([]), UnansweredResult::default());
    }

    #[test]
    fn results_merge_as_their_threads_would() {
        let mut a = UnansweredAges::default();
        a[Stage::Connecting as usize].add(100);
        a[Stage::AwaitingResponse as usize].add(3_000_000);
        a[Stage::AwaitingResponse as usize].add(7);
        let mut b = UnansweredAges::default();
        b[Stage::AwaitingResponse as usize].add(1_000_000);
        b[Stage::TlsHandshake as usize].add(50);
        let merged = UnansweredResult::merge([&UnansweredResult::of([&a]), &UnansweredResult::of([&b])]);
        assert_eq!(merged, UnansweredResult::of([&a, &b]));
        assert_eq!(UnansweredResult::merge([]), UnansweredResult::default());
    }
}
