//! One load thread: its own epoll loop (mio), its own connections and its own Recorder.
//! Threads share nothing on the per-request path; they meet at the start barrier, in the
//! once-a-second ticks, and at the end. When to send is the scheduler's answer (closed loop,
//! constant rate or sessions, `crate::schedule`); this loop does the socket work for any of them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use mio::{Events, Interest, Poll, Token};
use rustls::pki_types::ServerName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod h2;
mod policy;

use crate::clock::now_us;
use crate::conn::batch;
use crate::conn::batch_trial::{self, TrialCounter};
use crate::conn::tls::TlsNegotiated;
use crate::conn::transport::{TlsStream, Transport};
use crate::conn::uring::{self, Ring};
use crate::conn::{tcp, Conn, Phase, Step};
use crate::http1::Outcome;
use crate::plan::{Io, Scheduling};
use crate::random::{PathMix, WeightedChoice};
use crate::request::EncodedRequest;
use crate::schedule::closed::ClosedLoop;
use crate::schedule::constant_rate::ConstantRate;
use crate::schedule::rate::RateSchedule;
use crate::schedule::timer::SendTimer;
use crate::schedule::users::{Users, UsersSetup};
use crate::schedule::{Action, Actions, Budget, Ended, Schedule, Scheduler, Send, Window};
use crate::stats::cpu::{thread_cpu_us, thread_cpu_wait_us};
use crate::stats::error::ErrorKind;
use crate::stats::memory::PeakRss;
use crate::stats::{latency, Live, Recorder};

pub use crate::schedule::pages::{encode_pages, PageRequests, SessionsShared};
pub use crate::schedule::users::{PageStats, PhaseOutcome, SessionsOutcome};

/// Bytes a read may take at once; shared by all connections of a thread. As large as the floor's
/// (bench/floor/floor.c): the 83 KB image then takes 1.2 reads a response, not 2.
const SCRATCH_BYTES: usize = 256 * 1024;
/// Longest sleep in poll, so that a cancel is seen quickly.
const MAX_WAIT_US: u64 = 100_000;
const SEND_TIMER: Token = Token(usize::MAX - 1);
const MIX_SEED: u64 = 0x6d69_7800;

