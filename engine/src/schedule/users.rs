//! Sessions as a scheduler: users who arrive (all at once, or in phases), fetch pages and think
//! between them, walking from page to page in order or by the session type's transition table.
//! User slot `u` owns `k` connections from `k * u` (k = 2, or 4 when some pages are https): a
//! pair per target, the first of a pair for main requests; a page's embedded resources go over
//! both of its pair, each connection taking the next one when it is free, as a browser with two
//! connections does. Each user keeps a cookie jar for its session, shared by its connections.
//! Pure: it is told when connections are free and answers with the requests to send and the
//! users and pages to count in the timeline; the worker does the sockets and the counting. Each
//! thread also counts its users and pages per arrival phase.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use hdrhistogram::Histogram;

use super::pages::SessionsShared;
use super::session::Arrivals;
use super::{Action, Actions, Ended, Scheduler, Send, Window};
use crate::cookies::CookieJar;
use crate::plan::sessions::Qos;
use crate::random::Rng;
use crate::stats::error::ErrorKind;
use crate::stats::latency;
use crate::stats::SessionEvent;

struct User {
    session_type: usize,
    page: usize,
    page_started_us: u64,
    page_bytes: u64,
    page_failed: bool,
    /// The page's own response failed its check (status or content marker).
    page_invalid: bool,
    main_done: bool,
    next_embedded: usize,
    /// The page under way began inside the measured interval and is not counted yet.
    measured: bool,
    /// The page under way began before the measured interval (in the ramp-up or warm-up): it counts
    /// when it ends inside the interval, or is still under way at its end past TOLERABLE (a user
    /// stuck since the warm-up on a server that stopped answering is a FAIL, not unseen).
    carried: bool,
    /// The first of the page's pair of connections.
    main_conn: usize,
}

/// One page type's figures on one thread.
pub struct PageStats {
    pub count: u64,
    pub errors: u64,
    pub invalid: u64,
    pub bytes_in: u64,
    pub page_time: Histogram<u64>,
    pub good: u64,
    pub tolerable: u64,
    pub fail: u64,
}

impl PageStats {
    /// One per page type of the plan, empty.
    fn for_pages(page_count: usize) -> Vec<PageStats> {
        (0..page_count)
            .map(|_| PageStats {
                count: 0,
                errors: 0,
                invalid: 0,
                bytes_in: 0,
                page_time: latency::new_histogram(),
                good: 0,
                tolerable: 0,
                fail: 0,
            })
            .collect()
    }

    fn record(&mut self, page_time_us: u64, bytes: u64, (failed, invalid): (bool, bool), qos: Qos) {
        self.count += 1;
        self.errors += u64::from(failed);
        self.invalid += u64::from(invalid);
        self.bytes_in += bytes;
        latency::record(&mut self.page_time, page_time_us);
        match qos {
            Qos::Good => self.good += 1,
            Qos::Tolerable => self.tolerable += 1,
            Qos::Fail => self.fail += 1,
        }
    }
}

/// What happened in one arrival phase on one thread: users by the time they arrived, were
/// dropped or finished; measured pages by the time they began.
pub struct PhaseOutcome {
    pub users_arrived: u64,
    pub users_finished: u64,
    pub users_dropped: u64,
    pub pages: Vec<PageStats>,
}

