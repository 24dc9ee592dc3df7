//! One client connection: a small state machine driven by readiness events.
//! Closed -> [WaitingToConnect ->] Connecting -> Writing -> Reading -> (next request: Writing | Closed)

pub mod backoff;
pub mod batch;
pub mod tcp;
pub mod tls;
pub mod transport;
pub mod uring;

use std::io;

use backoff::Backoff;
use mio::net::TcpStream;
use transport::{ReadEnd, Transport};

use crate::http1::{Head, Progress, ResponseParser};
use crate::request::EncodedRequest;
use crate::stats::error::ErrorKind;
use crate::stats::unanswered::Stage;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Closed,
    /// Free, connected or not, waiting for its next request's due time (constant rate).
    Idle,
    /// A request is waiting for the backoff after a failed connect to pass.
    WaitingToConnect,
    Connecting,
    Writing {
        written: usize,
    },
    Reading,
}

/// How a request ended.
pub type Outcome = Result<Head, ErrorKind>;

/// What a read or write came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Wait for the next readiness event.
    Wait,
    /// The request was written; its response comes next.
    Written,
    /// The request ended. `reusable`: the connection is clean for another request.
    Ended { outcome: Outcome, reusable: bool },
}

pub struct Conn {
    pub stream: Option<Transport>,
    pub phase: Phase,
    /// Requests started on this connection.
    pub calls: u64,
    /// When the current request was due: its start in a closed loop, its schedule slot under a rate.
    pub intended_us: u64,
    /// When the current request began (its connect, if it needed one).
    pub started_us: u64,
    pub deadline_us: u64,
    /// The current request counts (it began after the warm-up).
    pub measured: bool,
    /// The current request had a due time of its own (open loop).
    pub on_schedule: bool,
    /// Bytes of the current request's response read so far.
    pub bytes_in: u64,
    /// The current request asked the server to close the connection.
    pub last_call: bool,
    /// Which of the run's encoded requests is in flight.
    pub request: usize,
    /// HTTP/2: the current request was already sent again after a graceful GOAWAY.
    pub resent: bool,
    /// Failed connects in a row, and when the next may start.
    pub backoff: Backoff,
    parser: ResponseParser,
    /// The start of a response head split across reads.
    pending: Vec<u8>,
    /// The request with the session's Cookie header added (empty: the encoded bytes as they are).
    pub composed: Vec<u8>,
}

impl Conn {
    pub fn new() -> Conn {
        Conn {
            stream: None,
            phase: Phase::Closed,
            calls: 0,
            intended_us: 0,
            started_us: 0,
            deadline_us: 0,
            measured: false,
            on_schedule: false,
            bytes_in: 0,
            last_call: false,
            request: 0,
            resent: false,
            backoff: Backoff::default(),
            parser: ResponseParser::new(false),
            pending: Vec::new(),
            composed: Vec::new(),
        }
    }

    /// A request is in flight on this connection.
    pub fn is_busy(&self) -> bool {
        !matches!(self.phase, Phase::Closed | Phase::Idle)
    }

    /// Where the request in flight is, for the count of unanswered ones; None when idle.
    pub fn stage(&self) -> Option<Stage> {
        match (self.phase, &self.stream) {
            (Phase::Closed | Phase::Idle, _) => None,
            (Phase::WaitingToConnect | Phase::Connecting, _) | (_, None) => Some(Stage::Connecting),
            (_, Some(stream)) if stream.is_handshaking() => Some(Stage::TlsHandshake),
            _ => Some(Stage::AwaitingResponse),
        }
    }

    /// Begin a request that will be sent on this connection (after connecting, if needed).
    pub fn begin(
        &mut self,
        now_us: u64,
        intended_us: u64,
        timeout_us: u64,
        measured: bool,
        request: usize,
        encoded: &EncodedRequest,
    ) {
        self.request = request;
        self.intended_us = intended_us;
        self.started_us = now_us;
        self.deadline_us = now_us + timeout_us;
        self.measured = measured;
        self.bytes_in = 0;
        self.resent = false;
        self.parser = ResponseParser::expecting(encoded.is_head, encoded.expect.as_ref());
    }

    /// Collect this response's Set-Cookie values (sessions keep cookies), reusing the buffer.
    pub fn collect_cookies(&mut self, buffer: Vec<u8>) {
        let parser = std::mem::replace(&mut self.parser, ResponseParser::new(false));
        self.parser = parser.collecting_cookies(buffer);
    }

    /// The Set-Cookie values of the response that ended, one per line.
    pub fn set_cookies(&self) -> &[u8] {
        self.parser.set_cookies()
    }

    /// The cookie buffer, for the next request's parser.
    pub fn take_cookie_buffer(&mut self) -> Vec<u8> {
        self.parser.take_cookie_buffer()
    }

    /// Make `request` with a `Cookie: {cookie}` header in `composed`; an empty cookie leaves
    /// `composed` empty (the request goes as encoded).
    pub fn compose(&mut self, request: &[u8], cookie: &[u8]) {
        self.composed.clear();
        if cookie.is_empty() {
            return;
        }
        let head_end = memchr::memmem::find(request, b"\r\n\r\n").map_or(request.len(), |at| at + 2);
        self.composed.extend_from_slice(&request[..head_end]);
        self.composed.extend_from_slice(b"Cookie: ");
        self.composed.extend_from_slice(cookie);
        self.composed.extend_from_slice(b"\r\n");
        self.composed.extend_from_slice(&request[head_end..]);
    }