/// What every thread of a run reads and nobody writes on the per-request path.
pub struct Shared {
    pub address: SocketAddr,
    /// The plan's source addresses, taken round robin over the run's connections; empty: the kernel's.
    pub sources: Vec<IpAddr>,
    /// For https: the client's TLS configuration and the server name it announces.
    pub tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    /// The sessions' https target (their pages with `scheme: https`): its address and TLS.
    pub https_target: Option<(SocketAddr, Arc<rustls::ClientConfig>, ServerName<'static>)>,
    /// Index 0 is the plan's request (a mix has one per path); sessions add one per page resource.
    pub requests: Vec<EncodedRequest>,
    /// The plan's paths mix: which request each send picks.
    pub mix: Option<WeightedChoice>,
    pub sessions: Option<Arc<SessionsShared>>,
    /// HTTP/2: the streams each connection carries at once; None for HTTP/1.
    pub h2_streams: Option<usize>,
    pub keepalive: bool,
    /// epoll or io_uring.
    pub io: Io,
    /// How long a wait may hold responses back to gather more (µs; `conn::batch`); 0: not at all;
    /// None: as the warm-up's trial decides (`batch_trial`).
    pub io_batch_us: Option<u64>,
    /// The warm-up's trial of the window, when the plan gives none and the warm-up has room.
    pub batch_trial: Option<Arc<batch_trial::Trial>>,
    pub scheduling: Scheduling,
    pub calls_per_connection: Option<u64>,
    pub timeout_us: u64,
    pub warmup_us: u64,
    pub duration_us: Option<u64>,
    /// Set once before the start barrier opens.
    pub start_us: AtomicU64,
    pub cancel: AtomicBool,
    pub live: Box<[Live]>,
    /// Read by each thread as it ends, before it closes its connections.
    pub peak_rss: PeakRss,
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
    /// TLS version and cipher of the first handshake that completed; None over plain HTTP.
    pub negotiated_tls: Option<TlsNegotiated>,
    /// The I/O this thread used, and why it is not the plan's when it is not.
    pub io: Io,
    pub io_fallback: Option<String>,
    /// The scheduling policy this thread ran under, and why it is not the plan's where the kernel
    /// refused that.
    pub scheduling: Scheduling,
    pub scheduling_fallback: Option<String>,
}

/// One thread's share of the plan.
pub struct WorkerSetup {
    pub index: usize,
    pub connections: usize,
    /// Measured requests to make; None when the run is bounded by time.
    pub budget: Option<u64>,
    /// The plan's constant rate, which the threads share by turns; None for the closed loop.
    pub rate_per_s: Option<f64>,
    /// Threads in the run (the rate's turns).
    pub threads: usize,
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
    /// Connections with a request in flight.
    busy: usize,
    /// Requests in flight that opened their connection (`Conn::opens`): while there are any, a wait
    /// does not batch, which would hold back their connects' completions and TLS handshakes.
    opening: usize,
    /// How long an epoll wait naps under the batch window; None without one.
    nap: Option<batch::Nap>,
    /// What the scheduler asked for and the loop has not done yet.
    actions: Actions,
    timer: SendTimer,
    /// (when, connection): requests waiting out a connect backoff.
    reconnects: BinaryHeap<Reverse<(u64, usize)>>,
    window: Window,
    /// HTTP/2's connections; `conns` are then its stream slots.
    h2: Option<h2::Links>,
    negotiated_tls: Option<TlsNegotiated>,
    /// The io_uring this thread runs on (moved into its thread-local at the start), or why not.
    ring: Result<Option<Ring>, String>,
    /// Connections with completions to handle, from the ring.
    ring_ready: Vec<usize>,
}

impl Worker {
    pub fn new(setup: WorkerSetup, shared: Arc<Shared>, recorder: Recorder) -> io::Result<Worker> {
        let mut conns = Vec::new();
        if shared.sessions.is_none() {
            conns.resize_with(setup.connections * shared.h2_streams.unwrap_or(1), Conn::new);
        }
        let poll = Poll::new()?;
        let timer = SendTimer::new(poll.registry(), SEND_TIMER)?;
        // Sessions with https pages have TLS connections too: they run on epoll.
        let tls = shared.tls.is_some() || shared.https_target.is_some();
        let one_request_per_connection = !shared.keepalive || shared.calls_per_connection == Some(1);
        let ring = match (shared.io, shared.h2_streams) {
            (Io::Uring, Some(_)) => Err("io_uring carries HTTP/1 only: HTTP/2 runs on epoll".into()),
            (Io::Uring, None) if one_request_per_connection => Err(uring::ONE_REQUEST_PER_CONNECTION.into()),
            _ => uring::ring_for(shared.io, tls, setup.connections, shared.io_batch_us.unwrap_or(0)),
        };
        Ok(Worker {
            setup,
            poll,
            conns,
            scratch: vec![0; SCRATCH_BYTES].into_boxed_slice(),
            recorder,
            busy: 0,
            opening: 0,
            nap: match (shared.io_batch_us, &shared.batch_trial) {
                (Some(window_us), _) => batch::Nap::for_window(window_us),
                (None, trial) => trial.clone().map(|trial| batch::Nap::on_trial(TrialCounter::new(trial))),
            },
            actions: Actions::with_capacity(64),
            timer,
            reconnects: BinaryHeap::new(),
            window: Window { start_us: 0, measure_start_us: 0, measure_end_us: u64::MAX, run_end_us: u64::MAX },
            h2: shared.h2_streams.map(h2::Links::new),
            negotiated_tls: None,
            shared,
            ring,
            ring_ready: Vec::new(),
        })
    }

