//! The result of a run: every thread's figures merged, as one plain serde record.

pub mod agent;
pub mod threads;

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::json;

use agent::AgentFigures;

use crate::conn::batch_trial::BatchTrial;
use crate::conn::tls::TlsNegotiated;
use crate::plan::sessions::ArrivalPhase;
use crate::plan::{HttpVersion, Io, Plan, Scheduling};
use crate::schedule::idle::IdleResult;
use crate::schedule::session::PageResult;
use crate::stats::counts::Counts;
use crate::stats::error::ErrorKind;
use crate::stats::latency::{self, LatencySummary};
use crate::stats::memory::MemoryResult;
use crate::stats::timeline::TimelineEntry;
use crate::stats::unanswered::UnansweredResult;
use crate::worker::StopReason;

pub const RESULT_SCHEMA: &str = "gauntlet.run-result/2";

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct RunResult {
    /// The result format and version; a new field or a changed meaning gets a new version.
    pub schema: String,
    /// The plan that ran, every field filled in with its default when it was not given.
    pub plan: Plan,
    /// The resolved target, IP:port ([IPv6]:port).
    pub address: String,
    /// Cancelled before the plan's end: the figures cover only what was measured.
    pub partial: bool,
    /// What ended the run: the request count reached, the duration over, or a cancel.
    pub stop_reason: StopReason,
    /// Milliseconds since 1970-01-01 UTC when the load started (before any warm-up).
    pub started_unix_ms: u64,
    /// Length of the measured interval.
    pub elapsed_us: u64,
    /// Where the measured interval began on CLOCK_MONOTONIC (Python's `time.monotonic` in µs), so
    /// that a monitor can read the server over exactly the measured interval; with agents, the
    /// merged interval on the merging machine's clock.
    pub measured_from_monotonic_us: u64,
    /// Where the measured interval ended on CLOCK_MONOTONIC (measured_from_monotonic_us + elapsed_us).
    pub measured_to_monotonic_us: u64,
    /// Load threads used (at most connections).
    pub threads: usize,
    /// Connections the load kept (the closed loop's concurrency).
    pub connections: usize,
    /// Requests that ended, with a response or an error.
    pub requests: u64,
    /// Requests that ended with a complete response, whatever its status.
    pub responses: u64,
    /// Requests that ended with an error; the sum of errors.
    pub errors_total: u64,
    /// Requests that ended with an error, per error kind; every kind is present, 0 when none.
    #[schemars(schema_with = "error_counts_schema")]
    pub errors: BTreeMap<String, u64>,
    /// Responses per HTTP status code; only codes that occurred.
    pub status_codes: BTreeMap<String, u64>,
    /// Bytes, connections, resends and unsolicited arrivals (docs/results.md), flattened: each
    /// count is a field of the result's JSON.
    #[serde(flatten)]
    pub counts: Counts,
    /// Requests not answered by the measured interval's end (those begun in it, and those begun in
    /// the warm-up and still in flight), by stage, with ages.
    pub unanswered: UnansweredResult,
    /// Responses per second of the measured interval.
    pub requests_per_s: f64,
    /// bytes_in per second of the measured interval.
    pub bytes_in_per_s: f64,
    /// From each request's intended send time: its due time under a rate (coordinated omission
    /// corrected), its start in a closed loop.
    pub latency_us: LatencySummary,
    /// From each request's actual start.
    pub service_time_us: LatencySummary,
    /// The merged latency histogram, HdrHistogram V2 + deflate, base64.
    pub histogram: String,
    /// Every service_time_us sample, encoded as histogram is.
    pub service_histogram: String,
    /// How well a constant rate was held; None in a closed loop.
    pub schedule: Option<ScheduleResult>,
    /// Users, pages and QoS classes; None unless the plan had sessions.
    pub sessions: Option<SessionsResult>,
    /// What the load threads themselves cost.
    pub client: ClientResult,
    /// Handshakes of https runs; None over plain HTTP.
    pub tls: Option<TlsResult>,
    /// What the connections spoke: the protocol, TLS version and cipher, streams per connection.
    pub negotiated: Negotiated,
    /// One entry per second of the measured interval.
    pub timeline: Vec<TimelineEntry>,
    /// Only in a distributed run's merged result: one entry per agent, its slice and its own
    /// figures (docs/distributed.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<AgentFigures>>,
    /// The idle connections held beside the measured ones (plan `idle`); None without them.
    #[serde(default)]
    pub idle: Option<IdleResult>,
    /// What the connections cost the engine in memory; None in results from before it was measured.
    #[serde(default)]
    pub memory: Option<MemoryResult>,
}

