//! The response parser fed every valid response split at every byte boundary, pipelined
//! responses, and chunked edge cases.

use gauntlet_engine::http1::{Head, Progress, ResponseParser, MAX_HEAD_BYTES};
use gauntlet_engine::stats::error::ErrorKind;

/// Feed `parts` in order as a connection would: bytes a partial head left unconsumed are
/// offered again in front of the next part. Returns the head and the bytes left after it.
fn parse_in_parts(parts: &[&[u8]], head_request: bool) -> Result<Option<(Head, usize)>, ErrorKind> {
    let mut parser = ResponseParser::new(head_request);
    let mut pending: Vec<u8> = Vec::new();
    for part in parts {
        pending.extend_from_slice(part);
        match parser.feed(&pending)? {
            Progress::Done { consumed, head } => return Ok(Some((head, pending.len() - consumed))),
            Progress::More { consumed } => {
                pending.drain(..consumed);
            }
        }
    }
    Ok(None)
}

const VALID: &[(&str, bool, u16, bool)] = &[
    // (response, HEAD request, status, keep-alive)
    ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, 200, true),
    ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false, 200, true),
    ("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nabc", false, 200, false),
    ("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc", false, 200, false),
    ("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 3\r\n\r\nabc", false, 200, true),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", false, 200, true),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5;ext=1;x=\"y\"\r\nhello\r\nA\r\n0123456789\r\n0;last\r\nTrailer-A: 1\r\nTrailer-B: 2\r\n\r\n", false, 200, true),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n1\r\nx\r\n0\r\n\r\n", false, 200, true),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFf\r\n", false, 200, true),
    ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", false, 201, true),
    ("HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n", false, 204, true),
    ("HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n", false, 304, true),
    ("HTTP/1.1 200 OK\r\nContent-Length: 83572\r\n\r\n", true, 200, true),
    ("HTTP/1.1 404 Not Found\r\ncontent-length:  4 \r\n\r\nnope", false, 404, true),
];

/// The chunked response with a 255-byte chunk needs its data appended.
fn full(response: &str) -> Vec<u8> {
    let mut bytes = response.as_bytes().to_vec();
    if response.ends_with("Ff\r\n") {
        bytes.extend(std::iter::repeat_n(b'z', 255));
        bytes.extend_from_slice(b"\r\n0\r\n\r\n");
    }
    bytes
}

#[test]
fn every_split_of_every_valid_response() {
    for &(response, head_request, status, keep_alive) in VALID {
        let bytes = full(response);
        let expected = Some((Head { status, keep_alive }, 0));
        assert_eq!(parse_in_parts(&[&bytes], head_request), Ok(expected), "whole: {response:?}");
        for cut in 1..bytes.len() {
            let parts = [&bytes[..cut], &bytes[cut..]];
            assert_eq!(parse_in_parts(&parts, head_request), Ok(expected), "split at {cut}: {response:?}");
        }
        for second in 1..bytes.len() {
            let first = second / 2;
            let parts = [&bytes[..first], &bytes[first..second], &bytes[second..]];
            assert_eq!(parse_in_parts(&parts, head_request), Ok(expected), "three parts at {first},{second}");
        }
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(parse_in_parts(&bytewise, head_request), Ok(expected), "byte by byte: {response:?}");
    }
}

#[test]
fn incomplete_responses_wait_for_more() {
    for &(response, head_request, ..) in VALID {
        let bytes = full(response);
        if head_request {
            continue;
        }
        assert_eq!(parse_in_parts(&[&bytes[..bytes.len() - 1]], head_request), Ok(None), "{response:?}");
    }
}

#[test]
fn pipelined_responses_end_where_the_next_begins() {
    let first = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    let second = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let third = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    let stream = format!("{first}{second}{third}");
    let mut rest = stream.as_bytes();
    let mut statuses = Vec::new();
    while !rest.is_empty() {
        let mut parser = ResponseParser::new(false);
        match parser.feed(rest).unwrap() {
            Progress::Done { consumed, head } => {
                statuses.push(head.status);
                rest = &rest[consumed..];
            }
            Progress::More { .. } => panic!("incomplete"),
        }
    }
    assert_eq!(statuses, vec![200, 200, 404]);
}

#[test]
fn close_delimited_bodies_end_at_close() {
    let mut parser = ResponseParser::new(false);
    assert!(matches!(parser.feed(b"HTTP/1.1 200 OK\r\n\r\nsome body").unwrap(), Progress::More { .. }));
    assert_eq!(parser.finish_at_close(), Ok(Head { status: 200, keep_alive: false }));
}

#[test]
fn close_before_the_end_is_classified() {
    let cases: [(&[u8], ErrorKind); 4] = [
        (b"", ErrorKind::Reset),
        (b"HTTP/1.1 200 OK\r\nContent-", ErrorKind::Malformed),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", ErrorKind::Truncated),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", ErrorKind::Truncated),
    ];
    for (bytes, kind) in cases {
        let mut parser = ResponseParser::new(false);
        let _ = parser.feed(bytes).unwrap();
        assert_eq!(parser.finish_at_close(), Err(kind), "{:?}", String::from_utf8_lossy(bytes));
    }
}

#[test]
fn malformed_responses_are_refused() {
    let cases: [&[u8]; 9] = [
        b"garbage\r\n\r\n",
        b"SSH-2.0-OpenSSH_9.2p1\r\n",
        b"HTTP/1.1 2x0 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxY",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nTrailer\n",
    ];
    for bytes in cases {
        let mut parser = ResponseParser::new(false);
        assert_eq!(parser.feed(bytes), Err(ErrorKind::Malformed), "{:?}", String::from_utf8_lossy(bytes));
    }
}

#[test]
fn endless_heads_are_refused() {
    let mut head = b"HTTP/1.1 200 OK\r\nX-Filler: ".to_vec();
    head.resize(70_000, b'a');
    let mut parser = ResponseParser::new(false);
    assert_eq!(parser.feed(&head), Err(ErrorKind::Malformed));
}

/// Found writing the fuzz targets' invariant (any cut into reads gives the same outcome): a head past
/// MAX_HEAD_BYTES was accepted when a read completed it and refused when a read ended inside it.
#[test]
fn a_head_too_long_is_refused_however_it_is_cut() {
    let mut response = b"HTTP/1.1 200 OK\r\nX-Filler: ".to_vec();
    response.resize(MAX_HEAD_BYTES, b'a');
    response.extend_from_slice(b"\r\nContent-Length: 0\r\n\r\n");
    let halves = response.split_at(MAX_HEAD_BYTES / 2);
    for parts in [vec![&response[..]], vec![halves.0, halves.1]] {
        assert_eq!(parse_in_parts(&parts, false), Err(ErrorKind::Malformed), "in {} parts", parts.len());
    }
    let fits = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    assert!(parse_in_parts(&[fits], false).unwrap().is_some());
}
