//! Users and their sessions, driven over the worker's connections. User slot `u` owns
//! connections `2u` (main requests) and `2u + 1`; a page's embedded resources go over both, each
//! connection taking the next one when it is free, as a browser with two connections does.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use hdrhistogram::Histogram;

use super::{Worker, WorkerSetup};
use crate::conn::{Conn, Outcome, Phase};
use crate::plan::{Plan, PlanError, Target};
use crate::request::{EncodedRequest, IF_MODIFIED_SINCE};
use crate::schedule::session::{Arrivals, Qos, Rng, SessionsPlan, WeightedChoice};
use crate::stats::error::ErrorKind;
use crate::stats::latency;

/// Indices into the run's encoded requests for one page.
pub struct PageRequests {
    pub main: usize,
    /// (plain, revalidating with If-Modified-Since) for each embedded resource.
    pub embedded: Vec<(usize, usize)>,
}

/// The sessions plan with its requests encoded, shared by every thread.
pub struct SessionsShared {
    pub plan: SessionsPlan,
    /// Per session type, per page.
    pub pages: Vec<Vec<PageRequests>>,
    session_types: WeightedChoice,
    /// Where each type's pages start in the flat list of page types.
    page_offsets: Vec<usize>,
}

/// Encode every request the sessions can make, appended to `requests`.
pub fn encode_pages(
    plan: &Plan,
    target: &Target,
    sessions: SessionsPlan,
    requests: &mut Vec<EncodedRequest>,
) -> Result<SessionsShared, PlanError> {
    let mut push = |path: &str, header| -> Result<usize, PlanError> {
        requests.push(EncodedRequest::for_path(plan, target, path, header)?);
        Ok(requests.len() - 1)
    };
    let mut pages = Vec::new();
    for session in &sessions.types {
        let mut encoded = Vec::new();
        for page in &session.pages {
            let main = push(&page.path, None)?;
            let embedded = page
                .embedded
                .iter()
                .map(|path| Ok((push(path, None)?, push(path, Some(IF_MODIFIED_SINCE))?)))
                .collect::<Result<_, PlanError>>()?;
            encoded.push(PageRequests { main, embedded });
        }
        pages.push(encoded);
    }
    let session_types = WeightedChoice::new(sessions.types.iter().map(|t| t.weight));
    let page_offsets = sessions
        .types
        .iter()
        .scan(0, |offset, t| {
            let first = *offset;
            *offset += t.pages.len();
            Some(first)
        })
        .collect();
    Ok(SessionsShared { plan: sessions, pages, session_types, page_offsets })
}

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

impl PageStats {
    /// One per page type of the plan, empty.
    fn for_pages(page_count: usize) -> Vec<PageStats> {
        (0..page_count)
            .map(|_| PageStats {
                count: 0,
                errors: 0,
                bytes_in: 0,
                page_time: latency::new_histogram(),
                good: 0,
                tolerable: 0,
                fail: 0,
            })
            .collect()
    }

