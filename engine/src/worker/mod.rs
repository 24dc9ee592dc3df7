//! One load thread: its own epoll loop (mio), its own connections and its own Recorder.
//! Threads share nothing on the per-request path; they meet at the start barrier, in the
//! once-a-second ticks, and at the end. The closed loop and the constant rate are here; users
//! and their sessions are in `sessions`.

mod sessions;

pub use sessions::{encode_pages, PageRequests, PageStats, PhaseOutcome, SessionsOutcome, SessionsShared};

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use mio::{Events, Interest, Poll, Token};
use rustls::pki_types::ServerName;
use serde::{Deserialize, Serialize};

use crate::clock::now_us;
use crate::conn::transport::{TlsStream, Transport};
use crate::conn::{tcp, Conn, Outcome, Phase, Step};
use crate::request::EncodedRequest;
use crate::schedule::rate::RateSchedule;
use crate::schedule::session::Rng;
use crate::schedule::session::WeightedChoice;
use crate::schedule::timer::SendTimer;
use crate::stats::cpu::{thread_cpu_us, thread_cpu_wait_us};
use crate::stats::error::ErrorKind;
use crate::stats::{Live, Recorder};

/// Bytes a read may take at once; shared by all connections of a thread.
const SCRATCH_BYTES: usize = 64 * 1024;
/// Longest sleep in poll, so that a cancel is seen quickly.
const MAX_WAIT_US: u64 = 100_000;
const SEND_TIMER: Token = Token(usize::MAX - 1);
const MIX_SEED: u64 = 0x6d69_7800;

/// What every thread of a run reads and nobody writes on the per-request path.
pub struct Shared {
    pub address: SocketAddr,
    /// For https: the client's TLS configuration and the server name it announces.
    pub tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    /// Index 0 is the plan's request (a mix has one per path); sessions add one per page resource.
    pub requests: Vec<EncodedRequest>,
    /// The plan's paths mix: which request each send picks.
    pub mix: Option<WeightedChoice>,
    pub sessions: Option<SessionsShared>,
    pub keepalive: bool,
    pub calls_per_connection: Option<u64>,
    pub timeout_us: u64,
    pub warmup_us: u64,
    pub duration_us: Option<u64>,
    /// Set once before the start barrier opens.
    pub start_us: AtomicU64,
    pub cancel: AtomicBool,
    pub live: Box<[Live]>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every requested request was measured.
    Requests,
    /// The measured interval ran out.
    Duration,
    /// Cancelled by the caller: the result is partial.
    Cancelled,
}

#[derive(Debug, Clone, Copy)]
struct Readiness {
    readable: bool,
    writable: bool,
    peer_closed: bool,
}

pub struct WorkerOutcome {
    pub recorder: Recorder,
    pub end_us: u64,
    /// CPU time (user + system) this thread used, from its start to its end.
    pub cpu_us: u64,
    /// Time this thread was runnable but waiting for a CPU, from its start to its end.
    pub cpu_wait_us: u64,
    /// Wall time from the common start to this thread's end.
    pub wall_us: u64,
    pub stop_reason: StopReason,
    pub sessions: Option<SessionsOutcome>,
}

/// One thread's share of the plan.
pub struct WorkerSetup {
    pub index: usize,
    pub connections: usize,
    /// Measured requests to make; None when the run is bounded by time.
    pub budget: Option<u64>,
    /// This thread's share of a constant rate; None for the closed loop.
    pub rate_per_s: Option<f64>,
    /// This thread's share of the users (a count, or a share of each arrival rate).
    pub users: usize,
    pub arrival_share: f64,
}

pub struct Worker {
    setup: WorkerSetup,
    shared: Arc<Shared>,
    poll: Poll,
    conns: Vec<Conn>,
    scratch: Box<[u8]>,
    recorder: Recorder,
    /// Measured requests this thread may still start; None when the run is bounded by time.
    budget: Option<u64>,
    /// Connections with a request in flight.
    busy: usize,
    pace: Option<RateSchedule>,
    /// Connections free for the next due request (constant rate only).
    idle: Vec<usize>,
    users: Option<sessions::Users>,
    timer: SendTimer,
    /// Draws the paths mix's requests; seeded by the thread's index, so runs repeat.
    rng: Rng,
    measure_start_us: u64,
    /// Requests that end later are not counted (the ramp-down of sessions runs past it).
    measure_end_us: u64,
    run_end_us: u64,
}

