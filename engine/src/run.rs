//! A run: split the plan over threads, start them together, collect their seconds as they end,
//! and merge everything into one RunResult.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::clock::{monotonic_us, now_us, unix_now_us};
use crate::conn::batch_trial::Trial;
use crate::conn::rx_time;
use crate::conn::tls::{client_config, server_name};
use crate::limits;
use crate::plan::{HttpVersion, Io, Plan, PlanError};
use crate::request::plan_requests;
use crate::result::threads::merge;
pub use crate::result::RunResult;
use crate::schedule::idle::{IdleHolder, IdleTarget};
use crate::split::{split_count, split_even};
use crate::stats::memory::{rss_bytes, MemoryResult, PeakRss};
use crate::stats::timeline::{SecondStats, TimelineEntry};
use crate::stats::{Live, Recorder, Tick, Totals};
use crate::worker::{encode_pages, Shared, Worker, WorkerOutcome, WorkerSetup};

/// Counters of a run in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub totals: Totals,
    /// Time since measurement started (0 during the warm-up).
    pub elapsed_us: u64,
    pub measuring: bool,
}

pub struct RunHandle {
    shared: Arc<Shared>,
    /// The timeline's seconds so far, each added the moment it is final (as the result will have it).
    seconds: Arc<Mutex<Vec<TimelineEntry>>>,
    result: Mutex<Receiver<RunResult>>,
}

/// The farthest ahead a plan's agreed start may be: further is a clock or a typing mistake.
pub const MAX_START_DELAY_US: u64 = 60_000_000;

/// Refuse an agreed start too far ahead, before any thread is spawned.
fn check_start_at(start_at_unix_us: Option<u64>) -> Result<(), PlanError> {
    let Some(start_at_us) = start_at_unix_us else { return Ok(()) };
    let ahead_us = start_at_us.saturating_sub(unix_now_us());
    if ahead_us > MAX_START_DELAY_US {
        return Err(PlanError(format!(
            "the plan starts {:.1} s from now, more than {} s ahead: agree on a nearer start (check the machines' clocks)",
            ahead_us as f64 / 1e6,
            MAX_START_DELAY_US / 1_000_000
        )));
    }
    Ok(())
}

/// `Shared::start_us` until the threads are released.
const NOT_STARTED: u64 = u64::MAX;
/// The longest sleep while waiting for the agreed start, so that a cancel is seen.
const MAX_START_STEP_US: u64 = 50_000;

/// Sleep until the wall clock reads `start_at_us` (at once if it already has).
fn wait_for_start(start_at_us: u64, cancel: &AtomicBool) {
    loop {
        let left_us = start_at_us.saturating_sub(unix_now_us());
        if left_us == 0 || cancel.load(Ordering::Relaxed) {
            return;
        }
        thread::sleep(Duration::from_micros(left_us.min(MAX_START_STEP_US)));
    }
}

