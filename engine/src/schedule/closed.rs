//! Closed loop (ab, wrk): a connection sends its next request the moment the previous one
//! ended, until the budget is spent or the time is up; each request is due when it is sent.

use hdrhistogram::Histogram;

use super::{Action, Actions, Budget, Ended, Scheduler, Send, Window};
use crate::random::PathMix;

pub struct ClosedLoop {
    connections: usize,
    window: Window,
    budget: Budget,
    mix: PathMix,
}

impl ClosedLoop {
    pub fn new(connections: usize, window: Window, budget: Budget, mix: PathMix) -> ClosedLoop {
        ClosedLoop { connections, window, budget, mix }
    }

    fn next(&mut self, conn: usize, now_us: u64, actions: &mut Actions) {
        let measured = now_us >= self.window.measure_start_us;
        if now_us >= self.window.run_end_us || !self.budget.take(measured) {
            return actions.push_back(Action::Close(conn));
        }
        let request = self.mix.pick();
        actions.push_back(Action::Send(Send { conn, request, intended_us: now_us, measured, on_schedule: false }));
    }
}

impl Scheduler for ClosedLoop {
    fn start(&mut self, now_us: u64, actions: &mut Actions) {
        for conn in 0..self.connections {
            self.next(conn, now_us, actions);
        }
    }

    #[inline]
    fn on_free(&mut self, conn: usize, now_us: u64, _ended: Ended, actions: &mut Actions) {
        self.next(conn, now_us, actions);
    }

    fn due(&mut self, _now_us: u64, _actions: &mut Actions) {}

    fn next_due_us(&self) -> Option<u64> {
        None
    }

    fn exhausted(&self) -> bool {
        self.budget.spent()
    }

    fn record_unsent(&self, _end_us: u64, _latency: &mut Histogram<u64>) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{drain, send, OK};
    use super::*;

    fn window() -> Window {
        Window { start_us: 0, measure_start_us: 100, measure_end_us: 1_000, run_end_us: 1_000 }
    }

    #[test]
    fn every_free_connection_sends_at_once_until_the_budget_is_spent() {
        let mut closed = ClosedLoop::new(2, window(), Budget(Some(3)), PathMix::new(None, 1));
        let mut actions = Actions::new();
        // (event, expected actions): warm-up sends are free; measured ones spend the budget.
        closed.start(0, &mut actions);
        assert_eq!(drain(&mut actions), [send(0, 0, 0, false, false), send(1, 0, 0, false, false)]);
        let steps = [
            (0, 150, vec![send(0, 0, 150, true, false)]),
            (1, 160, vec![send(1, 0, 160, true, false)]),
            (0, 170, vec![send(0, 0, 170, true, false)]),
            (1, 180, vec![Action::Close(1)]),
        ];
        for (conn, now_us, expected) in steps {
            closed.on_free(conn, now_us, OK, &mut actions);
            assert_eq!(drain(&mut actions), expected, "conn {conn} free at {now_us}");
        }
        assert!(closed.exhausted());
        assert_eq!(
            (closed.next_due_us(), closed.record_unsent(2_000, &mut crate::stats::latency::new_histogram())),
            (None, 0)
        );
    }

    #[test]
    fn the_time_up_retires_a_connection() {
        let mut closed = ClosedLoop::new(1, window(), Budget(None), PathMix::new(None, 1));
        let mut actions = Actions::new();
        closed.on_free(0, 999, OK, &mut actions);
        closed.on_free(0, 1_000, OK, &mut actions);
        assert_eq!(drain(&mut actions), [send(0, 0, 999, true, false), Action::Close(0)]);
        assert!(!closed.exhausted());
    }

    #[test]
    fn a_paths_mix_picks_each_request() {
        let choice = crate::random::WeightedChoice::new([1.0, 1.0].into_iter());
        let mut closed = ClosedLoop::new(1, window(), Budget(None), PathMix::new(Some(choice), 7));
        let mut actions = Actions::new();
        for _ in 0..200 {
            closed.on_free(0, 500, OK, &mut actions);
        }
        let picked_second =
            drain(&mut actions).iter().filter(|a| matches!(a, Action::Send(s) if s.request == 1)).count();
        assert!((70..=130).contains(&picked_second), "{picked_second} of 200");
    }
}
