//! Latency under a batch window, timed by the kernel's receive timestamps, is the latency the
//! server gave: the window changes when the engine reads, not what it measures.
//!
//! Two runs on this machine differ by more than 1 % at p99 whatever the window (the peer's 20 ms
//! sleeps wake up to 2 ms apart from run to run), so each run is checked against the other side
//! of its own sockets: the peer times each answer from the kernel's receive time of its request
//! (when the client sent it) to the kernel's send time of its answer (when the client's kernel
//! received it, on loopback), both kernel timestamps, so that the peer's threads being
//! descheduled does not count. They run at the lowest priority, from the thread that accepts
//! onwards, so that they seldom take the client's CPU between the time it takes for a request
//! and the request's write (a peer starting a thread at the normal priority as a connection
//! opened made the client's p99 over 1 % late now and then). Without the
//! window the client's reading agrees with the peer's; with it, it must agree as closely: on
//! epoll and on io_uring, whose multishot receives carry the same timestamps; and so must the
//! engine's default, which on epoll tries the window in the warm-up and keeps it or not.
//!
//! A server that closes each connection after a few answers makes some requests open their
//! connection inside the measured interval: a window that held back their connects' completions
//! would send them up to the window late, and the client's p99 would show it.

mod common;

use std::io::Write;
use std::mem::zeroed;
use std::os::fd::AsRawFd;
use std::sync::Mutex;
use std::time::Duration;

use common::{Counters, Handler, Peer};
use gauntlet_engine::clock::{engine_us_of_realtime_ns, monotonic_us, now_us};
use gauntlet_engine::conn::rx_time::{self, StampedRead};
use gauntlet_engine::conn::sockopt::set_int;
use gauntlet_engine::plan::{Io, Plan};
use gauntlet_engine::run::{run, RunResult};
use gauntlet_engine::stats::latency::{self, LatencySummary};

const WINDOW_US: u64 = 2_000;
const HOLD: Duration = Duration::from_millis(20);

/// Each answer as the peer saw it: when its request arrived and when the answer went, engine µs.
static ANSWERED: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// Answers `held` gives on a connection before it closes it, in `held_closing`.
const ANSWERS_PER_CONNECTION: usize = 10;

fn held_ok(stream: std::net::TcpStream, _: &Counters) {
    held(stream, None);
}

fn held_closing(stream: std::net::TcpStream, _: &Counters) {
    held(stream, Some(ANSWERS_PER_CONNECTION));
}

/// Hold each answer until 20 ms after its request arrived, in a thread of the connection's own,
/// so that when it answers does not depend on when requests arrive (the built-in server releases
/// held answers at its loop's wake-ups, which a client sending in bursts makes later) nor on when
/// the thread of a new connection got to read its first request; with `answers`, close the
/// connection with the last of them.
fn held(stream: std::net::TcpStream, answers: Option<usize>) {
    stream.set_nodelay(true).unwrap();
    let mut stream = mio::net::TcpStream::from_std(stream);
    rx_time::enable(&stream).unwrap();
    time_sends(&stream);
    let (mut buffer, mut head) = ([0u8; 4096], Vec::new());
    for answer in 1.. {
        let Ok((n, arrived_us)) = stream.read_stamped(&mut buffer) else { return };
        if n == 0 {
            return;
        }
        head.extend_from_slice(&buffer[..n]);
        if !head.ends_with(b"\r\n\r\n") {
            continue;
        }
        head.clear();
        let Some(arrived_us) = arrived_us else { panic!("the kernel stamped no request (see rx_time::switch_on)") };
        let due_us = arrived_us + HOLD.as_micros() as u64;
        std::thread::sleep(Duration::from_micros(due_us.saturating_sub(now_us())));
        let last = answers == Some(answer);
        let close: &[u8] = if last { b"Connection: close\r\n" } else { b"" };
        let response = [b"HTTP/1.1 200 OK\r\n", close, b"Content-Length: 5\r\n\r\nhello"].concat();
        if stream.write_all(&response).is_err() {
            return;
        }
        let sent_us = engine_us_of_realtime_ns(sent_ns(&stream));
        ANSWERED.lock().unwrap().push((arrived_us, sent_us));
        if last {
            return;
        }
    }
}

/// Ask the kernel for the time each write leaves (software send timestamps, on the error queue).
fn time_sends(socket: &impl AsRawFd) {
    let flags =
        libc::SOF_TIMESTAMPING_TX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE | libc::SOF_TIMESTAMPING_OPT_TSONLY;
    set_int(socket, libc::SOL_SOCKET, libc::SO_TIMESTAMPING, flags as libc::c_int).unwrap();
}

/// The kernel's send time of the last write (ns since 1970): on loopback it is queued before the
/// write returns.
fn sent_ns(socket: &impl AsRawFd) -> u64 {
    #[repr(C, align(8))]
    struct Control([u8; 256]);
    let mut control = Control([0; 256]);
    // SAFETY: a zeroed msghdr is valid (no name, no data) before the control buffer is set.
    let mut message: libc::msghdr = unsafe { zeroed() };
    message.msg_control = control.0.as_mut_ptr().cast();
    message.msg_controllen = control.0.len();
    // SAFETY: the control buffer is live and writable for its length; the error queue never blocks.
    let n = unsafe { libc::recvmsg(socket.as_raw_fd(), &mut message, libc::MSG_ERRQUEUE) };
    assert!(n >= 0, "no send timestamp: {}", std::io::Error::last_os_error());
    rx_time::timestamp_ns(&message, libc::SCM_TIMESTAMPING).expect("the error queue held a send timestamp")
}

