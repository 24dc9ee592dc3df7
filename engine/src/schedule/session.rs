//! Sessions' arrivals and the figures of their pages; the plan's types are in
//! `crate::plan::sessions`, and `users` runs the users.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::sessions::ArrivalPhase;
use crate::random::Rng;
use crate::stats::latency::LatencySummary;

/// Poisson arrivals through consecutive phases (one thread's share of each rate).
#[derive(Debug, Clone)]
pub struct Arrivals {
    /// (end of the phase, users per second in it)
    phases: Vec<(u64, f64)>,
    current: usize,
    next_us: Option<u64>,
    rng: Rng,
}

impl Arrivals {
    pub fn new(start_us: u64, phases: &[ArrivalPhase], share: f64, rng: Rng) -> Arrivals {
        let mut end_us = start_us;
        let phases = phases
            .iter()
            .map(|p| {
                end_us += p.duration_us;
                (end_us, p.users_per_s * share)
            })
            .collect();
        let mut arrivals = Arrivals { phases, current: 0, next_us: None, rng };
        arrivals.next_us = arrivals.draw_after(start_us);
        arrivals
    }

    /// The next arrival, None once the last phase is over.
    pub fn next_due_us(&self) -> Option<u64> {
        self.next_us
    }

    /// Take the arrival that was due and draw the next.
    pub fn advance(&mut self) {
        if let Some(now) = self.next_us {
            self.next_us = self.draw_after(now);
        }
    }

    /// The exponential gap is memoryless, so a draw that crosses a phase's end restarts from
    /// that end at the next phase's rate.
    fn draw_after(&mut self, mut from_us: u64) -> Option<u64> {
        while let Some(&(end_us, rate)) = self.phases.get(self.current) {
            let at_us = from_us + self.rng.exponential(1e6 / rate) as u64;
            if at_us < end_us {
                return Some(at_us);
            }
            from_us = end_us;
            self.current += 1;
        }
        None
    }
}

