//! A plan: what to send, to whom, with how many connections, for how long. Plain data (serde),
//! so the same plan runs in-process, from the `gauntlet-engine` binary or on another machine.

pub mod idle;
mod json_error;
pub mod sessions;
pub mod tls;

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::uri::control_character;
use idle::IdlePlan;
use sessions::{SessionsPlan, CONNECTIONS_PER_TARGET as SESSION_STREAMS};
use tls::TlsPlan;

/// How the load threads talk to their sockets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Io {
    /// Readiness through epoll, then one send and one recv per request.
    #[default]
    Epoll,
    /// Completions through io_uring: batched submission, multishot receive into provided
    /// buffers, registered files. Plain http:// only; https runs on epoll.
    Uring,
}

/// How the kernel schedules the load threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scheduling {
    /// SCHED_BATCH: a load thread woken by a response or a timer does not preempt what runs on
    /// its CPU (the server, where they share CPUs); it runs when that yields or its slice ends.
    Batch,
    /// SCHED_OTHER, the kernel's default, as other load generators run: a woken thread may
    /// preempt the server. What results from before the plan chose the policy ran under.
    #[default]
    Normal,
}

/// The longest io_uring batch window a plan may ask for (µs).
pub const MAX_IO_BATCH_US: u64 = 10_000;

/// The HTTP version on the request line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum HttpVersion {
    #[serde(rename = "1.1")]
    Http11,
    #[serde(rename = "1.0")]
    Http10,
    /// HTTP/2: h2 through ALPN for https://, h2c with prior knowledge for http://.
    #[serde(rename = "2")]
    Http2,
}

