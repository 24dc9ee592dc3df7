//! How long a connection waits before it connects again after a refused or failed connect:
//! 1 ms, doubling to at most 100 ms, back to none once a connect succeeds. Without it a closed
//! port is hammered (about 50,000 connects/s) and the client's CPU goes to the kernel.

pub const FIRST_WAIT_US: u64 = 1_000;
pub const LONGEST_WAIT_US: u64 = 100_000;

/// One connection's run of failed connects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backoff {
    /// Connects failed in a row since the last one that succeeded.
    failures: u32,
    /// No connect before this instant.
    retry_at_us: u64,
}

impl Backoff {
    /// A connect failed at `now_us`: the next may start only after the wait.
    pub fn failed(&mut self, now_us: u64) {
        self.failures = self.failures.saturating_add(1);
        self.retry_at_us = now_us + wait_us(self.failures);
    }

    pub fn succeeded(&mut self) {
        *self = Backoff::default();
    }

    /// When the next connect may start (at once when it is not after `now_us`).
    pub fn retry_at_us(&self) -> u64 {
        self.retry_at_us
    }

    /// The next connect follows a failed one.
    pub fn is_retry(&self) -> bool {
        self.failures > 0
    }
}

/// The wait after the `failures`-th failed connect in a row (1-based).
pub fn wait_us(failures: u32) -> u64 {
    let doublings = failures.saturating_sub(1).min(16);
    (FIRST_WAIT_US << doublings).min(LONGEST_WAIT_US)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_cap() {
        let waits: Vec<u64> = (1..=10).map(wait_us).collect();
        assert_eq!(waits, [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 100_000, 100_000, 100_000]);
        assert_eq!(wait_us(u32::MAX), LONGEST_WAIT_US);
    }

    #[test]
    fn a_success_resets_the_wait() {
        let mut backoff = Backoff::default();
        assert!(!backoff.is_retry());
        backoff.failed(10);
        backoff.failed(20);
        assert_eq!((backoff.retry_at_us(), backoff.is_retry()), (2_020, true));
        backoff.succeeded();
        assert_eq!(backoff, Backoff::default());
        backoff.failed(50);
        assert_eq!(backoff.retry_at_us(), 1_050);
    }
}