    /// The request ended as `outcome` because the server closed a kept-alive connection as the
    /// request went out on it, before any byte of an answer (RFC 9112 §9.3.1): one with an
    /// `idempotent` method may be sent again on a new connection. Only once: there it is the
    /// connection's first request, whose failure is the server's answer.
    pub fn is_stale(&self, outcome: Outcome, idempotent: bool) -> bool {
        let reused = self.calls > 1;
        idempotent && reused && self.bytes_in == 0 && outcome == Err(ErrorKind::Reset)
    }

    /// Between requests: the server closed the connection (`reported`: the readiness event said so).
    pub fn closed_by_peer(&self, reported: bool) -> bool {
        reported || self.stream.as_ref().is_some_and(Transport::closed_by_peer)
    }

    /// Drop the socket (closing it) and forget per-connection state; the phase is the caller's.
    pub fn disconnect(&mut self) {
        self.stream = None;
        self.calls = 0;
        self.pending.clear();
    }

    /// After a readiness event while connecting: None while still connecting.
    pub fn connected(&mut self) -> Option<Result<(), ErrorKind>> {
        connect_result(self.stream.as_ref()?.socket())
    }

    /// Write what is left of `request`; returns the bytes written by this call.
    pub fn transmit(&mut self, request: &[u8]) -> (u64, Step) {
        let (Some(stream), Phase::Writing { written: start }) = (self.stream.as_mut(), self.phase) else {
            return (0, Step::Wait);
        };
        let mut written = start;
        let step = loop {
            match stream.write(&request[written..]) {
                Ok(n) => {
                    written += n;
                    if written == request.len() {
                        break Step::Written;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Step::Wait,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Step::Ended { outcome: Err(ErrorKind::of_transfer(&e)), reusable: false },
            }
        };
        self.phase = if step == Step::Written { Phase::Reading } else { Phase::Writing { written } };
        ((written - start) as u64, step)
    }

    /// Read what has arrived, through `scratch`; returns the bytes read by this call.
    /// `peer_closed`: the event reported the peer's FIN, which raises no further event.
    pub fn receive(&mut self, scratch: &mut [u8], peer_closed: bool) -> (u64, Step) {
        let Some(stream) = self.stream.as_mut() else {
            return (0, Step::Wait);
        };
        let (mut total, mut fed) = (0u64, Ok(None));
        let read = stream.read_with(scratch, peer_closed, |input| {
            total += input.len() as u64;
            fed = feed(&mut self.parser, &mut self.pending, input);
            matches!(fed, Ok(None))
        });
        let step = match (fed, read) {
            (Err(kind), _) => Step::Ended { outcome: Err(kind), reusable: false },
            // The server closed after its answer: the FIN raises no further event.
            (Ok(Some(Step::Ended { outcome, reusable })), _) => {
                let open = !peer_closed && !stream.closed_by_peer();
                Step::Ended { outcome, reusable: reusable && open }
            }
            (Ok(Some(step)), _) => step,
            (Ok(None), Ok(ReadEnd::Closed)) => Step::Ended { outcome: self.parser.finish_at_close(), reusable: false },
            (Ok(None), Ok(_)) => Step::Wait,
            (Ok(None), Err(e)) => Step::Ended { outcome: Err(ErrorKind::of_transfer(&e)), reusable: false },
        };
        (total, step)
    }
}

/// After a readiness event on a connecting socket: None while still connecting.
pub fn connect_result(socket: &TcpStream) -> Option<Result<(), ErrorKind>> {
    Some(tcp::connect_status(socket)?.map_err(|err| ErrorKind::of_connect(&err)))
}

impl Default for Conn {
    fn default() -> Conn {
        Conn::new()
    }
}

/// Bytes left over after a complete response were not asked for: the connection is not reused.
fn ended(head: Head, leftover: usize) -> Step {
    Step::Ended { outcome: Ok(head), reusable: leftover == 0 }
}

/// Parse `input`, after the start of a head kept from earlier reads if there is one.
fn feed(parser: &mut ResponseParser, pending: &mut Vec<u8>, input: &[u8]) -> Result<Option<Step>, ErrorKind> {
    if pending.is_empty() {
        feed_fresh(parser, pending, input)
    } else {
        pending.extend_from_slice(input);
        feed_pending(parser, pending)
    }
}

fn feed_fresh(parser: &mut ResponseParser, pending: &mut Vec<u8>, input: &[u8]) -> Result<Option<Step>, ErrorKind> {
    match parser.feed(input)? {
        Progress::Done { consumed, head } => Ok(Some(ended(head, input.len() - consumed))),
        Progress::More { consumed } => {
            pending.extend_from_slice(&input[consumed..]);
            Ok(None)
        }
    }
}

fn feed_pending(parser: &mut ResponseParser, pending: &mut Vec<u8>) -> Result<Option<Step>, ErrorKind> {
    match parser.feed(pending)? {
        Progress::Done { consumed, head } => {
            let leftover = pending.len() - consumed;
            pending.clear();
            Ok(Some(ended(head, leftover)))
        }
        Progress::More { consumed } => {
            pending.drain(..consumed);
            Ok(None)
        }
    }
}
