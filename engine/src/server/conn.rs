//! One server-side connection: read requests, answer them in order, hold the ones a fault
//! delays, close when the request or the client says so.

use std::io;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::conn::transport::{ReadEnd, Transport};

use super::faults::{self, Faults};
use super::routes::{self, Route, STATS_PATH};
use super::session_route::{self, SESSION_PATH};
use super::Context;
use crate::clock::now_us;

/// A request head that has not ended after this many bytes gets a 431.
const MAX_REQUEST_HEAD_BYTES: usize = 64 * 1024;

pub enum Served {
    Open,
    /// A response is held until this time (µs on the crate clock).
    HeldUntil(u64),
    Close,
}

/// A response waiting for its fault delay to pass.
struct Held {
    target: String,
    answer: Answer,
    /// It was answered already: this is the answer again (`again_ms`).
    again: bool,
}

/// How to answer a request, apart from its route.
struct Answer {
    keep_alive: bool,
    head_only: bool,
    /// It carried If-Modified-Since.
    revalidate: bool,
    status: Option<u16>,
    /// The session route's answer, rendered while the request's head and body were at hand.
    session: Option<Vec<u8>>,
    /// Answer once more, this long after the first answer.
    again_ms: Option<u64>,
}

pub struct ServerConn {
    stream: Transport,
    input: Vec<u8>,
    output: Vec<u8>,
    held: Option<Held>,
    close_after_output: bool,
    broken: bool,
    /// Responses are queued, not written, until the next flush.
    corked: bool,
    pub generation: u64,
}

struct Request {
    head_bytes: usize,
    body_bytes: usize,
    keep_alive: bool,
    head_only: bool,
    revalidate: bool,
}

enum Parsed {
    Incomplete,
    Bad(u16),
    Complete(Request),
}

fn parse(input: &[u8]) -> (Parsed, Option<&str>) {
    let mut headers = [httparse::EMPTY_HEADER; 48];
    let mut request = httparse::Request::new(&mut headers);
    let head_bytes = match request.parse(input) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if input.len() < MAX_REQUEST_HEAD_BYTES => return (Parsed::Incomplete, None),
        Ok(httparse::Status::Partial) => return (Parsed::Bad(431), None),
        Err(_) => return (Parsed::Bad(400), None),
    };
    let mut body_bytes = 0;
    let mut connection_close = false;
    let mut connection_keep_alive = false;
    let mut revalidate = false;
    for header in request.headers.iter() {
        if header.name.eq_ignore_ascii_case("content-length") {
            match std::str::from_utf8(header.value).ok().and_then(|v| v.trim().parse().ok()) {
                Some(n) => body_bytes = n,
                None => return (Parsed::Bad(400), None),
            }
        } else if header.name.eq_ignore_ascii_case("if-modified-since") {
            revalidate = true;
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            return (Parsed::Bad(501), None);
        } else if header.name.eq_ignore_ascii_case("connection") {
            let value = header.value.to_ascii_lowercase();
            connection_close |= value.windows(5).any(|w| w == b"close");
            connection_keep_alive |= value.windows(10).any(|w| w == b"keep-alive");
        }
    }
    let keep_alive = match request.version {
        Some(1) => !connection_close,
        _ => connection_keep_alive && !connection_close,
    };
    let head_only = request.method == Some("HEAD");
    (Parsed::Complete(Request { head_bytes, body_bytes, keep_alive, head_only, revalidate }), request.path)
}

impl ServerConn {
    pub fn new(stream: Transport, generation: u64) -> ServerConn {
        ServerConn {
            stream,
            input: Vec::new(),
            output: Vec::new(),
            held: None,
            close_after_output: false,
            broken: false,
            corked: false,
            generation,
        }
    }

    pub fn on_ready(
        &mut self,
        readable: bool,
        writable: bool,
        peer_closed: bool,
        scratch: &mut [u8],
        context: &Context,
    ) -> Served {
        if readable && !self.read(scratch, peer_closed) {
            return Served::Close;
        }
        if writable {
            self.flush();
        }
        if self.held.is_some() {
            return self.state();
        }
        self.answer(context)
    }

    /// The held response's time has come.
    pub fn release(&mut self, context: &Context) -> Served {
        match self.held.take() {
            Some(Held { target, answer, again: true }) => self.respond(context, &target, &answer, true),
            Some(Held { target, answer, again: false }) => {
                if let Some(due_us) = self.respond_and_again(context, target, answer) {
                    return Served::HeldUntil(due_us);
                }
            }
            None => {}
        }
        self.answer(context)
    }

    /// Answer, and answer again if the request asked for it: at once, or held until the time
    /// returned.
    fn respond_and_again(&mut self, context: &Context, target: String, answer: Answer) -> Option<u64> {
        self.corked = answer.again_ms == Some(0);
        self.respond(context, &target, &answer, false);
        match answer.again_ms? {
            0 => {
                // Both answers in one write, so that the second cannot pass for the answer to a
                // request the client sends meanwhile.
                self.corked = true;
                self.respond(context, &target, &answer, true);
                self.corked = false;
                self.flush();
            }
            again_ms => {
                self.held = Some(Held { target, answer, again: true });
                self.flush();
                return Some(now_us() + again_ms * 1_000);
            }
        }
        None
    }

    /// Read what has arrived; false when the client has gone.
    fn read(&mut self, scratch: &mut [u8], peer_closed: bool) -> bool {
        let input = &mut self.input;
        let read = self.stream.read_with(scratch, peer_closed, |bytes, _| {
            input.extend_from_slice(bytes);
            true
        });
        matches!(read, Ok(ReadEnd::Drained))
    }

