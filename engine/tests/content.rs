//! The content check: a response whose body lacks its request's marker is a `content` error, for
//! the URL's path, each path of a mix and each session page; chunked bodies and markers split
//! across reads and chunks included; a 4xx or 5xx keeps its status.

mod common;

use std::io::Write;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use common::{plan, read_request, Peer};
use gauntlet_engine::run::{run, RunResult};
use gauntlet_engine::server::{serve, ServeConfig, ServerHandle};

fn content_errors(result: &RunResult) -> u64 {
    result.errors.iter().find(|(kind, _)| kind.as_str() == "content").map_or(0, |(_, &n)| n)
}

fn builtin() -> (ServerHandle, String) {
    let server = serve(&ServeConfig::default()).unwrap();
    let url = format!("http://{}", server.local_addr());
    (server, url)
}

fn run_expecting(url: &str, expect: &str, requests: u64) -> RunResult {
    let fields = format!(r#""connections": 2, "threads": 1, "requests": {requests}, "expect": {expect:?}"#);
    run(plan(url, &fields)).unwrap()
}

#[test]
fn the_right_marker_passes_and_a_wrong_one_fails_every_response() {
    let (server, base) = builtin();
    let right = run_expecting(&format!("{base}/hello"), "Hello, World!", 200);
    let wrong = run_expecting(&format!("{base}/hello"), "Error establishing", 200);
    let page = run_expecting(&format!("{base}/webtest.html"), "</html>", 200);
    server.stop();
    assert_eq!((right.responses, content_errors(&right)), (200, 0));
    assert_eq!((wrong.responses, content_errors(&wrong), wrong.requests), (0, 200, 200));
    assert_eq!((page.responses, content_errors(&page)), (200, 0));
}

#[test]
fn a_4xx_or_5xx_without_the_marker_keeps_its_status() {
    let (server, base) = builtin();
    let result = run_expecting(&format!("{base}/hello?status=500"), "Hello, World!", 50);
    server.stop();
    assert_eq!(content_errors(&result), 0);
    assert_eq!(result.status_codes.get("500").copied(), Some(50));
}

#[test]
fn each_path_of_a_mix_is_checked_against_its_own_marker() {
    let (server, base) = builtin();
    let fields = r#""connections": 2, "threads": 1, "requests": 400, "paths": [
        {"path": "/hello", "weight": 1, "expect": "Hello, World!"},
        {"path": "/webtest.html", "weight": 1, "expect": "Hello, World!"},
        {"path": "/image_small.gif", "weight": 1}]"#;
    let result = run(plan(&format!("{base}/"), fields)).unwrap();
    server.stop();
    // /webtest.html does not hold /hello's marker: about a third of the requests fail.
    let failed = content_errors(&result);
    assert_eq!(result.responses + failed, 400);
    assert!((80..=190).contains(&failed), "{failed} of 400 failed");
}

/// A chunked page whose marker is cut by a chunk boundary and by a pause between two writes.
fn chunked_page(mut stream: std::net::TcpStream, counters: &common::Counters) {
    let mut buffer = Vec::new();
    while read_request(&mut stream, &mut buffer).is_some() {
        counters.requests.fetch_add(1, Ordering::SeqCst);
        let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        let pieces: [&[u8]; 3] = [b"9\r\n<h1>Seed \r\n", b"8\r\npost 50<\r\n", b"4\r\n/h1>\r\n0\r\n\r\n"];
        if stream.write_all(head).is_err() {
            return;
        }
        for piece in pieces {
            let _ = stream.write_all(piece);
            let _ = stream.flush();
            thread::sleep(Duration::from_millis(2));
        }
    }
}

#[test]
fn a_marker_split_across_chunks_and_reads_is_found() {
    let peer = Peer::start(chunked_page);
    let right = run_expecting(&peer.url("/"), "Seed post 50", 20);
    // The chunk framing between "Seed " and "post" is not part of the body.
    let framing = run_expecting(&peer.url("/"), "Seed \r\n8\r\npost", 20);
    assert_eq!((right.responses, content_errors(&right)), (20, 0));
    assert_eq!((framing.responses, content_errors(&framing)), (0, 20));
}

#[test]
fn a_session_page_fails_when_its_marker_is_missing() {
    let (server, base) = builtin();
    let sessions = r#"{"types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 0},
        "pages": [{"name": "good", "path": "/hello", "expect": "Hello, World!"},
                  {"name": "bad", "path": "/webtest.html", "expect": "Hello, World!", "embedded": ["/image_small.gif"]}]}],
        "users": 2}"#;
    let fields = format!(r#""connections": 4, "threads": 1, "duration_us": 300000, "sessions": {sessions}"#);
    let result = run(plan(&format!("{base}/"), &fields)).unwrap();
    server.stop();
    let pages = &result.sessions.as_ref().unwrap().pages;
    let (good, bad) = (&pages["good"], &pages["bad"]);
    assert!(good.count > 5 && good.errors == 0, "{good:?}");
    assert!(bad.count > 5 && bad.errors == bad.count, "{bad:?}");
    // Embedded resources carry no marker; a page whose main request failed as the run ended is
    // not counted as a page (at most one per user).
    let failed = content_errors(&result);
    assert!((bad.count..=bad.count + 2).contains(&failed), "{failed} content errors, {} bad pages", bad.count);
}

#[test]
fn expect_is_refused_where_it_cannot_apply() {
    let url = "http://127.0.0.1:9/";
    let head = gauntlet_engine::plan::Plan::from_json(&format!(
        r#"{{"url": "{url}", "connections": 1, "requests": 1, "method": "HEAD", "expect": "x"}}"#
    ))
    .unwrap();
    assert!(run(head).unwrap_err().to_string().contains("HEAD"));
    let mix = gauntlet_engine::plan::Plan::from_json(&format!(
        r#"{{"url": "{url}", "connections": 1, "requests": 1, "expect": "x", "paths": [{{"path": "/a", "weight": 1}}]}}"#
    ))
    .unwrap();
    assert!(run(mix).unwrap_err().to_string().contains("each path"));
}
