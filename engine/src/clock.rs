//! The one monotonic clock of the crate: every timestamp is microseconds since the first call.

use std::sync::OnceLock;
use std::time::Instant;

static BASE: OnceLock<Instant> = OnceLock::new();

/// Monotonic microseconds since the process first asked for the time.
pub fn now_us() -> u64 {
    BASE.get_or_init(Instant::now).elapsed().as_micros() as u64
}

#[cfg(test)]
mod tests {
    use super::now_us;

    #[test]
    fn never_goes_back() {
        let mut last = now_us();
        for _ in 0..10_000 {
            let now = now_us();
            assert!(now >= last);
            last = now;
        }
    }
}