/// What a result is made of: the threads' figures merged (`threads::merge`) or the agents' results
/// (`crate::merge::merge_results`). `RunResult::of` derives the rest, so that a result is built
/// in this one place.
pub struct Merged {
    pub plan: Plan,
    pub address: String,
    pub partial: bool,
    pub stop_reason: StopReason,
    pub started_unix_ms: u64,
    pub elapsed_us: u64,
    pub measured_from_monotonic_us: u64,
    pub threads: usize,
    pub responses: u64,
    /// Every error kind by its name.
    pub errors: BTreeMap<String, u64>,
    pub status_codes: BTreeMap<String, u64>,
    pub counts: Counts,
    pub unanswered: UnansweredResult,
    pub latency: Histogram<u64>,
    pub service: Histogram<u64>,
    pub schedule: Option<ScheduleResult>,
    pub sessions: Option<SessionsResult>,
    pub client: ClientResult,
    pub tls: Option<TlsResult>,
    pub negotiated: Negotiated,
    pub timeline: Vec<TimelineEntry>,
    pub idle: Option<IdleResult>,
    pub memory: Option<MemoryResult>,
}

impl RunResult {
    /// The result of `merged`: requests, rates and latency summaries derived from its counts
    /// and histograms.
    pub fn of(merged: Merged) -> RunResult {
        let Merged { plan, elapsed_us, responses, counts, latency, service, .. } = merged;
        let errors_total = merged.errors.values().sum();
        RunResult {
            schema: RESULT_SCHEMA.to_string(),
            address: merged.address,
            partial: merged.partial,
            stop_reason: merged.stop_reason,
            started_unix_ms: merged.started_unix_ms,
            elapsed_us,
            measured_from_monotonic_us: merged.measured_from_monotonic_us,
            measured_to_monotonic_us: merged.measured_from_monotonic_us + elapsed_us,
            threads: merged.threads,
            connections: plan.connections,
            requests: responses + errors_total,
            responses,
            errors_total,
            errors: merged.errors,
            status_codes: merged.status_codes,
            unanswered: merged.unanswered,
            requests_per_s: per_second(responses, elapsed_us),
            bytes_in_per_s: per_second(counts.bytes_in, elapsed_us),
            counts,
            latency_us: LatencySummary::of(&latency),
            service_time_us: LatencySummary::of(&service),
            histogram: latency::encode(&latency),
            service_histogram: latency::encode(&service),
            schedule: merged.schedule,
            sessions: merged.sessions,
            client: merged.client,
            tls: merged.tls,
            negotiated: merged.negotiated,
            timeline: merged.timeline,
            agents: None,
            idle: merged.idle,
            memory: merged.memory,
            plan,
        }
    }
}

