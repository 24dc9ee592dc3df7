//! Plain TCP: a non-blocking connect with Nagle off and the kernel's receive timestamps on, from
//! a chosen source address if asked.

use std::io;
use std::net::{IpAddr, SocketAddr};

use mio::net::TcpStream;
use socket2::{Domain, Protocol, Socket, Type};

use super::rx_time;
use super::sockopt::set_int;

/// Start connecting; the connection is usable once the socket turns writable without error.
/// With `source`, the socket is bound to that local address first, its port still chosen by the
/// kernel at connect time (IP_BIND_ADDRESS_NO_PORT), so that each source address brings its own
/// range of ephemeral ports to the same server port.
pub fn connect(address: SocketAddr, source: Option<IpAddr>) -> io::Result<TcpStream> {
    let Some(source) = source else {
        let stream = TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        rx_time::enable(&stream)?;
        return Ok(stream);
    };
    let socket = Socket::new(Domain::for_address(address), Type::STREAM.nonblocking(), Some(Protocol::TCP))?;
    if source.is_ipv4() {
        bind_address_no_port(&socket)?;
    }
    socket.bind(&SocketAddr::new(source, 0).into())?;
    match socket.connect(&address.into()) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    socket.set_tcp_nodelay(true)?;
    rx_time::enable(&socket)?;
    Ok(TcpStream::from_std(socket.into()))
}

fn bind_address_no_port(socket: &Socket) -> io::Result<()> {
    set_int(socket, libc::IPPROTO_IP, libc::IP_BIND_ADDRESS_NO_PORT, 1)
}

/// After a readiness event while connecting: None while still connecting.
pub fn connect_status(stream: &TcpStream) -> Option<io::Result<()>> {
    match stream.take_error() {
        Ok(Some(err)) | Err(err) => return Some(Err(err)),
        Ok(None) => {}
    }
    match stream.peer_addr() {
        Ok(_) => Some(Ok(())),
        Err(err) if err.kind() == io::ErrorKind::NotConnected => None,
        Err(err) => Some(Err(err)),
    }
}

/// The source address of a run's `index`th connection: the addresses taken round robin.
pub fn source_for(sources: &[IpAddr], index: usize) -> Option<IpAddr> {
    (!sources.is_empty()).then(|| sources[index % sources.len()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::{Duration, Instant};

    /// Accept one connection within a second and return the peer's address as the server saw it.
    fn accepted_peer(listener: &TcpListener) -> SocketAddr {
        listener.set_nonblocking(true).unwrap();
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            match listener.accept() {
                Ok((_, peer)) => return peer,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Err(e) => panic!("no connection arrived: {e}"),
            }
        }
    }

    #[test]
    fn connections_leave_from_the_source_addresses_round_robin() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let sources: Vec<IpAddr> = ["127.0.0.2", "127.0.0.3"].iter().map(|s| s.parse().unwrap()).collect();
        let mut streams = Vec::new();
        for index in 0..4 {
            let source = source_for(&sources, index);
            streams.push(connect(address, source).unwrap());
            assert_eq!(accepted_peer(&listener).ip(), source.unwrap(), "connection {index}");
        }
        streams.push(connect(address, None).unwrap());
        assert_eq!(accepted_peer(&listener).ip().to_string(), "127.0.0.1");
    }

    #[test]
    fn a_source_that_is_not_local_fails_at_once() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let err = connect(listener.local_addr().unwrap(), Some("192.0.2.7".parse().unwrap())).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EADDRNOTAVAIL), "{err}");
    }

    #[test]
    fn no_sources_means_the_kernel_chooses() {
        assert_eq!(source_for(&[], 5), None);
        let sources: Vec<IpAddr> = vec!["127.0.0.9".parse().unwrap()];
        assert_eq!(source_for(&sources, 5), Some(sources[0]));
    }
}
