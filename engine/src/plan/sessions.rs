//! Sessions (SPECweb2005, Tsung) as a plan gives them: users who fetch pages (a main request, then
//! its embedded resources over two connections), think between pages, and leave; users that
//! arrive in phases or stay a fixed number. The types, their checks, think times and QoS classes;
//! `crate::schedule::users` runs the users, and the worker drives them over sockets.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::random::Rng;

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