/// A run past a warm-up, and the peer's summary of the answers the run measured: asked for
/// inside the measured interval and answered before its end, recorded as the engine records
/// latency. `window_us` None is the engine's default: on epoll the warm-up tries the window.
fn measured(url: &str, load: &str, io: Io, window_us: Option<u64>) -> (RunResult, LatencySummary) {
    ANSWERED.lock().unwrap().clear();
    let window = window_us.map_or(String::new(), |us| format!(r#""io_batch_us": {us}, "#));
    let json =
        format!(r#"{{"url": "{url}", "threads": 1, "warmup_us": 300000, "duration_us": 2000000, {window}{load}}}"#);
    let mut plan = Plan::from_json(&json).unwrap();
    plan.io = io;
    let result = run(plan).unwrap();
    assert_eq!(result.client.io, io, "{:?}", result.client.io_fallback);
    let interval_us = result.measured_from_monotonic_us..result.measured_to_monotonic_us;
    let mut histogram = latency::new_histogram();
    for &(arrived_us, answered_us) in ANSWERED.lock().unwrap().iter() {
        if interval_us.contains(&monotonic_us(arrived_us)) && interval_us.contains(&monotonic_us(answered_us)) {
            latency::record(&mut histogram, answered_us - arrived_us);
        }
    }
    (result, LatencySummary::of(&histogram))
}

/// `measured`, repeated (at most twice) while the machine is busy: the peer's own 20 ms holds
/// ran more than a millisecond late at p99, so that other work took the cores, and a client kept
/// off its core between taking a request's start time and writing it counts the wait as the
/// server's (a CI run failed so: the peer's p99 was 23.2 ms, the client's 24.5 ms). The last run
/// is judged whatever the machine's state.
fn quiet_run(url: &str, load: &str, io: Io, window_us: Option<u64>) -> (RunResult, LatencySummary) {
    let busy_p99_us = HOLD.as_micros() as u64 + 1_000;
    for _ in 0..2 {
        let (result, by_peer) = measured(url, load, io, window_us);
        if by_peer.p99 <= busy_p99_us {
            return (result, by_peer);
        }
        eprintln!(
            "{load} on {io:?}, window {window_us:?} µs: the machine was busy (the peer's p99 {} µs), measuring again",
            by_peer.p99
        );
    }
    measured(url, load, io, window_us)
}

/// Without the window, with it, and the engine's default (on epoll, what the warm-up's trial kept).
const EVERY_WINDOW: [Option<u64>; 3] = [Some(0), Some(WINDOW_US), None];

/// The client's median and p99 against the peer's for the same answers under each of
/// `EVERY_WINDOW`: within 1 % or 10 µs.
fn compare(load: &str, peer: Handler, io: Io) {
    let _alone = common::timing_alone();
    let peer = Peer::start_niced(peer, 19);
    let url = peer.url("/");
    for window_us in EVERY_WINDOW {
        let (result, by_peer) = quiet_run(&url, load, io, window_us);
        let tried = result.client.batch_trial.is_some();
        assert_eq!(tried, window_us.is_none() && io == Io::Epoll, "a trial only by default, on epoll");
        assert_eq!(result.errors_total, 0, "{:?}", result.errors);
        assert!(
            result.responses.abs_diff(by_peer.count) <= 20,
            "{} responses, {} answers",
            result.responses,
            by_peer.count
        );
        assert_eq!(result.counts.rx_timestamped, result.responses, "every response timed by the kernel");
        // Under a rate, latency counts from the due time: the service time is the server's.
        let by_client = if load.contains("rate_per_s") { &result.service_time_us } else { &result.latency_us };
        for (name, client_us, peer_us) in [("p50", by_client.p50, by_peer.p50), ("p99", by_client.p99, by_peer.p99)] {
            let tolerance_us = (peer_us / 100).max(10);
            assert!(
                client_us.abs_diff(peer_us) <= tolerance_us,
                "{load} on {io:?}, window {window_us:?} µs: {name} {client_us} µs by the client, {peer_us} µs by the peer"
            );
        }
    }
}

const CLOSED_LOOP: &str = r#""connections": 16"#;
const CONSTANT_RATE: &str = r#""connections": 60, "rate_per_s": 500"#;

#[test]
fn closed_loop_latency_is_the_servers_under_a_window() {
    compare(CLOSED_LOOP, held_ok, Io::Epoll);
}

#[test]
fn constant_rate_latency_is_the_servers_under_a_window() {
    compare(CONSTANT_RATE, held_ok, Io::Epoll);
}

#[test]
fn closed_loop_latency_on_io_uring_is_the_servers_under_a_window() {
    compare(CLOSED_LOOP, held_ok, Io::Uring);
}

#[test]
fn constant_rate_latency_on_io_uring_is_the_servers_under_a_window() {
    compare(CONSTANT_RATE, held_ok, Io::Uring);
}

/// A tenth of the requests open their connection: the window must not delay their connects. The
/// connections close together, every tenth answer, and the burst of threads ending and starting
/// in the peer makes those answers' holds wake 0.5-1.4 ms late when the client runs without the
/// window (the peer's p99 is 21.0-21.6 ms), so those runs are judged on `quiet_run`'s last
/// attempt: the client sees the same lateness, since it is in the peer's send time.
#[test]
fn latency_is_the_servers_under_a_window_as_connections_open() {
    compare(CLOSED_LOOP, held_closing, Io::Epoll);
}