    pub fn run(mut self, barrier: &Barrier) -> WorkerOutcome {
        let (scheduling, scheduling_fallback) = policy::apply(self.shared.scheduling);
        barrier.wait();
        barrier.wait();
        let start_us = self.shared.start_us.load(Ordering::Acquire);
        let (io, io_fallback) = match std::mem::replace(&mut self.ring, Ok(None)) {
            Ok(None) => (Io::Epoll, None),
            Ok(Some(ring)) => match uring::install(ring) {
                Ok(()) => (Io::Uring, None),
                Err(e) => (Io::Epoll, Some(format!("io_uring could not start ({e}): running on epoll"))),
            },
            Err(reason) => (Io::Epoll, Some(reason)),
        };
        if let Some(nap) = &mut self.nap {
            nap.start(start_us);
        }
        let (cpu_start_us, wait_start_us) = (thread_cpu_us(), thread_cpu_wait_us());
        self.window = self.windows(start_us);
        self.recorder.measure_from(self.window.measure_start_us);
        let mut schedule = self.schedule();
        let scan_every_us = (self.shared.timeout_us / 10).clamp(1_000, MAX_WAIT_US);
        let mut next_scan_us = start_us + scan_every_us;
        let mut events = Events::with_capacity(1024);
        schedule.start(start_us, &mut self.actions);
        self.perform(&mut schedule, start_us);
        let (stop_reason, end_us) = loop {
            let now = now_us();
            if self.shared.cancel.load(Ordering::Relaxed) {
                break (StopReason::Cancelled, now);
            }
            if now >= self.window.run_end_us {
                self.take_arrived(&mut schedule, &mut events);
                break (StopReason::Duration, self.window.measure_end_us);
            }
            if self.busy == 0 && schedule.exhausted() {
                break (StopReason::Requests, now);
            }
            schedule.due(now, &mut self.actions);
            self.perform(&mut schedule, now);
            self.reconnect(&mut schedule, now);
            let due_us = self.arm_timer(&schedule, now);
            let since_us = now.saturating_sub(self.window.measure_start_us);
            let next_second_us = self.window.measure_start_us + (since_us / 1_000_000 + 1) * 1_000_000;
            let trial_boundary_us = self.nap.as_ref().and_then(batch::Nap::wake_by_us).unwrap_or(u64::MAX);
            let wake_us = next_second_us.min(self.window.run_end_us).min(next_scan_us).min(now + MAX_WAIT_US);
            let wake_us = wake_us.min(trial_boundary_us);
            // The ring's wait times out to the nanosecond: it wakes itself for the next send, where
            // the timer would reach it through epoll and a poll on the ring.
            let next_us = wake_us.min(due_us.unwrap_or(u64::MAX));
            let wake_us = if uring::installed() { next_us } else { wake_us };
            let wait = Duration::from_micros(wake_us.saturating_sub(now));
            self.wait(&mut events, wait, Duration::from_micros(next_us.saturating_sub(now)));
            let now = now_us();
            self.recorder.roll(self.timeline_us(now));
            self.handle(&mut schedule, &events);
            if now >= next_scan_us {
                self.expire(&mut schedule, now);
                next_scan_us = now + scan_every_us;
            }
            self.recorder.publish(&self.shared.live[self.setup.index]);
        };
        self.count_unanswered(&schedule, end_us);
        self.shared.peak_rss.sample();
        self.conns.iter_mut().for_each(Conn::disconnect);
        self.h2.as_mut().map(h2::Links::close_all);
        uring::uninstall();
        self.recorder.finish(end_us.max(self.window.measure_start_us));
        self.recorder.publish(&self.shared.live[self.setup.index]);
        let (cpu_us, wall_us) = (thread_cpu_us() - cpu_start_us, now_us() - start_us);
        let cpu_wait_us = thread_cpu_wait_us().saturating_sub(wait_start_us);
        let sessions = schedule.into_sessions_outcome();
        let negotiated_tls = self.negotiated_tls;
        WorkerOutcome {
            recorder: self.recorder,
            end_us,
            cpu_us,
            cpu_wait_us,
            wall_us,
            stop_reason,
            sessions,
            negotiated_tls,
            io,
            io_fallback,
            scheduling,
            scheduling_fallback,
        }
    }

    /// Where the timeline's seconds stand at `now`: not past the measured interval's last second
    /// when the run ends with the interval, so that answers the kernel received before the end and
    /// read after it (`take_arrived`) fall in a second the result keeps.
    fn timeline_us(&self, now: u64) -> u64 {
        if self.window.run_end_us == self.window.measure_end_us {
            now.min(self.window.measure_end_us.saturating_sub(1))
        } else {
            now
        }
    }

