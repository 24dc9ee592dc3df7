//! Bytes no request asked for: a server that answers twice, in the same write (surplus after a
//! complete response) or a while later (on an idle connection). Each is counted (`unsolicited`,
//! `unsolicited_bytes`), the request answered first keeps its outcome, and the connection is
//! closed, so nothing passes for the next request's answer. Plain and TLS against the built-in
//! server's `again_ms` fault, and against a small peer; GAUNTLET_TEST_IO=uring runs the plain
//! cases on io_uring.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use common::{plan, read_request, Counters, Peer};
use gauntlet_engine::conn::tls::server_config;
use gauntlet_engine::merge::merge_results;
use gauntlet_engine::run::{run, RunResult};
use gauntlet_engine::server::routes::{Route, Routes};
use gauntlet_engine::server::{serve, ServeConfig, ServerHandle};

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
/// Under a rate of 20/s a connection waits 50 ms between requests: an answer sent again 5 ms
/// after the first arrives while it is idle.
const RATE: &str = r#""rate_per_s": 20"#;

/// Answer each request on the connection, and once more `again_ms` later (0: in the same write).
fn answer_twice(mut stream: TcpStream, counters: &Counters, again_ms: u64) {
    let mut buffer = Vec::new();
    while read_request(&mut stream, &mut buffer).is_some() {
        counters.requests.fetch_add(1, Ordering::SeqCst);
        let twice = [OK, OK].concat();
        let written = if again_ms == 0 {
            stream.write_all(&twice)
        } else {
            stream.write_all(OK).and_then(|()| {
                std::thread::sleep(Duration::from_millis(again_ms));
                stream.write_all(OK)
            })
        };
        if written.is_err() {
            return;
        }
    }
}

/// Over TLS, answer each request twice, each answer in a record of its own, both in one write:
/// a client that stops reading at the end of the first would take the second, decrypted and
/// waiting, for the next request's answer.
fn answer_twice_in_two_records(stream: TcpStream, counters: &Counters) {
    static CONFIG: OnceLock<Arc<rustls::ServerConfig>> = OnceLock::new();
    let config = CONFIG.get_or_init(|| server_config(None, None).unwrap()).clone();
    let mut tls = rustls::StreamOwned::new(rustls::ServerConnection::new(config).unwrap(), stream);
    let mut input = Vec::new();
    let mut chunk = [0u8; 4096];
    while let Ok(n @ 1..) = tls.read(&mut chunk) {
        input.extend_from_slice(&chunk[..n]);
        let Some(end) = input.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
        input.drain(..end + 4);
        counters.requests.fetch_add(1, Ordering::SeqCst);
        tls.conn.writer().write_all(OK).unwrap();
        tls.conn.writer().write_all(OK).unwrap();
        if tls.flush().is_err() {
            return;
        }
    }
}

fn errors_of(result: &RunResult) -> Vec<(&str, u64)> {
    result.errors.iter().filter(|(_, &n)| n > 0).map(|(k, &n)| (k.as_str(), n)).collect()
}

/// Every request answered once and a new connection for each; each answer sent again counted once
/// as unsolicited, but those sent later miss the last request's on each thread: the run ended
/// with that request's first answer.
fn assert_each_answered_then_unsolicited(result: &RunResult, again_ms: u64, response_bytes: u64, case: &str) {
    let requests = result.requests;
    let unsolicited = if again_ms == 0 { requests } else { requests - result.threads as u64 };
    assert_eq!((result.responses, errors_of(result)), (requests, vec![]), "{case}");
    assert_eq!(
        (result.counts.unsolicited, result.counts.unsolicited_bytes),
        (unsolicited, unsolicited * response_bytes),
        "{case}"
    );
    assert_eq!(result.counts.connections_opened, requests, "{case}: no connection is reused after it");
}