impl Worker {
    pub fn new(setup: WorkerSetup, shared: Arc<Shared>, recorder: Recorder) -> io::Result<Worker> {
        let mut conns = Vec::new();
        if shared.sessions.is_none() {
            conns.resize_with(setup.connections, Conn::new);
        }
        let poll = Poll::new()?;
        let timer = SendTimer::new(poll.registry(), SEND_TIMER)?;
        Ok(Worker {
            rng: Rng::new(MIX_SEED ^ setup.index as u64),
            budget: setup.budget,
            setup,
            shared,
            poll,
            conns,
            scratch: vec![0; SCRATCH_BYTES].into_boxed_slice(),
            recorder,
            busy: 0,
            pace: None,
            idle: Vec::new(),
            users: None,
            timer,
            measure_start_us: 0,
            measure_end_us: u64::MAX,
            run_end_us: u64::MAX,
        })
    }

    pub fn run(mut self, barrier: &Barrier) -> WorkerOutcome {
        barrier.wait();
        barrier.wait();
        let start_us = self.shared.start_us.load(Ordering::Acquire);
        let (cpu_start_us, wait_start_us) = (thread_cpu_us(), thread_cpu_wait_us());
        self.set_windows(start_us);
        self.pace = self.setup.rate_per_s.map(|rate| RateSchedule::new(start_us, rate));
        self.users = self.shared.sessions.as_ref().map(|s| sessions::Users::new(s, &self.setup, start_us));
        let scan_every_us = (self.shared.timeout_us / 10).clamp(1_000, MAX_WAIT_US);
        let mut next_scan_us = start_us + scan_every_us;
        let mut events = Events::with_capacity(1024);
        for i in 0..self.conns.len() {
            self.next_request(i, start_us, None);
        }
        self.start_users(start_us);
        let (stop_reason, end_us) = loop {
            let now = now_us();
            if self.shared.cancel.load(Ordering::Relaxed) {
                break (StopReason::Cancelled, now);
            }
            if now >= self.run_end_us {
                break (StopReason::Duration, self.measure_end_us);
            }
            if self.busy == 0 && self.users.is_none() && (self.pace.is_none() || self.budget == Some(0)) {
                break (StopReason::Requests, now);
            }
            self.dispatch(now);
            self.wake_users(now);
            self.arm_timer(now);
            let next_second_us =
                self.measure_start_us + (now.saturating_sub(self.measure_start_us) / 1_000_000 + 1) * 1_000_000;
            let wake_us = next_second_us.min(self.run_end_us).min(next_scan_us).min(now + MAX_WAIT_US);
            let wait = Duration::from_micros(wake_us.saturating_sub(now));
            if let Err(e) = self.poll.poll(&mut events, Some(wait)) {
                assert_eq!(e.kind(), io::ErrorKind::Interrupted, "epoll_wait failed: {e}");
            }
            let now = now_us();
            self.recorder.roll(now);
            for event in events.iter() {
                let readiness = Readiness {
                    readable: event.is_readable() || event.is_read_closed() || event.is_error(),
                    writable: event.is_writable() || event.is_write_closed() || event.is_error(),
                    peer_closed: event.is_read_closed() || event.is_error(),
                };
                match event.token() {
                    SEND_TIMER => self.timer.fired(),
                    Token(i) => self.on_event(i, readiness, now_us()),
                }
            }
            if now >= next_scan_us {
                self.expire(now);
                next_scan_us = now + scan_every_us;
            }
            self.recorder.publish(&self.shared.live[self.setup.index]);
        };
        self.conns.iter_mut().for_each(Conn::disconnect);
        self.recorder.finish(end_us.max(self.measure_start_us));
        self.recorder.publish(&self.shared.live[self.setup.index]);
        let sessions = self.users.take().map(sessions::Users::outcome);
        let (cpu_us, wall_us) = (thread_cpu_us() - cpu_start_us, now_us() - start_us);
        let cpu_wait_us = thread_cpu_wait_us().saturating_sub(wait_start_us);
        WorkerOutcome { recorder: self.recorder, end_us, cpu_us, cpu_wait_us, wall_us, stop_reason, sessions }
    }