/// What to send, to whom, with how many connections, for how long.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The target, http:// or https://.
    pub url: String,
    /// True allows a target off this machine (--allow-remote).
    #[serde(default)]
    pub allow_remote: bool,
    /// The HTTP method.
    #[serde(default = "default_method")]
    pub method: String,
    /// Extra request headers, as [name, value] pairs in order.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The request body, base64; None for none.
    #[serde(default)]
    pub body_base64: Option<String>,
    /// The HTTP version of the requests.
    #[serde(default = "default_http_version")]
    pub http_version: HttpVersion,
    /// HTTP/2 only: streams each connection keeps open at once (h2load's -m); the closed loop's
    /// concurrency is connections times streams. None: 1. Not with sessions: over HTTP/2 a user's
    /// page and images are 2 streams of its one connection per target.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub streams_per_connection: Option<u32>,
    /// False sends Connection: close and opens a connection per request.
    #[serde(default = "default_true")]
    pub keepalive: bool,
    /// How the load threads do their socket I/O: "epoll" (readiness, one send and one recv per
    /// request) or "uring" (io_uring completions; plain http:// only, and epoll with the reason in
    /// the result's `client.io_fallback` when the kernel refuses it).
    #[serde(default)]
    pub io: Io,
    /// How long (µs) at most a load thread's wait may hold responses back to gather more (about
    /// a third of its requests in flight; on epoll for as long as they take to come at the
    /// thread's recent pace) before it handles them, on either `io`, HTTP/1 and HTTP/2, plain and
    /// TLS. Fewer wake-ups cost less CPU and preempt a server on the same cores less. Each
    /// response's latency is still taken when the kernel received it (SO_TIMESTAMPNS, on epoll's
    /// reads and in io_uring's receive buffers; the result's `rx_timestamped` counts them), so
    /// the window changes when the engine reads, not what it measures (the thread's timer slack
    /// is set to 1 ns). It applies only while a thread has 6 or more requests in flight and none
    /// of them is opening its connection (so never without keep-alive), and never naps past a
    /// send due on a schedule. On epoll the thread naps, then collects what came (the result's
    /// `batch_naps` counts naps); on io_uring the wait asks the kernel for a minimum wait (Linux
    /// 6.12; on older kernels the run falls back to epoll). 0: each response is handled as soon as
    /// it comes. Absent (the default): on epoll, the last three quarters of a warm-up (at most 2
    /// s) try a 400 µs window in spans with and without it, and the measured interval keeps it
    /// only if it served as many responses at clearly less CPU per response (the result's
    /// `client.batch_trial`); without a warm-up of 267 ms or more, and on io_uring, no window.
    #[serde(default)]
    #[schemars(range(max = MAX_IO_BATCH_US))]
    pub io_batch_us: Option<u64>,
    /// The load threads' scheduling policy: "batch" or "normal". Absent (the default): batch in a
    /// closed loop, where on CPUs shared with the server it serves more at less client CPU per
    /// request; normal under a schedule (`rate_per_s`, sessions), whose sends are due at set times
    /// (bench/README.md, "SCHED_BATCH by default"). The result's `client.scheduling` says what the
    /// threads ran under.
    #[serde(default)]
    pub scheduling: Option<Scheduling>,
    /// TLS settings for an https URL (defaults when absent).
    #[serde(default)]
    pub tls: Option<TlsPlan>,
    /// Requests per connection before it is closed and reopened; None for unlimited.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub calls_per_connection: Option<u64>,
    /// Connections to keep open (with sessions: the most open at once).
    #[serde(default = "default_connections")]
    #[schemars(range(min = 1))]
    pub connections: usize,
    /// Send this many requests per second on a fixed schedule (open loop); None: closed loop.
    #[serde(default)]
    pub rate_per_s: Option<f64>,
    /// Users running sessions of pages; `connections` is then the most open at once.
    #[serde(default)]
    pub sessions: Option<SessionsPlan>,
    /// Load threads (never more than connections are used).
    #[serde(default = "default_threads")]
    #[schemars(range(min = 1))]
    pub threads: usize,
    /// Measure exactly this many requests.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub requests: Option<u64>,
    /// Measure for this long. A plan bounded by nothing else (no request count, no sessions)
    /// measures for `x-default-when-unbounded`.
    #[serde(default)]
    #[schemars(range(min = 1), extend("x-default-when-unbounded" = DEFAULT_DURATION_US))]
    pub duration_us: Option<u64>,
    /// Run this long first without measuring.
    #[serde(default)]
    pub warmup_us: u64,
    /// How long a connect or a response may take before it counts as an error.
    #[serde(default = "default_timeout_us")]
    #[schemars(range(min = 1))]
    pub timeout_us: u64,
    /// Wall-clock µs since 1970 at which the load begins (the threads wait for it): the instant
    /// that several machines running slices of one plan agree on. None: at once.
    #[serde(default)]
    pub start_at_unix_us: Option<u64>,
    /// Give every timeline second its encoded histogram, so that timelines from several
    /// machines merge losslessly.
    #[serde(default)]
    pub timeline_histograms: bool,
    /// A weighted mix of paths on the URL's host (WebBench's workload tree): each request picks
    /// one in proportion to its weight; the URL's own path is then not requested.
    #[serde(default)]
    pub paths: Option<Vec<WeightedPath>>,
    /// A string the body of every response to the URL's own path must hold (its content marker).
    /// None: no check. A complete response below 400 without it is a `content` error.
    #[serde(default)]
    pub expect: Option<String>,
    /// Local addresses the connections are bound to, taken round robin (127.0.0.2, 127.0.0.3, ...
    /// on loopback): each brings its own ephemeral ports to the server's port. None: the kernel
    /// picks the source address.
    #[serde(default)]
    pub source_addresses: Option<Vec<String>>,
    /// Connections held open beside the measured ones, idle or sending slowly; counted apart
    /// (docs/load-models.md). None: none.
    #[serde(default)]
    pub idle: Option<IdlePlan>,
}

/// One path of the paths mix and its share of the requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WeightedPath {
    /// A path on the URL's host, starting with /.
    pub path: String,
    /// Its relative share of the requests.
    pub weight: f64,
    /// A string the body of every response to this path must hold (its content marker). None: no
    /// check. A complete response below 400 without it is a `content` error.
    #[serde(default)]
    pub expect: Option<String>,
}

fn default_method() -> String {
    "GET".into()
}
fn default_http_version() -> HttpVersion {
    HttpVersion::Http11
}
fn default_true() -> bool {
    true
}
fn default_connections() -> usize {
    50
}
fn default_threads() -> usize {
    2
}
/// What a plan bounded by no request count, no duration and no sessions measures for.
pub const DEFAULT_DURATION_US: u64 = 10_000_000;
fn default_timeout_us() -> u64 {
    15_000_000
}

