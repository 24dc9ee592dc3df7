//! The client's TLS connection as the engine drives it, fed what a server might send: arbitrary
//! bytes, or a real handshake with the built-in server's configuration whose bytes are tampered with.

use std::io::{self, Read, Write};
use std::sync::{Arc, OnceLock};

use rustls::{ClientConnection, Connection, ServerConfig, ServerConnection};

use super::{control, split};
use crate::conn::tls::{client_config, read_plaintext, server_config, server_name, TlsPlan};

/// What the built-in server answers once the handshake is over.
const REPLY: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
/// A handshake with a tampered peer ends in far fewer flights.
const FLIGHTS_MAX: usize = 8;

/// The bytes of one read from the server; when they run out the socket would block.
struct Socket<'a>(&'a [u8]);

impl Read for Socket<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.0.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.0.read(buf)
    }
}

/// `TlsStream::read` (conn/transport.rs) over an in-memory socket: plaintext if there is some,
/// else records read and processed until some arrives, the socket would block or the peer is gone.
fn engine_read(session: &mut Connection, socket: &mut impl Read, to_server: &mut Vec<u8>) -> io::Result<Vec<u8>> {
    let mut plaintext = vec![0; 64 * 1024];
    loop {
        match session.reader().read(&mut plaintext) {
            Ok(n) => return Ok(plaintext[..n].to_vec()),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(Vec::new()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        if session.read_tls(socket)? == 0 {
            return Ok(Vec::new());
        }
        let processed = session.process_new_packets();
        while session.wants_write() {
            session.write_tls(to_server)?;
        }
        if let Err(err) = processed {
            return Err(io::Error::new(io::ErrorKind::InvalidData, err));
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Failed(String),
    /// The server's bytes ran out and the socket would block.
    Waiting,
    /// The server closed the connection.
    Closed,
}

/// How the engine reads TLS: HTTP/1's `TlsStream::read`, or HTTP/2's `read_plaintext`.
#[derive(Debug, Clone, Copy)]
enum Reader {
    Http1,
    Http2,
}

/// Reads until the socket would block, the peer closes or TLS fails; the plaintext that came.
fn read_all(reader: Reader, session: &mut Connection, bytes: &[u8], to_server: &mut Vec<u8>) -> (Outcome, Vec<u8>) {
    let mut socket = Socket(bytes);
    let mut received = Vec::new();
    if let Reader::Http2 = reader {
        let mut scratch = vec![0; 64 * 1024];
        let read = read_plaintext(session, &mut socket, &mut scratch, false, |plain| received.extend_from_slice(plain));
        // The worker flushes what TLS queued (an alert, a handshake flight) after each read.
        while session.wants_write() {
            session.write_tls(to_server).expect("writes to memory");
        }
        let outcome = match read {
            Ok(true) => Outcome::Waiting,
            Ok(false) => Outcome::Closed,
            Err(e) => Outcome::Failed(e.to_string()),
        };
        return (outcome, received);
    }
    loop {
        match engine_read(session, &mut socket, to_server) {
            Ok(data) if data.is_empty() => return (Outcome::Closed, received),
            Ok(data) => received.extend(data),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return (Outcome::Waiting, received),
            Err(e) => return (Outcome::Failed(e.to_string()), received),
        }
    }
}

fn plan(mode: u8) -> TlsPlan {
    let version = [None, Some("1.2"), Some("1.3")][usize::from(mode % 3)].map(String::from);
    TlsPlan { version, cipher: None, resumption: true }
}

/// A new client, as the worker makes one per connection, and its ClientHello.
fn client(plan: &TlsPlan) -> (Connection, Vec<u8>) {
    let config = client_config(plan, &[]).expect("a valid plan");
    let name = server_name("localhost").expect("a valid name");
    let mut session = Connection::Client(ClientConnection::new(config, name).expect("a client"));
    let mut hello = Vec::new();
    session.write_tls(&mut hello).expect("writes to memory");
    assert!(!hello.is_empty(), "no ClientHello");
    (session, hello)
}

/// Steering: mode (version: any, 1.2, 1.3; bit 3: a tampered real handshake; bit 4: HTTP/2's
/// reader), then three cut points.
pub fn tls_client(data: &[u8]) {
    let ([mode, cut_a, cut_b, cut_c], rest) = control::<4>(data);
    let reader = if mode & 16 == 0 { Reader::Http1 } else { Reader::Http2 };
    if mode & 8 == 0 {
        from_any_server(reader, rest, &plan(mode), &[cut_a, cut_b, cut_c]);
    } else {
        from_a_tampered_server(reader, rest, &plan(mode));
    }
}

/// Bytes no server signed cannot complete a handshake: no plaintext ever comes out, and what
/// becomes of the connection does not depend on how the bytes are cut into reads.
fn from_any_server(reader: Reader, bytes: &[u8], plan: &TlsPlan, cuts: &[u8]) {
    let outcome = |reads: &[&[u8]]| {
        let (mut session, mut to_server) = client(plan);
        for read in reads {
            let (outcome, plaintext) = read_all(reader, &mut session, read, &mut to_server);
            assert!(plaintext.is_empty(), "plaintext from an unsigned handshake: {plaintext:?}");
            if outcome != Outcome::Waiting {
                return outcome;
            }
        }
        assert!(session.is_handshaking(), "a handshake completed with an unsigned peer");
        Outcome::Waiting
    };
    let whole = outcome(&[bytes]);
    assert_eq!(outcome(&split(bytes, cuts)), whole, "cut at {cuts:?}");
}

fn server(plan: &TlsPlan) -> ServerConnection {
    static CONFIGS: OnceLock<[Arc<ServerConfig>; 3]> = OnceLock::new();
    let configs = CONFIGS.get_or_init(|| {
        [None, Some("1.2"), Some("1.3")].map(|version| server_config(version, None).expect("a server config"))
    });
    let index = match plan.version.as_deref() {
        None => 0,
        Some("1.2") => 1,
        _ => 2,
    };
    ServerConnection::new(configs[index].clone()).expect("a server")
}

/// Each 3 bytes of `edits`: an offset (little-endian u16) into the server's bytes and a byte to
/// XOR there. The client delivers the server's plaintext or a prefix of it, never other bytes;
/// untouched, the handshake completes and the whole reply comes through.
fn from_a_tampered_server(reader: Reader, edits: &[u8], plan: &TlsPlan) {
    let edits: Vec<(usize, u8)> =
        edits.chunks_exact(3).map(|e| (usize::from(u16::from_le_bytes([e[0], e[1]])), e[2])).collect();
    let (mut client, mut to_server) = client(plan);
    let mut server = server(plan);
    let (mut sent, mut received, mut tampered, mut replied) = (0, Vec::new(), false, false);
    for _ in 0..FLIGHTS_MAX {
        let answered = !to_server.is_empty()
            && server.read_tls(&mut &to_server[..]).is_ok()
            && server.process_new_packets().is_ok();
        if answered && !server.is_handshaking() && !replied {
            server.writer().write_all(REPLY).expect("the reply fits");
            replied = true;
        }
        to_server.clear();
        let mut flight = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut flight).expect("writes to memory");
        }
        if flight.is_empty() {
            break;
        }
        for &(offset, xor) in &edits {
            if xor != 0 && (sent..sent + flight.len()).contains(&offset) {
                flight[offset - sent] ^= xor;
                tampered = true;
            }
        }
        sent += flight.len();
        let (outcome, plaintext) = read_all(reader, &mut client, &flight, &mut to_server);
        received.extend(plaintext);
        assert!(REPLY.starts_with(&received), "plaintext the server never sent: {received:?}");
        if let Outcome::Failed(err) = outcome {
            assert!(tampered, "an honest handshake failed: {err}");
            return;
        }
    }
    if !tampered {
        assert_eq!(received, REPLY, "an honest handshake delivers the reply");
    }
}
