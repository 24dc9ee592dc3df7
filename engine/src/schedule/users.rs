//! Sessions as a scheduler: users who arrive (all at once, or in phases), fetch pages and think
//! between them. User slot `u` owns connections `2u` (main requests) and `2u + 1`; a page's
//! embedded resources go over both, each connection taking the next one when it is free, as a
//! browser with two connections does. Pure: it is told when connections are free and answers
//! with the requests to send; the worker does the sockets.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use hdrhistogram::Histogram;

use super::pages::SessionsShared;
use super::random::Rng;
use super::session::{Arrivals, Qos};
use super::{Action, Actions, Ended, Scheduler, Send, Window};
use crate::stats::latency;

struct User {
    session_type: usize,
    page: usize,
    page_started_us: u64,
    page_bytes: u64,
    page_failed: bool,
    main_done: bool,
    next_embedded: usize,
    /// The page began inside the measured interval.
    measured: bool,
}

/// One page type's figures on one thread.
pub struct PageStats {
    pub count: u64,
    pub errors: u64,
    pub bytes_in: u64,
    pub page_time: Histogram<u64>,
    pub good: u64,
    pub tolerable: u64,
    pub fail: u64,
}

pub struct SessionsOutcome {
    /// In the order of the plan's pages, type after type.
    pub pages: Vec<PageStats>,
    pub users_started: u64,
    pub users_completed: u64,
    pub users_dropped: u64,
    pub not_modified: u64,
}

/// What one thread's share of the sessions is.
pub struct UsersSetup {
    pub index: usize,
    pub connections: usize,
    /// A fixed number of users (none when they arrive in phases).
    pub users: usize,
    /// This thread's share of each arrival rate.
    pub arrival_share: f64,
}

/// One thread's users.
pub struct Users {
    shared: Arc<SessionsShared>,
    window: Window,
    slots: Vec<Option<User>>,
    free: Vec<usize>,
    max_slots: usize,
    /// Connections with a request in flight, by index.
    in_flight: Vec<bool>,
    /// (when, slot): users thinking until then.
    thinking: BinaryHeap<Reverse<(u64, usize)>>,
    arrivals: Option<Arrivals>,
    initial_users: usize,
    rng: Rng,
    outcome: SessionsOutcome,
}

impl Users {
    pub fn new(shared: Arc<SessionsShared>, setup: &UsersSetup, window: Window) -> Users {
        let seed = shared.plan.seed.wrapping_mul(0x2545_F491_4F6C_DD1D).wrapping_add(setup.index as u64);
        let arrivals = shared
            .plan
            .phases
            .as_ref()
            .map(|p| Arrivals::new(window.start_us, p, setup.arrival_share, Rng::new(seed ^ 0xA5A5)));
        let page_count = shared.pages.iter().map(Vec::len).sum();
        let pages = (0..page_count)
            .map(|_| PageStats {
                count: 0,
                errors: 0,
                bytes_in: 0,
                page_time: latency::new_histogram(),
                good: 0,
                tolerable: 0,
                fail: 0,
            })
            .collect();
        Users {
            shared,
            window,
            slots: Vec::new(),
            free: Vec::new(),
            max_slots: setup.connections / 2,
            in_flight: Vec::new(),
            thinking: BinaryHeap::new(),
            arrivals,
            initial_users: setup.users,
            rng: Rng::new(seed),
            outcome: SessionsOutcome { pages, users_started: 0, users_completed: 0, users_dropped: 0, not_modified: 0 },
        }
    }

    pub fn outcome(self) -> SessionsOutcome {
        self.outcome
    }

    fn user(&mut self, slot: usize) -> &mut User {
        self.slots[slot].as_mut().expect("an active user")
    }

    fn send(&mut self, conn: usize, request: usize, now_us: u64, actions: &mut Actions) {
        self.in_flight[conn] = true;
        let measured = self.window.measures(now_us);
        actions.push_back(Action::Send(Send { conn, request, intended_us: now_us, measured, on_schedule: false }));
    }

