//! The bytes' way to the peer: a plain TCP socket, or TLS over it with rustls driven by hand in
//! the same event loop (no runtime). Client and server use the same two cases; the client may
//! also move a plain socket onto the thread's io_uring (`super::uring`).

use std::io::{self, BufRead, Write};

use mio::net::TcpStream;

use super::rx_time::StampedRead;
use super::uring::{self, RingStream};

pub enum Transport {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
    Ring(Box<RingStream>),
}

/// rustls over a socket (generic so that the fuzz harness can drive it over memory).
pub struct TlsStream<S = TcpStream> {
    pub socket: S,
    pub session: rustls::Connection,
    /// Records read but not yet decrypted, because the reader stopped before them.
    unread: Vec<u8>,
    /// When the kernel received the read those records (and the plaintext rustls still holds)
    /// came in.
    unread_arrived_us: Option<u64>,
}

/// How `Transport::read_with` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadEnd {
    /// Everything that arrived was taken: wait for the next readiness event.
    Drained,
    /// The peer closed the stream (a FIN, or TLS's close_notify once what came before it was taken).
    Closed,
    /// `take` asked to stop; what else arrived waits for the next call.
    Stopped,
}

fn stopped(go_on: bool) -> Option<ReadEnd> {
    (!go_on).then_some(ReadEnd::Stopped)
}

/// Read `socket` through `scratch` until it is drained, handing each read and when the kernel
/// received it (if it says) to `handle`, which may end the reading. With edge-triggered readiness
/// a read shorter than `scratch` drains the socket, unless `peer_closed`: a FIN that came with the
/// data raises no new event.
fn drain(
    socket: &mut impl StampedRead,
    scratch: &mut [u8],
    peer_closed: bool,
    mut handle: impl FnMut(&[u8], Option<u64>) -> io::Result<Option<ReadEnd>>,
) -> io::Result<ReadEnd> {
    loop {
        let (n, arrived_us) = match socket.read_stamped(scratch) {
            Ok((0, _)) => return Ok(ReadEnd::Closed),
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(ReadEnd::Drained),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if let Some(end) = handle(&scratch[..n], arrived_us)? {
            return Ok(end);
        }
        if n < scratch.len() && !peer_closed {
            return Ok(ReadEnd::Drained);
        }
    }
}

/// A TLS failure, as an I/O error whose kind the engine counts as `tls`.
fn tls_error(err: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, err)
}

impl Transport {
    /// Move a freshly connected plain socket onto the thread's ring as connection `slot`. Leaves
    /// the transport as it is (epoll) when there is no ring, it is TLS, or the slot is out of range.
    pub fn adopt_ring(stream: &mut Option<Transport>, slot: usize, registry: &mio::Registry) -> io::Result<()> {
        let Some(Transport::Plain(socket)) = stream else { return Ok(()) };
        let Some(at) = uring::adopt(socket, slot, registry)? else { return Ok(()) };
        let Some(Transport::Plain(socket)) = stream.take() else { unreachable!("matched above") };
        *stream = Some(Transport::Ring(Box::new(RingStream::new(socket, at))));
        Ok(())
    }

    /// The stream on the ring; None on epoll.
    pub fn ring_mut(&mut self) -> Option<&mut RingStream> {
        match self {
            Transport::Ring(ring) => Some(ring),
            _ => None,
        }
    }

    pub fn socket(&self) -> &TcpStream {
        match self {
            Transport::Plain(socket) => socket,
            Transport::Tls(tls) => &tls.socket,
            Transport::Ring(ring) => &ring.socket,
        }
    }

    pub fn socket_mut(&mut self) -> &mut TcpStream {
        match self {
            Transport::Plain(socket) => socket,
            Transport::Tls(tls) => &mut tls.socket,
            Transport::Ring(ring) => &mut ring.socket,
        }
    }

    /// On the ring: the peer's end of stream (or an error) has arrived. Over epoll the readiness
    /// event tells instead.
    pub fn closed_by_peer(&self) -> bool {
        matches!(self, Transport::Ring(ring) if ring.closed_by_peer())
    }

    /// Read what has arrived until the socket is drained, the stream ends or `take` returns false,
    /// handing `take` each piece as it comes: a read into `scratch` from a socket, rustls's
    /// plaintext in place under TLS (what `take` stopped before is kept for the next call), the
    /// buffer the kernel received into on the ring. With each piece goes the engine time the
    /// kernel received it (`rx_time`), or None where it gave none.
    /// `peer_closed`: the readiness event reported the peer's FIN, which raises no further event.
    pub fn read_with(
        &mut self,
        scratch: &mut [u8],
        peer_closed: bool,
        mut take: impl FnMut(&[u8], Option<u64>) -> bool,
    ) -> io::Result<ReadEnd> {
        match self {
            Transport::Plain(socket) => {
                drain(socket, scratch, peer_closed, |input, arrived_us| Ok(stopped(take(input, arrived_us))))
            }
            Transport::Tls(tls) => tls.read_with(scratch, peer_closed, take),
            Transport::Ring(ring) => loop {
                let mut go_on = true;
                match ring.read_with(|input, arrived_us| go_on = take(input, arrived_us)) {
                    Ok(0) => return Ok(ReadEnd::Closed),
                    Ok(_) if !go_on => return Ok(ReadEnd::Stopped),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(ReadEnd::Drained),
                    Err(e) => return Err(e),
                }
            },
        }
    }