pub struct SessionsOutcome {
    /// In the order of the plan's pages, type after type.
    pub pages: Vec<PageStats>,
    pub users_started: u64,
    pub users_completed: u64,
    pub users_dropped: u64,
    pub not_modified: u64,
    /// One per arrival phase; empty with a fixed number of users.
    pub phases: Vec<PhaseOutcome>,
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
    /// Per slot, its session's cookies (kept across sessions for the buffer, cleared at each start).
    jars: Vec<CookieJar>,
    free: Vec<usize>,
    max_slots: usize,
    /// Connections with a request in flight, by index.
    in_flight: Vec<bool>,
    /// (when, slot): users thinking until then.
    thinking: BinaryHeap<Reverse<(u64, usize)>>,
    arrivals: Option<Arrivals>,
    initial_users: usize,
    /// When each arrival phase ends.
    phase_ends_us: Vec<u64>,
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
        let phase_ends_us: Vec<u64> = shared
            .plan
            .phases
            .iter()
            .flatten()
            .scan(window.start_us, |end_us, phase| {
                *end_us += phase.duration_us;
                Some(*end_us)
            })
            .collect();
        let phases = phase_ends_us
            .iter()
            .map(|_| PhaseOutcome {
                users_arrived: 0,
                users_finished: 0,
                users_dropped: 0,
                pages: PageStats::for_pages(page_count),
            })
            .collect();
        let per_user = shared.connections_per_user;
        Users {
            shared,
            window,
            slots: Vec::new(),
            jars: Vec::new(),
            free: Vec::new(),
            max_slots: setup.connections / per_user,
            in_flight: Vec::new(),
            thinking: BinaryHeap::new(),
            arrivals,
            initial_users: setup.users,
            phase_ends_us,
            rng: Rng::new(seed),
            outcome: SessionsOutcome {
                pages: PageStats::for_pages(page_count),
                users_started: 0,
                users_completed: 0,
                users_dropped: 0,
                not_modified: 0,
                phases,
            },
        }
    }

    /// The arrival phase under way at `at_us`; None without phases or after the last one.
    fn phase_at(&mut self, at_us: u64) -> Option<&mut PhaseOutcome> {
        let index = self.phase_ends_us.partition_point(|&end_us| end_us <= at_us);
        self.outcome.phases.get_mut(index)
    }

    /// The figures; pages still under way at the run's end that can only be FAIL count as FAIL, with
    /// their time so far (a lower bound).
    pub fn outcome(mut self) -> SessionsOutcome {
        let end_us = self.window.run_end_us;
        for slot in 0..self.slots.len() {
            if self.slots[slot].as_ref().is_some_and(|user| (user.measured || user.carried) && self.overdue(user)) {
                self.count_page(slot, end_us);
            }
        }
        self.outcome
    }

    /// A measured page still under way when the measured interval ended, already as slow as
    /// TOLERABLE allows: whenever it ends it is a FAIL (SPECweb counts it so; leaving it out would
    /// call an overloaded server valid). A download's class depends on its byte rate, unknown until
    /// it ends, so an unfinished download stays uncounted.
    fn overdue(&self, user: &User) -> bool {
        let session = &self.shared.plan.types[user.session_type];
        !session.pages[user.page].download
            && self.window.measure_end_us.saturating_sub(user.page_started_us) >= self.shared.plan.qos.tolerable_us
    }

    /// Counts the slot's measured page as ended at `now_us`, in its page type and arrival phase.
    fn count_page(&mut self, slot: usize, now_us: u64) {
        let user = self.slots[slot].as_mut().expect("an active user");
        user.measured = false;
        user.carried = false;
        let page_time_us = now_us - user.page_started_us;
        let (bytes, failed, page_started_us) = (user.page_bytes, user.page_failed, user.page_started_us);
        let checks = (failed, user.page_invalid);
        let download = self.shared.plan.types[user.session_type].pages[user.page].download;
        let qos = self.shared.plan.qos.classify(page_time_us, bytes, download, failed);
        let index = self.shared.page_offsets[user.session_type] + user.page;
        self.outcome.pages[index].record(page_time_us, bytes, checks, qos);
        if let Some(phase) = self.phase_at(page_started_us) {
            phase.pages[index].record(page_time_us, bytes, checks, qos);
        }
    }

    /// Connections each user holds: a pair per target.
    fn per_user(&self) -> usize {
        self.shared.connections_per_user
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
                self.jars.push(CookieJar::default());
                self.in_flight.resize(self.in_flight.len() + self.per_user(), false);
                self.slots.len() - 1
            }
            None => {
                self.outcome.users_dropped += 1;
                if let Some(phase) = self.phase_at(now_us) {
                    phase.users_dropped += 1;
                }
                let counted = self.window.measures(now_us);
                actions.push_back(Action::Count(SessionEvent::Dropped { counted }));
                return;
            }
        };
        self.start_session(slot, now_us, actions);
    }

    fn start_session(&mut self, slot: usize, now_us: u64, actions: &mut Actions) {
        let session_type = self.shared.session_types.pick(self.rng.unit());
        self.outcome.users_started += 1;
        if let Some(phase) = self.phase_at(now_us) {
            phase.users_arrived += 1;
        }
        let counted = self.window.measures(now_us);
        actions.push_back(Action::Count(SessionEvent::Arrived { counted }));
        self.jars[slot].clear();
        self.slots[slot] = Some(User {
            session_type,
            page: self.shared.walks[session_type].first(),
            page_started_us: now_us,
            page_bytes: 0,
            page_failed: false,
            page_invalid: false,
            main_done: false,
            next_embedded: 0,
            measured: false,
            carried: false,
            main_conn: 0,
        });
        self.start_page(slot, now_us, actions);
    }

    fn start_page(&mut self, slot: usize, now_us: u64, actions: &mut Actions) {
        let measured = self.window.measures(now_us);
        let carried = now_us < self.window.measure_start_us;
        let shared = Arc::clone(&self.shared);
        let first_conn = self.per_user() * slot;
        let user = self.user(slot);
        let requests = &shared.pages[user.session_type][user.page];
        user.page_started_us = now_us;
        user.page_bytes = 0;
        user.page_failed = false;
        user.page_invalid = false;
        user.main_done = false;
        user.next_embedded = 0;
        user.measured = measured;
        user.carried = carried;
        user.main_conn = first_conn + if requests.https { 2 } else { 0 };
        let main_conn = user.main_conn;
        self.send(main_conn, requests.main, now_us, actions);
    }

    /// Send the page's next embedded resource on `conn`, if one is left.
    fn next_embedded(&mut self, conn: usize, now_us: u64, actions: &mut Actions) {
        let slot = conn / self.per_user();
        let user = self.user(slot);
        let (session_type, page, k) = (user.session_type, user.page, user.next_embedded);
        let Some(&(plain, revalidating)) = self.shared.pages[session_type][page].embedded.get(k) else {
            return;
        };
        self.user(slot).next_embedded += 1;
        let request = if self.rng.unit() < self.shared.plan.if_modified_since_share { revalidating } else { plain };
        self.send(conn, request, now_us, actions);
    }

    fn finish_page(&mut self, slot: usize, now_us: u64, actions: &mut Actions) {
        let user = self.slots[slot].as_ref().expect("an active user");
        let session = &self.shared.plan.types[user.session_type];
        let (think, session_type, page, failed) = (session.think, user.session_type, user.page, user.page_failed);
        let ended_inside =
            (user.measured && now_us < self.window.measure_end_us) || (user.carried && self.window.measures(now_us));
        if ended_inside {
            self.count_page(slot, now_us);
            actions.push_back(Action::Count(SessionEvent::Page { failed }));
        } else if (user.measured || user.carried) && now_us >= self.window.measure_end_us && self.overdue(user) {
            self.count_page(slot, now_us);
        }
        let user = self.user(slot);
        (user.measured, user.carried) = (false, false);
        if let Some(next) = self.shared.walks[session_type].next(page, &mut self.rng) {
            self.user(slot).page = next;
            let think_us = think.draw_us(&mut self.rng);
            self.thinking.push(Reverse((now_us + think_us, slot)));
            return;
        }
        self.outcome.users_completed += 1;
        if let Some(phase) = self.phase_at(now_us) {
            phase.users_finished += 1;
        }
        let counted = self.window.measures(now_us);
        actions.push_back(Action::Count(SessionEvent::Finished { counted }));
        if self.arrivals.is_none() {
            return self.start_session(slot, now_us, actions);
        }
        self.slots[slot] = None;
        self.free.push(slot);
        actions.extend((self.per_user() * slot..self.per_user() * (slot + 1)).map(Action::Close));
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
        let slot = conn / self.per_user();
        self.in_flight[conn] = false;
        if ended.counted && matches!(ended.outcome, Ok(head) if head.status == 304) {
            self.outcome.not_modified += 1;
        }
        let user = self.user(slot);
        user.page_bytes += ended.bytes_in;
        // SPECweb2005 fails a page whose response is an error, not only one whose request broke.
        user.page_failed |= ended.outcome.map_or(true, |head| head.status >= 400);
        if !user.main_done {
            user.page_invalid = match ended.outcome {
                Ok(head) => head.status >= 400,
                Err(kind) => kind == ErrorKind::Content,
            };
        }
        let main_conn = user.main_conn;
        if user.main_done {
            self.next_embedded(conn, now_us, actions);
        } else {
            user.main_done = true;
            self.next_embedded(main_conn, now_us, actions);
            self.next_embedded(main_conn + 1, now_us, actions);
        }
        if !self.in_flight[main_conn] && !self.in_flight[main_conn + 1] {
            self.finish_page(slot, now_us, actions);
        }
    }

    /// Users whose arrival or think time is due.
    fn due(&mut self, now_us: u64, actions: &mut Actions) {
        loop {
            if let Some(&Reverse((_, slot))) = self.thinking.peek().filter(|Reverse((due, _))| *due <= now_us) {
                self.thinking.pop();
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

    fn cookie(&self, conn: usize) -> &[u8] {
        self.jars[conn / self.per_user()].header_value()
    }

    fn store_cookies(&mut self, conn: usize, set_cookies: &[u8]) {
        let slot = conn / self.per_user();
        self.jars[slot].take_set_cookies(set_cookies);
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{drain, send, OK};
    use super::*;
    use crate::plan::sessions::SessionsPlan;
    use crate::plan::Plan;

    /// A thread's users of the plan's `json` sessions over `connections`, `fixed` of them at once,
    /// measured over the first 10 s.
    fn users(json: &str, connections: usize, fixed: usize) -> Users {
        users_in(json, connections, fixed, 0)
    }

    /// The same, measured from `measure_start_us` to 10 s.
    fn users_in(json: &str, connections: usize, fixed: usize, measure_start_us: u64) -> Users {
        let plan = Plan::from_json(&format!(
            r#"{{"url": "http://127.0.0.1:8080/", "connections": 4, "duration_us": 1000000, "sessions": {json}}}"#
        ))
        .unwrap();
        let (target, https) = (plan.resolve().unwrap(), plan.resolve_https().unwrap());
        let mut requests = Vec::new();
        let sessions: SessionsPlan = plan.sessions.clone().unwrap();
        let shared =
            super::super::pages::encode_pages(&plan, &target, https.as_ref(), sessions, &mut requests).unwrap();
        let window = Window { start_us: 0, measure_start_us, measure_end_us: 10_000_000, run_end_us: 10_000_000 };
        let setup = UsersSetup { index: 0, connections, users: fixed, arrival_share: 1.0 };
        Users::new(Arc::new(shared), &setup, window)
    }

    #[test]
    fn a_page_then_its_resources_over_two_connections_then_a_think() {
        // One user, one page with three embedded resources, then a second page after 500 µs.
        let mut users = users(
            r#"{"users": 1, "types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 500},
               "pages": [{"name": "a", "path": "/a", "embedded": ["/x", "/y", "/z"]}, {"name": "b", "path": "/b"}]}]}"#,
            4,
            1,
        );
        let mut actions = Actions::new();
        users.start(0, &mut actions);
        // Requests: 0 = /a, 1/2 = /x plain/revalidating, 3/4 = /y, 5/6 = /z, 7 = /b.
        let steps: [(usize, u64, Vec<Action>); 4] = [
            (0, 10, vec![send(0, 1, 10, true, false), send(1, 3, 10, true, false)]),
            (1, 20, vec![send(1, 5, 20, true, false)]),
            (0, 30, vec![]),
            (1, 40, vec![Action::Count(SessionEvent::Page { failed: false })]),
        ];
        assert_eq!(
            drain(&mut actions),
            [Action::Count(SessionEvent::Arrived { counted: true }), send(0, 0, 0, true, false)]
        );
        for (conn, now_us, expected) in steps {
            users.on_free(conn, now_us, OK, &mut actions);
            assert_eq!(drain(&mut actions), expected, "conn {conn} free at {now_us}");
        }
        assert_eq!(users.next_due_us(), Some(540));
        users.due(539, &mut actions);
        assert!(actions.is_empty());
        users.due(540, &mut actions);
        assert_eq!(drain(&mut actions), [send(0, 7, 540, true, false)]);
        // The last page ends the session; a fixed user begins the next one at once.
        users.on_free(0, 550, OK, &mut actions);
        let counts = [
            SessionEvent::Page { failed: false },
            SessionEvent::Finished { counted: true },
            SessionEvent::Arrived { counted: true },
        ];
        assert_eq!(
            drain(&mut actions),
            [counts.map(Action::Count).as_slice(), &[send(0, 0, 550, true, false)]].concat()
        );
        // The second session's page, begun at 550 µs, never ends: a FAIL once measuring ends at 10 s.
        let outcome = users.outcome();
        let page = &outcome.pages[0];
        assert_eq!((page.count, page.fail, page.bytes_in, outcome.users_started), (2, 1, 400, 2));
        assert!(outcome.phases.is_empty());
    }

    #[test]
    fn a_page_unfinished_when_measuring_ends_is_a_fail_once_it_is_past_tolerable() {
        // The measured interval ends at 10 s; TOLERABLE is 4 s. Each case: (the page starts at,
        // a download, pages counted, of which FAIL).
        let cases = [(0, false, 1, 1), (6_000_001, false, 0, 0), (6_000_000, false, 1, 1), (0, true, 0, 0)];
        for (start_us, download, count, fail) in cases {
            let mut users = users(
                &format!(
                    r#"{{"users": 1, "types": [{{"name": "t", "weight": 1, "think": {{"kind": "fixed", "mean_us": 0}},
                       "pages": [{{"name": "a", "path": "/a", "download": {download}}}]}}]}}"#
                ),
                2,
                1,
            );
            let mut actions = Actions::new();
            users.start(start_us, &mut actions);
            let page = &users.outcome().pages[0];
            let counted = (page.count, page.fail, page.good + page.tolerable);
            assert_eq!(counted, (count, fail, 0), "a page from {start_us} µs, download {download}");
            if count > 0 {
                assert!(page.page_time.equivalent(page.page_time.min(), 10_000_000 - start_us));
            }
        }
    }

    #[test]
    fn a_page_begun_in_the_warm_up_counts_if_it_ends_inside_the_interval_or_is_overdue_at_its_end() {
        // Measuring runs from 2 s to 10 s; TOLERABLE is 4 s. Each case: the page ends at (None:
        // never), pages counted, of which FAIL.
        let cases = [(Some(1_000_000), 0, 0), (Some(2_500_000), 1, 0), (Some(10_500_000), 1, 1), (None, 1, 1)];
        for (end_us, count, fail) in cases {
            let mut users = users_in(
                r#"{"users": 1, "types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 60000000},
                   "pages": [{"name": "a", "path": "/a"}, {"name": "b", "path": "/b"}]}]}"#,
                2,
                1,
                2_000_000,
            );
            let mut actions = Actions::new();
            users.start(500_000, &mut actions);
            if let Some(end_us) = end_us {
                users.on_free(0, end_us, OK, &mut actions);
            }
            let events = drain(&mut actions);
            let page = &users.outcome().pages[0];
            assert_eq!((page.count, page.fail), (count, fail), "a page from 0.5 s ending at {end_us:?}");
            let counted_live = events.contains(&Action::Count(SessionEvent::Page { failed: false }));
            assert_eq!(counted_live, end_us == Some(2_500_000), "the timeline counts a page that ends inside");
        }
    }

    #[test]
    fn a_slow_page_ending_after_the_interval_counts_once_as_a_fail() {
        let mut users = users(
            r#"{"users": 1, "types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 0},
               "pages": [{"name": "a", "path": "/a"}]}]}"#,
            2,
            1,
        );
        let mut actions = Actions::new();
        users.start(5_000_000, &mut actions);
        // Ends in the ramp-down, 6 s after it began: no timeline event, one FAIL; the next page
        // (begun after the interval) is not counted.
        users.on_free(0, 11_000_000, OK, &mut actions);
        assert!(!drain(&mut actions).contains(&Action::Count(SessionEvent::Page { failed: false })));
        let page = &users.outcome().pages[0];
        assert_eq!((page.count, page.fail), (1, 1));
    }

    #[test]
    fn users_past_the_cap_are_dropped_and_each_counts_in_the_phase_it_happened_in() {
        // One user at a time (two connections); arrivals at 1000/s, the first phase 5 ms long.
        let mut users = users(
            r#"{"phases": [{"users_per_s": 1000, "duration_us": 5000}, {"users_per_s": 1000, "duration_us": 1000000}],
               "types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 0},
               "pages": [{"name": "p", "path": "/p"}]}]}"#,
            2,
            0,
        );
        let mut actions = Actions::new();
        users.start(0, &mut actions);
        assert!(actions.is_empty());
        let first_us = users.next_due_us().unwrap();
        users.due(first_us, &mut actions);
        let arrived = Action::Count(SessionEvent::Arrived { counted: true });
        assert_eq!(drain(&mut actions), [arrived, send(0, 0, first_us, true, false)]);
        let second_us = users.next_due_us().unwrap();
        users.due(second_us, &mut actions);
        assert_eq!(drain(&mut actions), [Action::Count(SessionEvent::Dropped { counted: true })]);
        users.on_free(0, second_us + 1, OK, &mut actions);
        let ended = [SessionEvent::Page { failed: false }, SessionEvent::Finished { counted: true }].map(Action::Count);
        assert_eq!(drain(&mut actions), [ended.as_slice(), &[Action::Close(0), Action::Close(1)]].concat());
        // (arrived, finished, dropped) per phase; the page counts in the phase it began in.
        let phase = |at_us: u64| usize::from(at_us >= 5_000);
        let mut expected = [[0; 3]; 2];
        expected[phase(first_us)][0] += 1;
        expected[phase(second_us + 1)][1] += 1;
        expected[phase(second_us)][2] += 1;
        let outcome = users.outcome();
        let counted: Vec<[u64; 3]> =
            outcome.phases.iter().map(|p| [p.users_arrived, p.users_finished, p.users_dropped]).collect();
        assert_eq!(counted, expected);
        let pages: Vec<u64> = outcome.phases.iter().map(|p| p.pages[0].count).collect();
        assert_eq!((pages[phase(first_us)], pages.iter().sum::<u64>()), (1, 1));
    }

    #[test]
    fn https_pages_take_the_second_pair_and_cookies_last_one_session() {
        // Requests: 0 = /a, 1/2 = /x; 3 = /b (https), 4/5 = /y, 6/7 = /z.
        let mut users = users(
            r#"{"users": 1, "https_url": "https://127.0.0.1:8443/", "types": [{"name": "t", "weight": 1,
               "think": {"kind": "fixed", "mean_us": 0}, "pages": [{"name": "a", "path": "/a", "embedded": ["/x"]},
               {"name": "b", "path": "/b", "scheme": "https", "embedded": ["/y", "/z"]}]}]}"#,
            4,
            1,
        );
        let mut actions = Actions::new();
        users.start(0, &mut actions);
        assert_eq!(
            drain(&mut actions),
            [Action::Count(SessionEvent::Arrived { counted: true }), send(0, 0, 0, true, false)]
        );
        users.store_cookies(0, b"s=1; Path=/");
        users.on_free(0, 10, OK, &mut actions);
        assert_eq!(drain(&mut actions), [send(0, 1, 10, true, false)]);
        users.on_free(0, 20, OK, &mut actions);
        users.due(20, &mut actions);
        assert_eq!(
            drain(&mut actions),
            [Action::Count(SessionEvent::Page { failed: false }), send(2, 3, 20, true, false)]
        );
        assert_eq!((users.cookie(2), users.cookie(1)), (&b"s=1"[..], &b"s=1"[..]), "one jar for the user's four");
        users.on_free(2, 30, OK, &mut actions);
        assert_eq!(drain(&mut actions), [send(2, 4, 30, true, false), send(3, 6, 30, true, false)]);
        users.on_free(2, 40, OK, &mut actions);
        assert!(actions.is_empty(), "the page waits for its last resource");
        users.on_free(3, 50, OK, &mut actions);
        let counts = [
            SessionEvent::Page { failed: false },
            SessionEvent::Finished { counted: true },
            SessionEvent::Arrived { counted: true },
        ];
        assert_eq!(
            drain(&mut actions),
            [counts.map(Action::Count).as_slice(), &[send(0, 0, 50, true, false)]].concat()
        );
        assert!(users.cookie(0).is_empty(), "a new session starts with an empty jar");
    }
}