#[test]
fn a_peer_answering_twice_is_counted_at_once_or_idle() {
    let at_once = Peer::start(|s, c| answer_twice(s, c, 0));
    let later = Peer::start(|s, c| answer_twice(s, c, 5));
    for (peer, again_ms, fields) in
        [(at_once, 0, r#""requests": 20"#), (later, 5, r#""requests": 10, "rate_per_s": 20"#)]
    {
        let all = format!(r#""connections": 1, "threads": 1, "timeout_us": 1000000, {fields}"#);
        let result = run(plan(&peer.url("/"), &all)).unwrap();
        let case = format!("answered again after {again_ms} ms");
        assert_each_answered_then_unsolicited(&result, again_ms, OK.len() as u64, &case);
        let requests = result.requests;
        assert_eq!((peer.requests(), peer.connections()), (requests, requests), "{case}");
        let bytes_in = (requests + result.counts.unsolicited) * OK.len() as u64;
        assert_eq!(result.counts.bytes_in, bytes_in, "{case}: the surplus is read, and in bytes_in");
    }
}

#[test]
fn an_answer_in_a_tls_record_of_its_own_is_counted() {
    let peer = Peer::start(answer_twice_in_two_records);
    let url = format!("https://127.0.0.1:{}/", peer.address.port());
    let result = run(plan(&url, r#""connections": 1, "threads": 1, "requests": 20, "timeout_us": 1000000"#)).unwrap();
    assert_each_answered_then_unsolicited(&result, 0, OK.len() as u64, "two records");
    assert_eq!(peer.requests(), 20);
}

#[test]
fn a_server_that_answers_once_sends_nothing_unsolicited() {
    let server = serve(&ServeConfig::default()).unwrap();
    for fields in [r#""requests": 200"#, r#""requests": 10, "rate_per_s": 100"#] {
        let all = format!(r#""connections": 2, "threads": 1, {fields}"#);
        let result = run(plan(&format!("http://{}/hello", server.local_addr()), &all)).unwrap();
        assert_eq!(
            (result.errors_total, result.counts.unsolicited, result.counts.unsolicited_bytes),
            (0, 0, 0),
            "{fields}"
        );
        assert!(result.counts.connections_opened <= 2, "{fields}: kept alive throughout");
    }
    server.stop();
}

fn page_bytes() -> u64 {
    let routes = Routes::new();
    let Route::Static(page) = routes.find("/webtest.html") else { panic!("a static page") };
    page.bytes(true, false).len() as u64
}

fn url(server: &ServerHandle, scheme: &str, again_ms: u64) -> String {
    format!("{scheme}://127.0.0.1:{}/webtest.html?again_ms={again_ms}", server.local_addr().port())
}

#[test]
fn the_built_in_server_answering_twice_is_counted_over_plain_and_tls() {
    for tls in [false, true] {
        let server = serve(&ServeConfig { tls, ..ServeConfig::default() }).unwrap();
        let scheme = if tls { "https" } else { "http" };
        for (again_ms, fields) in [(0, r#""requests": 40"#), (5, &format!(r#""requests": 10, {RATE}"#) as &str)] {
            let all = format!(r#""connections": 2, "threads": 2, "timeout_us": 1000000, {fields}"#);
            let before = server.stats().requests;
            let result = run(plan(&url(&server, scheme, again_ms), &all)).unwrap();
            let case = format!("{scheme}, again after {again_ms} ms");
            assert_each_answered_then_unsolicited(&result, again_ms, page_bytes(), &case);
            assert_eq!(
                server.stats().requests - before,
                result.requests,
                "{case}: the server counts each request once"
            );
        }
        server.stop();
    }
}

#[test]
fn unsolicited_figures_add_up_over_shares() {
    let server = serve(&ServeConfig::default()).unwrap();
    let fields = r#""connections": 2, "threads": 2, "requests": 30"#;
    let target = url(&server, "http", 0);
    let share = || {
        let mut share = plan(&target, fields);
        share.timeline_histograms = true;
        run(share).unwrap()
    };
    let shares = [share(), share()];
    let whole = plan(&target, r#""connections": 4, "threads": 2, "requests": 60"#);
    let merged = merge_results(&whole, &shares.iter().collect::<Vec<_>>()).unwrap();
    assert_eq!((merged.responses, merged.counts.unsolicited), (60, 60));
    assert_eq!(merged.counts.unsolicited_bytes, 60 * page_bytes());
    server.stop();
}
