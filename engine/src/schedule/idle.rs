//! Idle connections, the C10K load model: a thread of its own opens `IdlePlan::connections` beside
//! the measured ones and holds them open for the whole run, sending nothing, or one byte of a
//! request head that never ends every `send_interval_us` (slowloris). They are counted apart:
//! they never make a request, so they add no latency; what they cost the server shows in the
//! measured connections' latency and in the server's memory.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::clock::now_us;
use crate::conn::tcp;
use crate::plan::idle::IdlePlan;
use crate::stats::counts::sum_keyed;
use crate::stats::error::ErrorKind;

/// The longest sleep in poll, so that the end of the run is seen quickly.
const MAX_WAIT_US: u64 = 50_000;
/// After the request head's first lines, this header line repeats, a byte at a time.
const ENDLESS_HEADER: &[u8] = b"X-Idle: x\r\n";

/// What came of the idle connections.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdleResult {
    /// Idle connections asked for.
    pub connections: usize,
    /// Of them, connections that were established.
    pub opened: u64,
    /// Connections that failed to connect, by error kind (the names of `errors`).
    pub connect_errors: BTreeMap<String, u64>,
    /// Established connections the server closed or reset before the end.
    pub closed_by_server: u64,
    /// Connections still open when the run ended (while it runs: open now).
    pub open_at_end: u64,
    /// The most connections open at once.
    pub most_open: u64,
    /// Bytes written on them (0 without `send_interval_us`).
    pub bytes_out: u64,
}

impl IdleResult {
    /// The counts of several processes' idle connections, added.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a IdleResult>) -> IdleResult {
        let mut total = IdleResult::default();
        for part in parts {
            total.connections += part.connections;
            total.opened += part.opened;
            total.connect_errors = sum_keyed([&total.connect_errors, &part.connect_errors]);
            total.closed_by_server += part.closed_by_server;
            total.open_at_end += part.open_at_end;
            total.most_open += part.most_open;
            total.bytes_out += part.bytes_out;
        }
        total
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Connecting,
    Open,
    Gone,
}

struct Held {
    stream: TcpStream,
    state: State,
    /// Bytes of the endless request head written so far.
    written: usize,
}

/// The idle connections' thread; `finish` ends it and returns the counts.
pub struct IdleHolder {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<IdleResult>,
}

/// Where the idle connections go and what they send.
pub struct IdleTarget {
    pub address: SocketAddr,
    /// The request head's first lines ("GET /path HTTP/1.1\r\nHost: h\r\n").
    pub head: Vec<u8>,
    pub sources: Vec<IpAddr>,
}

impl IdleHolder {
    /// Start connecting every idle connection; returns once each connect has been started, so
    /// that the measured load begins beside them.
    pub fn start(plan: &IdlePlan, target: IdleTarget) -> io::Result<IdleHolder> {
        let stop = Arc::new(AtomicBool::new(false));
        let (plan, thread_stop, poll) = (plan.clone(), stop.clone(), Poll::new()?);
        let (started_tx, started_rx) = mpsc::channel();
        let thread = thread::Builder::new().name("gauntlet-idle".into()).spawn(move || {
            let (held, result) = open_all(&poll, &plan, &target);
            let _ = started_tx.send(());
            hold(poll, held, result, &plan, &target, &thread_stop)
        })?;
        // An error here means the thread panicked: `finish` passes the panic on.
        let _ = started_rx.recv();
        Ok(IdleHolder { stop, thread })
    }