    fn arrive(&mut self, now_us: u64, actions: &mut Actions) {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None if self.slots.len() < self.max_slots => {
                self.slots.push(None);
                self.in_flight.extend([false, false]);
                self.slots.len() - 1
            }
            None => {
                self.outcome.users_dropped += 1;
                return;
            }
        };
        self.start_session(slot, now_us, actions);
    }

    fn start_session(&mut self, slot: usize, now_us: u64, actions: &mut Actions) {
        let session_type = self.shared.session_types.pick(self.rng.unit());
        self.outcome.users_started += 1;
        self.slots[slot] = Some(User {
            session_type,
            page: 0,
            page_started_us: now_us,
            page_bytes: 0,
            page_failed: false,
            main_done: false,
            next_embedded: 0,
            measured: false,
        });
        self.start_page(slot, now_us, actions);
    }

    fn start_page(&mut self, slot: usize, now_us: u64, actions: &mut Actions) {
        let measured = self.window.measures(now_us);
        let user = self.user(slot);
        user.page_started_us = now_us;
        user.page_bytes = 0;
        user.page_failed = false;
        user.main_done = false;
        user.next_embedded = 0;
        user.measured = measured;
        let (session_type, page) = (user.session_type, user.page);
        let main = self.shared.pages[session_type][page].main;
        self.send(2 * slot, main, now_us, actions);
    }

    /// Send the page's next embedded resource on `conn`, if one is left.
    fn next_embedded(&mut self, conn: usize, now_us: u64, actions: &mut Actions) {
        let user = self.user(conn / 2);
        let (session_type, page, k) = (user.session_type, user.page, user.next_embedded);
        let Some(&(plain, revalidating)) = self.shared.pages[session_type][page].embedded.get(k) else {
            return;
        };
        self.user(conn / 2).next_embedded += 1;
        let request = if self.rng.unit() < self.shared.plan.if_modified_since_share { revalidating } else { plain };
        self.send(conn, request, now_us, actions);
    }

    fn finish_page(&mut self, slot: usize, now_us: u64, actions: &mut Actions) {
        let shared = &self.shared;
        let user = self.slots[slot].as_mut().expect("an active user");
        let session = &shared.plan.types[user.session_type];
        let page = &session.pages[user.page];
        if user.measured && now_us < self.window.measure_end_us {
            let page_time_us = now_us - user.page_started_us;
            let stats = &mut self.outcome.pages[shared.page_offsets[user.session_type] + user.page];
            stats.count += 1;
            stats.errors += u64::from(user.page_failed);
            stats.bytes_in += user.page_bytes;
            latency::record(&mut stats.page_time, page_time_us);
            match shared.plan.qos.classify(page_time_us, user.page_bytes, page.download, user.page_failed) {
                Qos::Good => stats.good += 1,
                Qos::Tolerable => stats.tolerable += 1,
                Qos::Fail => stats.fail += 1,
            }
        }
        if user.page + 1 < session.pages.len() {
            let think_us = session.think.draw_us(&mut self.rng);
            self.thinking.push(Reverse((now_us + think_us, slot)));
            return;
        }
        self.outcome.users_completed += 1;
        if self.arrivals.is_none() {
            return self.start_session(slot, now_us, actions);
        }
        self.slots[slot] = None;
        self.free.push(slot);
        actions.extend([Action::Close(2 * slot), Action::Close(2 * slot + 1)]);
    }
}

impl Scheduler for Users {
    /// A fixed number of users starts at once.
    fn start(&mut self, now_us: u64, actions: &mut Actions) {
        for _ in 0..self.initial_users {
            self.arrive(now_us, actions);
        }
    }

    /// A request of user `conn / 2` ended: go on with the page, or finish it.
    fn on_free(&mut self, conn: usize, now_us: u64, ended: Ended, actions: &mut Actions) {
        let slot = conn / 2;
        self.in_flight[conn] = false;
        if ended.counted && matches!(ended.outcome, Ok(head) if head.status == 304) {
            self.outcome.not_modified += 1;
        }
        let user = self.user(slot);
        user.page_bytes += ended.bytes_in;
        // SPECweb2005 fails a page whose response is an error, not only one whose request broke.
        user.page_failed |= ended.outcome.map_or(true, |head| head.status >= 400);
        if user.main_done {
            self.next_embedded(conn, now_us, actions);
        } else {
            user.main_done = true;
            self.next_embedded(2 * slot, now_us, actions);
            self.next_embedded(2 * slot + 1, now_us, actions);
        }
        if !self.in_flight[2 * slot] && !self.in_flight[2 * slot + 1] {
            self.finish_page(slot, now_us, actions);
        }
    }