/// Validate the plan, start its threads, and return at once.
pub fn start(plan: Plan) -> Result<RunHandle, PlanError> {
    let target = plan.resolve()?;
    rx_time::switch_on();
    check_start_at(plan.start_at_unix_us)?;
    limits::check_connections(plan.all_connections())?;
    let sources = plan.source_ips(target.address)?;
    let rss_before_bytes = rss_bytes();
    let (mut requests, mix) = plan_requests(&plan, &target)?;
    let https = plan.resolve_https()?;
    let sessions = match plan.sessions.clone() {
        Some(sessions_plan) => {
            Some(Arc::new(encode_pages(&plan, &target, https.as_ref(), sessions_plan, &mut requests)?))
        }
        None => None,
    };
    let threads = plan.thread_count();
    let settings = plan.tls.clone().unwrap_or_default();
    let alpn: &[&[u8]] = if plan.http_version == HttpVersion::Http2 { &[b"h2"] } else { &[] };
    let client_tls = |host: &str| -> Result<_, PlanError> {
        Ok((client_config(&settings, alpn).map_err(PlanError)?, server_name(host).map_err(PlanError)?))
    };
    let tls = if target.tls { Some(client_tls(&target.host)?) } else { None };
    let https_target = match &https {
        Some(https) => {
            let (config, name) = client_tls(&https.host)?;
            Some((https.address, config, name))
        }
        None => None,
    };
    let shared = Arc::new(Shared {
        address: target.address,
        sources: sources.clone(),
        tls,
        https_target,
        requests,
        mix,
        sessions,
        h2_streams: (plan.http_version == HttpVersion::Http2).then(|| plan.streams()),
        keepalive: plan.keepalive,
        io: plan.io,
        io_batch_us: plan.io_batch_us,
        batch_trial: (plan.io_batch_us.is_none() && plan.io == Io::Epoll)
            .then(|| Trial::for_warmup(plan.warmup_us, threads).map(Arc::new))
            .flatten(),
        scheduling: plan.scheduling(),
        calls_per_connection: plan.calls_per_connection,
        timeout_us: plan.timeout_us,
        warmup_us: plan.warmup_us,
        duration_us: plan.duration_us,
        start_us: AtomicU64::new(NOT_STARTED),
        cancel: AtomicBool::new(false),
        live: (0..threads).map(|_| Live::default()).collect(),
        peak_rss: PeakRss::default(),
    });
    let idle = match &plan.idle {
        None => None,
        Some(idle_plan) => {
            let head = format!("GET {} HTTP/1.1\r\nHost: {}\r\n", target.path, target.host_header()).into_bytes();
            let idle_target = IdleTarget { address: target.address, head, sources };
            let holder = IdleHolder::start(idle_plan, idle_target).map_err(|e| {
                PlanError(format!("cannot start the idle connections' thread ({e}): use fewer threads"))
            })?;
            Some(holder)
        }
    };
    let connections = thread_connections(&plan, threads);
    let all_connections: usize = connections.iter().sum();
    let budgets = match (plan.requests, plan.rate_per_s) {
        // Under a rate the threads take the schedule's slots in turn (thread k: slots k, k + threads,
        // ...), and so the requests: of the first n slots, the first threads take one more.
        (Some(n), Some(_)) => split_even(n as usize, threads).into_iter().map(|share| Some(share as u64)).collect(),
        (Some(n), None) => split_count(n, &connections).into_iter().map(Some).collect(),
        (None, _) => vec![None; threads],
    };
    let barrier = Arc::new(Barrier::new(threads + 1));
    let (tick_tx, tick_rx) = channel();
    let mut workers = Vec::with_capacity(threads);
    let users = split_count(plan.sessions.as_ref().and_then(|s| s.users).unwrap_or(0) as u64, &connections);
    for (index, (&n_conns, &budget)) in connections.iter().zip(&budgets).enumerate() {
        let recorder = Recorder::new(index, u64::MAX, tick_tx.clone());
        let setup = WorkerSetup {
            index,
            connections: n_conns,
            budget,
            rate_per_s: plan.rate_per_s,
            threads,
            users: users[index] as usize,
            arrival_share: n_conns as f64 / all_connections.max(1) as f64,
        };
        let worker = Worker::new(setup, shared.clone(), recorder)
            .map_err(|e| PlanError(format!("cannot create an event loop ({e}): raise the open-files limit")))?;
        let barrier = barrier.clone();
        let spawned = thread::Builder::new().name(format!("gauntlet-load-{index}")).spawn(move || worker.run(&barrier));
        match spawned {
            Ok(handle) => workers.push(handle),
            Err(e) => {
                shared.cancel.store(true, Ordering::Relaxed);
                return Err(PlanError(format!("cannot start load thread {index} ({e}): use fewer threads")));
            }
        }
    }
    drop(tick_tx);
    let (result_tx, result_rx) = channel();
    let coordinator_shared = shared.clone();
    let seconds = Arc::new(Mutex::new(Vec::new()));
    let coordinator_seconds = seconds.clone();
    thread::Builder::new()
        .name("gauntlet-coordinator".into())
        .spawn(move || {
            let shared = coordinator_shared;
            barrier.wait();
            if let Some(start_at_us) = plan.start_at_unix_us {
                wait_for_start(start_at_us, &shared.cancel);
            }
            let start_us = now_us();
            shared.start_us.store(start_us, Ordering::Release);
            let started_unix_ms = unix_now_us() / 1_000;
            barrier.wait();
            let timeline = collect_timeline(tick_rx, threads, plan.timeline_histograms, &coordinator_seconds);
            let outcomes: Vec<WorkerOutcome> = workers.into_iter().map(join_worker).collect();
            // The idle connections are still open: their memory counts.
            shared.peak_rss.sample();
            let memory = MemoryResult::of(rss_before_bytes, shared.peak_rss.get(), plan.all_connections() as u64);
            let idle = idle.map(IdleHolder::finish);
            let address = shared.address.to_string();
            let mut result = merge(plan, address, started_unix_ms, start_us + shared.warmup_us, outcomes, timeline);
            result.memory = Some(memory);
            result.idle = idle;
            let trial = shared.batch_trial.as_ref().map(|trial| trial.record());
            result.client.io_batch_us = match (shared.io_batch_us, &trial) {
                (Some(window_us), _) => window_us,
                (None, Some(trial)) if trial.kept => trial.window_us,
                (None, _) => 0,
            };
            result.client.batch_trial = trial;
            let _ = result_tx.send(result);
        })
        .map_err(|e| PlanError(format!("cannot start the coordinator thread ({e}): use fewer threads")))?;
    Ok(RunHandle { shared, seconds, result: Mutex::new(result_rx) })
}

