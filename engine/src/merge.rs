//! The results of one plan's shares (agents on several machines) merged into one result of the
//! whole plan, losslessly: counts add up, histograms merge from their encodings, timelines align
//! by wall-clock second.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::clock::monotonic_us_of_unix_us;
use crate::plan::sessions::SessionsPlan;
use crate::plan::{Plan, PlanError};
use crate::result::{
    first_stop_reason, page_result, per_second, phase_result, sessions_result, ClientResult, Merged, PhaseResult,
    RunResult, ScheduleResult, SessionsResult, TlsResult,
};
use crate::schedule::idle::IdleResult;
use crate::schedule::session::PageResult;
use crate::stats::counts::{sum_keyed, Counts};
use crate::stats::latency::{self, LatencySummary};
use crate::stats::memory::MemoryResult;
use crate::stats::timeline::TimelineEntry;
use crate::stats::unanswered::UnansweredResult;

/// Wall-clock µs at which a result's measured interval began: its agreed start (or its actual
/// start when it began late; started_unix_ms is whole milliseconds), plus the warm-up.
pub fn measure_start_unix_us(result: &RunResult) -> u64 {
    let started_us = result.plan.start_at_unix_us.unwrap_or(0).max(result.started_unix_ms * 1_000);
    started_us + result.plan.warmup_us
}

/// Encoded histograms merged into one, with it encoded.
fn merged<'a>(encoded: impl IntoIterator<Item = &'a String>) -> Result<(Histogram<u64>, String), PlanError> {
    let histograms = encoded.into_iter().map(|e| latency::decode(e)).collect::<Result<Vec<_>, _>>();
    let merged = histograms
        .and_then(|h| latency::try_merge(&h))
        .map_err(|e| PlanError(format!("{e}: merge results of the engine only")))?;
    let encoded = latency::encode(&merged);
    Ok((merged, encoded))
}

/// Second k of a result whose measurement began d seconds after the earliest one's is second
/// k + d of the whole (d rounded to whole seconds); each second's histograms merge.
fn merge_timelines(results: &[&RunResult], starts_us: &[u64]) -> Result<Vec<TimelineEntry>, PlanError> {
    let earliest_us = starts_us.iter().copied().min().unwrap_or(0);
    let mut by_second: BTreeMap<u64, Vec<&TimelineEntry>> = BTreeMap::new();
    for (result, start_us) in results.iter().zip(starts_us) {
        let shift = ((start_us - earliest_us) as f64 / 1e6).round() as u64;
        for entry in &result.timeline {
            by_second.entry(entry.second + shift).or_default().push(entry);
        }
    }
    let mut timeline = Vec::with_capacity(by_second.len());
    for (second, entries) in by_second {
        let encoded: Option<Vec<&String>> = entries.iter().map(|e| e.histogram.as_ref()).collect();
        let Some(encoded) = encoded else {
            return Err(PlanError(format!(
                "second {second} of a result has no histogram: run the shares with timeline_histograms"
            )));
        };
        let (histogram, encoded) = merged(encoded)?;
        let percentile = |q| if histogram.is_empty() { 0 } else { histogram.value_at_quantile(q) };
        let sum = |field: fn(&TimelineEntry) -> u64| entries.iter().map(|e| field(e)).sum();
        timeline.push(TimelineEntry {
            second,
            span_us: entries.iter().map(|e| e.span_us).max().unwrap_or(0),
            requests: sum(|e| e.requests),
            responses: sum(|e| e.responses),
            errors: sum(|e| e.errors),
            bytes_in: sum(|e| e.bytes_in),
            p50_us: percentile(0.5),
            p90_us: percentile(0.9),
            p99_us: percentile(0.99),
            max_us: histogram.max(),
            histogram: Some(encoded),
            errors_by_kind: sum_keyed(entries.iter().map(|e| &e.errors_by_kind)),
            // users_active too: each share's users are its own.
            users_arrived: sum(|e| e.users_arrived),
            users_active: sum(|e| e.users_active),
            users_finished: sum(|e| e.users_finished),
            users_dropped: sum(|e| e.users_dropped),
            pages: sum(|e| e.pages),
            page_errors: sum(|e| e.page_errors),
        });
    }
    Ok(timeline)
}