/// A plan the engine cannot run; the message names the cause and the fix, on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError(pub String);

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlanError {}

fn fail<T>(message: String) -> Result<T, PlanError> {
    Err(PlanError(message))
}

/// Where the requests go, resolved once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// Path and query, as sent on the request line.
    pub path: String,
    pub address: SocketAddr,
}

impl Target {
    /// The Host header value: the port appears only when it is not the scheme's default.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        if self.port == if self.tls { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// The parts of an `http[s]://host[:port][/path]` URL; the host is not resolved here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    pub path: String,
}

pub fn parse_url(url: &str) -> Result<UrlParts, PlanError> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return fail(format!("'{url}' is not a URL: write it as http://HOST[:PORT]/PATH"));
    };
    let tls = match scheme.to_ascii_lowercase().as_str() {
        "http" => false,
        "https" => true,
        _ => return fail(format!("'{url}' has the scheme '{scheme}': only http:// and https:// URLs can be loaded")),
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'?' => (&rest[..i], format!("/{}", &rest[i..])),
        Some(i) => (&rest[..i], rest[i..].to_string()),
        None => (rest, "/".to_string()),
    };
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((host, "")) => (host, None),
            Some((host, port)) if port.starts_with(':') => (host, Some(&port[1..])),
            _ => return fail(format!("'{url}' has a malformed IPv6 host: write it as http://[::1]:PORT/")),
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if host.is_empty() || host.contains(['@', ' ', '/']) {
        return fail(format!("'{url}' has no valid host: write it as http://HOST[:PORT]/PATH"));
    }
    let port = match port {
        None if tls => 443,
        None => 80,
        Some(text) => match text.parse::<u16>() {
            Ok(p) if p > 0 => p,
            _ => return fail(format!("'{url}' has the port '{text}': a port is a number from 1 to 65535")),
        },
    };
    if let Some(c) = control_character(&path) {
        let url = url.escape_debug();
        return fail(format!("'{url}' has the control character {c:?} in its path: remove it, or percent-encode it"));
    }
    Ok(UrlParts { tls, host: host.to_string(), port, path })
}

/// 127.0.0.0/8, ::1, and IPv4-mapped loopback (::ffff:127.0.0.1), which is IPv4's loopback.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(v6.is_loopback(), |v4| v4.is_loopback()),
        IpAddr::V4(v4) => v4.is_loopback(),
    }
}