    /// Users whose arrival or think time is due.
    fn due(&mut self, now_us: u64, actions: &mut Actions) {
        loop {
            if let Some(&Reverse((_, slot))) = self.thinking.peek().filter(|Reverse((due, _))| *due <= now_us) {
                self.thinking.pop();
                self.user(slot).page += 1;
                self.start_page(slot, now_us, actions);
            } else if self.arrivals.as_ref().and_then(Arrivals::next_due_us).is_some_and(|due| due <= now_us) {
                self.arrivals.as_mut().map(Arrivals::advance);
                self.arrive(now_us, actions);
            } else {
                return;
            }
        }
    }

    /// The next arrival or end of a think time.
    fn next_due_us(&self) -> Option<u64> {
        let thinking = self.thinking.peek().map(|Reverse((due, _))| *due);
        let arriving = self.arrivals.as_ref().and_then(Arrivals::next_due_us);
        thinking.into_iter().chain(arriving).min().filter(|&due| due < self.window.run_end_us)
    }

    fn exhausted(&self) -> bool {
        false
    }

    fn record_unsent(&self, _end_us: u64, _latency: &mut Histogram<u64>) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::super::session::SessionsPlan;
    use super::super::table::{drain, send, OK};
    use super::*;
    use crate::plan::Plan;

    fn users(json: &str) -> Users {
        let plan = Plan::from_json(&format!(
            r#"{{"url": "http://127.0.0.1:8080/", "connections": 4, "duration_us": 1000000, "sessions": {json}}}"#
        ))
        .unwrap();
        let target = plan.resolve().unwrap();
        let mut requests = Vec::new();
        let sessions: SessionsPlan = plan.sessions.clone().unwrap();
        let shared = super::super::pages::encode_pages(&plan, &target, sessions, &mut requests).unwrap();
        let window = Window { start_us: 0, measure_start_us: 0, measure_end_us: 10_000_000, run_end_us: 10_000_000 };
        Users::new(Arc::new(shared), &UsersSetup { index: 0, connections: 4, users: 1, arrival_share: 1.0 }, window)
    }

    #[test]
    fn a_page_then_its_resources_over_two_connections_then_a_think() {
        // One user, one page with three embedded resources, then a second page after 500 µs.
        let mut users = users(
            r#"{"users": 1, "types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 500},
               "pages": [{"name": "a", "path": "/a", "embedded": ["/x", "/y", "/z"]}, {"name": "b", "path": "/b"}]}]}"#,
        );
        let mut actions = Actions::new();
        users.start(0, &mut actions);
        // Requests: 0 = /a, 1/2 = /x plain/revalidating, 3/4 = /y, 5/6 = /z, 7 = /b.
        let steps: [(usize, u64, Vec<Action>); 4] = [
            (0, 10, vec![send(0, 1, 10, true, false), send(1, 3, 10, true, false)]),
            (1, 20, vec![send(1, 5, 20, true, false)]),
            (0, 30, vec![]),
            (1, 40, vec![]),
        ];
        assert_eq!(drain(&mut actions), [send(0, 0, 0, true, false)]);
        for (conn, now_us, expected) in steps {
            users.on_free(conn, now_us, OK, &mut actions);
            assert_eq!(drain(&mut actions), expected, "conn {conn} free at {now_us}");
        }
        assert_eq!(users.next_due_us(), Some(540));
        users.due(539, &mut actions);
        assert!(actions.is_empty());
        users.due(540, &mut actions);
        assert_eq!(drain(&mut actions), [send(0, 7, 540, true, false)]);
        let outcome = users.outcome();
        assert_eq!((outcome.pages[0].count, outcome.pages[0].bytes_in, outcome.users_started), (1, 400, 1));
    }
}
