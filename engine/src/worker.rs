//! One load thread: its own epoll loop (mio), its own connections and its own Recorder.
//! Threads share nothing on the per-request path; they meet at the start barrier, in the
//! once-a-second ticks, and at the end.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use mio::{Events, Interest, Poll, Token};
use serde::{Deserialize, Serialize};

use crate::clock::now_us;
use crate::conn::{tcp, Conn, Outcome, Phase, Step};
use crate::request::EncodedRequest;
use crate::stats::error::ErrorKind;
use crate::stats::{Live, Recorder};

/// Bytes a read may take at once; shared by all connections of a thread.
const SCRATCH_BYTES: usize = 64 * 1024;
/// Longest sleep in poll, so that a cancel is seen quickly.
const MAX_WAIT_US: u64 = 100_000;

/// What every thread of a run reads and nobody writes on the per-request path.
pub struct Shared {
    pub address: SocketAddr,
    pub request: EncodedRequest,
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
    pub stop_reason: StopReason,
}

pub struct Worker {
    index: usize,
    shared: Arc<Shared>,
    poll: Poll,
    conns: Vec<Conn>,
    scratch: Box<[u8]>,
    recorder: Recorder,
    /// Measured requests this thread may still start; None when the run is bounded by time.
    budget: Option<u64>,
    busy: usize,
    measure_start_us: u64,
    end_us: u64,
}

impl Worker {
    pub fn new(
        index: usize,
        connections: usize,
        budget: Option<u64>,
        shared: Arc<Shared>,
        recorder: Recorder,
    ) -> io::Result<Worker> {
        let mut conns = Vec::with_capacity(connections);
        conns.resize_with(connections, Conn::new);
        Ok(Worker {
            index,
            shared,
            poll: Poll::new()?,
            conns,
            scratch: vec![0; SCRATCH_BYTES].into_boxed_slice(),
            recorder,
            budget,
            busy: 0,
            measure_start_us: 0,
            end_us: u64::MAX,
        })
    }

    pub fn run(mut self, barrier: &Barrier) -> WorkerOutcome {
        barrier.wait();
        barrier.wait();
        let start_us = self.shared.start_us.load(Ordering::Acquire);
        self.measure_start_us = start_us + self.shared.warmup_us;
        self.end_us = self.shared.duration_us.map_or(u64::MAX, |d| self.measure_start_us + d);
        self.recorder.measure_from(self.measure_start_us);
        let scan_every_us = (self.shared.timeout_us / 10).clamp(1_000, MAX_WAIT_US);
        let mut next_scan_us = start_us + scan_every_us;
        let mut events = Events::with_capacity(1024);
        for i in 0..self.conns.len() {
            self.next_request(i, start_us);
        }
        let (stop_reason, end_us) = loop {
            let now = now_us();
            if self.shared.cancel.load(Ordering::Relaxed) {
                break (StopReason::Cancelled, now);
            }
            if now >= self.end_us {
                break (StopReason::Duration, self.end_us);
            }
            if self.busy == 0 {
                break (StopReason::Requests, now);
            }
            let next_second_us =
                self.measure_start_us + (now.saturating_sub(self.measure_start_us) / 1_000_000 + 1) * 1_000_000;
            let wake_us = next_second_us.min(self.end_us).min(next_scan_us).min(now + MAX_WAIT_US);
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
                self.on_event(event.token().0, readiness, now_us());
            }
            if now >= next_scan_us {
                self.expire(now);
                next_scan_us = now + scan_every_us;
            }
            self.recorder.publish(&self.shared.live[self.index]);
        };
        self.conns.iter_mut().for_each(Conn::disconnect);
        self.recorder.finish(end_us.max(self.measure_start_us));
        self.recorder.publish(&self.shared.live[self.index]);
        WorkerOutcome { recorder: self.recorder, end_us, stop_reason }
    }

    fn on_event(&mut self, i: usize, readiness: Readiness, now: u64) {
        match self.conns[i].phase {
            Phase::Closed => {}
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
                self.after(i, now, step);
            }
        }
    }

    fn after(&mut self, i: usize, now: u64, step: Step) {
        if let Step::Ended { outcome, reusable } = step {
            self.end_request(i, now, outcome, reusable);
        }
    }

    /// Start the connection's next request, or retire it when no more requests are due.
    fn next_request(&mut self, i: usize, mut now: u64) {
        loop {
            let was_busy = self.conns[i].is_busy();
            let measured = now >= self.measure_start_us;
            let budget_spent = measured && self.budget == Some(0);
            if budget_spent || now >= self.end_us || self.shared.cancel.load(Ordering::Relaxed) {
                self.busy -= usize::from(was_busy);
                self.conns[i].disconnect();
                self.conns[i].phase = Phase::Closed;
                return;
            }
            if measured {
                self.budget = self.budget.map(|b| b - 1);
            }
            self.busy += usize::from(!was_busy);
            let conn = &mut self.conns[i];
            conn.begin(now, self.shared.timeout_us, measured, self.shared.request.is_head);
            if conn.stream.is_some() {
                return self.send(i, now);
            }
            conn.phase = Phase::Connecting;
            match self.open(i) {
                Ok(()) => return,
                Err(e) => {
                    // Failed at once (e.g. no local port free): count it and go on with the next.
                    self.count(i, now, Err(ErrorKind::of_connect(&e)));
                    now = now_us();
                }
            }
        }
    }

    fn open(&mut self, i: usize) -> io::Result<()> {
        let mut stream = tcp::connect(self.shared.address)?;
        self.poll.registry().register(&mut stream, Token(i), Interest::READABLE | Interest::WRITABLE)?;
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
        let request = &self.shared.request;
        let conn = &mut self.conns[i];
        let bytes = if conn.last_call { &request.last } else { &request.reuse };
        let (written, step) = conn.transmit(bytes);
        if conn.measured {
            self.recorder.bytes_out += written;
        }
        self.after(i, now, step);
    }

    fn count(&mut self, i: usize, now: u64, outcome: Outcome) {
        let conn = &self.conns[i];
        if !conn.measured {
            return;
        }
        match outcome {
            Ok(head) => self.recorder.response(head.status, now - conn.started_us),
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
        self.next_request(i, now);
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
