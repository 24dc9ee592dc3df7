//! A kept-alive connection the server closes: between requests, the next one opens a new
//! connection; as the next request goes out on it, an idempotent request is sent once more on a
//! new connection (`stale_resent`) and anything else stays an error.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{plan, read_request, Counters, Peer};
use gauntlet_engine::run::{run, RunResult};

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
/// How long the server holds a request it will not answer before closing.
const HELD_MS: u64 = 20;

/// Answer a connection's first request, then read the next one, hold it `HELD_MS` and close
/// after `second` (nothing: no answer): `reset` (RST, as a close with unread data sends) or a FIN.
fn answer_once_then_close(mut stream: TcpStream, counters: &Counters, reset: bool, second: &[u8]) {
    let mut buffer = Vec::new();
    if read_request(&mut stream, &mut buffer).is_none() {
        return;
    }
    counters.requests.fetch_add(1, Ordering::SeqCst);
    stream.write_all(OK).unwrap();
    if read_request(&mut stream, &mut buffer).is_some() {
        counters.requests.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(HELD_MS));
        let _ = stream.write_all(second);
    }
    if reset {
        socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO)).unwrap();
    }
}

/// Answer one request, then close the way Apache's event MPM does (its FIN, then reading and
/// discarding whatever comes until the client closes), `pause_ms` after the answer.
fn answer_then_linger(mut stream: TcpStream, counters: &Counters, pause_ms: u64) {
    if read_request(&mut stream, &mut Vec::new()).is_none() {
        return;
    }
    counters.requests.fetch_add(1, Ordering::SeqCst);
    stream.write_all(OK).unwrap();
    std::thread::sleep(Duration::from_millis(pause_ms));
    stream.shutdown(Shutdown::Write).unwrap();
    let _ = stream.read_to_end(&mut Vec::new());
}

fn run_one_connection(peer: &Peer, fields: &str) -> RunResult {
    let fields = format!(r#""connections": 1, "threads": 1, "timeout_us": 500000, {fields}"#);
    run(plan(&peer.url("/"), &fields)).unwrap()
}

fn errors_of(result: &RunResult) -> Vec<(&str, u64)> {
    result.errors.iter().filter(|(_, &n)| n > 0).map(|(k, &n)| (k.as_str(), n)).collect()
}

#[test]
fn a_request_lost_on_a_kept_alive_connection_is_sent_again() {
    for fields in [r#""requests": 5"#, r#""requests": 5, "rate_per_s": 200"#] {
        for peer in [
            Peer::start(|s, c| answer_once_then_close(s, c, false, b"")),
            Peer::start(|s, c| answer_once_then_close(s, c, true, b"")),
        ] {
            let result = run_one_connection(&peer, fields);
            assert_eq!((result.responses, result.errors_total, result.counts.stale_resent), (5, 0, 4), "{fields}");
            // The 4 lost requests reached the server twice; each connection answered one.
            assert_eq!((peer.connections(), peer.requests(), result.counts.connections_opened), (5, 9, 5));
            // Their time from the first send counts, the time lost included.
            assert!(result.service_time_us.p50 >= HELD_MS * 1000, "{:?}", result.service_time_us);
        }
    }
}

#[test]
fn a_lost_post_a_partial_answer_and_a_second_loss_are_errors() {
    let closing = Peer::start(|s, c| answer_once_then_close(s, c, true, b""));
    let post = run_one_connection(&closing, r#""requests": 3, "method": "POST""#);
    assert_eq!((post.responses, errors_of(&post), post.counts.stale_resent), (2, vec![("reset", 1)], 0));

    let partial =
        Peer::start(|s, c| answer_once_then_close(s, c, false, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe"));
    let result = run_one_connection(&partial, r#""requests": 3"#);
    assert_eq!((result.responses, errors_of(&result), result.counts.stale_resent), (2, vec![("truncated", 1)], 0));

    // Only the first connection answers: the request sent again fails on its fresh connection.
    let once = Peer::start(|mut stream, counters| {
        if counters.connections.load(Ordering::SeqCst) == 1 {
            answer_once_then_close(stream, counters, true, b"");
        } else {
            read_request(&mut stream, &mut Vec::new());
            socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO)).unwrap();
        }
    });
    let result = run_one_connection(&once, r#""requests": 2"#);
    assert_eq!((result.responses, errors_of(&result), result.counts.stale_resent), (1, vec![("reset", 1)], 1));
}

#[test]
fn a_connection_closed_between_requests_is_replaced_without_a_timeout() {
    // The FIN with the answer (closed loop), or while the connection waits for its next send (rate).
    let with_answer = Peer::start(|s, c| answer_then_linger(s, c, 0));
    let while_idle = Peer::start(|s, c| answer_then_linger(s, c, 10));
    for (peer, fields) in [(with_answer, r#""requests": 4"#), (while_idle, r#""requests": 4, "rate_per_s": 20"#)] {
        let result = run_one_connection(&peer, fields);
        assert_eq!((result.responses, result.errors_total), (4, 0), "{fields}: {:?}", errors_of(&result));
        assert_eq!(peer.connections(), 4);
    }
}