    /// Close the idle connections and return their counts.
    pub fn finish(self) -> IdleResult {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// The byte at `offset` of a request head that never ends.
fn head_byte(head: &[u8], offset: usize) -> u8 {
    match head.get(offset) {
        Some(&byte) => byte,
        None => ENDLESS_HEADER[(offset - head.len()) % ENDLESS_HEADER.len()],
    }
}

fn connect_failed(result: &mut IdleResult, err: &io::Error) {
    let kind = ErrorKind::of_connect(err).as_str().to_string();
    *result.connect_errors.entry(kind).or_insert(0) += 1;
}

/// Start every connect; a connect that fails at once is counted here.
fn open_all(poll: &Poll, plan: &IdlePlan, target: &IdleTarget) -> (Vec<Held>, IdleResult) {
    let mut result = IdleResult { connections: plan.connections, ..IdleResult::default() };
    let mut held: Vec<Held> = Vec::with_capacity(plan.connections);
    for index in 0..plan.connections {
        let opened = tcp::connect(target.address, tcp::source_for(&target.sources, index)).and_then(|mut stream| {
            poll.registry().register(&mut stream, Token(held.len()), Interest::READABLE | Interest::WRITABLE)?;
            Ok(stream)
        });
        match opened {
            Ok(stream) => held.push(Held { stream, state: State::Connecting, written: 0 }),
            Err(err) => connect_failed(&mut result, &err),
        }
    }
    (held, result)
}

/// Hold the connections until `stop`, taking note of connects, closes, and sending slowly.
fn hold(
    mut poll: Poll,
    mut held: Vec<Held>,
    mut result: IdleResult,
    plan: &IdlePlan,
    target: &IdleTarget,
    stop: &AtomicBool,
) -> IdleResult {
    let mut events = Events::with_capacity(1024);
    let mut scratch = [0u8; 4096];
    let start_us = now_us();
    // Sends are spread evenly: by time t, t / interval rounds of one byte per open connection.
    let mut sends_done: u64 = 0;
    // Polled once more after `stop`, so that connects completed by then are counted.
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        let wait_us = if stopping { 0 } else { MAX_WAIT_US };
        if let Err(e) = poll.poll(&mut events, Some(Duration::from_micros(wait_us))) {
            assert_eq!(e.kind(), io::ErrorKind::Interrupted, "epoll_wait failed: {e}");
        }
        for event in events.iter() {
            let conn = &mut held[event.token().0];
            if conn.state == State::Connecting && (event.is_writable() || event.is_error()) {
                match tcp::connect_status(&conn.stream) {
                    None => {}
                    Some(Ok(())) => {
                        conn.state = State::Open;
                        result.opened += 1;
                        result.open_at_end += 1;
                        result.most_open = result.most_open.max(result.open_at_end);
                    }
                    Some(Err(err)) => {
                        conn.state = State::Gone;
                        connect_failed(&mut result, &err);
                    }
                }
            }
            let readable = event.is_readable() || event.is_read_closed() || event.is_error();
            if conn.state == State::Open && readable && server_closed(&mut conn.stream, &mut scratch) {
                closed_by_server(conn, &mut result);
            }
        }
        if let Some(interval_us) = plan.send_interval_us {
            let due = (now_us() - start_us) as u128 * held.len() as u128 / interval_us as u128;
            while (sends_done as u128) < due {
                let count = held.len();
                let conn = &mut held[sends_done as usize % count];
                sends_done += 1;
                if conn.state == State::Open {
                    send_one_byte(conn, &target.head, &mut result);
                }
            }
        }
        if stopping {
            break;
        }
    }
    result
}

fn closed_by_server(conn: &mut Held, result: &mut IdleResult) {
    conn.state = State::Gone;
    result.closed_by_server += 1;
    result.open_at_end -= 1;
}

fn send_one_byte(conn: &mut Held, head: &[u8], result: &mut IdleResult) {
    match conn.stream.write(&[head_byte(head, conn.written)]) {
        Ok(n) => {
            conn.written += n;
            result.bytes_out += n as u64;
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {}
        Err(_) => closed_by_server(conn, result),
    }
}

/// Drain what the server sent (an error page, say); true once it has closed or reset.
fn server_closed(stream: &mut TcpStream, scratch: &mut [u8]) -> bool {
    use std::io::Read;
    loop {
        match stream.read(scratch) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_goes_on_with_one_header_forever() {
        let head = b"GET / HTTP/1.1\r\n";
        let bytes: Vec<u8> = (0..head.len() + 2 * ENDLESS_HEADER.len()).map(|i| head_byte(head, i)).collect();
        assert_eq!(bytes, [&head[..], ENDLESS_HEADER, ENDLESS_HEADER].concat());
    }

    #[test]
    fn bad_idle_plans_say_why() {
        let plan = |connections, send_interval_us| IdlePlan { connections, send_interval_us };
        assert!(plan(0, None).validate().unwrap_err().contains("at least 1"));
        assert!(plan(5, Some(10)).validate().unwrap_err().contains("1 ms"));
        assert!(plan(5, Some(1_000)).validate().is_ok());
    }
}