fn merge_schedule(
    results: &[&RunResult],
    offered_rate_per_s: f64,
    elapsed_us: u64,
) -> Result<ScheduleResult, PlanError> {
    let schedules: Vec<&ScheduleResult> = results.iter().filter_map(|r| r.schedule.as_ref()).collect();
    let (send_lag, send_lag_histogram) = merged(schedules.iter().map(|s| &s.send_lag_histogram))?;
    let requests_sent = schedules.iter().map(|s| s.requests_sent).sum();
    Ok(ScheduleResult {
        offered_rate_per_s,
        achieved_rate_per_s: per_second(requests_sent, elapsed_us),
        send_lag_us: LatencySummary::of(&send_lag),
        send_lag_histogram,
        late_sends: schedules.iter().map(|s| s.late_sends).sum(),
        requests_sent,
        unsent: schedules.iter().map(|s| s.unsent).sum(),
    })
}

/// Each page's figures merged over the parts' `pages`, by the first part's page names.
fn merge_pages(parts: &[&BTreeMap<String, PageResult>]) -> Result<BTreeMap<String, PageResult>, PlanError> {
    let mut pages = BTreeMap::new();
    for (name, page) in parts.first().into_iter().flat_map(|first| first.iter()) {
        let views: Vec<&PageResult> = parts.iter().filter_map(|p| p.get(name)).collect();
        let (page_time, _) = merged(views.iter().map(|v| &v.histogram))?;
        let counts = views.iter().map(|v| [v.count, v.errors, v.invalid, v.bytes_in, v.good, v.tolerable, v.fail]);
        let result = page_result(page.session_type.clone(), page.download, counts, &page_time);
        pages.insert(name.clone(), result);
    }
    Ok(pages)
}

/// Phase k of every share is phase k of the whole plan (`plan`), whose rates it reports.
fn merge_sessions(plan: &SessionsPlan, sessions: &[&SessionsResult]) -> Result<SessionsResult, PlanError> {
    let Some(first) = sessions.first() else {
        return Err(PlanError("no result has sessions: merge results of one plan".into()));
    };
    let plan_phases = plan.phases.as_deref().unwrap_or_default();
    if sessions.iter().any(|s| s.phases.len() != plan_phases.len()) {
        return Err(PlanError(format!(
            "a result has other arrival phases than the plan's {}: merge results of one plan",
            plan_phases.len()
        )));
    }
    let phases = plan_phases
        .iter()
        .enumerate()
        .map(|(k, phase)| {
            let views: Vec<&PhaseResult> = sessions.iter().map(|s| &s.phases[k]).collect();
            let users = views.iter().map(|v| [v.users_arrived, v.users_finished, v.users_dropped]);
            let pages = merge_pages(&views.iter().map(|v| &v.pages).collect::<Vec<_>>())?;
            Ok(phase_result(phase, first.phases[k].start_us, users, pages))
        })
        .collect::<Result<Vec<_>, PlanError>>()?;
    let pages = merge_pages(&sessions.iter().map(|s| &s.pages).collect::<Vec<_>>())?;
    let users = sessions.iter().map(|s| [s.users_started, s.users_completed, s.users_dropped, s.not_modified]);
    Ok(sessions_result(users, pages, phases))
}

