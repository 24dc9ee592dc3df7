//! Plain TCP: a non-blocking connect with Nagle off.

use std::io;
use std::net::SocketAddr;

use mio::net::TcpStream;

/// Start connecting; the connection is usable once the socket turns writable without error.
pub fn connect(address: SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(address)?;
    stream.set_nodelay(true)?;
    Ok(stream)
}