    fn record(&mut self, page_time_us: u64, bytes: u64, failed: bool, qos: Qos) {
        self.count += 1;
        self.errors += u64::from(failed);
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

/// One thread's users.
pub struct Users {
    slots: Vec<Option<User>>,
    free: Vec<usize>,
    max_slots: usize,
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
    pub fn new(shared: &SessionsShared, setup: &WorkerSetup, start_us: u64) -> Users {
        let seed = shared.plan.seed.wrapping_mul(0x2545_F491_4F6C_DD1D).wrapping_add(setup.index as u64);
        let arrivals = shared
            .plan
            .phases
            .as_ref()
            .map(|p| Arrivals::new(start_us, p, setup.arrival_share, Rng::new(seed ^ 0xA5A5)));
        let page_count = shared.pages.iter().map(Vec::len).sum();
        let phase_ends_us: Vec<u64> = shared
            .plan
            .phases
            .iter()
            .flatten()
            .scan(start_us, |end_us, phase| {
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
        Users {
            slots: Vec::new(),
            free: Vec::new(),
            max_slots: setup.connections / 2,
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

    /// The next arrival or end of a think time.
    pub fn next_due_us(&self) -> Option<u64> {
        let thinking = self.thinking.peek().map(|Reverse((due, _))| *due);
        let arriving = self.arrivals.as_ref().and_then(Arrivals::next_due_us);
        thinking.into_iter().chain(arriving).min()
    }

    pub fn bytes_in(&mut self, conn: usize, bytes: u64) {
        if let Some(user) = self.slots[conn / 2].as_mut() {
            user.page_bytes += bytes;
        }
    }

    pub fn outcome(self) -> SessionsOutcome {
        self.outcome
    }
}

impl Worker {
    fn users_mut(&mut self) -> &mut Users {
        self.users.as_mut().expect("session mode")
    }

    fn sessions(&self) -> &SessionsShared {
        self.shared.sessions.as_ref().expect("session mode")
    }

    fn user(&mut self, slot: usize) -> &mut User {
        self.users_mut().slots[slot].as_mut().expect("an active user")
    }

    /// A fixed number of users starts at once.
    pub(super) fn start_users(&mut self, now: u64) {
        for _ in 0..self.users.as_ref().map_or(0, |u| u.initial_users) {
            self.arrive(now);
        }
    }

    /// Users whose arrival or think time is due.
    pub(super) fn wake_users(&mut self, now: u64) {
        loop {
            let Some(users) = self.users.as_mut() else { return };
            if let Some(&Reverse((due, slot))) = users.thinking.peek().filter(|Reverse((due, _))| *due <= now) {
                debug_assert!(due <= now);
                users.thinking.pop();
                self.user(slot).page += 1;
                self.start_page(slot, now);
            } else if users.arrivals.as_ref().and_then(Arrivals::next_due_us).is_some_and(|due| due <= now) {
                users.arrivals.as_mut().map(Arrivals::advance);
                self.arrive(now);
            } else {
                return;
            }
        }
    }

    fn arrive(&mut self, now: u64) {
        let counted = self.measured_at(now);
        let users = self.users.as_mut().expect("session mode");
        let slot = match users.free.pop() {
            Some(slot) => slot,
            None if users.slots.len() < users.max_slots => {
                users.slots.push(None);
                self.conns.push(Conn::new());
                self.conns.push(Conn::new());
                users.slots.len() - 1
            }
            None => {
                users.outcome.users_dropped += 1;
                if let Some(phase) = users.phase_at(now) {
                    phase.users_dropped += 1;
                }
                self.recorder.user_dropped(counted);
                return;
            }
        };
        self.start_session(slot, now);
    }

    fn start_session(&mut self, slot: usize, now: u64) {
        let session_types = &self.shared.sessions.as_ref().expect("session mode").session_types;
        let users = self.users.as_mut().expect("session mode");
        let session_type = session_types.pick(users.rng.unit());
        users.outcome.users_started += 1;
        if let Some(phase) = users.phase_at(now) {
            phase.users_arrived += 1;
        }
        let counted = now >= self.measure_start_us && now < self.measure_end_us;
        self.recorder.user_arrived(counted);
        users.slots[slot] = Some(User {
            session_type,
            page: 0,
            page_started_us: now,
            page_bytes: 0,
            page_failed: false,
            main_done: false,
            next_embedded: 0,
            measured: false,
        });
        self.start_page(slot, now);
    }

    fn measured_at(&self, now: u64) -> bool {
        now >= self.measure_start_us && now < self.measure_end_us
    }

    fn start_page(&mut self, slot: usize, now: u64) {
        let measured = self.measured_at(now);
        let user = self.user(slot);
        user.page_started_us = now;
        user.page_bytes = 0;
        user.page_failed = false;
        user.main_done = false;
        user.next_embedded = 0;
        user.measured = measured;
        let (session_type, page) = (user.session_type, user.page);
        let main = self.sessions().pages[session_type][page].main;
        if let Err(e) = self.begin(2 * slot, now, now, measured, main) {
            self.count(2 * slot, now, Err(ErrorKind::of_connect(&e)));
            self.next_in_session(2 * slot, now, Some(Err(ErrorKind::of_connect(&e))));
        }
    }

    /// A request of user `conn / 2` ended: go on with the page, or finish it.
    pub(super) fn next_in_session(&mut self, conn: usize, now: u64, outcome: Option<Outcome>) {
        let slot = conn / 2;
        self.busy -= usize::from(self.conns[conn].is_busy());
        self.conns[conn].phase = Phase::Idle;
        let counted = self.conns[conn].measured && now < self.measure_end_us;
        if counted && matches!(outcome, Some(Ok(head)) if head.status == 304) {
            self.users_mut().outcome.not_modified += 1;
        }
        let user = self.user(slot);
        // SPECweb2005 fails a page whose response is an error, not only one whose request broke.
        user.page_failed |= match outcome {
            Some(Ok(head)) => head.status >= 400,
            Some(Err(_)) => true,
            None => false,
        };
        if user.main_done {
            self.next_embedded(conn, now);
        } else {
            user.main_done = true;
            self.next_embedded(2 * slot, now);
            self.next_embedded(2 * slot + 1, now);
        }
        let both_free = !self.conns[2 * slot].is_busy() && !self.conns[2 * slot + 1].is_busy();
        if both_free && self.users.as_ref().is_some_and(|u| u.slots[slot].is_some()) {
            self.finish_page(slot, now);
        }
    }

    /// Send the page's next embedded resource on `conn`, if one is left.
    fn next_embedded(&mut self, conn: usize, now: u64) {
        let slot = conn / 2;
        let share = self.sessions().plan.if_modified_since_share;
        loop {
            let user = self.user(slot);
            let (session_type, page, k) = (user.session_type, user.page, user.next_embedded);
            let Some(&(plain, revalidating)) = self.sessions().pages[session_type][page].embedded.get(k) else {
                return;
            };
            self.user(slot).next_embedded += 1;
            let request = if self.users_mut().rng.unit() < share { revalidating } else { plain };
            let measured = now >= self.measure_start_us && now < self.measure_end_us;
            match self.begin(conn, now, now, measured, request) {
                Ok(()) => return,
                Err(e) => {
                    self.count(conn, now, Err(ErrorKind::of_connect(&e)));
                    self.user(slot).page_failed = true;
                }
            }
        }
    }

    fn finish_page(&mut self, slot: usize, now: u64) {
        let measure_end_us = self.measure_end_us;
        let sessions = self.shared.sessions.as_ref().expect("session mode");
        let users = self.users.as_mut().expect("session mode");
        let user = users.slots[slot].as_mut().expect("an active user");
        let session = &sessions.plan.types[user.session_type];
        let page = &session.pages[user.page];
        if user.measured && now < measure_end_us {
            let page_time_us = now - user.page_started_us;
            let (bytes, failed) = (user.page_bytes, user.page_failed);
            let qos = sessions.plan.qos.classify(page_time_us, bytes, page.download, failed);
            let index = sessions.page_offsets[user.session_type] + user.page;
            users.outcome.pages[index].record(page_time_us, bytes, failed, qos);
            let page_started_us = user.page_started_us;
            if let Some(phase) = users.phase_at(page_started_us) {
                phase.pages[index].record(page_time_us, bytes, failed, qos);
            }
            self.recorder.page(failed);
        }
        let user = users.slots[slot].as_ref().expect("an active user");
        if user.page + 1 < session.pages.len() {
            let think_us = session.think.draw_us(&mut users.rng);
            users.thinking.push(Reverse((now + think_us, slot)));
            return;
        }
        users.outcome.users_completed += 1;
        if let Some(phase) = users.phase_at(now) {
            phase.users_finished += 1;
        }
        self.recorder.user_finished(now >= self.measure_start_us && now < measure_end_us);
        if users.arrivals.is_none() {
            return self.start_session(slot, now);
        }
        users.slots[slot] = None;
        users.free.push(slot);
        for conn in [2 * slot, 2 * slot + 1] {
            self.conns[conn].disconnect();
            self.conns[conn].phase = Phase::Closed;
        }
    }
}
