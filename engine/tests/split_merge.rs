//! One plan split into shares that add up exactly, run against the built-in server, and merged
//! back losslessly: the merge equals merging every share's samples at once, and merging in two
//! steps equals merging in one.

use std::thread;
use std::time::{SystemTime, UNIX_EPOCH};

use gauntlet_engine::agents::{merge_agents, AgentReport};
use gauntlet_engine::merge::merge_results;
use gauntlet_engine::plan::Plan;
use gauntlet_engine::result::agent::AgentState;
use gauntlet_engine::result::{RunResult, SessionsResult};
use gauntlet_engine::run;
use gauntlet_engine::server::{serve, ServeConfig};
use gauntlet_engine::split::{exact_sum, split_plan};
use gauntlet_engine::stats::latency::decode;
use hdrhistogram::Histogram;

fn plan(fields: &str) -> Plan {
    Plan::from_json(&format!(r#"{{"url": "http://127.0.0.1:1/", {fields}}}"#)).unwrap()
}

#[test]
fn shares_add_up_exactly() {
    let whole = plan(r#""connections": 10, "threads": 4, "requests": 1001, "rate_per_s": 12345.678"#);
    let shares = split_plan(&whole, 3).unwrap();
    let connections: Vec<usize> = shares.iter().map(|s| s.connections).collect();
    assert_eq!(connections, [4, 3, 3]);
    assert_eq!(shares.iter().map(|s| s.requests.unwrap()).collect::<Vec<_>>(), [400, 300, 301]);
    assert_eq!(shares.iter().map(|s| s.threads).collect::<Vec<_>>(), [4, 3, 3]);
    let rates: Vec<f64> = shares.iter().map(|s| s.rate_per_s.unwrap()).collect();
    assert_eq!(exact_sum(&rates), 12345.678);
    assert!(shares.iter().all(|s| s.url == whole.url && s.timeout_us == whole.timeout_us));
}

#[test]
fn session_shares_keep_two_connections_per_user_and_split_arrivals() {
    let types = r#""types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 1}, "pages": []}]"#;
    let by_users =
        plan(&format!(r#""connections": 6, "duration_us": 1, "sessions": {{{types}, "users": 3, "seed": 7}}"#));
    let shares = split_plan(&by_users, 2).unwrap();
    let users: Vec<(usize, usize)> =
        shares.iter().map(|s| (s.sessions.as_ref().unwrap().users.unwrap(), s.connections)).collect();
    assert_eq!(users, [(2, 4), (1, 2)]);
    let by_phases = plan(&format!(
        r#""connections": 9, "sessions": {{{types}, "phases": [{{"users_per_s": 100.0, "duration_us": 1}}], "seed": 7}}"#
    ));
    let shares = split_plan(&by_phases, 3).unwrap();
    let arrivals: Vec<f64> =
        shares.iter().map(|s| s.sessions.as_ref().unwrap().phases.as_ref().unwrap()[0].users_per_s).collect();
    assert_eq!(exact_sum(&arrivals), 100.0);
    let seeds: Vec<u64> = shares.iter().map(|s| s.sessions.as_ref().unwrap().seed).collect();
    assert_eq!(seeds[0], 7);
    assert!(seeds[1] != seeds[0] && seeds[2] != seeds[1]);
}

#[test]
fn too_little_to_share_is_one_line_naming_the_fix() {
    let cases = [
        (r#""connections": 2, "requests": 10"#, 3, "2 connections for 3 agents"),
        (r#""connections": 10, "requests": 2"#, 3, "2 requests for 3 agents"),
        (r#""connections": 10, "requests": 2"#, 0, "0 agents"),
    ];
    for (fields, parts, expected) in cases {
        let err = split_plan(&plan(fields), parts).unwrap_err();
        assert!(err.0.contains(expected) && err.0.contains(": give") && !err.0.contains('\n'), "{err}");
    }
}

fn unix_now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as u64
}

/// The shares of `whole` run side by side (as agents would), all from one agreed start.
fn run_shares(whole: &Plan, parts: usize) -> Vec<RunResult> {
    let start_at_us = unix_now_us() + 200_000;
    let shares = split_plan(whole, parts).unwrap();
    let handles: Vec<_> = shares
        .into_iter()
        .map(|mut share| {
            share.start_at_unix_us = Some(start_at_us);
            share.timeline_histograms = true;
            thread::spawn(move || run::run(share).unwrap())
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn merged_shares_are_lossless() {
    let server = serve(&ServeConfig::default()).unwrap();
    let url = format!("http://{}/hello", server.local_addr());
    let whole = Plan::from_json(&format!(r#"{{"url": "{url}", "connections": 6, "requests": 1500}}"#)).unwrap();
    let results = run_shares(&whole, 3);
    let refs: Vec<&RunResult> = results.iter().collect();
    let merged = merge_results(&whole, &refs).unwrap();
    assert_eq!((merged.requests, merged.responses), (1500, 1500));
    assert_eq!(server.stats().requests, 1500, "the server saw every request once");
    assert_eq!(merged.status_codes.get("200"), Some(&1500));
    assert_eq!(merged.timeline.iter().map(|s| s.requests).sum::<u64>(), 1500);
    let decoded: Vec<_> = results.iter().map(|r| decode(&r.histogram).unwrap()).collect();
    // Expected without the merge under test: every share's histogram added into one, bucket by bucket.
    let mut every_sample = Histogram::<u64>::new_from(&decoded[0]);
    for share in &decoded {
        every_sample.add(share).unwrap();
    }
    assert_eq!(decode(&merged.histogram).unwrap(), every_sample, "the merge is every sample at once");
    assert_eq!(merged.latency_us.count, 1500);
    // The merged interval on this machine's CLOCK_MONOTONIC, where the shares (run here) measured.
    let earliest_from_us = results.iter().map(|r| r.measured_from_monotonic_us).min().unwrap();
    assert!(merged.measured_from_monotonic_us.abs_diff(earliest_from_us) < 50_000, "{earliest_from_us} {merged:?}");
    assert_eq!(merged.measured_to_monotonic_us - merged.measured_from_monotonic_us, merged.elapsed_us);

    let first_two = merge_results(&whole, &refs[..2]).unwrap();
    let in_two_steps = merge_results(&whole, &[&first_two, refs[2]]).unwrap();
    assert_eq!(decode(&in_two_steps.histogram).unwrap(), decode(&merged.histogram).unwrap());
    assert_eq!(decode(&in_two_steps.service_histogram).unwrap(), decode(&merged.service_histogram).unwrap());
    assert_eq!((in_two_steps.requests, &in_two_steps.errors), (merged.requests, &merged.errors));
    assert_eq!(in_two_steps.timeline, merged.timeline);
    assert_eq!(in_two_steps.client.cpu_us, merged.client.cpu_us);

    let reports: Vec<AgentReport> = results
        .into_iter()
        .enumerate()
        .map(|(index, result)| AgentReport {
            index,
            address: format!("tcp://127.0.0.1:{}", 9000 + index),
            clock_offset_us: 0,
            plan: result.plan.clone(),
            result: (index != 1).then_some(result),
            lost: (index == 1).then(|| "its worker left the cluster".to_string()),
        })
        .collect();
    let with_agents = merge_agents(&whole, &reports).unwrap();
    let agents = with_agents.agents.as_ref().unwrap();
    assert!(with_agents.partial);
    assert_eq!(
        agents.iter().map(|a| a.state).collect::<Vec<_>>(),
        [AgentState::Completed, AgentState::Lost, AgentState::Completed]
    );
    assert_eq!(with_agents.requests, agents[0].requests.unwrap() + agents[2].requests.unwrap());
    server.stop();
}

#[test]
fn connect_and_in_flight_figures_add_up_over_shares() {
    // A closed port under a rate: every share's connects are refused and retried, its requests
    // stay connecting (unanswered) or never go out (unsent); the merge adds them up.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let fields = r#""connections": 4, "duration_us": 800000, "rate_per_s": 100"#;
    let whole = Plan::from_json(&format!(r#"{{"url": "http://127.0.0.1:{port}/", {fields}}}"#)).unwrap();
    let results = run_shares(&whole, 2);
    let refs: Vec<&RunResult> = results.iter().collect();
    let merged = merge_results(&whole, &refs).unwrap();
    let total = |field: fn(&RunResult) -> u64| results.iter().map(field).sum::<u64>();
    assert!(merged.counts.connects_refused > 0 && merged.counts.connections_opened == 0, "{merged:?}");
    assert!(merged.schedule.as_ref().unwrap().unsent > 0);
    assert_eq!(merged.counts.connects_refused, total(|r| r.counts.connects_refused));
    assert_eq!(
        (merged.counts.connects_failed, merged.counts.connect_retries),
        (0, total(|r| r.counts.connect_retries))
    );
    assert_eq!(merged.schedule.as_ref().unwrap().unsent, total(|r| r.schedule.as_ref().unwrap().unsent));
    let unanswered = &merged.unanswered;
    assert!(unanswered.count > 0, "{unanswered:?}");
    assert_eq!(unanswered.count, total(|r| r.unanswered.count));
    assert_eq!(unanswered.connecting.count, unanswered.count);
    assert_eq!(unanswered.max_age_us, results.iter().map(|r| r.unanswered.max_age_us).max().unwrap());
    let refused_by_second = merged.timeline.iter().map(|s| s.errors_by_kind.get("connect_refused").unwrap_or(&0));
    assert_eq!(refused_by_second.sum::<u64>(), merged.errors["connect_refused"]);
}

#[test]
fn session_counters_and_phases_add_up_over_shares() {
    // Users of two pages arriving in two phases, shared by two agents: each second's session
    // counters and each phase's figures are the sum of the shares', the phase rates the plan's.
    let server = serve(&ServeConfig::default()).unwrap();
    let url = format!("http://{}/", server.local_addr());
    let sessions = r#"{"types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 50000},
        "pages": [{"name": "home", "path": "/webtest.html"}, {"name": "post", "path": "/hello"}]}],
        "phases": [{"users_per_s": 30, "duration_us": 600000}, {"users_per_s": 60, "duration_us": 600000}], "seed": 4}"#;
    let whole = Plan::from_json(&format!(r#"{{"url": "{url}", "connections": 40, "sessions": {sessions}}}"#)).unwrap();
    let results = run_shares(&whole, 2);
    server.stop();
    let refs: Vec<&RunResult> = results.iter().collect();
    let merged = merge_results(&whole, &refs).unwrap();
    let shares: Vec<&SessionsResult> = results.iter().map(|r| r.sessions.as_ref().unwrap()).collect();
    let sessions = merged.sessions.as_ref().unwrap();
    assert!(sessions.users_started > 0 && merged.errors_total == 0, "{merged:?}");

    type Second = gauntlet_engine::stats::timeline::TimelineEntry;
    let counters: [fn(&Second) -> u64; 6] = [
        |s| s.users_arrived,
        |s| s.users_active,
        |s| s.users_finished,
        |s| s.users_dropped,
        |s| s.pages,
        |s| s.page_errors,
    ];
    for counter in counters {
        let of_shares: u64 = results.iter().flat_map(|r| &r.timeline).map(counter).sum();
        assert_eq!(merged.timeline.iter().map(counter).sum::<u64>(), of_shares);
    }
    let pages: u64 = sessions.pages.values().map(|p| p.count).sum();
    assert_eq!(merged.timeline.iter().map(|s| s.users_arrived).sum::<u64>(), sessions.users_started);
    assert_eq!(merged.timeline.iter().map(|s| s.pages).sum::<u64>(), pages);

    let phases = &sessions.phases;
    let plan_of_phases: Vec<(f64, i64, u64)> =
        phases.iter().map(|p| (p.users_per_s, p.start_us, p.duration_us)).collect();
    assert_eq!(plan_of_phases, [(30.0, 0, 600_000), (60.0, 600_000, 600_000)]);
    for (k, phase) in phases.iter().enumerate() {
        let sum = |field: fn(&SessionsResult, usize) -> u64| shares.iter().map(|s| field(s, k)).sum::<u64>();
        assert_eq!(phase.users_arrived, sum(|s, k| s.phases[k].users_arrived), "phase {k}");
        assert_eq!(phase.users_finished, sum(|s, k| s.phases[k].users_finished), "phase {k}");
        assert_eq!(phase.users_dropped, sum(|s, k| s.phases[k].users_dropped), "phase {k}");
        for (name, page) in &phase.pages {
            let counts: Vec<u64> = shares.iter().map(|s| s.phases[k].pages[name].count).collect();
            assert_eq!(page.count, counts.iter().sum::<u64>(), "phase {k} {name}");
            assert_eq!(decode(&page.histogram).unwrap().len(), page.count, "phase {k} {name}");
        }
    }
    assert_eq!(phases.iter().map(|p| p.users_arrived).sum::<u64>(), sessions.users_started);

    let first_alone = merge_results(&whole, &refs[..1]).unwrap();
    let in_two_steps = merge_results(&whole, &[&first_alone, refs[1]]).unwrap();
    assert_eq!(in_two_steps.timeline, merged.timeline);
    assert_eq!(serde_json::to_value(&in_two_steps.sessions).unwrap(), serde_json::to_value(&merged.sessions).unwrap());
}
