//! Sessions (SPECweb2005, Tsung): users who fetch pages (a main request, then its embedded
//! resources over two connections), think between pages, and leave; users that arrive in
//! phases or stay a fixed number. This file holds the plan's types and the pure pieces: think
//! times, arrivals, QoS classes, the walk from page to page; `users` runs the users, and the
//! worker drives them over sockets.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::random::Rng;
use crate::stats::latency::LatencySummary;

/// A user's connections to each target it talks to (its page, then its images two at a time);
/// over HTTP/2, the streams of its one connection there.
pub const CONNECTIONS_PER_TARGET: usize = 2;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionsPlan {
    /// The session types, drawn by weight.
    pub types: Vec<SessionType>,
    /// Share of embedded requests that revalidate with If-Modified-Since.
    #[serde(default)]
    pub if_modified_since_share: f64,
    /// That many simultaneous sessions, each starting anew when it ends (SPECweb).
    #[serde(default)]
    pub users: Option<usize>,
    /// Users arriving at a rate, phase after phase; each runs one session and leaves (Tsung).
    #[serde(default)]
    pub phases: Option<Vec<ArrivalPhase>>,
    /// Load that goes on after the measurement, uncounted.
    #[serde(default)]
    pub rampdown_us: u64,
    /// The QoS thresholds (SPECweb2005's by default).
    #[serde(default)]
    pub qos: QosThresholds,
    /// Seed of the random draws (types, think times, revalidations, arrivals, transitions).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Where pages with `scheme: https` go (https://host:port); required when a page has it.
    #[serde(default)]
    pub https_url: Option<String>,
}

fn default_seed() -> u64 {
    1
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionType {
    /// The session type's name.
    pub name: String,
    /// Relative weight of this type in the draw.
    pub weight: f64,
    /// Think time between pages: fixed, uniform or exponential, in microseconds.
    pub think: Think,
    /// The pages of a session, in order (the order they run in without `transitions`).
    pub pages: Vec<Page>,
    /// The first page of a walk through `transitions`; None: the first page.
    #[serde(default)]
    pub start: Option<String>,
    /// A Markov chain: per page, the probability of each next page, or of "end" (the session
    /// ends); each row sums to 1, and a page without a row ends the session. None: the pages
    /// run in order.
    #[serde(default)]
    pub transitions: Option<BTreeMap<String, BTreeMap<String, f64>>>,
}

/// The name that ends a session in a transition row.
pub const END: &str = "end";
/// How far a transition row's sum may be from 1.
const ROW_SUM_TOLERANCE: f64 = 1e-6;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// The page's name, unique in the plan.
    pub name: String,
    /// Path of the main request.
    pub path: String,
    /// Paths of the embedded resources, fetched over a second connection.
    #[serde(default)]
    pub embedded: Vec<String>,
    /// Judged by its byte rate rather than its time.
    #[serde(default)]
    pub download: bool,
    /// A string the page's own response must hold (its content marker). None: no check; embedded
    /// resources are not checked.
    #[serde(default)]
    pub expect: Option<String>,
    /// "http" (the plan's URL) or "https" (the sessions' `https_url`, over connections of its own).
    #[serde(default)]
    pub scheme: Scheme,
    /// "GET" or "POST".
    #[serde(default = "default_method")]
    pub method: String,
    /// The main request's form body (application/x-www-form-urlencoded); only with POST.
    #[serde(default)]
    pub body: Option<String>,
}

fn default_method() -> String {
    "GET".into()
}

