//! The built-in server on 127.0.0.1:0, checked from raw sockets and with the engine.

use std::io::{ErrorKind as IoErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use gauntlet_engine::plan::Plan;
use gauntlet_engine::run::run;
use gauntlet_engine::server::routes::{Route, Routes};
use gauntlet_engine::server::{serve, ServeConfig, ServerHandle};
use gauntlet_engine::tree::{tree_body, tree_index};
use gauntlet_engine::workload::standard_files;

fn start(threads: usize) -> ServerHandle {
    serve(&ServeConfig { threads, ..ServeConfig::default() }).unwrap()
}

fn connect(address: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream
}

/// Read one response with a Content-Length body: (head, body).
fn read_response(stream: &mut TcpStream) -> (String, Vec<u8>) {
    let mut bytes = Vec::new();
    let mut byte = [0u8; 1];
    while !bytes.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "connection closed inside a head");
        bytes.push(byte[0]);
    }
    let head = String::from_utf8(bytes).unwrap();
    let length: usize =
        head.lines().find_map(|l| l.strip_prefix("Content-Length: ")).map_or(0, |v| v.trim().parse().unwrap());
    let mut body = vec![0u8; if head.starts_with("HEAD") { 0 } else { length }];
    stream.read_exact(&mut body).unwrap();
    (head, body)
}

fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.read(&mut byte), Ok(0))
}

fn get(stream: &mut TcpStream, path: &str, extra: &str) -> (String, Vec<u8>) {
    write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\n{extra}\r\n").unwrap();
    read_response(stream)
}

#[test]
fn serves_every_standard_file_byte_exact() {
    let server = start(2);
    let mut stream = connect(server.local_addr());
    for file in standard_files() {
        let (head, body) = get(&mut stream, &format!("/{}", file.name), "");
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains(&format!("Content-Type: {}\r\n", file.content_type)));
        assert_eq!(body, file.body, "{}", file.name);
    }
    let (_, body) = get(&mut stream, "/hello", "");
    assert_eq!(body, b"Hello, World!");
    let (head, _) = get(&mut stream, "/missing", "");
    assert!(head.starts_with("HTTP/1.1 404"));
    write!(stream, "HEAD /image_large.jpg HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(String::from_utf8_lossy(&head).contains("Content-Length: 83572"));
    let (_, body) = get(&mut stream, "/webtest.html", "");
    assert_eq!(body.len(), 168, "no body followed the HEAD response");
    server.stop();
}

