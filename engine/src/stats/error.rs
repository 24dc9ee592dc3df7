//! One name per failure. The strings are the same in Python, the store and the report.

use std::collections::BTreeMap;
use std::io;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The peer answered the SYN with RST (nothing listens there).
    ConnectRefused,
    /// The connection was not established within the request timeout.
    ConnectTimeout,
    /// Any other connect failure (unreachable, no route, out of ports).
    ConnectError,
    /// The peer closed or reset the connection before the response began.
    Reset,
    /// The response did not complete within the request timeout.
    Timeout,
    /// The bytes received are not a valid HTTP/1.x response.
    Malformed,
    /// The connection ended in the middle of a response body.
    Truncated,
    /// The TLS handshake or a TLS record failed.
    Tls,
    /// A complete response (status below 400) whose body lacks the marker its request expects.
    Content,
    /// HTTP/2: the server's GOAWAY left the stream unprocessed, or the connection closed after it.
    Goaway,
    /// HTTP/2: the server reset the stream (RST_STREAM).
    StreamReset,
    /// HTTP/2: the server broke the protocol (a malformed frame, an oversized or undecodable
    /// header block, a flow-control violation, a response without a status); a connection-level
    /// one ends the connection and every stream on it.
    H2Protocol,
}

pub const ERROR_KIND_COUNT: usize = 12;

impl ErrorKind {
    pub const ALL: [ErrorKind; ERROR_KIND_COUNT] = [
        ErrorKind::ConnectRefused,
        ErrorKind::ConnectTimeout,
        ErrorKind::ConnectError,
        ErrorKind::Reset,
        ErrorKind::Timeout,
        ErrorKind::Malformed,
        ErrorKind::Truncated,
        ErrorKind::Tls,
        ErrorKind::Content,
        ErrorKind::Goaway,
        ErrorKind::StreamReset,
        ErrorKind::H2Protocol,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::ConnectTimeout => "connect_timeout",
            ErrorKind::ConnectError => "connect_error",
            ErrorKind::Reset => "reset",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Malformed => "malformed",
            ErrorKind::Truncated => "truncated",
            ErrorKind::Tls => "tls",
            ErrorKind::Content => "content",
            ErrorKind::Goaway => "goaway",
            ErrorKind::StreamReset => "stream_reset",
            ErrorKind::H2Protocol => "h2_protocol",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }

    /// The kind of an I/O error seen while connecting.
    pub fn of_connect(err: &io::Error) -> ErrorKind {
        match err.kind() {
            io::ErrorKind::ConnectionRefused => ErrorKind::ConnectRefused,
            io::ErrorKind::TimedOut => ErrorKind::ConnectTimeout,
            _ => ErrorKind::ConnectError,
        }
    }

    /// The kind of an I/O error seen on an established connection.
    pub fn of_transfer(err: &io::Error) -> ErrorKind {
        match err.kind() {
            io::ErrorKind::TimedOut => ErrorKind::Timeout,
            io::ErrorKind::InvalidData => ErrorKind::Tls,
            _ => ErrorKind::Reset,
        }
    }
}

/// Error counts indexed by `ErrorKind::index`.
pub type ErrorCounts = [u64; ERROR_KIND_COUNT];

/// Error counts by kind name, every kind listed (0 for those that did not occur).
pub fn named(counts: &ErrorCounts) -> BTreeMap<String, u64> {
    ErrorKind::ALL.iter().map(|kind| (kind.as_str().to_string(), counts[kind.index()])).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_follow_all() {
        for (i, kind) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(kind.index(), i);
        }
        let mut names: Vec<_> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        names.dedup();
        assert_eq!(names.len(), ERROR_KIND_COUNT);
    }

    #[test]
    fn io_errors_map_to_kinds() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(ErrorKind::of_connect(&refused), ErrorKind::ConnectRefused);
        let reset = io::Error::from(io::ErrorKind::ConnectionReset);
        assert_eq!(ErrorKind::of_transfer(&reset), ErrorKind::Reset);
    }
}