fn is_token(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl Plan {
    /// The plan `text` holds, with the engine's defaults for what it leaves out.
    pub fn from_json(text: &str) -> Result<Plan, PlanError> {
        let mut plan: Plan = serde_json::from_str(text).map_err(|e| PlanError(json_error::describe(text, &e)))?;
        if plan.requests.is_none() && plan.duration_us.is_none() && plan.sessions.is_none() {
            plan.duration_us = Some(DEFAULT_DURATION_US);
        }
        Ok(plan)
    }

    pub fn body(&self) -> Result<Vec<u8>, PlanError> {
        match &self.body_base64 {
            None => Ok(Vec::new()),
            Some(text) => base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| PlanError(format!("body_base64 is not base64 ({e}): encode the body with base64"))),
        }
    }

    /// Check every field and resolve the target; nothing is sent.
    pub fn resolve(&self) -> Result<Target, PlanError> {
        self.validate()?;
        let target = self.resolve_url(&self.url)?;
        let https_sessions = self.sessions.as_ref().is_some_and(|s| s.https_url.is_some());
        if self.tls.is_some() && !target.tls && !https_sessions {
            return fail(format!("TLS settings were given for '{}': use an https:// URL", self.url));
        }
        Ok(target)
    }

    /// The sessions' https target, when they have one; it must be an https:// URL.
    pub fn resolve_https(&self) -> Result<Option<Target>, PlanError> {
        let Some(url) = self.sessions.as_ref().and_then(|s| s.https_url.as_deref()) else { return Ok(None) };
        let target = self.resolve_url(url)?;
        if !target.tls {
            return fail(format!("the sessions' https_url '{url}' is not https: write it as https://HOST:PORT/"));
        }
        Ok(Some(target))
    }

    /// `url` parsed and resolved; only to loopback unless the plan allows remote targets.
    fn resolve_url(&self, url: &str) -> Result<Target, PlanError> {
        let UrlParts { tls, host, port, path } = parse_url(url)?;
        let address = match (host.as_str(), port).to_socket_addrs() {
            Ok(mut found) => match found.next() {
                Some(address) => address,
                None => return fail(format!("the host '{host}' has no address: check the URL")),
            },
            Err(e) => return fail(format!("cannot resolve the host '{host}' ({e}): check the URL")),
        };
        if !is_loopback(address.ip()) && !self.allow_remote {
            return fail(format!(
                "the target {address} is not on this machine: load goes only to loopback addresses unless allowed with --allow-remote"
            ));
        }
        self.source_ips(address)?;
        Ok(Target { tls, host, port, path, address })
    }

    fn validate(&self) -> Result<(), PlanError> {
        if self.connections == 0 {
            return fail("connections is 0: use at least 1 connection".into());
        }
        if self.threads == 0 {
            return fail("threads is 0: use at least 1 thread".into());
        }
        if let Some(sessions) = &self.sessions {
            if self.requests.is_some() || self.rate_per_s.is_some() {
                return fail("sessions set their own pace: drop the request count and the rate".into());
            }
            sessions.validate(self.connections).map_err(PlanError)?;
        }
        let bounded_by_phases = self.sessions.as_ref().is_some_and(|s| s.phases.is_some());
        if self.requests.is_none() && self.duration_us.is_none() && !bounded_by_phases {
            return fail("the plan has neither a request count nor a duration: give one of them".into());
        }
        if self.requests == Some(0) || self.duration_us == Some(0) {
            return fail("the request count or the duration is 0: give a positive value".into());
        }
        if self.timeout_us == 0 {
            return fail("the request timeout is 0: give a positive timeout".into());
        }
        if self.rate_per_s.is_some_and(|rate| !(rate.is_finite() && rate > 0.0)) {
            return fail("the rate is not a positive number: give requests per second above 0".into());
        }
        if let Some(paths) = &self.paths {
            validate_paths(paths, self.sessions.is_some())?;
        }
        if self.expect.is_some() && (self.paths.is_some() || self.sessions.is_some()) {
            return fail(
                "`expect` is for the URL's own path: give each path of the mix, or each page, its own `expect`".into(),
            );
        }
        if self.streams_per_connection == Some(0) {
            return fail("streams_per_connection is 0: give at least 1 stream per connection".into());
        }
        if self.streams_per_connection.is_some() && self.http_version != HttpVersion::Http2 {
            return fail("streams_per_connection is for HTTP/2: add http_version \"2\" (--http2) or drop it".into());
        }
        if self.streams_per_connection.is_some() && self.sessions.is_some() {
            return fail(format!(
                "sessions over HTTP/2 carry each user's page and images as {SESSION_STREAMS} streams of one connection per target: drop streams_per_connection (--streams)"
            ));
        }
        if let Some(idle) = &self.idle {
            idle.validate().map_err(PlanError)?;
        }
        if let Some(window_us) = self.io_batch_us.filter(|&us| us > MAX_IO_BATCH_US) {
            return fail(format!(
                "io_batch_us is {window_us} µs: give at most {MAX_IO_BATCH_US} µs (it is how late a response may be handled and its connection's next request sent)"
            ));
        }
        if self.calls_per_connection == Some(0) {
            return fail("calls_per_connection is 0: give at least 1 call per connection".into());
        }
        if !is_token(&self.method) {
            return fail(format!("'{}' is not a valid HTTP method: use a token such as GET or POST", self.method));
        }
        for (name, value) in &self.headers {
            if !is_token(name) {
                return fail(format!("'{name}' is not a valid header name: use letters, digits and '-'"));
            }
            if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
                return fail(format!("the value of header '{name}' has a line break: put it on one line"));
            }
        }
        self.body().map(|_| ())
    }

    /// The load threads' policy: the plan's, else batch in a closed loop and normal under a
    /// schedule (a thread woken by its send timer would not preempt the server either, and its
    /// sends would go out later).
    pub fn scheduling(&self) -> Scheduling {
        let scheduled = self.rate_per_s.is_some() || self.sessions.is_some();
        self.scheduling.unwrap_or(if scheduled { Scheduling::Normal } else { Scheduling::Batch })
    }

    /// Streams each connection carries at once: 1 unless HTTP/2 with streams_per_connection.
    /// Sessions over HTTP/2 carry a user's two connections to a target (its page, then its
    /// images two at a time) as two streams of one connection, as a browser does.
    pub fn streams(&self) -> usize {
        match (self.http_version, &self.sessions) {
            (HttpVersion::Http2, Some(_)) => SESSION_STREAMS,
            _ => self.streams_per_connection.map_or(1, |n| n as usize),
        }
    }

    /// The source addresses as IPs, each of the target's family and, unless the target may be
    /// remote, on loopback.
    pub fn source_ips(&self, target: SocketAddr) -> Result<Vec<IpAddr>, PlanError> {
        let Some(sources) = &self.source_addresses else { return Ok(Vec::new()) };
        if sources.is_empty() {
            return fail("source_addresses is empty: give at least one address, or leave it out".into());
        }
        let mut ips = Vec::with_capacity(sources.len());
        for text in sources {
            let Ok(ip) = text.parse::<IpAddr>() else {
                return fail(format!("'{text}' in source_addresses is not an IP address: write it as 127.0.0.2"));
            };
            if ip.is_ipv4() != target.is_ipv4() {
                return fail(format!(
                    "the source address {ip} is not of the target {target}'s IP version: give addresses of one version"
                ));
            }
            if !is_loopback(ip) && !self.allow_remote {
                return fail(format!("the source address {ip} is not on loopback: use 127.0.0.x (or --allow-remote for a local interface's address)"));
            }
            ips.push(ip);
        }
        Ok(ips)
    }

    /// Connections the run holds open: the measured ones and the idle ones.
    pub fn all_connections(&self) -> usize {
        self.connections + self.idle.as_ref().map_or(0, |idle| idle.connections)
    }

    /// Threads actually used: never more than connections.
    pub fn thread_count(&self) -> usize {
        self.threads.min(self.connections)
    }
}