#[test]
fn keep_alive_close_and_http10() {
    let server = start(1);
    let mut stream = connect(server.local_addr());
    get(&mut stream, "/", "");
    get(&mut stream, "/", "Connection: keep-alive\r\n");
    let (head, _) = get(&mut stream, "/", "Connection: close\r\n");
    assert!(head.contains("Connection: close"));
    assert!(closed_by_server(&mut stream));

    let mut stream = connect(server.local_addr());
    write!(stream, "GET / HTTP/1.0\r\n\r\n").unwrap();
    read_response(&mut stream);
    assert!(closed_by_server(&mut stream), "HTTP/1.0 closes by default");

    let mut stream = connect(server.local_addr());
    write!(stream, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
    read_response(&mut stream);
    write!(stream, "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut stream).1, b"Hello, World!");
    assert_eq!(server.stats().connections_accepted, 3);
    assert_eq!(server.stats().requests, 6);
    server.stop();
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = start(1);
    let mut stream = connect(server.local_addr());
    stream
        .write_all(
            b"GET /hello?delay_ms=50 HTTP/1.1\r\n\r\nGET /missing HTTP/1.1\r\n\r\nGET /webtest.html HTTP/1.1\r\n\r\n",
        )
        .unwrap();
    assert_eq!(read_response(&mut stream).1, b"Hello, World!");
    assert!(read_response(&mut stream).0.starts_with("HTTP/1.1 404"));
    assert_eq!(read_response(&mut stream).1.len(), 168);
    server.stop();
}

#[test]
fn faults_delay_status_reset_and_stall() {
    let server = start(2);
    let mut stream = connect(server.local_addr());
    let began = Instant::now();
    get(&mut stream, "/hello?delay_ms=20", "");
    assert!(began.elapsed() >= Duration::from_millis(20));
    let (head, _) = get(&mut stream, "/webtest.html?status=503", "");
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");

    write!(stream, "GET /?reset=1 HTTP/1.1\r\n\r\n").unwrap();
    let mut byte = [0u8; 1];
    let err = stream.read(&mut byte).unwrap_err();
    assert_eq!(err.kind(), IoErrorKind::ConnectionReset);

    // Windows of 300 ms every 400 ms: a response handled in one leaves at its end.
    let mut stream = connect(server.local_addr());
    let mut held = 0;
    for _ in 0..4 {
        let began = Instant::now();
        get(&mut stream, "/hello?stall_ms=300&stall_every_ms=400", "");
        let waited = began.elapsed();
        assert!(waited < Duration::from_millis(350), "held {waited:?}, longer than a window");
        held += usize::from(waited >= Duration::from_millis(5));
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(held >= 2, "responses inside the windows were held ({held} of 4)");
    server.stop();
}

#[test]
fn stop_frees_the_port_quickly() {
    let server = start(2);
    let address = server.local_addr();
    let _idle = connect(address);
    let began = Instant::now();
    server.stop();
    assert!(began.elapsed() < Duration::from_secs(1));
    TcpListener::bind(address).expect("the port is free again");
}

fn plan(server: &ServerHandle, path: &str, fields: &str) -> Plan {
    let url = format!("http://{}{path}", server.local_addr());
    Plan::from_json(&format!(r#"{{"url": "{url}", "threads": 2, {fields}}}"#)).unwrap()
}

#[test]
fn engine_and_server_count_the_same() {
    let routes = Routes::new();
    let Route::Static(page) = routes.find("/webtest.html") else { panic!("a static page") };
    let (keep, close) = (page.bytes(true, false).len() as u64, page.bytes(false, false).len() as u64);
    // (plan, requests, connections at least, bytes of all responses when the mode fixes them)
    let cases = [
        (r#""connections": 8, "requests": 2000"#, 2000, 8, 2000 * keep..=2000 * keep),
        (r#""connections": 8, "requests": 500, "keepalive": false"#, 500, 500, 500 * close..=500 * close),
        (r#""connections": 4, "requests": 400, "calls_per_connection": 10"#, 400, 40, 400 * close..=400 * keep),
    ];
    for (fields, requests, connections, bytes_in) in cases {
        let server = start(2);
        let result = run(plan(&server, "/webtest.html", fields)).unwrap();
        let stats = server.stats();
        assert_eq!((result.responses, stats.requests), (requests, requests), "{fields}");
        assert_eq!(result.counts.connections_opened, stats.connections_accepted, "{fields}");
        assert!(
            stats.connections_accepted >= connections && stats.connections_accepted <= connections + 4,
            "{fields}: {} connections",
            stats.connections_accepted
        );
        assert!(bytes_in.contains(&result.counts.bytes_in), "{fields}: {} bytes in", result.counts.bytes_in);
        server.stop();
    }
}

#[test]
fn injected_delay_shows_in_the_measured_latency() {
    let server = start(2);
    let result = run(plan(&server, "/hello?delay_ms=20", r#""connections": 10, "requests": 300"#)).unwrap();
    let p50_ms = result.latency_us.p50 as f64 / 1000.0;
    assert!((20.0..25.0).contains(&p50_ms), "p50 {p50_ms} ms");
    assert_eq!(result.status_codes["200"], 300);
    server.stop();
}

#[test]
fn the_tree_is_served_byte_exact() {
    let server = start(1);
    let mut stream = connect(server.local_addr());
    for file in tree_index().iter().step_by(47) {
        let (head, body) = get(&mut stream, &file.path, "");
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert_eq!(body, tree_body(file), "{}", file.path);
    }
    let (head, _) = get(&mut stream, "/tree/dir99/class0_1.bin", "");
    assert!(head.starts_with("HTTP/1.1 404"));
    server.stop();
}

#[test]
fn a_paths_mix_requests_each_path_in_proportion_to_its_weight() {
    let routes = Routes::new();
    let size = |path: &str| match routes.find(path) {
        Route::Static(rendered) => rendered.bytes(true, false).len() as f64,
        _ => panic!("{path} is static"),
    };
    let (small, large) = (size("/webtest.html"), size("/image_large.jpg"));
    let server = start(2);
    let paths = r#""paths": [{"path": "/webtest.html", "weight": 1}, {"path": "/image_large.jpg", "weight": 3}]"#;
    let result = run(plan(&server, "/", &format!(r#""connections": 4, "requests": 4000, {paths}"#))).unwrap();
    assert_eq!((result.responses, server.stats().requests), (4000, 4000));
    let large_share = (result.counts.bytes_in as f64 / 4000.0 - small) / (large - small);
    assert!((0.72..0.78).contains(&large_share), "{large_share} of the requests went to the weight-3 path");
    server.stop();
}

/// BeSim's service time is held on the server's timers: one thread answers another connection's
/// static request while a call waits, and the call's answer comes after its service time.
#[test]
fn besim_calls_wait_their_service_time_without_blocking_the_thread() {
    let service = Duration::from_millis(300);
    let config =
        ServeConfig { threads: 1, besim_service_time_us: Some(service.as_micros() as u64), ..ServeConfig::default() };
    let server = serve(&config).unwrap();
    let mut call = connect(server.local_addr());
    let started = Instant::now();
    write!(call, "GET /besim/bank/profile?id=7 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut other = connect(server.local_addr());
    let (head, _) = get(&mut other, "/webtest.html", "");
    assert!(head.starts_with("HTTP/1.1 200"));
    assert!(started.elapsed() < service, "the static file waited for the call: {:?}", started.elapsed());
    let (head, body) = read_response(&mut call);
    assert!(started.elapsed() >= service);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(body.starts_with(b"BESIM bank/profile 7 1\nprofile|7|"));
    let (_, stats) = get(&mut other, "/besim/stats", "");
    let stats: serde_json::Value = serde_json::from_slice(&stats).unwrap();
    assert_eq!(stats["calls"]["bank/profile"], 1);
    server.stop();
}