    /// Warm-up, measurement, and (for sessions) ramp-down, from the common start.
    fn set_windows(&mut self, start_us: u64) {
        self.measure_start_us = start_us + self.shared.warmup_us;
        let phases_end_us =
            self.shared.sessions.as_ref().and_then(|s| s.plan.phases_duration_us()).map(|d| start_us + d);
        self.measure_end_us = match (self.shared.duration_us, phases_end_us) {
            (Some(d), Some(end)) => (self.measure_start_us + d).min(end),
            (Some(d), None) => self.measure_start_us + d,
            (None, end) => end.unwrap_or(u64::MAX),
        };
        let rampdown_us = self.shared.sessions.as_ref().map_or(0, |s| s.plan.rampdown_us);
        self.run_end_us = self.measure_end_us.saturating_add(rampdown_us);
        self.recorder.measure_from(self.measure_start_us);
    }

    fn on_event(&mut self, i: usize, readiness: Readiness, now: u64) {
        let busy_tls = self.conns[i].is_busy() && matches!(self.conns[i].stream, Some(Transport::Tls(_)));
        if readiness.writable && busy_tls {
            if let Err(e) = self.conns[i].stream.as_mut().map_or(Ok(()), Transport::flush) {
                return self.end_request(i, now, Err(ErrorKind::of_transfer(&e)), false);
            }
        }
        match self.conns[i].phase {
            Phase::Closed | Phase::Idle => {}
            Phase::Connecting => match self.conns[i].connected() {
                None => {}
                Some(Ok(())) => self.send(i, now),
                Some(Err(kind)) => self.end_request(i, now, Err(kind), false),
            },
            Phase::Writing { .. } if readiness.writable => self.write(i, now),
            Phase::Writing { .. } => {}
            Phase::Reading if !readiness.readable => {}
            Phase::Reading => {
                let (bytes, step) = self.conns[i].receive(&mut self.scratch, readiness.peer_closed);
                if self.conns[i].measured {
                    self.recorder.bytes_in(bytes);
                }
                if let Some(users) = self.users.as_mut() {
                    users.bytes_in(i, bytes);
                }
                self.after(i, now, step);
            }
        }
    }

    fn after(&mut self, i: usize, now: u64, step: Step) {
        if let Step::Ended { outcome, reusable } = step {
            self.end_request(i, now, outcome, reusable);
        }
    }

    /// The connection is free: in a closed loop it starts its next request now (or retires when
    /// none is due); under a rate it waits for the schedule.
    fn next_request(&mut self, i: usize, mut now: u64, outcome: Option<Outcome>) {
        if self.users.is_some() {
            return self.next_in_session(i, now, outcome);
        }
        if self.pace.is_some() {
            self.busy -= usize::from(self.conns[i].is_busy());
            self.conns[i].phase = Phase::Idle;
            self.idle.push(i);
            return;
        }
        loop {
            let measured = now >= self.measure_start_us;
            if now >= self.run_end_us || self.shared.cancel.load(Ordering::Relaxed) || !self.take_budget(measured) {
                self.busy -= usize::from(self.conns[i].is_busy());
                self.conns[i].disconnect();
                self.conns[i].phase = Phase::Closed;
                return;
            }
            let request = self.pick_request();
            match self.begin(i, now, now, measured, request) {
                Ok(()) => return,
                Err(e) => {
                    // Failed at once (e.g. no local port free): count it and go on with the next.
                    self.count(i, now, Err(ErrorKind::of_connect(&e)));
                    now = now_us();
                }
            }
        }
    }

    /// Under a rate: start every request that is due on a free connection, then set the timer
    /// for the next one. Requests due while no connection is free wait, keeping their due time.
    fn dispatch(&mut self, now: u64) {
        while let (Some(&i), Some(pace)) = (self.idle.last(), self.pace.as_ref()) {
            let due_us = pace.next_due_us();
            if due_us >= self.run_end_us || due_us > now {
                return;
            }
            let measured = due_us >= self.measure_start_us;
            if !self.take_budget(measured) {
                return;
            }
            self.pace.as_mut().map(RateSchedule::claim);
            self.idle.pop();
            if measured {
                self.recorder.sent(now - due_us);
            }
            let request = self.pick_request();
            if let Err(e) = self.begin(i, now, due_us, measured, request) {
                self.count(i, now, Err(ErrorKind::of_connect(&e)));
                self.conns[i].phase = Phase::Idle;
                self.idle.push(i);
            }
        }
    }