    /// Answer the complete requests in the input, in order, until one is held or closes.
    fn answer(&mut self, context: &Context) -> Served {
        while self.held.is_none() && !self.close_after_output && !self.broken {
            let (parsed, target) = parse(&self.input);
            let request = match parsed {
                Parsed::Incomplete => break,
                Parsed::Bad(status) => {
                    let mut out = Vec::new();
                    routes::write_head(&mut out, status, "text/plain", 0, "close");
                    self.emit(&out);
                    self.close_after_output = true;
                    break;
                }
                Parsed::Complete(request) => request,
            };
            if self.input.len() < request.head_bytes + request.body_bytes {
                break;
            }
            let target = target.unwrap_or("/").to_string();
            let whole = &self.input[..request.head_bytes + request.body_bytes];
            let session =
                target.starts_with(SESSION_PATH).then(|| session_route::render(&target, whole, request.keep_alive));
            self.input.drain(..request.head_bytes + request.body_bytes);
            let faults = if target.contains('?') { faults::parse(&target) } else { Faults::default() };
            if faults.reset {
                context.own().requests.fetch_add(1, Ordering::Relaxed);
                let _ = socket2::SockRef::from(self.stream.socket()).set_linger(Some(Duration::ZERO));
                return Served::Close;
            }
            let now = now_us();
            let stall = faults.stall.unwrap_or(context.stall);
            // Summing every process's slots reads cache lines other processes write: only when asked.
            let per_connection_ms = match faults.delay_per_connection_ms {
                0 => 0,
                ms => ms * context.counters.open(),
            };
            let delay_ms = faults.delay_ms + per_connection_ms;
            let service_us = context.besim.as_ref().map_or(0, |besim| besim.hold_us(&target));
            let due_us =
                (now + delay_ms * 1_000 + service_us).max(context.start_us + stall.release_us(now - context.start_us));
            let answer = Answer {
                keep_alive: request.keep_alive,
                head_only: request.head_only,
                revalidate: request.revalidate,
                status: faults.status,
                session,
                again_ms: faults.again_ms,
            };
            if due_us > now {
                self.held = Some(Held { target, answer, again: false });
                self.flush();
                return if self.broken { Served::Close } else { Served::HeldUntil(due_us) };
            }
            if let Some(due_us) = self.respond_and_again(context, target, answer) {
                return if self.broken { Served::Close } else { Served::HeldUntil(due_us) };
            }
        }
        self.flush();
        self.state()
    }

    fn state(&self) -> Served {
        let sent_all = self.output.is_empty() && !self.stream.has_pending_output();
        if self.broken || (self.close_after_output && sent_all) {
            Served::Close
        } else {
            Served::Open
        }
    }

    /// Answer `target`; `again`: it was answered already (counted once).
    fn respond(&mut self, context: &Context, target: &str, answer: &Answer, again: bool) {
        let Answer { keep_alive, head_only, revalidate, status, ref session, .. } = *answer;
        self.close_after_output |= !keep_alive;
        let requests = &context.own().requests;
        let connection = if keep_alive { "keep-alive" } else { "close" };
        if let Some(called) = context.besim.as_ref().and_then(|besim| besim.answer(target)) {
            requests.fetch_add(u64::from(!again), Ordering::Relaxed);
            let mut out = Vec::with_capacity(called.body.len() + 160);
            routes::write_head(&mut out, called.status, called.content_type, called.body.len(), connection);
            if !head_only {
                out.extend_from_slice(called.body.as_bytes());
            }
            return self.emit(&out);
        }
        let route = context.routes.find(target);
        if !matches!(route, Route::Stats) {
            requests.fetch_add(u64::from(!again), Ordering::Relaxed);
        }
        if let (None, Some(session)) = (status, session) {
            return self.emit(session);
        }
        let mut out = Vec::new();
        match (status, route) {
            (Some(status), _) => {
                let body = format!("status {status}\n");
                routes::write_head(&mut out, status, "text/plain", body.len(), connection);
                if !head_only {
                    out.extend_from_slice(body.as_bytes());
                }
            }
            (None, Route::Static(_)) if revalidate => routes::write_not_modified(&mut out, keep_alive),
            (None, Route::Static(rendered)) => return self.emit(rendered.bytes(keep_alive, head_only)),
            (None, Route::Hello) => routes::write_hello(&mut out, keep_alive, head_only),
            (None, Route::Stats) => {
                let body = serde_json::to_string(&context.counters.sum()).unwrap_or_default();
                routes::write_head(&mut out, 200, "application/json", body.len(), connection);
                out.extend_from_slice(body.as_bytes());
                debug_assert!(target.starts_with(STATS_PATH));
            }
        }
        self.emit(&out);
    }

    /// Send bytes now if nothing is queued before them; queue what the socket does not take.
    fn emit(&mut self, bytes: &[u8]) {
        let sent = if self.output.is_empty() && !self.corked { self.write_some(bytes) } else { 0 };
        self.output.extend_from_slice(&bytes[sent..]);
    }

    fn flush(&mut self) {
        if self.stream.flush().is_err() {
            self.broken = true;
        }
        let output = std::mem::take(&mut self.output);
        let sent = self.write_some(&output);
        self.output = output;
        self.output.drain(..sent);
    }

    /// Write until done or the socket is full; returns the bytes written.
    fn write_some(&mut self, bytes: &[u8]) -> usize {
        let mut sent = 0;
        while sent < bytes.len() && !self.broken {
            match self.stream.write(&bytes[sent..]) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => self.broken = true,
            }
        }
        sent
    }
}
