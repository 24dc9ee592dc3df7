//! The threads' figures merged into one result: their `Recorder`s, CPU and sessions.

use std::collections::BTreeMap;

use super::{
    first_stop_reason, page_result, per_second, phase_result, sessions_result, ClientResult, Merged, Negotiated,
    RunResult, ScheduleResult, SessionsResult, TlsResult,
};
use crate::clock::monotonic_us;
use crate::plan::sessions::SessionsPlan;
use crate::plan::{Io, Plan, Scheduling};
use crate::schedule::session::PageResult;
use crate::stats::counts::{sum_keyed, Counts};
use crate::stats::error;
use crate::stats::latency::{self, LatencySummary};
use crate::stats::timeline::TimelineEntry;
use crate::stats::unanswered::UnansweredResult;
use crate::stats::Recorder;
use crate::worker::{PageStats, SessionsOutcome, StopReason, WorkerOutcome};

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
    let io_fallback = outcomes.iter().find_map(|o| o.io_fallback.clone());
    let io = if io_fallback.is_some() { Io::Epoll } else { outcomes.first().map_or(Io::Epoll, |o| o.io) };
    let scheduling_fallback = outcomes.iter().find_map(|o| o.scheduling_fallback.clone());
    let scheduling = match (&scheduling_fallback, outcomes.first()) {
        (None, Some(first)) => first.scheduling,
        _ => Scheduling::Normal,
    };
    ClientResult {
        cpu_us,
        cpu_us_per_request,
        busiest_thread_share,
        cpu_wait_us,
        busiest_thread_runnable_share,
        io,
        io_fallback,
        // The run's own to tell (`run::start`).
        io_batch_us: 0,
        batch_trial: None,
        scheduling,
        scheduling_fallback,
    }
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
            let counts = stats.iter().map(|s| [s.count, s.errors, s.invalid, s.bytes_in, s.good, s.tolerable, s.fail]);
            let result = page_result(session_type.name.clone(), page.download, counts, &page_time);
            (page.name.clone(), result)
        })
        .collect()
}

fn merge_sessions(plan: &Plan, outcomes: &[&SessionsOutcome]) -> Option<SessionsResult> {
    let sessions = plan.sessions.as_ref()?;
    let mut start_us = -(plan.warmup_us as i64);
    let phases = sessions
        .phases
        .iter()
        .flatten()
        .enumerate()
        .map(|(k, phase)| {
            let users =
                outcomes.iter().map(|o| &o.phases[k]).map(|p| [p.users_arrived, p.users_finished, p.users_dropped]);
            let pages = merge_pages(sessions, outcomes, |o| &o.phases[k].pages);
            let result = phase_result(phase, start_us, users, pages);
            start_us += phase.duration_us as i64;
            result
        })
        .collect();
    let users = outcomes.iter().map(|o| [o.users_started, o.users_completed, o.users_dropped, o.not_modified]);
    Some(sessions_result(users, merge_pages(sessions, outcomes, |o| &o.pages), phases))
}

pub fn merge(
    plan: Plan,
    address: String,
    started_unix_ms: u64,
    measure_start_us: u64,
    outcomes: Vec<WorkerOutcome>,
    timeline: Vec<TimelineEntry>,
) -> RunResult {
    let stop_reason = first_stop_reason(outcomes.iter().map(|o| o.stop_reason));
    let end_us = outcomes.iter().map(|o| o.end_us).max().unwrap_or(measure_start_us);
    let elapsed_us = end_us.saturating_sub(measure_start_us);
    let recorders: Vec<&Recorder> = outcomes.iter().map(|o| &o.recorder).collect();
    let histogram = latency::merge(recorders.iter().map(|r| &r.latency));
    let service_histogram = latency::merge(recorders.iter().map(|r| &r.service));
    let sum = |field: fn(&Recorder) -> u64| recorders.iter().map(|r| field(r)).sum::<u64>();
    let responses = sum(|r| r.responses);
    let errors_total = sum(Recorder::errors_total);
    let schedule = plan.rate_per_s.map(|offered_rate_per_s| {
        let send_lag = latency::merge(recorders.iter().map(|r| &r.send_lag));
        ScheduleResult {
            offered_rate_per_s,
            achieved_rate_per_s: per_second(sum(|r| r.sent), elapsed_us),
            send_lag_us: LatencySummary::of(&send_lag),
            send_lag_histogram: latency::encode(&send_lag),
            late_sends: sum(|r| r.late_sends),
            requests_sent: sum(|r| r.sent),
            unsent: sum(|r| r.unsent),
        }
    });
    let counts = Counts::sum(recorders.iter().map(|r| &r.counts));
    RunResult::of(Merged {
        address,
        partial: stop_reason == StopReason::Cancelled,
        stop_reason,
        started_unix_ms,
        elapsed_us,
        measured_from_monotonic_us: monotonic_us(measure_start_us),
        threads: outcomes.len(),
        responses,
        errors: sum_keyed(recorders.iter().map(|r| error::named(&r.errors))),
        status_codes: sum_keyed(recorders.iter().map(|r| r.status_code_counts())),
        counts,
        unanswered: UnansweredResult::of(recorders.iter().map(|r| &r.unanswered)),
        latency: histogram,
        service: service_histogram,
        schedule,
        client: client_cost(&outcomes, elapsed_us, responses + errors_total),
        tls: (plan.url.to_ascii_lowercase().starts_with("https://")
            || plan.sessions.as_ref().is_some_and(|s| s.https_url.is_some()))
        .then(|| TlsResult { handshakes: sum(|r| r.tls_handshakes), resumed: sum(|r| r.tls_resumed) }),
        sessions: merge_sessions(&plan, &outcomes.iter().filter_map(|o| o.sessions.as_ref()).collect::<Vec<_>>()),
        negotiated: Negotiated::of(&plan, outcomes.iter().find_map(|o| o.negotiated_tls.as_ref())),
        timeline,
        idle: None,
        memory: None,
        plan,
    })
}