    /// Handle what a wait returned: epoll's events, then the ring's completions.
    fn handle(&mut self, schedule: &mut Schedule, events: &Events) {
        for event in events.iter() {
            let readiness = Readiness {
                readable: event.is_readable() || event.is_read_closed() || event.is_error(),
                writable: event.is_writable() || event.is_write_closed() || event.is_error(),
                peer_closed: event.is_read_closed() || event.is_error(),
            };
            match event.token() {
                SEND_TIMER => self.timer.fired(),
                Token(i) => self.on_event(schedule, i, readiness, now_us()),
            }
        }
        let completed = Readiness { readable: true, writable: false, peer_closed: false };
        for i in std::mem::take(&mut self.ring_ready) {
            self.on_event(schedule, i, completed, now_us());
        }
    }

    /// At the end of the time: answers that arrived but were not read yet (the thread was busy,
    /// or napping through a batch window) are read without waiting, until nothing more is ready,
    /// and those the kernel received inside the measured interval count as answered there
    /// (`count`). A saturated client leaves one unread on most of its connections: counted as
    /// unanswered, they would pass for requests the server never answered. Nothing new is sent
    /// after the time. Sessions are left as they were: they time pages by when they were read,
    /// and a page's next request would go out.
    fn take_arrived(&mut self, schedule: &mut Schedule, events: &mut Events) {
        if matches!(schedule, Schedule::Sessions(_)) {
            return;
        }
        // Each pass takes up to `events`' capacity, and each connection is ready once.
        for _ in 0..=self.conns.len() / events.capacity() + 1 {
            self.wait(events, Duration::ZERO, Duration::ZERO);
            if events.is_empty() && self.ring_ready.is_empty() {
                return;
            }
            self.handle(schedule, events);
        }
    }

    /// Wait for events: epoll's, or on the ring its completions and (polled through it) epoll's.
    /// Under a batch window epoll's wait first naps (never past `until_next`, the next send, tick
    /// or end) and collects what came meanwhile; it blocks as usual only when nothing did. Neither
    /// batches while a request is opening its connection.
    fn wait(&mut self, events: &mut Events, wait: Duration, until_next: Duration) {
        let batched = if self.opening > 0 { 0 } else { self.busy };
        let polled = if uring::installed() {
            let epoll_fd = self.poll.as_raw_fd();
            let epoll_ready = uring::wait(epoll_fd, wait, batched, &mut self.conns, &mut self.ring_ready)
                .unwrap_or_else(|e| panic!("io_uring_enter failed: {e}"));
            events.clear();
            if epoll_ready {
                self.poll.poll(events, Some(Duration::ZERO))
            } else {
                Ok(())
            }
        } else {
            let nap = self.nap.as_mut().map_or(Duration::ZERO, |nap| nap.length(now_us(), batched, until_next));
            if nap.is_zero() {
                self.poll.poll(events, Some(wait))
            } else {
                self.recorder.counts.batch_naps += 1;
                std::thread::sleep(nap);
                match self.poll.poll(events, Some(Duration::ZERO)) {
                    Ok(()) if events.is_empty() => self.poll.poll(events, Some(wait.saturating_sub(nap))),
                    polled => polled,
                }
            }
        };
        if let Err(e) = polled {
            assert_eq!(e.kind(), io::ErrorKind::Interrupted, "epoll_wait failed: {e}");
        }
    }

    /// Warm-up, measurement, and (for sessions) ramp-down, from the common start.
    fn windows(&self, start_us: u64) -> Window {
        let measure_start_us = start_us + self.shared.warmup_us;
        let sessions = self.shared.sessions.as_ref().map(|s| &s.plan);
        let phases_end_us = sessions.and_then(|s| s.phases_duration_us()).map(|d| start_us + d);
        let measure_end_us = match (self.shared.duration_us, phases_end_us) {
            (Some(d), Some(end)) => (measure_start_us + d).min(end),
            (Some(d), None) => measure_start_us + d,
            (None, end) => end.unwrap_or(u64::MAX),
        };
        let run_end_us = measure_end_us.saturating_add(sessions.map_or(0, |s| s.rampdown_us));
        Window { start_us, measure_start_us, measure_end_us, run_end_us }
    }