/// Which of the sessions' two targets a page goes to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// The plan's URL.
    #[default]
    Http,
    /// The sessions' `https_url`.
    Https,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Think {
    /// Always the same time.
    Fixed {
        /// The think time.
        mean_us: u64,
    },
    /// Uniform between two times.
    Uniform {
        /// The shortest think time.
        min_us: u64,
        /// The longest think time.
        max_us: u64,
    },
    /// Exponentially distributed around a mean.
    Exponential {
        /// The mean think time.
        mean_us: u64,
    },
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArrivalPhase {
    /// Users arriving per second.
    pub users_per_s: f64,
    /// How long the phase lasts.
    pub duration_us: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QosThresholds {
    /// A page faster than this is good.
    pub good_us: u64,
    /// A page faster than this is at least tolerable.
    pub tolerable_us: u64,
    /// A download at least this fast is good.
    pub download_good_bytes_per_s: f64,
    /// A download at least this fast is tolerable.
    pub download_tolerable_bytes_per_s: f64,
}

impl Default for QosThresholds {
    fn default() -> QosThresholds {
        QosThresholds {
            good_us: 2_000_000,
            tolerable_us: 4_000_000,
            download_good_bytes_per_s: 99_000.0,
            download_tolerable_bytes_per_s: 95_000.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qos {
    Good,
    Tolerable,
    Fail,
}

impl QosThresholds {
    /// SPECweb2005's classes: by time, or by byte rate for downloads; a page with an error fails.
    pub fn classify(&self, page_time_us: u64, page_bytes: u64, download: bool, failed: bool) -> Qos {
        if failed {
            return Qos::Fail;
        }
        if download {
            let rate = page_bytes as f64 * 1e6 / page_time_us.max(1) as f64;
            return match rate {
                r if r >= self.download_good_bytes_per_s => Qos::Good,
                r if r >= self.download_tolerable_bytes_per_s => Qos::Tolerable,
                _ => Qos::Fail,
            };
        }
        match page_time_us {
            t if t < self.good_us => Qos::Good,
            t if t < self.tolerable_us => Qos::Tolerable,
            _ => Qos::Fail,
        }
    }
}

impl SessionsPlan {
    /// Every check the engine needs; messages say the cause and the fix.
    pub fn validate(&self, connections: usize) -> Result<(), String> {
        if self.types.is_empty() {
            return Err("the sessions have no session type: give at least one".into());
        }
        let mut names = std::collections::HashSet::new();
        for session in &self.types {
            if !(session.weight.is_finite() && session.weight > 0.0) {
                return Err(format!(
                    "session type '{}' has weight {}: give a positive weight",
                    session.name, session.weight
                ));
            }
            if session.pages.is_empty() {
                return Err(format!("session type '{}' has no pages: give at least one page", session.name));
            }
            if let Think::Uniform { min_us, max_us } = session.think {
                if min_us > max_us {
                    return Err(format!(
                        "session type '{}' thinks between a larger min and a smaller max: swap them",
                        session.name
                    ));
                }
            }
            for page in &session.pages {
                if !names.insert(page.name.as_str()) {
                    return Err(format!("the page name '{}' is used twice: give every page its own name", page.name));
                }
                let paths = || std::iter::once(&page.path).chain(&page.embedded);
                if paths().any(|p| !p.starts_with('/')) {
                    return Err(format!("page '{}' has a path without a leading '/': write paths as /file", page.name));
                }
                if paths().any(|p| crate::uri::control_character(p).is_some()) {
                    return Err(format!("page '{}' has a control character in a path: leave it out", page.name));
                }
                page.validate()?;
            }
            session.validate_walk()?;
        }
        if self.https_url.is_none() && self.uses_https() {
            return Err(
                "a page has scheme https but the sessions have no https_url: give the HTTPS listener's URL".into()
            );
        }
        if !(0.0..=1.0).contains(&self.if_modified_since_share) {
            return Err("if_modified_since_share is outside 0..1: give a share such as 0.3".into());
        }
        match (self.users, &self.phases) {
            (Some(0), None) => Err("users is 0: give at least one user".into()),
            (Some(users), None) if users * self.connections_per_user() > connections => Err(format!(
                "{users} users need {} connections ({} each) but the plan allows {connections}: raise connections",
                users * self.connections_per_user(),
                self.connections_per_user()
            )),
            (Some(_), None) => Ok(()),
            (None, Some(phases)) if phases.is_empty() => Err("the arrival phases are empty: give at least one".into()),
            (None, Some(phases)) => match phases.iter().find(|p| !(p.users_per_s.is_finite() && p.users_per_s > 0.0)) {
                Some(p) => Err(format!("an arrival phase has {} users/s: give a positive rate", p.users_per_s)),
                None => Ok(()),
            },
            _ => Err("the sessions give both users and phases, or neither: give exactly one".into()),
        }
    }

    /// Some page goes to the https target.
    pub fn uses_https(&self) -> bool {
        self.types.iter().flat_map(|t| &t.pages).any(|p| p.scheme == Scheme::Https)
    }

    /// Two connections per target a user talks to: main and embedded requests.
    pub fn connections_per_user(&self) -> usize {
        CONNECTIONS_PER_TARGET * if self.uses_https() { 2 } else { 1 }
    }

    /// How long arrival phases last in all; None with a fixed number of users.
    pub fn phases_duration_us(&self) -> Option<u64> {
        self.phases.as_ref().map(|phases| phases.iter().map(|p| p.duration_us).sum())
    }
}

impl Page {
    fn validate(&self) -> Result<(), String> {
        match (self.method.as_str(), &self.body) {
            ("GET" | "POST", None) | ("POST", Some(_)) => Ok(()),
            ("GET", Some(_)) => Err(format!("page '{}' has a body but is a GET: give it method POST", self.name)),
            (other, _) => Err(format!("page '{}' has the method '{other}': use GET or POST", self.name)),
        }
    }
}

impl SessionType {
    /// The index of the page named `name`.
    pub fn page_index(&self, name: &str) -> Option<usize> {
        self.pages.iter().position(|p| p.name == name)
    }

    /// `start` and `transitions` name this type's pages, and every row sums to 1.
    fn validate_walk(&self) -> Result<(), String> {
        let unknown = |what: &str, name: &str| {
            format!("session type '{}' {what} '{name}', which is not one of its pages: name one of them", self.name)
        };
        if let Some(start) = &self.start {
            if self.page_index(start).is_none() {
                return Err(unknown("starts at", start));
            }
        }
        let Some(transitions) = &self.transitions else {
            return match self.start {
                Some(_) => {
                    Err(format!("session type '{}' has a start but no transitions: give transitions", self.name))
                }
                None => Ok(()),
            };
        };
        for (from, row) in transitions {
            if self.page_index(from).is_none() {
                return Err(unknown("has a transition row for", from));
            }
            if let Some(to) = row.keys().find(|to| *to != END && self.page_index(to).is_none()) {
                return Err(unknown(&format!("goes from '{from}' to"), to));
            }
            if let Some((to, p)) = row.iter().find(|(_, p)| !(p.is_finite() && **p >= 0.0)) {
                return Err(format!(
                    "session type '{}' goes from '{from}' to '{to}' with probability {p}: give a probability from 0 to 1",
                    self.name
                ));
            }
            let sum: f64 = row.values().sum();
            if (sum - 1.0).abs() > ROW_SUM_TOLERANCE {
                return Err(format!(
                    "session type '{}': the transitions from '{from}' sum to {sum}: make them sum to 1",
                    self.name
                ));
            }
        }
        Ok(())
    }
}

impl Think {
    pub fn draw_us(self, rng: &mut Rng) -> u64 {
        match self {
            Think::Fixed { mean_us } => mean_us,
            Think::Uniform { min_us, max_us } => min_us + (rng.unit() * (max_us - min_us) as f64) as u64,
            Think::Exponential { mean_us } => rng.exponential(mean_us as f64) as u64,
        }
    }
}

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
