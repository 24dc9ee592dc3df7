//! Each error kind provoked for real on a socket.

mod common;

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use common::{plan, read_request, reply_then_close, Peer};
use gauntlet_engine::run::{run, RunResult};

fn errors_of(result: &RunResult) -> Vec<(&str, u64)> {
    result.errors.iter().filter(|(_, &n)| n > 0).map(|(k, &n)| (k.as_str(), n)).collect()
}

fn run_against(peer: &Peer, requests: u64, timeout_us: u64) -> RunResult {
    run(plan(
        &peer.url("/"),
        &format!(r#""connections": 2, "threads": 1, "requests": {requests}, "timeout_us": {timeout_us}"#),
    ))
    .unwrap()
}

#[test]
fn refused_port() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let result = run(plan(&format!("http://127.0.0.1:{port}/"), r#""connections": 3, "requests": 7"#)).unwrap();
    assert_eq!(errors_of(&result), vec![("connect_refused", 7)]);
    assert_eq!((result.requests, result.responses), (7, 0));
}

#[test]
fn connect_timeout_when_the_accept_queue_is_full() {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&"127.0.0.1:0".parse::<std::net::SocketAddr>().unwrap().into()).unwrap();
    socket.listen(0).unwrap();
    let address = socket.local_addr().unwrap().as_socket().unwrap();
    // Fill the queue that nobody accepts from; further handshakes are dropped.
    let fillers: Vec<_> =
        (0..4).filter_map(|_| TcpStream::connect_timeout(&address, Duration::from_millis(200)).ok()).collect();
    assert!(!fillers.is_empty());
    let result =
        run(plan(&format!("http://{address}/"), r#""connections": 2, "requests": 2, "timeout_us": 300000"#)).unwrap();
    assert_eq!(errors_of(&result), vec![("connect_timeout", 2)]);
}

#[test]
fn closed_before_answering_is_a_reset() {
    let peer = Peer::start(|stream, counters| {
        counters.requests.fetch_add(1, Ordering::SeqCst);
        drop(stream);
    });
    let result = run_against(&peer, 4, 2_000_000);
    assert_eq!(errors_of(&result), vec![("reset", 4)]);
}

#[test]
fn rst_is_a_reset() {
    let peer = Peer::start(|mut stream, counters| {
        let mut buffer = Vec::new();
        read_request(&mut stream, &mut buffer);
        counters.requests.fetch_add(1, Ordering::SeqCst);
        socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO)).unwrap();
    });
    let result = run_against(&peer, 3, 2_000_000);
    assert_eq!(errors_of(&result), vec![("reset", 3)]);
}

#[test]
fn silent_server_times_out_and_connections_are_replaced() {
    let peer = Peer::start(|mut stream, _| {
        let mut buffer = Vec::new();
        read_request(&mut stream, &mut buffer);
        thread::sleep(Duration::from_secs(3));
    });
    let result = run_against(&peer, 4, 200_000);
    assert_eq!(errors_of(&result), vec![("timeout", 4)]);
    assert_eq!(peer.connections(), 4, "each timed-out connection is replaced");
}

fn garbage_peer(bytes: &'static [u8]) -> Peer {
    // Handlers are plain fns (no captures), so each canned reply is its own closure here.
    match bytes {
        b"garbage" => Peer::start(|s, c| reply_then_close(s, c, b"garbage\r\n\r\n")),
        b"ssh" => Peer::start(|s, c| reply_then_close(s, c, b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")),
        b"status" => Peer::start(|s, c| reply_then_close(s, c, b"HTTP/1.1 2x0 OK\r\n\r\n")),
        b"chunk" => {
            Peer::start(|s, c| reply_then_close(s, c, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"))
        }
        b"short" => {
            Peer::start(|s, c| reply_then_close(s, c, b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b"))
        }
        b"headless" => Peer::start(|s, c| reply_then_close(s, c, b"HTTP/1.1 200 OK\r\nContent-Le")),
        _ => unreachable!(),
    }
}

#[test]
fn bad_responses_are_malformed_or_truncated() {
    let cases: [(&[u8], &str); 6] = [
        (b"garbage", "malformed"),
        (b"ssh", "malformed"),
        (b"status", "malformed"),
        (b"chunk", "malformed"),
        (b"headless", "malformed"),
        (b"short", "truncated"),
    ];
    for (name, kind) in cases {
        let peer = garbage_peer(name);
        let result = run_against(&peer, 3, 2_000_000);
        assert_eq!(errors_of(&result), vec![(kind, 3)], "{}", String::from_utf8_lossy(name));
        assert_eq!(peer.requests(), 3);
    }
}

#[test]
fn close_delimited_body_is_a_response() {
    let peer = Peer::start(|s, c| reply_then_close(s, c, b"HTTP/1.0 200 OK\r\n\r\nbody until close"));
    let result = run_against(&peer, 3, 2_000_000);
    assert_eq!((result.responses, result.errors_total), (3, 0));
    assert_eq!(peer.connections(), 3);
}

#[test]
fn errors_do_not_stop_the_run_and_counts_add_up() {
    let peer = Peer::start(|mut stream, counters| {
        let n = counters.requests.fetch_add(1, Ordering::SeqCst);
        let mut buffer = Vec::new();
        read_request(&mut stream, &mut buffer);
        let response: &[u8] = if n % 2 == 0 {
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        } else {
            b"nope\r\n\r\n"
        };
        let _ = stream.write_all(response);
    });
    let result = run_against(&peer, 10, 2_000_000);
    assert_eq!(result.requests, 10);
    assert_eq!(result.responses + result.errors["malformed"], 10);
    assert!(result.responses >= 4 && result.errors["malformed"] >= 4, "{:?}", errors_of(&result));
}