    /// The plan's load model for this thread: the one place that tells the models apart.
    fn schedule(&self) -> Schedule {
        let setup = &self.setup;
        let mix = || PathMix::new(self.shared.mix.clone(), MIX_SEED ^ setup.index as u64);
        let budget = Budget(setup.budget);
        // Under HTTP/2 the closed loop's users and the rate's free slots are streams.
        let slots = setup.connections * self.shared.h2_streams.unwrap_or(1);
        match (&self.shared.sessions, setup.rate_per_s) {
            (Some(sessions), _) => {
                let users = UsersSetup {
                    index: setup.index,
                    connections: setup.connections,
                    users: setup.users,
                    arrival_share: setup.arrival_share,
                };
                Schedule::Sessions(Users::new(sessions.clone(), &users, self.window))
            }
            (None, Some(rate_per_s)) => {
                let pace = RateSchedule::new(self.window.start_us, rate_per_s, setup.index, setup.threads);
                Schedule::Rate(ConstantRate::new(pace, slots, self.window, budget, mix()))
            }
            (None, None) => Schedule::Closed(ClosedLoop::new(slots, self.window, budget, mix())),
        }
    }

    /// Do what the scheduler asked for (sends, closes, session counts), including what it asks
    /// for meanwhile.
    fn perform(&mut self, schedule: &mut Schedule, now: u64) {
        while let Some(action) = self.actions.pop_front() {
            match action {
                Action::Send(send) => self.begin(schedule, send, now),
                // A connection never used (a page without resources) has nothing to close.
                Action::Close(i) => {
                    if self.h2.is_some() {
                        self.h2_close(i);
                    }
                    if let Some(conn) = self.conns.get_mut(i) {
                        conn.disconnect();
                        conn.phase = Phase::Closed;
                    }
                }
                Action::Count(event) => self.recorder.session(event),
            }
        }
    }

    fn on_event(&mut self, schedule: &mut Schedule, i: usize, readiness: Readiness, now: u64) {
        if self.h2.is_some() {
            return self.h2_event(schedule, i, readiness, now);
        }
        let busy_tls = self.conns[i].is_busy() && matches!(self.conns[i].stream, Some(Transport::Tls(_)));
        if readiness.writable && busy_tls {
            if let Err(e) = self.conns[i].stream.as_mut().map_or(Ok(()), Transport::flush) {
                return self.end_request(schedule, i, now, Err(ErrorKind::of_transfer(&e)), false);
            }
        }
        match self.conns[i].phase {
            // The server closed a kept-alive connection between requests: under edge-triggered
            // readiness that FIN raises no event again, so a request sent on it would wait for its
            // timeout. The next request opens a new connection.
            Phase::Idle if readiness.readable => self.read_unasked(i, readiness.peer_closed, now),
            Phase::Closed | Phase::Idle | Phase::WaitingToConnect => {}
            Phase::Connecting => match self.conns[i].connected() {
                None => {}
                Some(Ok(())) => {
                    if let Err(e) = Transport::adopt_ring(&mut self.conns[i].stream, i, self.poll.registry()) {
                        return self.end_request(schedule, i, now, Err(ErrorKind::of_transfer(&e)), false);
                    }
                    self.conns[i].backoff.succeeded();
                    if self.conns[i].measured {
                        self.recorder.counts.connections_opened += 1;
                    }
                    self.send(schedule, i, now)
                }
                Some(Err(kind)) => {
                    self.connect_failed(i, now, kind);
                    self.end_request(schedule, i, now, Err(kind), false)
                }
            },
            Phase::Writing { .. } if readiness.writable => self.write(schedule, i, now),
            Phase::Writing { .. } => {}
            Phase::Reading if !readiness.readable => {}
            Phase::Reading => {
                let received = self.conns[i].receive(&mut self.scratch, readiness.peer_closed);
                self.conns[i].bytes_in += received.bytes;
                if self.conns[i].measured {
                    self.recorder.bytes_in(received.bytes);
                }
                if received.unsolicited_bytes > 0 && self.counts(i, now) {
                    self.recorder.unsolicited(received.unsolicited_bytes);
                }
                self.after(schedule, i, now, received.step);
            }
        }
    }

