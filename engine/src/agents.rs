//! A distributed run's agents: what each one's share of the plan came to, and the merge of their
//! results with each agent's own figures kept beside the whole.

use serde::Deserialize;

use crate::merge::merge_results;
use crate::plan::{Plan, PlanError};
use crate::result::agent::{AgentFigures, AgentState, SliceFigures};
use crate::result::RunResult;
use crate::stats::error::ErrorKind;
use crate::stats::timeline::TimelineEntry;

/// One agent's share of the plan and what came of it, as the controller hands it over.
#[derive(Debug, Clone, Deserialize)]
pub struct AgentReport {
    pub index: usize,
    pub address: String,
    pub clock_offset_us: i64,
    pub plan: Plan,
    pub result: Option<RunResult>,
    /// Why no result came back; None when one did.
    pub lost: Option<String>,
}

const CONNECT_ERRORS: [ErrorKind; 3] = [ErrorKind::ConnectRefused, ErrorKind::ConnectTimeout, ErrorKind::ConnectError];

/// Why a result's last seconds say it could no longer reach the target: only connect errors, no
/// response, until its end. None when it could.
pub fn lost_target(timeline: &[TimelineEntry], errors: &std::collections::BTreeMap<String, u64>) -> Option<String> {
    let count = |kind: &ErrorKind| errors.get(kind.as_str()).copied().unwrap_or(0);
    let connect_errors: u64 = CONNECT_ERRORS.iter().map(count).sum();
    if connect_errors == 0 || timeline.last().is_none_or(|last| last.responses > 0) {
        return None;
    }
    let silent_from = timeline.iter().rposition(|s| s.responses > 0).map_or(0, |i| i + 1);
    let kinds: Vec<String> =
        CONNECT_ERRORS.iter().filter(|k| count(k) > 0).map(|k| format!("{} {}", k.as_str(), count(k))).collect();
    Some(format!(
        "cannot reach the target from second {} to its end ({})",
        timeline[silent_from].second,
        kinds.join(", ")
    ))
}

fn state(agent: &AgentReport) -> (AgentState, Option<String>) {
    let Some(result) = &agent.result else { return (AgentState::Lost, agent.lost.clone()) };
    if let Some(reason) = lost_target(&result.timeline, &result.errors) {
        return (AgentState::Unreachable, Some(reason));
    }
    let connecting = &result.unanswered.connecting;
    if result.requests == 0 && connecting.count > 0 {
        let reason = format!(
            "no request ended: {} connections were still connecting at its end (the oldest for {:.1} s)",
            connecting.count,
            connecting.max_age_us as f64 / 1e6
        );
        return (AgentState::Unreachable, Some(reason));
    }
    if result.partial {
        return (AgentState::Cancelled, Some("cancelled before the plan's end".into()));
    }
    (AgentState::Completed, None)
}

impl AgentFigures {
    pub fn of(agent: &AgentReport) -> AgentFigures {
        let (state, reason) = state(agent);
        let sessions = agent.plan.sessions.as_ref();
        let slice = SliceFigures {
            connections: agent.plan.connections,
            threads: agent.plan.threads,
            requests: agent.plan.requests,
            rate_per_s: agent.plan.rate_per_s,
            users: sessions.and_then(|s| s.users),
            users_per_s: sessions.and_then(|s| s.phases.as_ref()).map(|p| p.iter().map(|p| p.users_per_s).collect()),
        };
        let result = agent.result.as_ref();
        AgentFigures {
            index: agent.index,
            address: agent.address.clone(),
            state,
            reason,
            clock_offset_us: agent.clock_offset_us,
            slice,
            started_unix_ms: result.map(|r| r.started_unix_ms),
            elapsed_us: result.map(|r| r.elapsed_us),
            requests: result.map(|r| r.requests),
            responses: result.map(|r| r.responses),
            errors_total: result.map(|r| r.errors_total),
            bytes_in: result.map(|r| r.counts.bytes_in),
            bytes_out: result.map(|r| r.counts.bytes_out),
            connections_opened: result.map(|r| r.counts.connections_opened),
            requests_per_s: result.map(|r| r.requests_per_s),
            achieved_rate_per_s: result.and_then(|r| r.schedule.as_ref()).map(|s| s.achieved_rate_per_s),
            latency_us: result.map(|r| r.latency_us.clone()),
            histogram: result.map(|r| r.histogram.clone()),
            service_histogram: result.map(|r| r.service_histogram.clone()),
            client: result.map(|r| r.client.clone()),
        }
    }
}

/// One result of the whole `plan` from its agents' results, with `agents`: partial when an agent
/// was lost, cancelled or could no longer reach the target; the others' figures are kept.
pub fn merge_agents(plan: &Plan, agents: &[AgentReport]) -> Result<RunResult, PlanError> {
    let results: Vec<&RunResult> = agents.iter().filter_map(|a| a.result.as_ref()).collect();
    if results.is_empty() {
        let why: Vec<String> =
            agents.iter().map(|a| format!("{}: {}", a.address, a.lost.as_deref().unwrap_or("no result"))).collect();
        return Err(PlanError(format!(
            "no agent returned a result ({}): check the workers' logs and the target",
            why.join("; ")
        )));
    }
    let mut merged = merge_results(plan, &results)?;
    let figures: Vec<AgentFigures> = agents.iter().map(AgentFigures::of).collect();
    merged.partial = figures.iter().any(|f| f.state != AgentState::Completed);
    merged.agents = Some(figures);
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(second: u64, responses: u64) -> TimelineEntry {
        TimelineEntry {
            second,
            span_us: 1_000_000,
            requests: responses,
            responses,
            errors: 0,
            bytes_in: 0,
            p50_us: 0,
            p90_us: 0,
            p99_us: 0,
            max_us: 0,
            histogram: None,
            errors_by_kind: Default::default(),
            users_arrived: 0,
            users_active: 0,
            users_finished: 0,
            users_dropped: 0,
            pages: 0,
            page_errors: 0,
        }
    }

    #[test]
    fn unreachability_is_read_from_the_last_seconds() {
        let cases: [(&[u64], u64, Option<&str>); 6] = [
            (&[5, 5, 0], 3, Some("from second 2 to its end (connect_refused 3)")),
            (&[5, 0, 0], 9, Some("from second 1")),
            (&[0, 0], 4, Some("from second 0")),
            (&[5, 0, 5], 2, None), // it came back
            (&[5, 5, 0], 0, None), // no connect error: silence is not unreachability
            (&[], 1, None),
        ];
        for (responses, refused, expected) in cases {
            let timeline: Vec<_> = responses.iter().enumerate().map(|(i, &n)| second(i as u64, n)).collect();
            let errors = [("connect_refused".to_string(), refused)].into_iter().collect();
            let reason = lost_target(&timeline, &errors);
            match expected {
                None => assert_eq!(reason, None, "{responses:?}"),
                Some(text) => assert!(reason.as_deref().is_some_and(|r| r.contains(text)), "{reason:?}"),
            }
        }
    }
}
