//! The chunked decoder alone, fed arbitrary bytes cut at arbitrary points, against a decoder
//! that reads the whole input at once.

use super::{control, split};
use crate::http1::body::{BodyReader, Fed, Framing};

/// The most hex digits a chunk size may have (a u64).
const SIZE_DIGITS_MAX: usize = 16;

#[derive(Debug, PartialEq, Eq)]
enum Decoded {
    /// The body ended `end` bytes into the input.
    Done(usize),
    More,
    Bad,
}

fn decode_in_reads(reads: &[&[u8]]) -> Decoded {
    let mut reader = BodyReader::new(Framing::Chunked).expect("a chunked body");
    let mut fed = 0;
    for read in reads {
        match reader.feed(read, None) {
            Ok(Fed::Done(used)) => {
                assert!(used > 0 && used <= read.len(), "used {used} of {} bytes", read.len());
                return Decoded::Done(fed + used);
            }
            Ok(Fed::More) => fed += read.len(),
            Err(_) => return Decoded::Bad,
        }
    }
    Decoded::More
}

/// Steering: three cut points.
pub fn chunked_body(data: &[u8]) {
    let (cuts, input) = control::<3>(data);
    let whole = decode_in_reads(&[input]);
    assert_eq!(whole, reference(input), "against the whole-input decoder");
    assert_eq!(decode_in_reads(&split(input, &cuts)), whole, "cut at {cuts:?}");
}

/// What the engine accepts, read in one pass over the whole input: chunks of a size (1 to 16 hex
/// digits), an optional extension (from `;`, space or tab up to CR), CRLF, that many bytes and
/// CRLF; the zero-size chunk, then trailer lines up to an empty one.
fn reference(input: &[u8]) -> Decoded {
    let mut at = 0;
    loop {
        let digits = input[at..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
        if digits > SIZE_DIGITS_MAX {
            return Decoded::Bad;
        }
        let size_text = std::str::from_utf8(&input[at..at + digits]).expect("hex digits");
        at += digits;
        match input.get(at) {
            None => return Decoded::More,
            Some(_) if digits == 0 => return Decoded::Bad,
            Some(b';' | b' ' | b'\t') => at += input[at..].iter().take_while(|&&b| b != b'\r' && b != b'\n').count(),
            Some(_) => {}
        }
        at = match crlf(input, at) {
            Ok(next) => next,
            Err(decoded) => return decoded,
        };
        let size = u64::from_str_radix(size_text, 16).expect("at most 16 hex digits");
        if size == 0 {
            return trailers(input, at);
        }
        if ((input.len() - at) as u64) < size {
            return Decoded::More;
        }
        at = match crlf(input, at + size as usize) {
            Ok(next) => next,
            Err(decoded) => return decoded,
        };
    }
}

/// Past the CRLF at `at`, or why not.
fn crlf(input: &[u8], at: usize) -> Result<usize, Decoded> {
    match (input.get(at), input.get(at + 1)) {
        (Some(b'\r'), Some(b'\n')) => Ok(at + 2),
        (None, _) | (Some(b'\r'), None) => Err(Decoded::More),
        _ => Err(Decoded::Bad),
    }
}

fn trailers(input: &[u8], mut at: usize) -> Decoded {
    loop {
        let line = input[at..].iter().take_while(|&&b| b != b'\r' && b != b'\n').count();
        at = match crlf(input, at + line) {
            Ok(next) => next,
            Err(decoded) => return decoded,
        };
        if line == 0 {
            return Decoded::Done(at);
        }
    }
}
