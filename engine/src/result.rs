//! The result of a run: every thread's figures merged, as one plain serde record.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::schedule::session::{PageResult, SessionsPlan};
use crate::stats::error::ErrorKind;
use crate::stats::latency::{self, LatencySummary};
use crate::stats::timeline::TimelineEntry;
use crate::stats::Recorder;
use crate::worker::{PageStats, PhaseOutcome, SessionsOutcome, StopReason, WorkerOutcome};

pub const RESULT_SCHEMA: &str = "gauntlet.run-result/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub plan: Plan,
    pub address: String,
    /// Cancelled before the plan's end: the figures cover only what was measured.
    pub partial: bool,
    pub stop_reason: StopReason,
    pub started_unix_ms: u64,
    /// Length of the measured interval.
    pub elapsed_us: u64,
    pub threads: usize,
    pub connections: usize,
    /// Requests that ended, with a response or an error.
    pub requests: u64,
    pub responses: u64,
    pub errors_total: u64,
    pub errors: BTreeMap<String, u64>,
    pub status_codes: BTreeMap<String, u64>,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub connections_opened: u64,
    /// Responses per second of the measured interval.
    pub requests_per_s: f64,
    pub bytes_in_per_s: f64,
    /// From each request's intended send time: its due time under a rate (coordinated omission
    /// corrected), its start in a closed loop.
    pub latency_us: LatencySummary,
    /// From each request's actual start.
    pub service_time_us: LatencySummary,
    /// The merged latency histogram, HdrHistogram V2 + deflate, base64.
    pub histogram: String,
    pub service_histogram: String,
    /// How well a constant rate was held; None in a closed loop.
    pub schedule: Option<ScheduleResult>,
    /// Users, pages and QoS classes; None unless the plan had sessions.
    pub sessions: Option<SessionsResult>,
    /// What the load threads themselves cost.
    pub client: ClientResult,
    /// Handshakes of https runs; None over plain HTTP.
    pub tls: Option<TlsResult>,
    pub timeline: Vec<TimelineEntry>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScheduleResult {
    pub offered_rate_per_s: f64,
    /// Measured requests started per second of the measured interval.
    pub achieved_rate_per_s: f64,
    /// How long after its due time each measured request was started.
    pub send_lag_us: LatencySummary,
    /// Every send lag, encoded as the latency histogram is.
    pub send_lag_histogram: String,
    /// Requests started more than 1 ms after they were due.
    pub late_sends: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TlsResult {
    /// Connections whose handshake completed and whose first response came back.
    pub handshakes: u64,
    /// Of those, the ones that resumed an earlier session (abbreviated handshakes).
    pub resumed: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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
}

fn client_cost(outcomes: &[WorkerOutcome], elapsed_us: u64, requests: u64) -> ClientResult {
    let cpu_us: u64 = outcomes.iter().map(|o| o.cpu_us).sum();
    let busiest = |used_us: fn(&WorkerOutcome) -> u64| {
        outcomes.iter().map(|o| used_us(o) as f64 / o.wall_us.max(1) as f64).fold(0.0, f64::max).min(1.0)
    };
    let busiest_thread_share = busiest(|o| o.cpu_us);
    let busiest_thread_runnable_share = busiest(|o| o.cpu_us + o.cpu_wait_us);
    let cpu_wait_us = outcomes.iter().map(|o| o.cpu_wait_us).sum();
    // Scale the whole run's CPU to the measured interval's share of the wall time.
    let wall_us = outcomes.iter().map(|o| o.wall_us).max().unwrap_or(0).max(1);
    let measured_cpu_us = cpu_us as f64 * elapsed_us.min(wall_us) as f64 / wall_us as f64;
    let cpu_us_per_request = if requests == 0 { 0.0 } else { measured_cpu_us / requests as f64 };
    ClientResult { cpu_us, cpu_us_per_request, busiest_thread_share, cpu_wait_us, busiest_thread_runnable_share }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionsResult {
    pub users_started: u64,
    pub users_completed: u64,
    /// Users who arrived when every connection allowed was in use.
    pub users_dropped: u64,
    /// 304 responses to revalidations.
    pub not_modified: u64,
    pub pages: BTreeMap<String, PageResult>,
    /// One per arrival phase, in order; empty with a fixed number of users.
    #[serde(default)]
    pub phases: Vec<PhaseResult>,
}

/// One arrival phase: users counted by when they arrived, were dropped or finished, pages by when
/// they began (measured pages only, as in `pages`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseResult {
    pub users_per_s: f64,
    /// From the start of the measurement (negative when the phase began in the warm-up).
    pub start_us: i64,
    pub duration_us: u64,
    pub users_arrived: u64,
    pub users_finished: u64,
    pub users_dropped: u64,
    pub pages: BTreeMap<String, PageResult>,
}

/// Each page type's figures merged over threads; `pages_of` picks a thread's page stats.
fn merge_pages<'a>(
    sessions: &SessionsPlan,
    outcomes: &[&'a SessionsOutcome],
    pages_of: impl Fn(&'a SessionsOutcome) -> &'a [PageStats],
) -> BTreeMap<String, PageResult> {
    let named_pages = sessions.types.iter().flat_map(|t| t.pages.iter().map(move |p| (t, p)));
    named_pages
        .enumerate()
        .map(|(i, (session_type, page))| {
            let stats: Vec<_> = outcomes.iter().map(|o| &pages_of(o)[i]).collect();
            let page_time = latency::merge(stats.iter().map(|s| &s.page_time));
            let total = |field: fn(&PageStats) -> u64| stats.iter().map(|s| field(s)).sum();
            let result = PageResult {
                session_type: session_type.name.clone(),
                download: page.download,
                count: total(|s| s.count),
                errors: total(|s| s.errors),
                bytes_in: total(|s| s.bytes_in),
                page_time_us: LatencySummary::of(&page_time),
                histogram: latency::encode(&page_time),
                good: total(|s| s.good),
                tolerable: total(|s| s.tolerable),
                fail: total(|s| s.fail),
            };
            (page.name.clone(), result)
        })
        .collect()
}

fn merge_sessions(plan: &Plan, outcomes: &[&SessionsOutcome]) -> Option<SessionsResult> {
    let sessions = plan.sessions.as_ref()?;
    let sum = |field: fn(&SessionsOutcome) -> u64| outcomes.iter().map(|o| field(o)).sum();
    let mut start_us = -(plan.warmup_us as i64);
    let phases = sessions
        .phases
        .iter()
        .flatten()
        .enumerate()
        .map(|(k, phase)| {
            let phase_sum = |field: fn(&PhaseOutcome) -> u64| outcomes.iter().map(|o| field(&o.phases[k])).sum();
            let result = PhaseResult {
                users_per_s: phase.users_per_s,
                start_us,
                duration_us: phase.duration_us,
                users_arrived: phase_sum(|p| p.users_arrived),
                users_finished: phase_sum(|p| p.users_finished),
                users_dropped: phase_sum(|p| p.users_dropped),
                pages: merge_pages(sessions, outcomes, |o| &o.phases[k].pages),
            };
            start_us += phase.duration_us as i64;
            result
        })
        .collect();
    Some(SessionsResult {
        users_started: sum(|o| o.users_started),
        users_completed: sum(|o| o.users_completed),
        users_dropped: sum(|o| o.users_dropped),
        not_modified: sum(|o| o.not_modified),
        pages: merge_pages(sessions, outcomes, |o| &o.pages),
        phases,
    })
}

pub fn merge(
    plan: Plan,
    address: String,
    started_unix_ms: u64,
    measure_start_us: u64,
    outcomes: Vec<WorkerOutcome>,
    timeline: Vec<TimelineEntry>,
) -> RunResult {
    let stop_reason = [StopReason::Cancelled, StopReason::Duration, StopReason::Requests]
        .into_iter()
        .find(|reason| outcomes.iter().any(|o| o.stop_reason == *reason))
        .unwrap_or(StopReason::Requests);
    let end_us = outcomes.iter().map(|o| o.end_us).max().unwrap_or(measure_start_us);
    let elapsed_us = end_us.saturating_sub(measure_start_us);
    let recorders: Vec<&Recorder> = outcomes.iter().map(|o| &o.recorder).collect();
    let histogram = latency::merge(recorders.iter().map(|r| &r.latency));
    let service_histogram = latency::merge(recorders.iter().map(|r| &r.service));
    let sum = |field: fn(&Recorder) -> u64| recorders.iter().map(|r| field(r)).sum::<u64>();
    let responses = sum(|r| r.responses);
    let errors_total = sum(Recorder::errors_total);
    let bytes_in = sum(|r| r.bytes_in);
    let errors = ErrorKind::ALL
        .iter()
        .map(|kind| (kind.as_str().to_string(), recorders.iter().map(|r| r.errors[kind.index()]).sum()))
        .collect();
    let mut status_codes = BTreeMap::new();
    for recorder in &recorders {
        for (code, &count) in recorder.status_codes.iter().enumerate().filter(|(_, &c)| c > 0) {
            *status_codes.entry(code.to_string()).or_insert(0) += count;
        }
    }
    let per_s = |count: u64| {
        if elapsed_us == 0 {
            0.0
        } else {
            count as f64 * 1e6 / elapsed_us as f64
        }
    };
    let schedule = plan.rate_per_s.map(|offered_rate_per_s| {
        let send_lag = latency::merge(recorders.iter().map(|r| &r.send_lag));
        ScheduleResult {
            offered_rate_per_s,
            achieved_rate_per_s: per_s(sum(|r| r.sent)),
            send_lag_us: LatencySummary::of(&send_lag),
            send_lag_histogram: latency::encode(&send_lag),
            late_sends: sum(|r| r.late_sends),
        }
    });
    RunResult {
        schema: RESULT_SCHEMA.to_string(),
        address,
        partial: stop_reason == StopReason::Cancelled,
        stop_reason,
        started_unix_ms,
        elapsed_us,
        threads: outcomes.len(),
        connections: plan.connections,
        requests: responses + errors_total,
        responses,
        errors_total,
        errors,
        status_codes,
        bytes_in,
        bytes_out: sum(|r| r.bytes_out),
        connections_opened: sum(|r| r.connections_opened),
        requests_per_s: per_s(responses),
        bytes_in_per_s: per_s(bytes_in),
        latency_us: LatencySummary::of(&histogram),
        service_time_us: LatencySummary::of(&service_histogram),
        histogram: latency::encode(&histogram),
        service_histogram: latency::encode(&service_histogram),
        schedule,
        client: client_cost(&outcomes, elapsed_us, responses + errors_total),
        tls: plan
            .url
            .to_ascii_lowercase()
            .starts_with("https://")
            .then(|| TlsResult { handshakes: sum(|r| r.tls_handshakes), resumed: sum(|r| r.tls_resumed) }),
        sessions: merge_sessions(&plan, &outcomes.iter().filter_map(|o| o.sessions.as_ref()).collect::<Vec<_>>()),
        timeline,
        plan,
    }
}
