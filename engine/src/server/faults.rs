//! Fault injection for testing measurement: query parameters on any route, or server options.
//! `delay_ms=N` holds the response N ms; `delay_per_connection_ms=D` holds it D ms for every
//! connection open on the server at that moment; `status=NNN` answers that status; `reset=1` resets
//! the connection instead of answering; `stall_ms=T&stall_every_ms=S` holds every response whose
//! handling falls in [k*S, k*S+T) ms after the server started until that window ends;
//! `again_ms=N` answers the request a second time N ms after the first answer (0: in the same
//! write), a response no request asked for.

/// A periodic stall: every `every_ms`, all responses are held for `ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stall {
    pub ms: u64,
    pub every_ms: u64,
}

impl Stall {
    /// When a response handled at `since_start_us` may leave (itself, if outside a stall).
    pub fn release_us(self, since_start_us: u64) -> u64 {
        if self.ms == 0 || self.every_ms == 0 {
            return since_start_us;
        }
        let period_us = self.every_ms * 1_000;
        let window_start_us = since_start_us / period_us * period_us;
        let window_end_us = window_start_us + self.ms * 1_000;
        since_start_us.max(window_end_us.min(window_start_us + period_us))
    }
}

/// The faults a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Faults {
    pub delay_ms: u64,
    pub delay_per_connection_ms: u64,
    pub status: Option<u16>,
    pub reset: bool,
    pub stall: Option<Stall>,
    pub again_ms: Option<u64>,
}

/// Read the fault parameters from a request target's query; other parameters are ignored.
pub fn parse(target: &str) -> Faults {
    let mut faults = Faults::default();
    let Some((_, query)) = target.split_once('?') else { return faults };
    let mut stall = Stall::default();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let number = value.parse::<u64>().ok();
        match (key, number) {
            ("delay_ms", Some(n)) => faults.delay_ms = n,
            ("delay_per_connection_ms", Some(n)) => faults.delay_per_connection_ms = n,
            ("status", Some(n)) if (100..=999).contains(&n) => faults.status = Some(n as u16),
            ("reset", _) => faults.reset = value != "0",
            ("stall_ms", Some(n)) => stall.ms = n,
            ("stall_every_ms", Some(n)) => stall.every_ms = n,
            ("again_ms", Some(n)) => faults.again_ms = Some(n),
            _ => {}
        }
    }
    if stall.ms > 0 && stall.every_ms > 0 {
        faults.stall = Some(stall);
    }
    faults
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_select_faults() {
        assert_eq!(parse("/x"), Faults::default());
        assert_eq!(parse("/x?delay_ms=20").delay_ms, 20);
        assert_eq!(parse("/x?delay_per_connection_ms=3").delay_per_connection_ms, 3);
        assert_eq!(parse("/x?a=1&status=503").status, Some(503));
        assert_eq!(parse("/x?status=42").status, None);
        assert!(parse("/x?reset=1").reset);
        assert!(!parse("/x?reset=0").reset);
        assert_eq!(parse("/?stall_ms=500&stall_every_ms=2000").stall, Some(Stall { ms: 500, every_ms: 2000 }));
        assert_eq!(parse("/?stall_ms=500").stall, None);
        assert_eq!((parse("/?again_ms=0").again_ms, parse("/?again_ms=5").again_ms), (Some(0), Some(5)));
        assert_eq!(parse("/?again_ms=x").again_ms, None);
    }

    #[test]
    fn stall_windows_hold_until_their_end() {
        let stall = Stall { ms: 500, every_ms: 2_000 };
        assert_eq!(stall.release_us(0), 500_000);
        assert_eq!(stall.release_us(499_999), 500_000);
        assert_eq!(stall.release_us(500_000), 500_000);
        assert_eq!(stall.release_us(1_999_999), 1_999_999);
        assert_eq!(stall.release_us(2_100_000), 2_500_000);
        assert_eq!(Stall::default().release_us(123), 123);
    }
}