    /// Write plaintext; under TLS it is taken whole and its records go out as the socket allows;
    /// on the ring it is taken whole and its send queued for the next submission.
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(socket) => socket.write(buf),
            Transport::Tls(tls) => {
                let taken = tls.session.writer().write(buf)?;
                tls.flush()?;
                Ok(taken)
            }
            Transport::Ring(ring) => ring.write(buf),
        }
    }

    /// Under TLS once the handshake is over: whether it resumed an earlier session.
    pub fn resumed(&self) -> Option<bool> {
        let Transport::Tls(tls) = self else { return None };
        let kind = match &tls.session {
            rustls::Connection::Client(client) => client.handshake_kind(),
            rustls::Connection::Server(server) => server.handshake_kind(),
        };
        kind.map(|kind| kind == rustls::HandshakeKind::Resumed)
    }

    /// Under TLS: the handshake has not completed yet.
    pub fn is_handshaking(&self) -> bool {
        match self {
            Transport::Plain(_) | Transport::Ring(_) => false,
            Transport::Tls(tls) => tls.session.is_handshaking(),
        }
    }

    /// TLS holds bytes the socket has not taken yet.
    pub fn has_pending_output(&self) -> bool {
        match self {
            Transport::Plain(_) | Transport::Ring(_) => false,
            Transport::Tls(tls) => tls.session.wants_write(),
        }
    }

    /// Send what TLS still holds (handshake messages, records the socket did not take).
    pub fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(_) | Transport::Ring(_) => Ok(()),
            Transport::Tls(tls) => tls.flush(),
        }
    }
}

impl<S: StampedRead + Write> TlsStream<S> {
    pub fn new(socket: S, session: rustls::Connection) -> TlsStream<S> {
        TlsStream { socket, session, unread: Vec::new(), unread_arrived_us: None }
    }

    fn flush(&mut self) -> io::Result<()> {
        while self.session.wants_write() {
            match self.session.write_tls(&mut self.socket) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// `Transport::read_with` under TLS. rustls's own `read_tls` reads at most 4 KiB into an empty
    /// buffer (an 83 KB response took about six reads); this reads as much as `scratch` holds and
    /// feeds rustls from it. Plaintext goes to `take` with the arrival of the read that completed
    /// its record.
    pub fn read_with(
        &mut self,
        scratch: &mut [u8],
        peer_closed: bool,
        mut take: impl FnMut(&[u8], Option<u64>) -> bool,
    ) -> io::Result<ReadEnd> {
        let held = std::mem::take(&mut self.unread);
        let (session, unread, unread_arrived_us) = (&mut self.session, &mut self.unread, &mut self.unread_arrived_us);
        let end = match decrypt(session, &held, *unread_arrived_us, &mut take, unread, unread_arrived_us) {
            Ok(Some(end)) => Ok(end),
            Ok(None) => drain(&mut self.socket, scratch, peer_closed, |input, arrived_us| {
                decrypt(session, input, arrived_us, &mut take, unread, unread_arrived_us)
            }),
            Err(e) => Err(e),
        };
        // What rustls queued meanwhile: handshake messages, or the alert that tells the peer why
        // it failed.
        let flushed = self.flush();
        let end = end?;
        flushed.map(|()| end)
    }
}

/// Hand rustls's plaintext to `take`, then decrypt `input` (received at `arrived_us`) and hand
/// over what it holds, until `take` stops (the records not yet decrypted go to `unread`, their
/// arrival to `unread_arrived_us`) or a close_notify; None once all was taken.
fn decrypt(
    session: &mut rustls::Connection,
    mut input: &[u8],
    arrived_us: Option<u64>,
    take: &mut impl FnMut(&[u8], Option<u64>) -> bool,
    unread: &mut Vec<u8>,
    unread_arrived_us: &mut Option<u64>,
) -> io::Result<Option<ReadEnd>> {
    loop {
        if let Some(end) = take_plaintext(session, arrived_us, take)? {
            if end == ReadEnd::Stopped {
                unread.extend_from_slice(input);
                *unread_arrived_us = arrived_us;
            }
            return Ok(Some(end));
        }
        if input.is_empty() {
            return Ok(None);
        }
        session.read_tls(&mut input)?;
        session.process_new_packets().map_err(tls_error)?;
    }
}

/// Hand what rustls decrypted to `take`, in place, until it stops; a close_notify once what
/// came before it was taken ends the stream.
fn take_plaintext(
    session: &mut rustls::Connection,
    arrived_us: Option<u64>,
    take: &mut impl FnMut(&[u8], Option<u64>) -> bool,
) -> io::Result<Option<ReadEnd>> {
    let mut reader = session.reader();
    loop {
        let chunk = match reader.fill_buf() {
            Ok([]) => return Ok(Some(ReadEnd::Closed)),
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(e) => return Err(e),
        };
        let (go_on, taken) = (take(chunk, arrived_us), chunk.len());
        reader.consume(taken);
        if !go_on {
            return Ok(Some(ReadEnd::Stopped));
        }
    }
}