/// Each thread's connections. A session's user holds its connections on one thread, so with
/// sessions they are shared out in whole users' worth (a remainder could hold no user).
fn thread_connections(plan: &Plan, threads: usize) -> Vec<usize> {
    match &plan.sessions {
        Some(sessions) => {
            let per_user = sessions.connections_per_user();
            split_even(plan.connections / per_user, threads).into_iter().map(|users| users * per_user).collect()
        }
        None => split_even(plan.connections, threads),
    }
}

fn join_worker(handle: JoinHandle<WorkerOutcome>) -> WorkerOutcome {
    match handle.join() {
        Ok(outcome) => outcome,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Merge the threads' seconds as they arrive; a second is final once every thread is past it, and
/// is then also added to `seconds`, where a run in progress is read from.
fn collect_timeline(
    ticks: Receiver<Tick>,
    threads: usize,
    with_histograms: bool,
    seconds: &Mutex<Vec<TimelineEntry>>,
) -> Vec<TimelineEntry> {
    let mut pending: BTreeMap<u64, SecondStats> = BTreeMap::new();
    let mut reported: Vec<Option<u64>> = vec![None; threads];
    let mut timeline = Vec::new();
    for tick in ticks {
        let second = tick.stats.second;
        reported[tick.thread] = Some(second);
        match pending.get_mut(&second) {
            Some(merged) => merged.absorb(&tick.stats),
            None => {
                pending.insert(second, tick.stats);
            }
        }
        let complete_below = reported.iter().map(|r| r.map_or(0, |s| s + 1)).min().unwrap_or(0);
        let before = timeline.len();
        while let Some(entry) = pending.first_entry().filter(|e| *e.key() < complete_below) {
            timeline.push(entry.remove().entry(with_histograms));
        }
        publish(seconds, &timeline[before..]);
    }
    let before = timeline.len();
    timeline.extend(pending.values().map(|second| second.entry(with_histograms)));
    publish(seconds, &timeline[before..]);
    timeline
}

fn publish(seconds: &Mutex<Vec<TimelineEntry>>, entries: &[TimelineEntry]) {
    if !entries.is_empty() {
        seconds.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).extend_from_slice(entries);
    }
}

impl RunHandle {
    /// Before the start (an agreed start still ahead), nothing is measuring yet.
    pub fn progress(&self) -> Progress {
        let now = now_us();
        let measure_start_us = match self.shared.start_us.load(Ordering::Acquire) {
            NOT_STARTED => u64::MAX,
            start_us => start_us + self.shared.warmup_us,
        };
        Progress {
            totals: Totals::sum(&self.shared.live),
            elapsed_us: now.saturating_sub(measure_start_us),
            measuring: now >= measure_start_us,
        }
    }

    /// Block until the measured interval begins (after the agreed start and the warm-up) and
    /// return its start on CLOCK_MONOTONIC in µs; None if `timeout` passes first or the run is
    /// cancelled before it begins.
    pub fn wait_measuring(&self, timeout: Duration) -> Option<u64> {
        let deadline_us = now_us().saturating_add(timeout.as_micros() as u64);
        loop {
            let now = now_us();
            let measure_start_us = match self.shared.start_us.load(Ordering::Acquire) {
                NOT_STARTED => None,
                start_us => Some(start_us + self.shared.warmup_us),
            };
            if let Some(start_us) = measure_start_us.filter(|&start_us| now >= start_us) {
                return Some(monotonic_us(start_us));
            }
            if now >= deadline_us || self.shared.cancel.load(Ordering::Relaxed) {
                return None;
            }
            let until_us = measure_start_us.unwrap_or(now + MAX_START_STEP_US).min(deadline_us);
            thread::sleep(Duration::from_micros(until_us.saturating_sub(now).clamp(1, MAX_START_STEP_US)));
        }
    }

    /// The timeline's final seconds from index `from` on: those that every thread is past (the
    /// last ones once the run has ended), each as the result's timeline has it.
    pub fn seconds_from(&self, from: usize) -> Vec<TimelineEntry> {
        let seconds = self.seconds.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        seconds.get(from..).map_or_else(Vec::new, <[TimelineEntry]>::to_vec)
    }

    /// Ask every thread to stop; they notice within 100 ms and the result is marked partial.
    pub fn cancel(&self) {
        self.shared.cancel.store(true, Ordering::Relaxed);
    }

    /// The result, if the run ends within `timeout`. Returns it once; later calls return None.
    pub fn wait_timeout(&self, timeout: Duration) -> Option<RunResult> {
        let receiver = self.result.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        receiver.recv_timeout(timeout).ok()
    }

    pub fn wait(self) -> RunResult {
        let receiver = self.result.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
        receiver.recv().expect("the coordinator always sends a result")
    }
}

/// Run a plan to its end in the calling thread.
pub fn run(plan: Plan) -> Result<RunResult, PlanError> {
    Ok(start(plan)?.wait())
}