fn validate_paths(paths: &[WeightedPath], sessions: bool) -> Result<(), PlanError> {
    if sessions {
        return fail("sessions name their own pages: drop the paths mix".into());
    }
    if paths.is_empty() {
        return fail("the paths mix is empty: give at least one path".into());
    }
    for WeightedPath { path, weight, .. } in paths {
        if !path.starts_with('/') || control_character(path).is_some() {
            return fail(format!(
                "'{}' in the paths mix is not a path: start it with / and leave out control characters",
                path.escape_debug()
            ));
        }
        if !(weight.is_finite() && *weight > 0.0) {
            return fail(format!("'{path}' has the weight {weight}: give every path a positive weight"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_host_port_path() {
        let cases = [
            ("http://127.0.0.1:8080/a/b?c=1", (false, "127.0.0.1", 8080, "/a/b?c=1")),
            ("http://localhost/", (false, "localhost", 80, "/")),
            ("http://localhost", (false, "localhost", 80, "/")),
            ("http://localhost?x=1", (false, "localhost", 80, "/?x=1")),
            ("http://[::1]:9000/x", (false, "::1", 9000, "/x")),
            ("HTTP://[::1]", (false, "::1", 80, "/")),
            ("https://localhost/x", (true, "localhost", 443, "/x")),
        ];
        for (url, (tls, host, port, path)) in cases {
            let parsed = parse_url(url).unwrap();
            assert_eq!(
                (parsed.tls, parsed.host.as_str(), parsed.port, parsed.path.as_str()),
                (tls, host, port, path),
                "{url}"
            );
        }
    }

    #[test]
    fn bad_urls_say_why() {
        let cases = [
            ("127.0.0.1:80", "is not a URL"),
            ("ftp://x/", "scheme 'ftp'"),
            ("http://:80/", "no valid host"),
            ("http://x:0/", "port '0'"),
            ("http://x:99999/", "port '99999'"),
            ("http://[::1/", "IPv6"),
            ("http://x/a\r\nX-Injected: 1", "control character '\\r'"),
            ("http://x/a\tb", "control character '\\t'"),
        ];
        for (url, expected) in cases {
            let err = parse_url(url).unwrap_err();
            assert!(err.0.contains(expected), "{url}: {err}");
            assert!(!err.0.contains('\n'));
        }
        // A space is no mistake: the request line carries it percent-encoded (uri.rs).
        assert_eq!(parse_url("http://x/a b").unwrap().path, "/a b");
    }

    fn plan(url: &str) -> Plan {
        Plan::from_json(&format!(r#"{{"url": "{url}", "connections": 1, "requests": 1}}"#)).unwrap()
    }

    #[test]
    fn remote_targets_need_permission() {
        let mut remote = plan("http://192.0.2.1/");
        assert!(remote.resolve().unwrap_err().0.contains("--allow-remote"));
        remote.allow_remote = true;
        assert_eq!(remote.resolve().unwrap().address.to_string(), "192.0.2.1:80");
        assert!(plan("http://127.0.0.2:81/").resolve().is_ok());
        assert!(plan("http://[::1]:81/").resolve().is_ok());
        assert!(plan("http://[::ffff:127.0.0.1]:81/").resolve().is_ok());
        assert!(plan("http://[::ffff:192.0.2.1]:81/").resolve().unwrap_err().0.contains("--allow-remote"));
    }

    #[test]
    fn a_plan_read_from_json_takes_the_engines_defaults() {
        let p = Plan::from_json(r#"{"url": "http://127.0.0.1/"}"#).unwrap();
        assert_eq!((p.connections, p.threads, p.duration_us), (50, 2, Some(DEFAULT_DURATION_US)));
        let p = Plan::from_json(r#"{"url": "http://127.0.0.1/", "requests": 5}"#).unwrap();
        assert_eq!(p.duration_us, None, "a request count bounds the plan");
    }

    #[test]
    fn unknown_fields_and_bad_values_are_refused() {
        assert!(Plan::from_json(r#"{"url": "http://127.0.0.1/", "connections": 1, "bogus": 1}"#).is_err());
        let mut p = plan("http://127.0.0.1/");
        p.headers.push(("Bad Name".into(), "x".into()));
        assert!(p.resolve().unwrap_err().0.contains("header name"));
        let mut p = plan("http://127.0.0.1/");
        p.requests = None;
        assert!(p.resolve().unwrap_err().0.contains("neither"));
        let mut p = plan("http://127.0.0.1/");
        p.body_base64 = Some("***".into());
        assert!(p.resolve().unwrap_err().0.contains("base64"));
        let mut p = plan("http://127.0.0.1/");
        for io in [Io::Epoll, Io::Uring] {
            p.io = io;
            p.io_batch_us = Some(MAX_IO_BATCH_US);
            assert!(p.resolve().is_ok(), "{io:?}");
            p.io_batch_us = Some(MAX_IO_BATCH_US + 1);
            assert!(p.resolve().unwrap_err().0.contains("at most"), "{io:?}");
        }
        let mixes = [
            (vec![], "empty"),
            (vec![WeightedPath { path: "a".into(), weight: 1.0, expect: None }], "not a path"),
            (vec![WeightedPath { path: "/a\nb".into(), weight: 1.0, expect: None }], "not a path"),
            (vec![WeightedPath { path: "/a".into(), weight: 0.0, expect: None }], "positive weight"),
            (vec![WeightedPath { path: "/a".into(), weight: f64::NAN, expect: None }], "positive weight"),
        ];
        for (paths, message) in mixes {
            let mut p = plan("http://127.0.0.1/");
            p.paths = Some(paths);
            assert!(p.resolve().unwrap_err().0.contains(message), "{message}");
        }
    }

    #[test]
    fn host_header_carries_non_default_ports() {
        let mut t = plan("http://localhost:8080/").resolve().unwrap();
        assert_eq!(t.host_header(), "localhost:8080");
        t.port = 80;
        assert_eq!(t.host_header(), "localhost");
        t.tls = true;
        assert_eq!(t.host_header(), "localhost:80");
        t.port = 443;
        t.host = "::1".into();
        assert_eq!(t.host_header(), "[::1]");
    }
}
