//! The bytes' way to the peer: a plain TCP socket, or TLS over it with rustls driven by hand in
//! the same event loop (no runtime). Client and server use the same two cases; the client may
//! also move a plain socket onto the thread's io_uring (`super::uring`).

use std::io::{self, Read, Write};

use mio::net::TcpStream;

use super::uring::RingStream;

pub enum Transport {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
    Ring(Box<RingStream>),
}

pub struct TlsStream {
    pub socket: TcpStream,
    pub session: rustls::Connection,
}

/// A TLS failure, as an I/O error whose kind the engine counts as `tls`.
fn tls_error(err: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, err)
}

impl Transport {
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

    /// A short read leaves nothing unread: true for a socket; TLS may hold decrypted bytes back.
    pub fn short_read_drains(&self) -> bool {
        matches!(self, Transport::Plain(_))
    }

    /// On the ring: the peer's end of stream (or an error) has arrived. Over epoll the readiness
    /// event tells instead.
    pub fn closed_by_peer(&self) -> bool {
        matches!(self, Transport::Ring(ring) if ring.closed_by_peer())
    }

    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(socket) => socket.read(buf),
            Transport::Tls(tls) => tls.read(buf),
            Transport::Ring(ring) => ring.read(buf),
        }
    }

    /// Read what has arrived and hand it to `take` (not called at the end of the stream); returns
    /// the bytes read. A socket or TLS reads into `scratch`; the ring hands over the buffer the
    /// kernel received into, without a copy.
    pub fn read_with(&mut self, scratch: &mut [u8], take: impl FnOnce(&[u8])) -> io::Result<usize> {
        let n = match self {
            Transport::Ring(ring) => return ring.read_with(take),
            _ => self.read(scratch)?,
        };
        if n > 0 {
            take(&scratch[..n]);
        }
        Ok(n)
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

impl TlsStream {
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

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.session.reader().read(buf) {
                Ok(n) => return Ok(n),
                // The peer closed without close_notify: an end of stream all the same.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            if self.session.read_tls(&mut self.socket)? == 0 {
                return Ok(0);
            }
            if let Err(err) = self.session.process_new_packets() {
                // Tell the peer why (rustls queued an alert), then fail.
                let _ = self.flush();
                return Err(tls_error(err));
            }
            self.flush()?;
        }
    }
}