/// What one page type came to, per thread and then merged.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PageResult {
    /// The session type the page belongs to.
    #[serde(rename = "type")]
    pub session_type: String,
    /// True when the page is judged by its byte rate.
    pub download: bool,
    /// Pages fetched in the measured interval.
    pub count: u64,
    /// Pages with a failed request.
    pub errors: u64,
    /// Of those, pages that failed their check: the page's own response had an error status or
    /// lacked its content marker (as when a session lost its login); they fail QoS.
    #[serde(default)]
    pub invalid: u64,
    /// Bytes read for the page and its embedded resources.
    pub bytes_in: u64,
    /// From the page's first request to its last response.
    pub page_time_us: LatencySummary,
    /// Every page time, encoded as the result's histogram is.
    pub histogram: String,
    /// Pages in QoS class good.
    pub good: u64,
    /// Pages in QoS class tolerable.
    pub tolerable: u64,
    /// Pages that failed QoS.
    pub fail: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::sessions::*;

    #[test]
    fn qos_classes_follow_specweb() {
        let qos = QosThresholds::default();
        let cases = [
            ((1_999_999, 0, false, false), Qos::Good),
            ((2_000_000, 0, false, false), Qos::Tolerable),
            ((4_000_000, 0, false, false), Qos::Fail),
            ((10, 0, false, true), Qos::Fail),
            ((1_000_000, 99_000, true, false), Qos::Good),
            ((1_000_000, 96_000, true, false), Qos::Tolerable),
            ((1_000_000, 94_999, true, false), Qos::Fail),
        ];
        for ((time, bytes, download, failed), expected) in cases {
            assert_eq!(qos.classify(time, bytes, download, failed), expected, "{time} {bytes} {download}");
        }
    }

    #[test]
    fn think_times_have_their_means() {
        let mut rng = Rng::new(7);
        let n = 100_000;
        let mean = |think: Think, rng: &mut Rng| (0..n).map(|_| think.draw_us(rng)).sum::<u64>() as f64 / n as f64;
        assert_eq!(mean(Think::Fixed { mean_us: 500 }, &mut rng), 500.0);
        assert!((mean(Think::Uniform { min_us: 100, max_us: 300 }, &mut rng) - 200.0).abs() < 2.0);
        assert!((mean(Think::Exponential { mean_us: 1_000_000 }, &mut rng) - 1e6).abs() < 1e4);
    }

    #[test]
    fn arrivals_follow_each_phase_rate() {
        let phases = [
            ArrivalPhase { users_per_s: 100.0, duration_us: 30_000_000 },
            ArrivalPhase { users_per_s: 450.0, duration_us: 10_000_000 },
            ArrivalPhase { users_per_s: 200.0, duration_us: 20_000_000 },
        ];
        let mut arrivals = Arrivals::new(1_000, &phases, 1.0, Rng::new(11));
        let mut per_phase = [0u32; 3];
        while let Some(at) = arrivals.next_due_us() {
            let phase = match at - 1_000 {
                t if t < 30_000_000 => 0,
                t if t < 40_000_000 => 1,
                _ => 2,
            };
            per_phase[phase] += 1;
            arrivals.advance();
        }
        for (count, expected) in per_phase.iter().zip([3_000.0, 4_500.0, 4_000.0]) {
            assert!((*count as f64 - expected).abs() < 4.0 * expected.sqrt(), "{per_phase:?}");
        }
    }

    #[test]
    fn plans_are_checked() {
        let page =
            |name: &str| -> Page { serde_json::from_str(&format!(r#"{{"name": "{name}", "path": "/"}}"#)).unwrap() };
        let session = |pages| SessionType {
            name: "s".into(),
            weight: 1.0,
            think: Think::Fixed { mean_us: 0 },
            pages,
            start: None,
            transitions: None,
        };
        let plan = |types, users, phases| SessionsPlan {
            types,
            if_modified_since_share: 0.0,
            users,
            phases,
            rampdown_us: 0,
            qos: QosThresholds::default(),
            seed: 1,
            https_url: None,
        };
        assert!(plan(vec![session(vec![page("a")])], Some(2), None).validate(4).is_ok());
        assert!(plan(vec![session(vec![page("a")])], Some(3), None).validate(4).unwrap_err().contains("6 connections"));
        assert!(plan(vec![session(vec![])], Some(1), None).validate(4).unwrap_err().contains("no pages"));
        assert!(plan(vec![session(vec![page("a"), page("a")])], Some(1), None)
            .validate(4)
            .unwrap_err()
            .contains("twice"));
        assert!(plan(vec![session(vec![page("a")])], None, None).validate(4).unwrap_err().contains("exactly one"));
        let bad_rate = Some(vec![ArrivalPhase { users_per_s: -1.0, duration_us: 1 }]);
        assert!(plan(vec![session(vec![page("a")])], None, bad_rate)
            .validate(4)
            .unwrap_err()
            .contains("positive rate"));
    }

    #[test]
    fn walks_methods_and_schemes_are_checked() {
        let session = |transitions: &str, start: Option<&str>, page_b: &str| -> SessionsPlan {
            let start = start.map_or("null".to_string(), |s| format!("\"{s}\""));
            serde_json::from_str(&format!(
                r#"{{"users": 1, "types": [{{"name": "bank", "weight": 1, "think": {{"kind": "fixed", "mean_us": 0}},
                   "start": {start}, "transitions": {transitions},
                   "pages": [{{"name": "a", "path": "/a"}}, {page_b}]}}]}}"#
            ))
            .unwrap()
        };
        let b = r#"{"name": "b", "path": "/b"}"#;
        let error = |plan: SessionsPlan| plan.validate(4).err().unwrap_or_default();
        assert_eq!(error(session(r#"{"a": {"b": 0.5, "end": 0.5}, "b": {"a": 1}}"#, Some("b"), b)), "");
        assert!(error(session(r#"{"a": {"b": 0.5, "end": 0.4}}"#, None, b)).contains("from 'a' sum to 0.9"));
        assert!(error(session(r#"{"a": {"c": 1}}"#, None, b)).contains("from 'a' to 'c'"));
        assert!(error(session(r#"{"x": {"a": 1}}"#, None, b)).contains("row for 'x'"));
        assert!(error(session(r#"{"a": {"b": 1}}"#, Some("z"), b)).contains("starts at 'z'"));
        assert!(error(session(r#"{"a": {"b": 1.5, "end": -0.5}}"#, None, b)).contains("from 0 to 1"));
        let post_get = r#"{"name": "b", "path": "/b", "body": "x=1"}"#;
        assert!(error(session("null", None, post_get)).contains("give it method POST"));
        let put = r#"{"name": "b", "path": "/b", "method": "PUT"}"#;
        assert!(error(session("null", None, put)).contains("use GET or POST"));
        let https = r#"{"name": "b", "path": "/b", "scheme": "https"}"#;
        assert!(error(session("null", None, https)).contains("no https_url"));
        let mut with_url = session("null", None, https);
        with_url.https_url = Some("https://127.0.0.1:8443/".into());
        assert!(with_url.validate(3).unwrap_err().contains("4 each"), "two pairs of connections for one user");
        assert!(with_url.validate(4).is_ok());
    }
}