    /// Bytes or the peer's end arrived on `i` between requests. The server closed a kept-alive
    /// connection: under edge-triggered readiness that FIN raises no event again, so a request
    /// sent on it would wait for its timeout. Or it sent what no request asked for, which would
    /// pass for the next request's answer. Either way the next request opens a new connection.
    fn read_unasked(&mut self, i: usize, peer_closed: bool, now: u64) {
        let (bytes, clean) = self.conns[i].read_unasked(&mut self.scratch, peer_closed);
        if bytes > 0 && self.counts(i, now) {
            self.recorder.bytes_in(bytes);
            self.recorder.unsolicited(bytes);
        }
        if !clean {
            self.conns[i].disconnect();
        }
    }

    /// What happens on `i` now counts: its last request was measured and the interval goes on.
    fn counts(&self, i: usize, now: u64) -> bool {
        self.conns[i].measured && now < self.window.measure_end_us
    }

    fn after(&mut self, schedule: &mut Schedule, i: usize, now: u64, step: Step) {
        if let Step::Ended { outcome, reusable } = step {
            self.end_request(schedule, i, now, outcome, reusable);
        }
    }

    /// Connect the requests whose backoff has passed.
    fn reconnect(&mut self, schedule: &mut Schedule, now: u64) {
        while let Some(&Reverse((at_us, i))) = self.reconnects.peek() {
            if at_us > now {
                return;
            }
            self.reconnects.pop();
            // A stale entry: the request ended (timed out) and the connection moved on.
            if self.conns[i].phase != Phase::WaitingToConnect || self.conns[i].backoff.retry_at_us() > now {
                continue;
            }
            self.conns[i].phase = Phase::Connecting;
            if let Err(e) = self.open(i, now) {
                self.end_request(schedule, i, now, Err(ErrorKind::of_connect(&e)), false);
            }
        }
    }

    /// Set the timer for the next scheduled event: the scheduler's next due time, or a reconnect.
    /// Returns when that is.
    fn arm_timer(&mut self, schedule: &Schedule, now: u64) -> Option<u64> {
        let reconnect_us = self.reconnects.peek().map(|Reverse((at_us, _))| *at_us);
        let next_us = schedule.next_due_us().into_iter().chain(reconnect_us).min();
        let due_us = next_us.filter(|&due| due < self.window.run_end_us)?;
        self.timer.arm(due_us, now);
        Some(due_us)
    }

    /// Start a request on its connection, connecting first if needed (after any backoff).
    fn begin(&mut self, schedule: &mut Schedule, send: Send, now: u64) {
        let i = send.conn;
        if i >= self.conns.len() {
            self.conns.resize_with(i + 1, Conn::new);
        }
        if send.on_schedule && send.measured {
            self.recorder.sent(now - send.intended_us);
        }
        self.busy += usize::from(!self.conns[i].is_busy());
        let conn = &mut self.conns[i];
        let encoded = &self.shared.requests[send.request];
        let cookie_buffer = conn.take_cookie_buffer();
        conn.begin(now, send.intended_us, self.shared.timeout_us, send.measured, send.request, encoded);
        if self.shared.sessions.is_some() {
            conn.collect_cookies(cookie_buffer);
        }
        conn.on_schedule = send.on_schedule;
        self.dispatch(schedule, i, now);
    }

    /// Send `i`'s request on its connection, or connect it first (after any backoff).
    fn dispatch(&mut self, schedule: &mut Schedule, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        let connected = match &self.h2 {
            Some(links) => links.is_connected(i),
            None => conn.stream.is_some(),
        };
        if connected {
            return self.send(schedule, i, now);
        }
        let retry_at_us = conn.backoff.retry_at_us();
        if retry_at_us > now {
            conn.phase = Phase::WaitingToConnect;
            self.reconnects.push(Reverse((retry_at_us, i)));
            return;
        }
        conn.phase = Phase::Connecting;
        if let Err(e) = self.open(i, now) {
            // Failed at once (e.g. no local port free): the request fails, the connection backs off.
            self.end_request(schedule, i, now, Err(ErrorKind::of_connect(&e)), false);
        }
    }