/// Every error kind by its name, each a count.
fn error_counts_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = ErrorKind::ALL.iter().map(|kind| kind.as_str()).collect();
    let count = json!({"type": "integer", "minimum": 0, "description": "Requests that ended with this error (docs/results.md)."});
    let properties: serde_json::Map<String, serde_json::Value> =
        names.iter().map(|name| (name.to_string(), count.clone())).collect();
    json_schema!({"type": "object", "additionalProperties": false, "required": names, "properties": properties})
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScheduleResult {
    /// The rate the plan asked for, requests per second.
    pub offered_rate_per_s: f64,
    /// Measured requests started per second of the measured interval.
    pub achieved_rate_per_s: f64,
    /// How long after its due time each measured request was started.
    pub send_lag_us: LatencySummary,
    /// Every send lag, encoded as the latency histogram is.
    pub send_lag_histogram: String,
    /// Requests started more than 1 ms after they were due.
    pub late_sends: u64,
    /// Measured requests started: achieved_rate_per_s times the measured interval, as a count
    /// (so that several results' rates merge exactly).
    pub requests_sent: u64,
    /// Requests due in the measured interval and never started (no connection was free); they
    /// are in the latency at their age at the end.
    pub unsent: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TlsResult {
    /// Connections whose handshake completed and whose first response came back.
    pub handshakes: u64,
    /// Of those, the ones that resumed an earlier session (abbreviated handshakes).
    pub resumed: u64,
}

/// What the connections of a run spoke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Negotiated {
    /// "http/1.1", "http/1.0" or "h2" (over TLS through ALPN, or h2c with prior knowledge).
    pub protocol: String,
    /// "1.2" or "1.3" from the first completed handshake; None over plain HTTP or when no
    /// handshake completed.
    pub tls_version: Option<String>,
    /// The cipher suite of that handshake by its rustls name (TLS13_AES_256_GCM_SHA384).
    pub tls_cipher: Option<String>,
    /// Streams each connection carried at once (1 for HTTP/1).
    pub streams_per_connection: u32,
}

