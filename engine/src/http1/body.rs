//! Body framing: counts the bytes of a response body as they arrive and says where it ends.
//! Nothing is copied or stored; a content check, when there is one, sees the body's data.

use super::check::ContentCheck;

/// How the end of a body is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framing {
    /// HEAD, 1xx, 204 and 304: the head is the whole response.
    Empty,
    Length(u64),
    Chunked,
    /// No length given: the body ends when the server closes the connection.
    UntilClose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    Size { value: u64, digits: u32 },
    Extension { value: u64 },
    SizeLf { value: u64 },
    Data { remaining: u64 },
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    TrailerLf { last: bool },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Length { remaining: u64 },
    Chunked(Chunk),
    UntilClose,
}

/// The body is not valid chunked encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadChunk;

/// Progress through one body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyReader {
    state: State,
}

/// What `feed` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fed {
    /// All the input belongs to the body, which goes on.
    More,
    /// The body ended after this many bytes of the input.
    Done(usize),
}

impl BodyReader {
    /// None when the framing needs no body at all.
    pub fn new(framing: Framing) -> Option<BodyReader> {
        let state = match framing {
            Framing::Empty | Framing::Length(0) => return None,
            Framing::Length(n) => State::Length { remaining: n },
            Framing::Chunked => State::Chunked(Chunk::Size { value: 0, digits: 0 }),
            Framing::UntilClose => State::UntilClose,
        };
        Some(BodyReader { state })
    }

    /// The next bytes of the response; `check` sees those that are body data.
    pub fn feed(&mut self, input: &[u8], check: Option<&mut ContentCheck>) -> Result<Fed, BadChunk> {
        let (fed, data) = match &mut self.state {
            State::Length { remaining } => {
                if (input.len() as u64) < *remaining {
                    *remaining -= input.len() as u64;
                    (Fed::More, input)
                } else {
                    let used = *remaining as usize;
                    *remaining = 0;
                    (Fed::Done(used), &input[..used])
                }
            }
            State::UntilClose => (Fed::More, input),
            State::Chunked(chunk) => return feed_chunked(chunk, input, check),
        };
        if let Some(check) = check {
            check.scan(data);
        }
        Ok(fed)
    }

    /// The connection ended: true when that completes the body.
    pub fn ends_at_close(&self) -> bool {
        self.state == State::UntilClose
    }
}

fn hex_value(byte: u8) -> Option<u64> {
    (byte as char).to_digit(16).map(u64::from)
}

fn feed_chunked(chunk: &mut Chunk, input: &[u8], mut check: Option<&mut ContentCheck>) -> Result<Fed, BadChunk> {
    let mut at = 0;
    while at < input.len() {
        let byte = input[at];
        *chunk = match *chunk {
            Chunk::Size { value, digits } => match (hex_value(byte), byte) {
                (Some(d), _) if digits < 16 => Chunk::Size { value: value * 16 + d, digits: digits + 1 },
                (None, b';' | b' ' | b'\t') if digits > 0 => Chunk::Extension { value },
                (None, b'\r') if digits > 0 => Chunk::SizeLf { value },
                _ => return Err(BadChunk),
            },
            Chunk::Extension { value } => match byte {
                b'\r' => Chunk::SizeLf { value },
                b'\n' => return Err(BadChunk),
                _ => Chunk::Extension { value },
            },
            Chunk::SizeLf { value } => match byte {
                b'\n' if value == 0 => Chunk::TrailerStart,
                b'\n' => Chunk::Data { remaining: value },
                _ => return Err(BadChunk),
            },
            Chunk::Data { remaining } => {
                let available = (input.len() - at) as u64;
                let taken = available.min(remaining);
                if let Some(check) = check.as_deref_mut() {
                    check.scan(&input[at..at + taken as usize]);
                }
                at += taken as usize;
                *chunk = if taken == remaining { Chunk::DataCr } else { Chunk::Data { remaining: remaining - taken } };
                continue;
            }
            Chunk::DataCr if byte == b'\r' => Chunk::DataLf,
            Chunk::DataLf if byte == b'\n' => Chunk::Size { value: 0, digits: 0 },
            Chunk::DataCr | Chunk::DataLf => return Err(BadChunk),
            Chunk::TrailerStart if byte == b'\r' => Chunk::TrailerLf { last: true },
            Chunk::TrailerStart | Chunk::TrailerLine if byte == b'\n' => return Err(BadChunk),
            Chunk::TrailerStart | Chunk::TrailerLine if byte == b'\r' => Chunk::TrailerLf { last: false },
            Chunk::TrailerStart | Chunk::TrailerLine => Chunk::TrailerLine,
            Chunk::TrailerLf { last } if byte == b'\n' => {
                if last {
                    return Ok(Fed::Done(at + 1));
                }
                Chunk::TrailerStart
            }
            Chunk::TrailerLf { .. } => return Err(BadChunk),
        };
        at += 1;
    }
    Ok(Fed::More)
}