    /// Start connecting `i`; a connect that fails at once is counted here and backs off.
    fn open(&mut self, i: usize, now: u64) -> io::Result<()> {
        if !std::mem::replace(&mut self.conns[i].opens, true) {
            self.opening += 1;
        }
        if self.conns[i].backoff.is_retry() && self.conns[i].measured {
            self.recorder.counts.connect_retries += 1;
        }
        let opened = self.connect(i);
        if let Err(e) = &opened {
            self.connect_failed(i, now, ErrorKind::of_connect(e));
        }
        opened
    }

    fn connect(&mut self, i: usize) -> io::Result<()> {
        if self.h2.is_some() {
            return self.h2_connect(i);
        }
        let shared = &self.shared;
        let (address, tls) = match (&shared.https_target, shared.requests[self.conns[i].request].target) {
            (Some((address, config, name)), 1) => (*address, Some((config.clone(), name.clone()))),
            _ => (shared.address, shared.tls.clone()),
        };
        let run_index = i * self.setup.threads + self.setup.index;
        let mut socket = tcp::connect(address, tcp::source_for(&shared.sources, run_index))?;
        self.poll.registry().register(&mut socket, Token(i), Interest::READABLE | Interest::WRITABLE)?;
        self.conns[i].stream = Some(match &tls {
            None => Transport::Plain(socket),
            Some((config, name)) => {
                let session = rustls::ClientConnection::new(config.clone(), name.clone())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                Transport::Tls(Box::new(TlsStream::new(socket, session.into())))
            }
        });
        Ok(())
    }

    fn connect_failed(&mut self, i: usize, now: u64, kind: ErrorKind) {
        self.conns[i].backoff.failed(now);
        if self.conns[i].measured {
            self.recorder.connect_failed(kind);
        }
    }

    fn send(&mut self, schedule: &mut Schedule, i: usize, now: u64) {
        if self.h2.is_some() {
            return self.h2_send(schedule, i, now);
        }
        let conn = &mut self.conns[i];
        conn.calls += 1;
        conn.last_call = !self.shared.keepalive || self.shared.calls_per_connection == Some(conn.calls);
        conn.phase = Phase::Writing { written: 0 };
        let request = &self.shared.requests[conn.request];
        conn.compose(if conn.last_call { &request.last } else { &request.reuse }, schedule.cookie(i));
        self.write(schedule, i, now);
    }

    fn write(&mut self, schedule: &mut Schedule, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        let request = &self.shared.requests[conn.request];
        // Taken out for the call and put back: the buffer is kept, not reallocated.
        let composed = std::mem::take(&mut conn.composed);
        let bytes: &[u8] = match (composed.is_empty(), conn.last_call) {
            (false, _) => &composed,
            (true, true) => &request.last,
            (true, false) => &request.reuse,
        };
        let (written, step) = conn.transmit(bytes);
        conn.composed = composed;
        if conn.measured {
            self.recorder.counts.bytes_out += written;
        }
        self.after(schedule, i, now, step);
    }

    fn count(&mut self, i: usize, now: u64, outcome: Outcome) {
        let conn = &self.conns[i];
        // What was negotiated is the run's whether the handshake was measured or not: with
        // keep-alive and a warm-up none is.
        if let (None, Ok(_), 1, Some(Transport::Tls(tls))) = (&self.negotiated_tls, outcome, conn.calls, &conn.stream) {
            self.negotiated_tls = TlsNegotiated::of(&tls.session);
        }
        if !conn.measured {
            return;
        }
        let end_us = conn.ended_us(now);
        if end_us >= self.window.measure_end_us {
            // It ended after the measured interval: at the interval's end it had no answer.
            return self.count_one_unanswered(i, self.window.measure_end_us);
        }
        if let (Ok(_), 1, Some(resumed)) = (outcome, conn.calls, conn.stream.as_ref().and_then(|s| s.resumed())) {
            self.recorder.tls_handshake(resumed);
        }
        match outcome {
            Ok(head) => {
                self.recorder.counts.rx_timestamped += u64::from(conn.answered_us.is_some());
                self.recorder.response(head.status, end_us - conn.intended_us, end_us - conn.started_us)
            }
            Err(kind) => self.recorder.error(kind),
        }
    }

