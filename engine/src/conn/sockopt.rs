//! Socket options the standard library and socket2 do not set.

use std::io;
use std::os::fd::AsRawFd;

/// Set the socket option `level`/`name` that takes an int to 1.
pub fn switch_on(socket: &impl AsRawFd, level: libc::c_int, name: libc::c_int) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt reads an int from a live local for the socket's own descriptor.
    let status = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            level,
            name,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if status == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
