//! When requests are sent, one scheduler per load model: the closed loop (`closed`), the
//! constant rate (`constant_rate`, over the slot arithmetic of `rate`) and sessions (`users`).
//! Each answers the same questions, as pure functions of what it is told: a connection is free,
//! what is due now, and when is the next thing due. The worker turns its answers into socket
//! work and never asks which model it runs. The dispatch is an enum, not a trait object, so the
//! per-request call is a direct, inlinable match.

pub mod closed;
pub mod constant_rate;
pub mod idle;
pub mod pages;
pub mod rate;
pub mod session;
pub mod timer;
pub mod users;
pub mod walk;

use std::collections::VecDeque;

use hdrhistogram::Histogram;

use crate::http1::Outcome;
use crate::stats::SessionEvent;
use closed::ClosedLoop;
use constant_rate::ConstantRate;
use users::{SessionsOutcome, Users};

/// Start a request on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Send {
    pub conn: usize,
    /// Which of the run's encoded requests.
    pub request: usize,
    /// When it was due: now in a closed loop, its slot under a rate. Latency counts from it.
    pub intended_us: u64,
    /// It counts: it was due in the measured interval.
    pub measured: bool,
    /// It had a due time of its own (open loop): its send lag is recorded, and if it goes
    /// unanswered its age counts in the latency.
    pub on_schedule: bool,
}

/// What a scheduler asks of the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Send(Send),
    /// Retire the connection: close it, it will carry no more requests for now.
    Close(usize),
    /// Count a session event in the timeline's current second.
    Count(SessionEvent),
}

/// The worker's queue of actions, reused so that no call allocates.
pub type Actions = VecDeque<Action>;

/// How a request on a now free connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    pub outcome: Outcome,
    /// It was measured and ended inside the measured interval.
    pub counted: bool,
    /// Bytes of its response read.
    pub bytes_in: u64,
}

/// The run's time windows, from the common start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start_us: u64,
    pub measure_start_us: u64,
    /// Requests that end later are not counted (sessions' ramp-down runs past it).
    pub measure_end_us: u64,
    pub run_end_us: u64,
}

impl Window {
    pub fn measures(&self, at_us: u64) -> bool {
        at_us >= self.measure_start_us && at_us < self.measure_end_us
    }
}

/// Measured requests a thread may still start; None when the run is bounded by time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget(pub Option<u64>);

impl Budget {
    /// Take one request: a measured one spends the budget; false when it is spent.
    pub fn take(&mut self, measured: bool) -> bool {
        match self.0 {
            Some(0) if measured => false,
            Some(n) if measured => {
                self.0 = Some(n - 1);
                true
            }
            _ => true,
        }
    }

    pub fn spent(&self) -> bool {
        self.0 == Some(0)
    }
}

/// What every load model answers.
pub trait Scheduler {
    /// The run has started: the first requests.
    fn start(&mut self, now_us: u64, actions: &mut Actions);
    /// Connection `conn` is free again; its request ended as `ended`.
    fn on_free(&mut self, conn: usize, now_us: u64, ended: Ended, actions: &mut Actions);
    /// Send what is due by `now_us`.
    fn due(&mut self, now_us: u64, actions: &mut Actions);
    /// When `due` has something next; None: nothing until a connection is free.
    fn next_due_us(&self) -> Option<u64>;
    /// Nothing more will be sent: the run ends when nothing is in flight.
    fn exhausted(&self) -> bool;
    /// At the end: requests due in the measured interval by `end_us` and never sent are recorded
    /// in `latency` at their age; returns how many.
    fn record_unsent(&self, end_us: u64, latency: &mut Histogram<u64>) -> u64;
    /// The Cookie header's value for the next request on `conn`; empty: no header. Only
    /// sessions keep cookies.
    fn cookie(&self, _conn: usize) -> &[u8] {
        &[]
    }
    /// The response on `conn` set these cookies (Set-Cookie values, one per line).
    fn store_cookies(&mut self, _conn: usize, _set_cookies: &[u8]) {}
}

/// The load model of a run.
pub enum Schedule {
    Closed(ClosedLoop),
    Rate(ConstantRate),
    Sessions(Users),
}

macro_rules! each {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            Schedule::Closed($s) => $body,
            Schedule::Rate($s) => $body,
            Schedule::Sessions($s) => $body,
        }
    };
}

impl Scheduler for Schedule {
    #[inline]
    fn start(&mut self, now_us: u64, actions: &mut Actions) {
        each!(self, s => s.start(now_us, actions))
    }

    #[inline]
    fn on_free(&mut self, conn: usize, now_us: u64, ended: Ended, actions: &mut Actions) {
        each!(self, s => s.on_free(conn, now_us, ended, actions))
    }

    #[inline]
    fn due(&mut self, now_us: u64, actions: &mut Actions) {
        each!(self, s => s.due(now_us, actions))
    }

    #[inline]
    fn next_due_us(&self) -> Option<u64> {
        each!(self, s => s.next_due_us())
    }

    #[inline]
    fn exhausted(&self) -> bool {
        each!(self, s => s.exhausted())
    }

    fn record_unsent(&self, end_us: u64, latency: &mut Histogram<u64>) -> u64 {
        each!(self, s => s.record_unsent(end_us, latency))
    }

    #[inline]
    fn cookie(&self, conn: usize) -> &[u8] {
        each!(self, s => s.cookie(conn))
    }

    fn store_cookies(&mut self, conn: usize, set_cookies: &[u8]) {
        each!(self, s => s.store_cookies(conn, set_cookies))
    }
}

impl Schedule {
    /// The sessions' figures; None for the other models.
    pub fn into_sessions_outcome(self) -> Option<SessionsOutcome> {
        match self {
            Schedule::Sessions(users) => Some(users.outcome()),
            _ => None,
        }
    }
}

#[cfg(test)]
pub(crate) mod table {
    //! Helpers for the schedulers' table tests.
    use super::*;
    use crate::http1::Head;

    pub const OK: Ended = Ended { outcome: Ok(Head { status: 200, keep_alive: true }), counted: true, bytes_in: 100 };

    pub fn drain(actions: &mut Actions) -> Vec<Action> {
        actions.drain(..).collect()
    }

    pub fn send(conn: usize, request: usize, intended_us: u64, measured: bool, on_schedule: bool) -> Action {
        Action::Send(Send { conn, request, intended_us, measured, on_schedule })
    }

    #[test]
    fn budgets_spend_only_measured_requests() {
        let mut budget = Budget(Some(2));
        let taken: Vec<bool> = [false, true, false, true, true].iter().map(|&m| budget.take(m)).collect();
        assert_eq!((taken, budget.spent()), (vec![true, true, true, true, false], true));
        let mut unbounded = Budget(None);
        assert!(unbounded.take(true) && !unbounded.spent());
    }
}
