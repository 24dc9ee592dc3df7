//! Kernel receive timestamps (SO_TIMESTAMPNS): when the kernel received the last segment a read
//! returned, so that a response read late (after a batch window's nap, or while the thread was
//! busy with others) is timed as it arrived. Where the kernel gives no timestamp (timestamping
//! was just switched on for the system, or the socket is not a client's), a read returns none
//! and the caller times the response when it reads it.

use std::io;
use std::mem::zeroed;
use std::net::{Ipv4Addr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mio::net::TcpStream;

use super::sockopt::set_int;
use crate::clock::engine_us_of_realtime_ns;

/// A byte source whose reads may say when the kernel received what they return.
pub trait StampedRead {
    /// Read like `Read::read`, with the engine time the last segment read arrived, when known.
    fn read_stamped(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)>;
}

/// Ask the kernel to time-stamp what `socket` receives.
pub fn enable(socket: &impl AsRawFd) -> io::Result<()> {
    set_int(socket, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

/// Room for one SCM_TIMESTAMPNS message (a timespec), aligned as the kernel writes it.
#[repr(C, align(8))]
struct Control([u8; 64]);

impl StampedRead for TcpStream {
    fn read_stamped(&mut self, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
        recv_stamped(self.as_raw_fd(), buf)
    }
}

/// recvmsg on `fd` into `buf`, with the engine time the kernel received the last segment read.
fn recv_stamped(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let mut control = Control([0; 64]);
    // SAFETY: a zeroed msghdr is valid (no name, no buffers) before the fields set below.
    let mut message: libc::msghdr = unsafe { zeroed() };
    message.msg_iov = &mut iov;
    message.msg_iovlen = 1;
    message.msg_control = control.0.as_mut_ptr().cast();
    message.msg_controllen = control.0.len();
    // SAFETY: the iovec points into `buf` and the control buffer is `control`, both live and
    // writable for the lengths given; `fd` is the caller's open socket.
    let n = unsafe { libc::recvmsg(fd, &mut message, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize, arrival_us(&message)))
}

/// Bytes a receive buffer holds for the control data of one read: room for SCM_TIMESTAMPNS.
pub const CONTROL_BYTES: usize = std::mem::size_of::<Control>();

/// The engine time in a read's control data (io_uring writes it into the receive buffer, before
/// the payload, unaligned), or None where the kernel gave no timestamp.
pub fn arrival_us_in(control: &[u8]) -> Option<u64> {
    let mut aligned = Control([0; 64]);
    let len = control.len().min(CONTROL_BYTES);
    aligned.0[..len].copy_from_slice(&control[..len]);
    // SAFETY: a zeroed msghdr is valid; only its control buffer, `aligned`, is set and read.
    let mut message: libc::msghdr = unsafe { zeroed() };
    message.msg_control = aligned.0.as_mut_ptr().cast();
    message.msg_controllen = len;
    arrival_us(&message)
}

fn arrival_us(message: &libc::msghdr) -> Option<u64> {
    timestamp_ns(message, libc::SCM_TIMESTAMPNS).map(engine_us_of_realtime_ns)
}

/// How long `switch_on` waits at most for the kernel to stamp.
const SWITCH_ON_WAIT: Duration = Duration::from_millis(200);

/// Switch the kernel's receive timestamping on for the rest of this process, and wait until it
/// stamps (at most SWITCH_ON_WAIT, once a process). The kernel turns it on for the system a
/// moment after a first socket asks for it, and off once none does: a run's first responses
/// would otherwise be timed when read, up to a batch window late. A datagram socket that asks,
/// kept open, holds it on; datagrams it sends itself on loopback show when it is. Whether it
/// came on in time is what each run's `rx_timestamped` says.
pub fn switch_on() {
    static HOLDER: OnceLock<io::Result<UdpSocket>> = OnceLock::new();
    HOLDER.get_or_init(stamping_socket);
}

fn stamping_socket() -> io::Result<UdpSocket> {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
    enable(&socket)?;
    socket.connect(socket.local_addr()?)?;
    socket.set_read_timeout(Some(Duration::from_millis(10)))?;
    let deadline = Instant::now() + SWITCH_ON_WAIT;
    let mut byte = [0u8];
    while Instant::now() < deadline {
        socket.send(&[0])?;
        // A read that failed or timed out is tried again, as one that came unstamped.
        if matches!(recv_stamped(socket.as_raw_fd(), &mut byte), Ok((_, Some(_)))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(socket)
}

/// The timestamp of control message `kind` (SOL_SOCKET's SCM_TIMESTAMPNS, or SCM_TIMESTAMPING
/// whose first timespec is the software one) among a received message's control data, in ns
/// since 1970.
pub fn timestamp_ns(message: &libc::msghdr, kind: libc::c_int) -> Option<u64> {
    // SAFETY: the CMSG macros walk the control buffer recvmsg filled, within msg_controllen.
    let mut header = unsafe { libc::CMSG_FIRSTHDR(message) };
    while !header.is_null() {
        // SAFETY: `header` is a complete control message inside the buffer (CMSG_NXTHDR checks).
        let cmsg = unsafe { &*header };
        if cmsg.cmsg_level == libc::SOL_SOCKET && cmsg.cmsg_type == kind {
            // SAFETY: both kinds begin with a timespec, possibly unaligned.
            let stamp: libc::timespec = unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(header).cast()) };
            return Some(stamp.tv_sec as u64 * 1_000_000_000 + stamp.tv_nsec as u64);
        }
        // SAFETY: as above.
        header = unsafe { libc::CMSG_NXTHDR(message, header) };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::now_us;
    use std::io::Write;
    use std::net::TcpListener;
    use std::time::Duration;

    #[test]
    fn a_read_after_a_wait_is_stamped_when_the_bytes_came() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        enable(&client).unwrap();
        let mut buf = [0u8; 64];
        // The first segments after timestamping is switched on for the system may come without.
        let mut stamped = None;
        for _ in 0..20 {
            server.write_all(b"hello").unwrap();
            let sent_us = now_us();
            std::thread::sleep(Duration::from_millis(20));
            let read_us = now_us();
            let (n, arrived_us) = client.read_stamped(&mut buf).unwrap();
            assert_eq!(&buf[..n], b"hello");
            if let Some(arrived_us) = arrived_us {
                stamped = Some((sent_us, arrived_us, read_us));
                break;
            }
        }
        let (sent_us, arrived_us, read_us) = stamped.expect("the kernel stamped no read in 20");
        // Loopback delivers as the write returns: the stamp is by the send, 20 ms before the read.
        assert!(arrived_us <= sent_us + 1_000 && arrived_us + 19_000 <= read_us, "{sent_us} {arrived_us} {read_us}");
    }

    #[test]
    fn a_stamp_in_unaligned_control_data_is_read() {
        let before_us = now_us();
        let a_millisecond_ago =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap() - Duration::from_millis(1);
        let stamp = libc::timespec {
            tv_sec: a_millisecond_ago.as_secs() as libc::time_t,
            tv_nsec: a_millisecond_ago.subsec_nanos() as libc::c_long,
        };
        let size = std::mem::size_of::<libc::timespec>() as u32;
        // SAFETY: CMSG_LEN and CMSG_SPACE only compute lengths.
        let (data_at, cmsg_len, space) =
            unsafe { (libc::CMSG_LEN(0) as usize, libc::CMSG_LEN(size) as usize, libc::CMSG_SPACE(size) as usize) };
        let header = libc::cmsghdr { cmsg_len, cmsg_level: libc::SOL_SOCKET, cmsg_type: libc::SCM_TIMESTAMPNS };
        // As io_uring writes it into a receive buffer: at any offset (here 1), so unaligned.
        let mut bytes = vec![0u8; 1 + space];
        // SAFETY: both writes lie within `bytes`; unaligned writes of plain structs.
        unsafe {
            std::ptr::write_unaligned(bytes[1..].as_mut_ptr().cast(), header);
            std::ptr::write_unaligned(bytes[1 + data_at..].as_mut_ptr().cast(), stamp);
        }
        let arrived_us = arrival_us_in(&bytes[1..]).expect("a stamp");
        let after_us = now_us();
        assert!(before_us - 1_005 <= arrived_us && arrived_us <= after_us - 995, "{before_us} {arrived_us} {after_us}");
        assert_eq!(arrival_us_in(&[]), None);
    }

    #[test]
    fn a_socket_without_timestamps_reads_none() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        server.write_all(b"hi").unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let mut buf = [0u8; 8];
        assert_eq!(client.read_stamped(&mut buf).unwrap(), (2, None));
    }
}
