//! HTTP/1.x responses parsed in place: the head with httparse, the body counted by `body`.

pub mod body;
pub mod check;

use std::sync::Arc;

use body::{BodyReader, Fed, Framing};
use check::{ContentCheck, Marker};

use crate::stats::error::ErrorKind;

const MAX_HEADERS: usize = 64;
/// A head that has not ended after this many bytes is not a response worth waiting for.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The parts of a response head that the engine acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    /// The server lets the connection carry another request.
    pub keep_alive: bool,
}

/// How a request ended.
pub type Outcome = Result<Head, ErrorKind>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The response goes on. Input after `consumed` (a partial head) must be offered again,
    /// followed by the bytes that arrive next.
    More { consumed: usize },
    /// The response ended after `consumed` bytes of the input.
    Done { consumed: usize, head: Head },
}

/// Progress through one response.
#[derive(Debug)]
pub struct ResponseParser {
    head_request: bool,
    started: bool,
    head: Option<Head>,
    body: Option<BodyReader>,
    /// The marker the body must hold, when the request has one.
    check: Option<ContentCheck>,
    /// Set-Cookie values, one per line, when the request's session keeps cookies.
    set_cookies: Option<Vec<u8>>,
}

impl ResponseParser {
    /// A parser for the response to one request; a HEAD request's response has no body.
    pub fn new(head_request: bool) -> ResponseParser {
        ResponseParser { head_request, started: false, head: None, body: None, check: None, set_cookies: None }
    }

    /// Collect the response's Set-Cookie values into `buffer` (cleared first).
    pub fn collecting_cookies(mut self, mut buffer: Vec<u8>) -> ResponseParser {
        buffer.clear();
        self.set_cookies = Some(buffer);
        self
    }

    /// The Set-Cookie values so far, one per line (empty when not collecting).
    pub fn set_cookies(&self) -> &[u8] {
        self.set_cookies.as_deref().unwrap_or_default()
    }

    /// The cookie buffer back, for the next response's parser.
    pub fn take_cookie_buffer(&mut self) -> Vec<u8> {
        self.set_cookies.take().unwrap_or_default()
    }

    /// The same, for a response whose body must hold `marker` (a `Content` error otherwise).
    pub fn expecting(head_request: bool, marker: Option<&Arc<Marker>>) -> ResponseParser {
        ResponseParser { check: marker.map(|m| ContentCheck::new(Arc::clone(m))), ..ResponseParser::new(head_request) }
    }

    /// At least one byte of this response has arrived.
    pub fn has_started(&self) -> bool {
        self.started
    }

    pub fn feed(&mut self, input: &[u8]) -> Result<Progress, ErrorKind> {
        let mut at = 0;
        let head = loop {
            if let Some(head) = self.head {
                break head;
            }
            let rest = &input[at..];
            if rest.is_empty() {
                return Ok(Progress::More { consumed: at });
            }
            self.started = true;
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut response = httparse::Response::new(&mut headers);
            match response.parse(rest) {
                Ok(httparse::Status::Partial) if rest.len() < MAX_HEAD_BYTES => {
                    return Ok(Progress::More { consumed: at })
                }
                // A longer head is refused however it arrives, not only when a read ends inside it.
                Ok(httparse::Status::Complete(head_len)) if head_len <= MAX_HEAD_BYTES => {
                    at += head_len;
                    let status = response.code.unwrap_or(0);
                    if (100..200).contains(&status) && status != 101 {
                        continue;
                    }
                    let (framing, keep_alive) = framing_of(&response, self.head_request)?;
                    if let Some(cookies) = self.set_cookies.as_mut() {
                        collect_set_cookies(&response, cookies);
                    }
                    self.head = Some(Head { status, keep_alive });
                    self.body = BodyReader::new(framing);
                }
                _ => return Err(ErrorKind::Malformed),
            }
        };
        let Some(body) = self.body.as_mut() else {
            return self.checked(head).map(|head| Progress::Done { consumed: at, head });
        };
        match body.feed(&input[at..], self.check.as_mut()) {
            Ok(Fed::More) => Ok(Progress::More { consumed: input.len() }),
            Ok(Fed::Done(used)) => self.checked(head).map(|head| Progress::Done { consumed: at + used, head }),
            Err(_) => Err(ErrorKind::Malformed),
        }
    }

    /// A complete response without its marker is a `Content` error, unless its status already
    /// fails it (4xx, 5xx: the status says more than the missing marker).
    fn checked(&self, head: Head) -> Result<Head, ErrorKind> {
        match &self.check {
            Some(check) if !check.found() && head.status < 400 => Err(ErrorKind::Content),
            _ => Ok(head),
        }
    }

    /// The peer closed the connection: the response is complete only if its body ends at close.
    pub fn finish_at_close(&self) -> Result<Head, ErrorKind> {
        match (self.head, &self.body) {
            (Some(head), Some(body)) if body.ends_at_close() => self.checked(head),
            (Some(_), _) => Err(ErrorKind::Truncated),
            (None, _) if self.started => Err(ErrorKind::Malformed),
            (None, _) => Err(ErrorKind::Reset),
        }
    }
}

/// Each Set-Cookie value on its own line (a header value holds no newline).
fn collect_set_cookies(response: &httparse::Response, into: &mut Vec<u8>) {
    for header in response.headers.iter().filter(|h| h.name.eq_ignore_ascii_case("set-cookie")) {
        into.extend_from_slice(header.value);
        into.push(b'\n');
    }
}

fn has_token(value: &[u8], token: &str) -> bool {
    value.split(|&b| b == b',').any(|part| part.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

fn parse_length(value: &[u8]) -> Result<u64, ErrorKind> {
    let digits = value.trim_ascii();
    if digits.is_empty() || digits.len() > 19 || !digits.iter().all(u8::is_ascii_digit) {
        return Err(ErrorKind::Malformed);
    }
    Ok(digits.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0')))
}

/// How the body of this response ends, and whether the connection stays open after it.
fn framing_of(response: &httparse::Response, head_request: bool) -> Result<(Framing, bool), ErrorKind> {
    let mut length = None;
    let mut chunked = false;
    let mut transfer_encoded = false;
    let mut close = false;
    let mut keep_alive = false;
    for header in response.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("content-length") {
            let value = parse_length(header.value)?;
            if length.is_some_and(|seen| seen != value) {
                return Err(ErrorKind::Malformed);
            }
            length = Some(value);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            transfer_encoded = true;
            let last = header.value.rsplit(|&b| b == b',').next().unwrap_or_default();
            chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            close |= has_token(header.value, "close");
            keep_alive |= has_token(header.value, "keep-alive");
        }
    }
    let status = response.code.unwrap_or(0);
    let framing = if head_request || status == 204 || status == 304 || status < 200 {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if let (Some(n), false) = (length, transfer_encoded) {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    let persistent = match response.version {
        Some(1) => !close,
        _ => keep_alive && !close,
    };
    let keep_alive = persistent && framing != Framing::UntilClose && status != 101;
    Ok((framing, keep_alive))
}
