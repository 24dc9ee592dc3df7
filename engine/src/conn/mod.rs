//! One client connection: a small state machine driven by readiness events.
//! Closed -> [WaitingToConnect ->] Connecting -> Writing -> Reading -> (next request: Writing | Closed)

pub mod backoff;
pub mod batch;
pub mod batch_trial;
pub mod rx_time;
pub mod sockopt;
pub mod tcp;
pub mod tls;
pub mod transport;
pub mod uring;

use std::io;

use backoff::Backoff;
use mio::net::TcpStream;
use transport::{ReadEnd, Transport};

use crate::http1::{Head, Outcome, Progress, ResponseParser};
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

/// What `Conn::receive` read: its bytes, those of them after a complete response (not asked
/// for), and what the read came to.
pub struct Received {
    pub bytes: u64,
    pub unsolicited_bytes: u64,
    pub step: Step,
}

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
    /// When the kernel received the segment that completed the current response (engine time);
    /// None until then, or where the kernel gave no timestamp.
    pub answered_us: Option<u64>,
    /// The current request asked the server to close the connection.
    pub last_call: bool,
    /// Which of the run's encoded requests is in flight.
    pub request: usize,
    /// HTTP/2: the current request was already sent again after a graceful GOAWAY.
    pub resent: bool,
    /// Failed connects in a row, and when the next may start.
    pub backoff: Backoff,
    /// The current request opened this connection (a connect, and over TLS its handshake): its
    /// thread counts it in `opening` until the request ends.
    pub opens: bool,
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
            answered_us: None,
            last_call: false,
            request: 0,
            resent: false,
            backoff: Backoff::default(),
            opens: false,
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

    /// When the current request ended: the kernel's receive time of its answer's last segment
    /// where it gave one (within the request's start and `now_us`, what is physically possible),
    /// else `now_us`.
    pub fn ended_us(&self, now_us: u64) -> u64 {
        self.answered_us.map_or(now_us, |at| at.clamp(self.started_us, now_us))
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
        self.answered_us = None;
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

    /// Read what has arrived, through `scratch`. Bytes after a complete response were not asked
    /// for (a server answering twice, or ahead): what has arrived of them is read and counted
    /// (`unsolicited_bytes`), and the connection is not reused.
    /// `peer_closed`: the event reported the peer's FIN, which raises no further event.
    pub fn receive(&mut self, scratch: &mut [u8], peer_closed: bool) -> Received {
        let Some(stream) = self.stream.as_mut() else {
            return Received { bytes: 0, unsolicited_bytes: 0, step: Step::Wait };
        };
        let (mut bytes, mut unsolicited_bytes, mut fed) = (0u64, 0u64, Ok(None));
        let answered_us = &mut self.answered_us;
        let read = stream.read_with(scratch, peer_closed, |input, arrived_us| {
            bytes += input.len() as u64;
            if let Ok(Some(_)) = fed {
                unsolicited_bytes += input.len() as u64;
                return true;
            }
            fed = feed(&mut self.parser, &mut self.pending, input);
            if let Ok(Some((_, leftover))) = fed {
                unsolicited_bytes += leftover as u64;
                *answered_us = arrived_us;
            }
            // Read on after the response through what has arrived: what follows it in a record
            // TLS has decrypted or a buffer the ring has received would otherwise pass for the
            // next request's answer. It costs no system call, but after the peer's FIN (a closed
            // connection is not reused) one more read would find the end.
            match fed {
                Ok(None) => true,
                Ok(Some(_)) => !peer_closed,
                Err(_) => false,
            }
        });
        let step = match (fed, read) {
            (Err(kind), _) => Step::Ended { outcome: Err(kind), reusable: false },
            // The server closed after its answer: the FIN raises no further event.
            (Ok(Some((head, _))), _) => {
                let open = !peer_closed && !stream.closed_by_peer();
                Step::Ended { outcome: Ok(head), reusable: unsolicited_bytes == 0 && open }
            }
            (Ok(None), Ok(ReadEnd::Closed)) => Step::Ended { outcome: self.parser.finish_at_close(), reusable: false },
            (Ok(None), Ok(_)) => Step::Wait,
            (Ok(None), Err(e)) => Step::Ended { outcome: Err(ErrorKind::of_transfer(&e)), reusable: false },
        };
        Received { bytes, unsolicited_bytes, step }
    }

    /// Between requests the connection turned readable, though no request is outstanding: read
    /// what came. Returns its bytes (a response nobody asked for, when not 0) and whether the
    /// connection is still clean for the next request (nothing came, the peer did not close).
    /// Under TLS only application data counts: a session ticket leaves it clean.
    pub fn read_unasked(&mut self, scratch: &mut [u8], peer_closed: bool) -> (u64, bool) {
        let Some(stream) = self.stream.as_mut() else { return (0, false) };
        let mut bytes = 0u64;
        let read = stream.read_with(scratch, peer_closed, |input, _| {
            bytes += input.len() as u64;
            true
        });
        let clean = bytes == 0 && matches!(read, Ok(ReadEnd::Drained)) && !stream.closed_by_peer();
        (bytes, clean)
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

/// A complete response, and how many bytes of the input came after it.
type Done = Option<(Head, usize)>;

/// Parse `input`, after the start of a head kept from earlier reads if there is one.
fn feed(parser: &mut ResponseParser, pending: &mut Vec<u8>, input: &[u8]) -> Result<Done, ErrorKind> {
    if pending.is_empty() {
        feed_fresh(parser, pending, input)
    } else {
        pending.extend_from_slice(input);
        feed_pending(parser, pending)
    }
}

fn feed_fresh(parser: &mut ResponseParser, pending: &mut Vec<u8>, input: &[u8]) -> Result<Done, ErrorKind> {
    match parser.feed(input)? {
        Progress::Done { consumed, head } => Ok(Some((head, input.len() - consumed))),
        Progress::More { consumed } => {
            pending.extend_from_slice(&input[consumed..]);
            Ok(None)
        }
    }
}

fn feed_pending(parser: &mut ResponseParser, pending: &mut Vec<u8>) -> Result<Done, ErrorKind> {
    match parser.feed(pending)? {
        Progress::Done { consumed, head } => {
            let leftover = pending.len() - consumed;
            pending.clear();
            Ok(Some((head, leftover)))
        }
        Progress::More { consumed } => {
            pending.drain(..consumed);
            Ok(None)
        }
    }
}
