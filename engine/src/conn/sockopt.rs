//! Socket options the standard library and socket2 do not set.

use std::io;
use std::os::fd::AsRawFd;

/// Set the socket option `level`/`name`, which takes an int, to `value` (1 switches a flag on).
pub fn set_int(socket: &impl AsRawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: setsockopt reads an int from a live local for the socket's own descriptor.
    let status = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if status == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
