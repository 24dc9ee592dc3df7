//! The client's TLS connection as the engine drives it, fed what a server might send: arbitrary
//! bytes, or a real handshake with the built-in server's configuration whose bytes are tampered with.

use std::io::{self, Write};
use std::mem;
use std::sync::{Arc, OnceLock};

use rustls::{ClientConnection, Connection, ServerConfig, ServerConnection};

use super::{control, split};
use crate::conn::rx_time::StampedRead;
use crate::conn::tls::{client_config, server_config, server_name};
use crate::conn::transport::{ReadEnd, TlsStream};
use crate::plan::tls::TlsPlan;

const REPLY_BODY_BYTES: usize = 6000;
const REPLY_RECORD_BYTES: usize = 1000;
/// A handshake with a tampered peer ends in far fewer flights.
const FLIGHTS_MAX: usize = 8;

/// The client's socket in memory: reads take what the server sent (then it would block), writes
/// go to the server.
#[derive(Default)]
struct Memory {
    from_server: Vec<u8>,
    read: usize,
    to_server: Vec<u8>,
}

/// No kernel receives into memory: its reads carry no timestamp.
impl StampedRead for Memory {
    fn read_stamped(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
        let rest = &self.from_server[self.read..];
        if rest.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.read += n;
        Ok((n, None))
    }
}

impl Write for Memory {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.to_server.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
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

/// How the harness reads, as the engine's callers do: HTTP/2 takes every piece; HTTP/1 stops when
/// a response ends, here after every piece (`stop`). `scratch_bytes`: 64 KiB as the server's, or
/// small enough to cut records across reads.
#[derive(Debug, Clone, Copy)]
struct Reading {
    stop: bool,
    scratch_bytes: usize,
}

/// Hand the client `bytes` from the server and read, as the engine does, until the socket would
/// block, the peer closes or TLS fails; the plaintext that came.
fn read_all(reading: Reading, client: &mut TlsStream<Memory>, bytes: &[u8]) -> (Outcome, Vec<u8>) {
    client.socket.from_server = bytes.to_vec();
    client.socket.read = 0;
    let mut scratch = vec![0; reading.scratch_bytes];
    let mut received = Vec::new();
    loop {
        let read = client.read_with(&mut scratch, false, |plain, _| {
            received.extend_from_slice(plain);
            !reading.stop
        });
        let outcome = match read {
            Ok(ReadEnd::Stopped) => continue,
            Ok(ReadEnd::Drained) => Outcome::Waiting,
            Ok(ReadEnd::Closed) => Outcome::Closed,
            Err(e) => Outcome::Failed(e.to_string()),
        };
        return (outcome, received);
    }
}

fn plan(mode: u8) -> TlsPlan {
    let version = [None, Some("1.2"), Some("1.3")][usize::from(mode % 3)].map(String::from);
    TlsPlan { version, cipher: None, resumption: true }
}

/// A new client, as the worker makes one per connection, over memory, its ClientHello sent.
fn client(plan: &TlsPlan) -> TlsStream<Memory> {
    let config = client_config(plan, &[]).expect("a valid plan");
    let name = server_name("localhost").expect("a valid name");
    let session = Connection::Client(ClientConnection::new(config, name).expect("a client"));
    let mut client = TlsStream::new(Memory::default(), session);
    client.session.write_tls(&mut client.socket).expect("writes to memory");
    assert!(!client.socket.to_server.is_empty(), "no ClientHello");
    client
}

/// Steering: mode (version: any, 1.2, 1.3; bit 3: a tampered real handshake; bit 4: the reader
/// stops after every piece; bit 5: a small scratch buffer), then three cut points.
pub fn tls_client(data: &[u8]) {
    let ([mode, cut_a, cut_b, cut_c], rest) = control::<4>(data);
    let reading = Reading { stop: mode & 16 != 0, scratch_bytes: if mode & 32 == 0 { 64 * 1024 } else { 1000 } };
    if mode & 8 == 0 {
        from_any_server(reading, rest, &plan(mode), &[cut_a, cut_b, cut_c]);
    } else {
        from_a_tampered_server(reading, rest, &plan(mode));
    }
}

/// Bytes no server signed cannot complete a handshake: no plaintext ever comes out, and what
/// becomes of the connection does not depend on how the bytes are cut into reads.
fn from_any_server(reading: Reading, bytes: &[u8], plan: &TlsPlan, cuts: &[u8]) {
    let outcome = |reads: &[&[u8]]| {
        let mut client = client(plan);
        for read in reads {
            let (outcome, plaintext) = read_all(reading, &mut client, read);
            assert!(plaintext.is_empty(), "plaintext from an unsigned handshake: {plaintext:?}");
            if outcome != Outcome::Waiting {
                return outcome;
            }
        }
        assert!(client.session.is_handshaking(), "a handshake completed with an unsigned peer");
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

/// What the built-in server answers once the handshake is over: more than rustls reads at once
/// (4 KiB), in records of REPLY_RECORD_BYTES.
fn reply() -> Vec<u8> {
    let mut reply = format!("HTTP/1.1 200 OK\r\nContent-Length: {REPLY_BODY_BYTES}\r\n\r\n").into_bytes();
    reply.resize(reply.len() + REPLY_BODY_BYTES, b'x');
    reply
}

/// Each 3 bytes of `edits`: an offset (little-endian u16) into the server's bytes and a byte to
/// XOR there. The client delivers the server's plaintext or a prefix of it, never other bytes;
/// untouched, the handshake completes, the whole reply comes through and the close_notify after it
/// ends the stream.
fn from_a_tampered_server(reading: Reading, edits: &[u8], plan: &TlsPlan) {
    let edits: Vec<(usize, u8)> =
        edits.chunks_exact(3).map(|e| (usize::from(u16::from_le_bytes([e[0], e[1]])), e[2])).collect();
    let reply = reply();
    let mut client = client(plan);
    let mut server = server(plan);
    let (mut sent, mut received, mut tampered, mut replied) = (0, Vec::new(), false, false);
    let mut last = Outcome::Waiting;
    for _ in 0..FLIGHTS_MAX {
        let to_server = mem::take(&mut client.socket.to_server);
        let answered = !to_server.is_empty()
            && server.read_tls(&mut &to_server[..]).is_ok()
            && server.process_new_packets().is_ok();
        if answered && !server.is_handshaking() && !replied {
            for record in reply.chunks(REPLY_RECORD_BYTES) {
                server.writer().write_all(record).expect("the reply fits");
            }
            server.send_close_notify();
            replied = true;
        }
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
        let (outcome, plaintext) = read_all(reading, &mut client, &flight);
        last = outcome;
        received.extend(plaintext);
        assert!(reply.starts_with(&received), "plaintext the server never sent: {received:?}");
        if let Outcome::Failed(err) = &last {
            assert!(tampered, "an honest handshake failed: {err}");
            return;
        }
    }
    if !tampered {
        assert_eq!(
            (received, last),
            (reply, Outcome::Closed),
            "an honest handshake delivers the reply, then its close_notify"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_honest_reply_comes_whole_however_it_is_read() {
        for version in 0..3 {
            for reading in [0, 16, 32, 48] {
                tls_client(&[version | 8 | reading]);
            }
        }
    }
}
