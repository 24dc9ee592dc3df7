//! The HTTP/2 client connection as the worker drives it: arbitrary server bytes, cut into reads
//! at arbitrary points, after four streams were opened. Whatever the bytes, nothing panics, each
//! stream ends at most once, and the outcome does not depend on where the reads were cut.

use super::{control, split};
use crate::http2::client::ConnectionError;
use crate::http2::{Client, Ended, H2Request};

const STREAMS: usize = 4;

fn drive(reads: &[&[u8]]) -> (Vec<Ended>, Option<ConnectionError>) {
    let mut client = Client::new();
    let request = H2Request::new("GET", "http", "127.0.0.1:8080", "/", &[], b"");
    for slot in 0..STREAMS {
        client.open(slot, 0, &request, None, b"");
    }
    let mut ended = Vec::new();
    for read in reads {
        if let Err(e) = client.feed(read, &mut ended) {
            return (ended, Some(e));
        }
    }
    (ended, None)
}

pub fn h2_frames(data: &[u8]) {
    let (cuts, input) = control::<4>(data);
    let whole = drive(&[input]);
    let mut slots: Vec<usize> = whole.0.iter().map(|e| e.slot).collect();
    slots.sort_unstable();
    slots.dedup();
    assert_eq!(slots.len(), whole.0.len(), "a stream ended twice: {:?}", whole.0);
    assert!(slots.iter().all(|&s| s < STREAMS));
    assert_eq!(drive(&split(input, &cuts)), whole, "cut at {cuts:?}");
}
