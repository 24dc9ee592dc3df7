//! The response parser as a connection drives it: arbitrary bytes (a stream of responses, the
//! first one parsed) or a well-framed response followed by arbitrary bytes, cut into reads at
//! arbitrary points.

use super::{control, split};
use crate::http1::{Head, Progress, ResponseParser};
use crate::stats::error::ErrorKind;

/// Inputs up to this long are also fed one byte per read (each read re-parses a pending head).
const BYTEWISE_MAX: usize = 512;

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// The response ended `end` bytes into the stream.
    Done {
        head: Head,
        end: usize,
    },
    Failed(ErrorKind),
    /// The last byte left the response unfinished; what the peer's close would make of it.
    Waiting(Result<Head, ErrorKind>),
}

/// Feeds `reads` in order as `Conn::receive` does: a read goes to the parser as it is, unless a
/// partial head is pending, which is offered again with the read appended.
fn drive(reads: &[&[u8]], head_request: bool) -> Outcome {
    let mut parser = ResponseParser::new(head_request);
    let mut pending: Vec<u8> = Vec::new();
    let mut fed = 0;
    for &read in reads {
        let fresh = pending.is_empty();
        if !fresh {
            pending.extend_from_slice(read);
        }
        let input = if fresh { read } else { &pending[..] };
        let base = fed + read.len() - input.len();
        match parser.feed(input) {
            Err(kind) => return Outcome::Failed(kind),
            Ok(Progress::Done { consumed, head }) => {
                assert!(consumed <= input.len(), "consumed {consumed} of {} bytes", input.len());
                return Outcome::Done { head, end: base + consumed };
            }
            Ok(Progress::More { consumed }) => {
                assert!(consumed <= input.len(), "consumed {consumed} of {} bytes", input.len());
                if fresh {
                    pending.extend_from_slice(&read[consumed..]);
                } else {
                    pending.drain(..consumed);
                }
            }
        }
        fed += read.len();
    }
    Outcome::Waiting(parser.finish_at_close())
}

/// The outcome of `stream`, which must not depend on how it is cut into reads.
fn outcome_in_any_reads(stream: &[u8], head_request: bool, cuts: &[u8]) -> Outcome {
    let whole = drive(&[stream], head_request);
    assert_eq!(drive(&split(stream, cuts), head_request), whole, "cut at {cuts:?}");
    if stream.len() <= BYTEWISE_MAX {
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(drive(&bytes, head_request), whole, "byte by byte");
    }
    whole
}

/// Steering: mode (low 2 bits: raw, Content-Length, chunked, until close; higher bits vary the
/// message), then three cut points.
pub fn http1_response(data: &[u8]) {
    let ([mode, cut_a, cut_b, cut_c], rest) = control::<4>(data);
    let cuts = [cut_a, cut_b, cut_c];
    match mode % 4 {
        0 => raw(rest, mode & 4 != 0, &cuts),
        1 => content_length(rest, mode, &cuts),
        2 => chunked(rest, mode, &cuts),
        _ => until_close(rest, &cuts),
    }
}

/// A response ends where its bytes say, wherever that is: the bytes after it change nothing, and
/// it is not complete one byte earlier.
fn raw(stream: &[u8], head_request: bool, cuts: &[u8]) {
    if let Outcome::Done { head, end } = outcome_in_any_reads(stream, head_request, cuts) {
        assert!(end > 0 && end <= stream.len(), "ended at {end} of {}", stream.len());
        assert_eq!(drive(&[&stream[..end]], head_request), Outcome::Done { head, end }, "alone");
        assert!(
            matches!(drive(&[&stream[..end - 1]], head_request), Outcome::Waiting(_)),
            "complete before its last byte"
        );
    }
}

/// `(status, persistent)` the steering byte picks, and the head's extra line.
fn status_and_connection(mode: u8) -> (u16, bool, &'static str) {
    let status = [200, 201, 404, 500][usize::from(mode >> 2) % 4];
    if mode & 16 != 0 {
        (status, false, "Connection: close\r\n")
    } else {
        (status, true, "")
    }
}

/// The body is counted up to its declared length, never past it: the response ends exactly there.
fn content_length(rest: &[u8], mode: u8, cuts: &[u8; 3]) {
    let (status, keep_alive, connection) = status_and_connection(mode);
    let (body, after) = rest.split_at(usize::from(cuts[0]) * rest.len() / 256);
    let mut stream = format!("HTTP/1.1 {status} X\r\n{connection}Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    stream.extend_from_slice(body);
    let end = stream.len();
    stream.extend_from_slice(after);
    let outcome = outcome_in_any_reads(&stream, false, cuts);
    assert_eq!(outcome, Outcome::Done { head: Head { status, keep_alive }, end });
}

/// A chunked body ends after its last chunk and trailers, whatever its chunks hold and whatever follows.
fn chunked(rest: &[u8], mode: u8, cuts: &[u8; 3]) {
    let (status, keep_alive, connection) = status_and_connection(mode);
    let (body, after) = rest.split_at(usize::from(cuts[0]) * rest.len() / 256);
    let mut stream = format!("HTTP/1.1 {status} X\r\n{connection}Transfer-Encoding: chunked\r\n\r\n").into_bytes();
    let sizes = [usize::from(cuts[1]) + 1, usize::from(cuts[2]) + 1];
    let mut data = body;
    for size in sizes.iter().cycle() {
        if data.is_empty() {
            break;
        }
        let (chunk, left) = data.split_at((*size).min(data.len()));
        let extension = if mode & 32 != 0 { ";name=\"value\"" } else { "" };
        stream.extend_from_slice(format!("{:X}{extension}\r\n", chunk.len()).as_bytes());
        stream.extend_from_slice(chunk);
        stream.extend_from_slice(b"\r\n");
        data = left;
    }
    let trailer = if mode & 64 != 0 { "Trailer-A: 1\r\n" } else { "" };
    stream.extend_from_slice(format!("0\r\n{trailer}\r\n").as_bytes());
    let end = stream.len();
    stream.extend_from_slice(after);
    let outcome = outcome_in_any_reads(&stream, false, cuts);
    assert_eq!(outcome, Outcome::Done { head: Head { status, keep_alive }, end });
}

/// Without a length the body takes every byte and only the close completes it.
fn until_close(body: &[u8], cuts: &[u8]) {
    let mut stream = b"HTTP/1.1 200 OK\r\nServer: x\r\n\r\n".to_vec();
    stream.extend_from_slice(body);
    let outcome = outcome_in_any_reads(&stream, false, cuts);
    assert_eq!(outcome, Outcome::Waiting(Ok(Head { status: 200, keep_alive: false })));
}
