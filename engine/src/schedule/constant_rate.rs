//! Constant rate (open loop): requests are due on the thread's share of the schedule (`rate`),
//! whatever happened to the ones before; a due request takes a free connection, or waits for
//! one keeping its due time. Free connections wait in a stack, so the busiest stay warm.

use hdrhistogram::Histogram;

use super::rate::RateSchedule;
use super::{Action, Actions, Budget, Ended, Scheduler, Send, Window};
use crate::random::PathMix;

pub struct ConstantRate {
    pace: RateSchedule,
    /// Connections free for the next due request.
    idle: Vec<usize>,
    connections: usize,
    window: Window,
    budget: Budget,
    mix: PathMix,
}

impl ConstantRate {
    pub fn new(pace: RateSchedule, connections: usize, window: Window, budget: Budget, mix: PathMix) -> ConstantRate {
        ConstantRate { pace, idle: Vec::with_capacity(connections), connections, window, budget, mix }
    }
}

impl Scheduler for ConstantRate {
    fn start(&mut self, now_us: u64, actions: &mut Actions) {
        self.idle.extend((0..self.connections).rev());
        self.due(now_us, actions);
    }

    #[inline]
    fn on_free(&mut self, conn: usize, _now_us: u64, _ended: Ended, _actions: &mut Actions) {
        self.idle.push(conn);
    }

    fn due(&mut self, now_us: u64, actions: &mut Actions) {
        while let Some(&conn) = self.idle.last() {
            let due_us = self.pace.next_due_us();
            if due_us >= self.window.run_end_us || due_us > now_us {
                return;
            }
            let measured = due_us >= self.window.measure_start_us;
            if !self.budget.take(measured) {
                return;
            }
            self.pace.claim();
            self.idle.pop();
            let request = self.mix.pick();
            actions.push_back(Action::Send(Send { conn, request, intended_us: due_us, measured, on_schedule: true }));
        }
    }

    fn next_due_us(&self) -> Option<u64> {
        let due_us = self.pace.next_due_us();
        (!self.idle.is_empty() && !self.budget.spent() && due_us < self.window.run_end_us).then_some(due_us)
    }

    fn exhausted(&self) -> bool {
        self.budget.spent()
    }

    fn record_unsent(&self, end_us: u64, latency: &mut Histogram<u64>) -> u64 {
        let limit = self.budget.0.unwrap_or(u64::MAX);
        let slots = self.pace.unclaimed(self.window.measure_start_us, end_us.min(self.window.measure_end_us), limit);
        self.pace.record_ages(slots.clone(), end_us, latency);
        slots.end - slots.start
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{drain, send, OK};
    use super::*;
    use crate::stats::latency;

    fn window() -> Window {
        Window { start_us: 0, measure_start_us: 2_000, measure_end_us: 10_000, run_end_us: 10_000 }
    }

    /// 1000/s on thread 1 of 2: its slots are due at 1, 3, 5, 7, 9 ms.
    fn rate(connections: usize, budget: Option<u64>) -> ConstantRate {
        ConstantRate::new(
            RateSchedule::new(0, 1_000.0, 1, 2),
            connections,
            window(),
            Budget(budget),
            PathMix::new(None, 1),
        )
    }

    #[test]
    fn due_requests_take_free_connections_and_keep_their_due_time() {
        let mut rate = rate(2, None);
        let mut actions = Actions::new();
        rate.start(0, &mut actions);
        assert_eq!((drain(&mut actions), rate.next_due_us()), (vec![], Some(1_000)));
        // (connection freed, now, expected sends, next due)
        type Step = (Option<usize>, u64, Vec<Action>, Option<u64>);
        let steps: [Step; 4] = [
            (None, 1_000, vec![send(0, 0, 1_000, false, true)], Some(3_000)),
            // Late: both 3 ms and 5 ms are due at 5.5 ms; one connection is free, the other waits.
            (None, 5_500, vec![send(1, 0, 3_000, true, true)], None),
            (Some(0), 5_600, vec![send(0, 0, 5_000, true, true)], None),
            (Some(1), 6_000, vec![], Some(7_000)),
        ];
        for (freed, now_us, expected, next) in steps {
            if let Some(conn) = freed {
                rate.on_free(conn, now_us, OK, &mut actions);
            }
            rate.due(now_us, &mut actions);
            assert_eq!((drain(&mut actions), rate.next_due_us()), (expected, next), "at {now_us}");
        }
    }

    #[test]
    fn a_budget_ends_the_schedule() {
        let mut rate = rate(1, Some(1));
        let mut actions = Actions::new();
        rate.start(9_000, &mut actions);
        assert_eq!(drain(&mut actions), [send(0, 0, 1_000, false, true)]);
        rate.on_free(0, 9_100, OK, &mut actions);
        rate.due(9_100, &mut actions);
        assert_eq!(drain(&mut actions), [send(0, 0, 3_000, true, true)]);
        assert!(rate.exhausted() && rate.next_due_us().is_none());
    }

    #[test]
    fn requests_never_sent_are_in_the_latency_at_their_age() {
        let mut rate = rate(1, None);
        let mut actions = Actions::new();
        rate.start(1_000, &mut actions);
        drain(&mut actions);
        // The one connection stays busy: 3, 5, 7, 9 ms are due and unsent at 10 ms.
        let mut histogram = latency::new_histogram();
        assert_eq!(rate.record_unsent(10_000, &mut histogram), 4);
        let oldest_us = histogram.highest_equivalent(7_000);
        assert_eq!((histogram.min(), histogram.max(), histogram.len()), (1_000, oldest_us, 4));
    }
}