fn merge_client(results: &[&RunResult], requests: u64) -> ClientResult {
    let measured_cpu_us: f64 = results.iter().map(|r| r.client.cpu_us_per_request * r.requests as f64).sum();
    let busiest = |share: fn(&ClientResult) -> f64| results.iter().map(|r| share(&r.client)).fold(0.0, f64::max);
    ClientResult {
        cpu_us: results.iter().map(|r| r.client.cpu_us).sum(),
        cpu_us_per_request: if requests == 0 { 0.0 } else { measured_cpu_us / requests as f64 },
        busiest_thread_share: busiest(|c| c.busiest_thread_share),
        cpu_wait_us: results.iter().map(|r| r.client.cpu_wait_us).sum(),
        busiest_thread_runnable_share: busiest(|c| c.busiest_thread_runnable_share),
        // The shares ran one plan: a share that fell back makes the whole run epoll's.
        io: results.iter().find(|r| r.client.io_fallback.is_some()).map_or(results[0].client.io, |r| r.client.io),
        io_fallback: results.iter().find_map(|r| r.client.io_fallback.clone()),
        io_batch_us: results.iter().map(|r| r.client.io_batch_us).max().unwrap_or(0),
        batch_trial: None,
        // Likewise a share whose kernel refused the plan's policy gives the whole run its own.
        scheduling: results
            .iter()
            .find(|r| r.client.scheduling_fallback.is_some())
            .map_or(results[0].client.scheduling, |r| r.client.scheduling),
        scheduling_fallback: results.iter().find_map(|r| r.client.scheduling_fallback.clone()),
    }
}

/// One result of `plan` (the whole plan, its shares' agreed start included) from the results of
/// its shares; the interval runs from the earliest share's measured start to the latest's end.
pub fn merge_results(plan: &Plan, results: &[&RunResult]) -> Result<RunResult, PlanError> {
    let Some(first) = results.first() else { return Err(PlanError("no result to merge: give at least one".into())) };
    let starts_us: Vec<u64> = results.iter().map(|r| measure_start_unix_us(r)).collect();
    let earliest_us = starts_us.iter().copied().min().unwrap_or(0);
    let end_us = results.iter().zip(&starts_us).map(|(r, s)| s + r.elapsed_us).max().unwrap_or(0);
    let elapsed_us = end_us - earliest_us;
    let (latency, _) = merged(results.iter().map(|r| &r.histogram))?;
    let (service, _) = merged(results.iter().map(|r| &r.service_histogram))?;
    let tls: Vec<&TlsResult> = results.iter().filter_map(|r| r.tls.as_ref()).collect();
    let sessions: Vec<&SessionsResult> = results.iter().filter_map(|r| r.sessions.as_ref()).collect();
    let mut whole = plan.clone();
    whole.timeline_histograms = true;
    Ok(RunResult::of(Merged {
        address: first.address.clone(),
        // One agent's handshakes may all have failed: another's tell what was negotiated.
        negotiated: results
            .iter()
            .map(|r| &r.negotiated)
            .find(|n| n.tls_version.is_some())
            .unwrap_or(&first.negotiated)
            .clone(),
        partial: results.iter().any(|r| r.partial),
        stop_reason: first_stop_reason(results.iter().map(|r| r.stop_reason)),
        started_unix_ms: results.iter().map(|r| r.started_unix_ms).min().unwrap_or(0),
        elapsed_us,
        measured_from_monotonic_us: monotonic_us_of_unix_us(earliest_us),
        threads: results.iter().map(|r| r.threads).sum(),
        responses: results.iter().map(|r| r.responses).sum(),
        errors: sum_keyed(results.iter().map(|r| &r.errors)),
        status_codes: sum_keyed(results.iter().map(|r| &r.status_codes)),
        counts: Counts::sum(results.iter().map(|r| &r.counts)),
        unanswered: UnansweredResult::merge(results.iter().map(|r| &r.unanswered)),
        latency,
        service,
        schedule: plan.rate_per_s.map(|rate| merge_schedule(results, rate, elapsed_us)).transpose()?,
        sessions: plan.sessions.as_ref().map(|plan| merge_sessions(plan, &sessions)).transpose()?,
        client: merge_client(results, results.iter().map(|r| r.requests).sum()),
        tls: (!tls.is_empty()).then(|| TlsResult {
            handshakes: tls.iter().map(|t| t.handshakes).sum(),
            resumed: tls.iter().map(|t| t.resumed).sum(),
        }),
        timeline: merge_timelines(results, &starts_us)?,
        idle: plan.idle.is_some().then(|| IdleResult::sum(results.iter().filter_map(|r| r.idle.as_ref()))),
        memory: Some(MemoryResult::sum(results.iter().filter_map(|r| r.memory.as_ref()))),
        plan: whole,
    }))
}