impl Negotiated {
    pub fn of(plan: &Plan, tls: Option<&TlsNegotiated>) -> Negotiated {
        let protocol = match plan.http_version {
            HttpVersion::Http11 => "http/1.1",
            HttpVersion::Http10 => "http/1.0",
            HttpVersion::Http2 => "h2",
        };
        Negotiated {
            protocol: protocol.into(),
            tls_version: tls.map(|t| t.version.clone()),
            tls_cipher: tls.map(|t| t.cipher.clone()),
            streams_per_connection: plan.streams() as u32,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ClientResult {
    /// CPU (user + system) of all load threads, warm-up included.
    pub cpu_us: u64,
    /// CPU per request of the measured interval (the run's CPU scaled to the interval's share of
    /// the wall time, so that a warm-up does not inflate it).
    pub cpu_us_per_request: f64,
    /// The busiest load thread's CPU time over its wall time: near 1.0, the client was saturated.
    pub busiest_thread_share: f64,
    /// Time the load threads were runnable but waiting for a CPU (the scheduler's run-queue
    /// wait), warm-up included; 0 when the kernel does not expose it.
    pub cpu_wait_us: u64,
    /// The highest share of its wall time a load thread was running or waiting for a CPU: near
    /// 1.0, that thread never waited for the network, so the client was saturated even when it
    /// shared its CPUs (which `busiest_thread_share` cannot show).
    pub busiest_thread_runnable_share: f64,
    /// The socket I/O the load threads used: the plan's `io`, or epoll where it fell back.
    pub io: Io,
    /// Why the run used epoll although the plan asked for io_uring; None when it did not fall back.
    pub io_fallback: Option<String>,
    /// The batch window the measured interval ran with (µs; 0: none): the plan's `io_batch_us`,
    /// or what its warm-up's trial kept.
    #[serde(default)]
    pub io_batch_us: u64,
    /// The warm-up's trial of the window (plan `io_batch_us` absent, on epoll, with a warm-up long
    /// enough); None otherwise, and in a result merged from several agents' shares (each share's
    /// own result has its trial).
    #[serde(default)]
    pub batch_trial: Option<BatchTrial>,
    /// The scheduling policy the load threads ran under: the plan's `scheduling` (absent: batch in
    /// a closed loop, normal under a schedule), or where the kernel refused it the one they kept
    /// ("normal" in results from before the plan chose it).
    #[serde(default)]
    pub scheduling: Scheduling,
    /// Why the load threads did not run under the policy the plan asked for; None when they did.
    #[serde(default)]
    pub scheduling_fallback: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SessionsResult {
    /// Users who began a session in the measured interval.
    pub users_started: u64,
    /// Users who finished their session.
    pub users_completed: u64,
    /// Users who arrived when every connection allowed was in use.
    pub users_dropped: u64,
    /// 304 responses to revalidations.
    pub not_modified: u64,
    /// Each page's figures, by the page's name.
    pub pages: BTreeMap<String, PageResult>,
    /// One per arrival phase, in order; empty with a fixed number of users.
    #[serde(default)]
    pub phases: Vec<PhaseResult>,
}

/// One arrival phase: users counted by when they arrived, were dropped or finished, pages by when
/// they began (measured pages only, as in `pages`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PhaseResult {
    /// The phase's arrival rate, users per second (the whole plan's).
    pub users_per_s: f64,
    /// When the phase began, µs from the start of the measurement (negative when it began in the
    /// warm-up).
    pub start_us: i64,
    /// How long the phase lasted.
    pub duration_us: u64,
    /// Users who arrived in the phase and began a session.
    pub users_arrived: u64,
    /// Users who finished their session in the phase.
    pub users_finished: u64,
    /// Users who arrived in the phase when every connection allowed was in use.
    pub users_dropped: u64,
    /// The measured pages that began in the phase, by the page's name.
    pub pages: BTreeMap<String, PageResult>,
}

/// Counts of several parts (threads, agents) added field by field.
fn sum_parts<const N: usize>(parts: impl Iterator<Item = [u64; N]>) -> [u64; N] {
    parts.fold([0; N], |total, part| std::array::from_fn(|i| total[i] + part[i]))
}

/// The sessions' figures from their parts' users (started, completed, dropped) and 304s, and the
/// merged pages and phases.
pub fn sessions_result(
    parts: impl Iterator<Item = [u64; 4]>,
    pages: BTreeMap<String, PageResult>,
    phases: Vec<PhaseResult>,
) -> SessionsResult {
    let [users_started, users_completed, users_dropped, not_modified] = sum_parts(parts);
    SessionsResult { users_started, users_completed, users_dropped, not_modified, pages, phases }
}

/// An arrival phase's figures from the plan's phase, when it began, its parts' users (arrived,
/// finished, dropped) and its merged pages.
pub fn phase_result(
    phase: &ArrivalPhase,
    start_us: i64,
    parts: impl Iterator<Item = [u64; 3]>,
    pages: BTreeMap<String, PageResult>,
) -> PhaseResult {
    let [users_arrived, users_finished, users_dropped] = sum_parts(parts);
    PhaseResult {
        users_per_s: phase.users_per_s,
        start_us,
        duration_us: phase.duration_us,
        users_arrived,
        users_finished,
        users_dropped,
        pages,
    }
}

/// A page's figures from its parts' counts (count, errors, invalid, bytes_in, good, tolerable,
/// fail: the threads' or the agents' own) and its merged page times.
pub fn page_result(
    session_type: String,
    download: bool,
    parts: impl Iterator<Item = [u64; 7]>,
    page_time: &Histogram<u64>,
) -> PageResult {
    let [count, errors, invalid, bytes_in, good, tolerable, fail] = sum_parts(parts);
    PageResult {
        session_type,
        download,
        count,
        errors,
        invalid,
        bytes_in,
        page_time_us: LatencySummary::of(page_time),
        histogram: latency::encode(page_time),
        good,
        tolerable,
        fail,
    }
}

/// A cancel outranks a duration, which outranks a request count.
pub fn first_stop_reason(reasons: impl IntoIterator<Item = StopReason> + Clone) -> StopReason {
    [StopReason::Cancelled, StopReason::Duration, StopReason::Requests]
        .into_iter()
        .find(|reason| reasons.clone().into_iter().any(|r| r == *reason))
        .unwrap_or(StopReason::Requests)
}

/// `count` per second of `elapsed_us`; 0 over no time.
pub fn per_second(count: u64, elapsed_us: u64) -> f64 {
    if elapsed_us == 0 {
        0.0
    } else {
        count as f64 * 1e6 / elapsed_us as f64
    }
}