    /// The request on `i` ended: count it, keep or close the connection, and tell the scheduler.
    /// One that met a stale keep-alive connection is sent again instead (`resend_stale`).
    fn end_request(&mut self, schedule: &mut Schedule, i: usize, now: u64, outcome: Outcome, reusable: bool) {
        if let Some(links) = &mut self.h2 {
            links.release(i);
        } else if self.conns[i].is_stale(outcome, self.shared.requests[self.conns[i].request].idempotent) {
            return self.resend_stale(schedule, i, now);
        }
        self.count(i, now, outcome);
        let conn = &mut self.conns[i];
        if !conn.set_cookies().is_empty() {
            schedule.store_cookies(i, conn.set_cookies());
        }
        let keep = reusable && !conn.last_call && outcome.is_ok_and(|head| head.keep_alive);
        if !keep {
            conn.disconnect();
        }
        let counted = conn.measured && conn.ended_us(now) < self.window.measure_end_us;
        let ended = Ended { outcome, counted, bytes_in: conn.bytes_in };
        self.busy -= usize::from(conn.is_busy());
        self.opening -= usize::from(std::mem::take(&mut conn.opens));
        conn.phase = Phase::Idle;
        if let Some(nap) = &mut self.nap {
            nap.ended();
        }
        schedule.on_free(i, now, ended, &mut self.actions);
        self.perform(schedule, now);
    }

    /// The server closed `i`'s kept-alive connection as the request went out on it (Apache's event
    /// MPM does so to idle ones while its workers are busy): the request goes once more on a new
    /// connection, as a browser sends it. It keeps its due time, start and deadline, so its
    /// latency counts from the first send.
    fn resend_stale(&mut self, schedule: &mut Schedule, i: usize, now: u64) {
        let conn = &mut self.conns[i];
        conn.disconnect();
        if conn.measured && now < self.window.measure_end_us {
            self.recorder.counts.stale_resent += 1;
        }
        self.dispatch(schedule, i, now);
    }

    /// Fail every request that has outlived the timeout; its connection is replaced.
    fn expire(&mut self, schedule: &mut Schedule, now: u64) {
        for i in 0..self.conns.len() {
            let conn = &mut self.conns[i];
            if conn.is_busy() && now >= conn.deadline_us {
                let connecting = matches!(conn.phase, Phase::Connecting | Phase::WaitingToConnect);
                let kind = if connecting { ErrorKind::ConnectTimeout } else { ErrorKind::Timeout };
                self.end_request(schedule, i, now, Err(kind), false);
            }
        }
    }

    /// At the end: every request still in flight, and under a rate every measured request that
    /// was due and never started, which also shows in the latency at its age. One begun in the
    /// warm-up counts too: it went unanswered through the whole measured interval (as connects do
    /// when opening a thread's connections takes longer than the run).
    fn count_unanswered(&mut self, schedule: &Schedule, end_us: u64) {
        for i in 0..self.conns.len() {
            self.count_one_unanswered(i, end_us);
        }
        self.recorder.unsent += schedule.record_unsent(end_us, &mut self.recorder.latency);
    }

    /// The request on `i` had no answer at `end_us`; a measured one with a due time of its own
    /// (open loop) also counts in the latency at its age. One due in the warm-up stays out of the
    /// latency, which holds the measured interval's requests only.
    fn count_one_unanswered(&mut self, i: usize, end_us: u64) {
        let conn = &self.conns[i];
        let stage = match &self.h2 {
            Some(links) => links.stage(i, conn),
            None => conn.stage(),
        };
        let Some(stage) = stage else { return };
        self.recorder.unanswered(stage, end_us.saturating_sub(conn.started_us));
        if conn.on_schedule && conn.measured {
            latency::record(&mut self.recorder.latency, end_us.saturating_sub(conn.intended_us));
        }
    }
}