    /// Set the timer for the next scheduled event: a rate's next due request, or a user's.
    fn arm_timer(&mut self, now: u64) {
        let rate_due_us = self.pace.as_ref().filter(|_| !self.idle.is_empty()).map(RateSchedule::next_due_us);
        let user_due_us = self.users.as_ref().and_then(sessions::Users::next_due_us);
        if let Some(due_us) = rate_due_us.into_iter().chain(user_due_us).min().filter(|&due| due < self.run_end_us) {
            self.timer.arm(due_us, now);
        }
    }

    /// The request the next send makes: the plan's, or one drawn from its paths mix.
    fn pick_request(&mut self) -> usize {
        match &self.shared.mix {
            None => 0,
            Some(mix) => mix.pick(self.rng.unit()),
        }
    }

    /// Take one measured request from the budget; false when it is spent.
    fn take_budget(&mut self, measured: bool) -> bool {
        match self.budget {
            Some(0) if measured => false,
            Some(n) if measured => {
                self.budget = Some(n - 1);
                true
            }
            _ => true,
        }
    }

    /// Start request `request` due at `intended_us` on connection `i`, connecting first if needed.
    fn begin(&mut self, i: usize, now: u64, intended_us: u64, measured: bool, request: usize) -> io::Result<()> {
        self.busy += usize::from(!self.conns[i].is_busy());
        let conn = &mut self.conns[i];
        let head_request = self.shared.requests[request].is_head;
        conn.begin(now, intended_us, self.shared.timeout_us, measured, request, head_request);
        if conn.stream.is_some() {
            self.send(i, now);
            return Ok(());
        }
        conn.phase = Phase::Connecting;
        self.open(i).inspect_err(|_| {
            self.busy -= 1;
            self.conns[i].phase = Phase::Closed;
        })
    }

    fn open(&mut self, i: usize) -> io::Result<()> {
        let mut socket = tcp::connect(self.shared.address)?;
        self.poll.registry().register(&mut socket, Token(i), Interest::READABLE | Interest::WRITABLE)?;
        let stream = match &self.shared.tls {
            None => Transport::Plain(socket),
            Some((config, name)) => {
                let session = rustls::ClientConnection::new(config.clone(), name.clone())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                Transport::Tls(Box::new(TlsStream { socket, session: session.into() }))
            }
        };
        let conn = &mut self.conns[i];
        conn.stream = Some(stream);
        if conn.measured {
            self.recorder.connections_opened += 1;
        }
        Ok(())
    }

    fn send(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        conn.calls += 1;
        conn.last_call = !self.shared.keepalive || self.shared.calls_per_connection == Some(conn.calls);
        conn.phase = Phase::Writing { written: 0 };
        self.write(i, now);
    }

    fn write(&mut self, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        let request = &self.shared.requests[conn.request];
        let bytes = if conn.last_call { &request.last } else { &request.reuse };
        let (written, step) = conn.transmit(bytes);
        if conn.measured {
            self.recorder.bytes_out += written;
        }
        self.after(i, now, step);
    }

    fn count(&mut self, i: usize, now: u64, outcome: Outcome) {
        let conn = &self.conns[i];
        if !conn.measured || now >= self.measure_end_us {
            return;
        }
        if let (Ok(_), 1, Some(resumed)) = (outcome, conn.calls, conn.stream.as_ref().and_then(|s| s.resumed())) {
            self.recorder.tls_handshake(resumed);
        }
        match outcome {
            Ok(head) => self.recorder.response(head.status, now - conn.intended_us, now - conn.started_us),
            Err(kind) => self.recorder.error(kind),
        }
    }

    fn end_request(&mut self, i: usize, now: u64, outcome: Outcome, reusable: bool) {
        self.count(i, now, outcome);
        let conn = &mut self.conns[i];
        let keep = reusable && !conn.last_call && outcome.is_ok_and(|head| head.keep_alive);
        if !keep {
            conn.disconnect();
        }
        self.next_request(i, now, Some(outcome));
    }

    /// Fail every request that has outlived the timeout; its connection is replaced.
    fn expire(&mut self, now: u64) {
        for i in 0..self.conns.len() {
            let conn = &mut self.conns[i];
            if conn.is_busy() && now >= conn.deadline_us {
                let kind = if conn.phase == Phase::Connecting { ErrorKind::ConnectTimeout } else { ErrorKind::Timeout };
                conn.disconnect();
                self.end_request(i, now, Err(kind), false);
            }
        }
    }
}
