//! Test peers on 127.0.0.1:0: small blocking servers that count what they see, so that tests
//! check the engine's figures against the other side of the socket.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use gauntlet_engine::plan::{Io, Plan};

#[derive(Default)]
pub struct Counters {
    pub connections: AtomicU64,
    pub requests: AtomicU64,
    /// HTTP/2 streams a GOAWAY left unprocessed (tests/common/h2_peer.rs).
    pub unprocessed: AtomicU64,
    /// When each request arrived (recorded by `http_ok`).
    pub arrivals: Mutex<Vec<Instant>>,
    /// (client port, request) in arrival order (recorded by `http_ok`): the port tells connections apart.
    pub log: Mutex<Vec<(u64, Seen)>>,
}

/// What a test peer saw of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub path: String,
    pub close: bool,
    pub revalidate: bool,
}

pub type Handler = fn(TcpStream, &Counters);

/// Held by a test whose assertions are about timing, so that the other tests of its file (cargo
/// runs them in parallel threads) do not take the machine's cores while it measures.
pub fn timing_alone() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A server whose every connection is given to `handler` in its own thread.
pub struct Peer {
    pub address: SocketAddr,
    pub counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
}

impl Peer {
    pub fn start(handler: Handler) -> Peer {
        Peer::start_niced(handler, 0)
    }

    /// `start` with its accepting thread at `nice`, and so each connection's thread, which
    /// inherits it from the start: a peer at 19 seldom takes a core from the client under test,
    /// not even while it starts a thread for a new connection.
    pub fn start_niced(handler: Handler, nice: i32) -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let counters = Arc::new(Counters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (c, s) = (counters.clone(), stop.clone());
        thread::spawn(move || {
            // SAFETY: setpriority on this thread (who 0 with PRIO_PROCESS is the calling thread on Linux).
            if nice != 0 && unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } != 0 {
                panic!("setpriority {nice}: {}", std::io::Error::last_os_error());
            }
            for stream in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                c.connections.fetch_add(1, Ordering::SeqCst);
                let c = c.clone();
                thread::spawn(move || handler(stream, &c));
            }
        });
        Peer { address, counters, stop }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::SeqCst)
    }

    pub fn log(&self) -> Vec<(u64, Seen)> {
        self.counters.log.lock().unwrap().clone()
    }

    pub fn arrivals(&self) -> Vec<Instant> {
        let mut arrivals = self.counters.arrivals.lock().unwrap().clone();
        arrivals.sort();
        arrivals
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.address);
    }
}

/// Read one request head (and a Content-Length body); None when the client closed.
pub fn read_request(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Seen> {
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut request = httparse::Request::new(&mut headers);
        if let Ok(httparse::Status::Complete(head_len)) = request.parse(buffer) {
            let header = |name: &str| {
                request
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case(name))
                    .map(|h| String::from_utf8_lossy(h.value).to_lowercase())
            };
            let close = match header("connection") {
                Some(v) if v.contains("close") => true,
                Some(v) if v.contains("keep-alive") => false,
                _ => request.version == Some(0),
            };
            let body_len: usize = header("content-length").map_or(0, |v| v.trim().parse().unwrap());
            let path = request.path.unwrap_or("").to_string();
            let revalidate = header("if-modified-since").is_some();
            while buffer.len() < head_len + body_len {
                let mut chunk = [0u8; 4096];
                let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
                buffer.extend_from_slice(&chunk[..n]);
            }
            buffer.drain(..head_len + body_len);
            return Some(Seen { path, close, revalidate });
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// Answer every request with a small 200, honouring Connection: close.
pub fn http_ok(mut stream: TcpStream, counters: &Counters) {
    let client_port = u64::from(stream.peer_addr().map_or(0, |a| a.port()));
    let mut buffer = Vec::new();
    while let Some(seen) = read_request(&mut stream, &mut buffer) {
        let close = seen.close;
        counters.arrivals.lock().unwrap().push(Instant::now());
        counters.log.lock().unwrap().push((client_port, seen));
        counters.requests.fetch_add(1, Ordering::SeqCst);
        let connection = if close { "close" } else { "keep-alive" };
        let response = format!("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: {connection}\r\n\r\nhello");
        if stream.write_all(response.as_bytes()).is_err() || close {
            return;
        }
    }
}

/// Read one request, answer with these bytes, then close.
pub fn reply_then_close(mut stream: TcpStream, counters: &Counters, bytes: &[u8]) {
    let mut buffer = Vec::new();
    if read_request(&mut stream, &mut buffer).is_some() {
        counters.requests.fetch_add(1, Ordering::SeqCst);
        let _ = stream.write_all(bytes);
    }
}

/// A plan against `url` with the given JSON fields added.
/// A plan on `url` with more fields. GAUNTLET_TEST_IO=uring runs it on io_uring: the same tests
/// then check that transport (`GAUNTLET_TEST_IO=uring cargo test --test closed_loop ...`).
pub fn plan(url: &str, fields: &str) -> Plan {
    let mut plan = Plan::from_json(&format!(r#"{{"url": "{url}", {fields}}}"#)).unwrap();
    if std::env::var("GAUNTLET_TEST_IO").is_ok_and(|io| io == "uring") {
        plan.io = Io::Uring;
    }
    plan
}
