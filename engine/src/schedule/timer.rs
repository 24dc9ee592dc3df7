//! A timerfd in the thread's poll: wakes the loop at the next send to the microsecond, where
//! epoll_wait's own timeout has only millisecond resolution.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

pub struct SendTimer {
    fd: OwnedFd,
    armed_for_us: Option<u64>,
}

impl SendTimer {
    pub fn new(registry: &Registry, token: Token) -> io::Result<SendTimer> {
        // SAFETY: timerfd_create returns a new descriptor or -1.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a descriptor we own from here on.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        registry.register(&mut SourceFd(&fd.as_raw_fd()), token, Interest::READABLE)?;
        Ok(SendTimer { fd, armed_for_us: None })
    }

    /// Fire at `due_us` (crate clock); re-arming for the same time costs nothing.
    pub fn arm(&mut self, due_us: u64, now_us: u64) {
        if self.armed_for_us == Some(due_us) {
            return;
        }
        let wait_ns = due_us.saturating_sub(now_us).max(1) * 1_000;
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (wait_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (wait_ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: a valid timerfd and a fully initialised itimerspec.
        unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) };
        self.armed_for_us = Some(due_us);
    }

    /// The timer fired: consume its expiry count so that it can fire again.
    pub fn fired(&mut self) {
        let mut expirations = 0u64;
        // SAFETY: reads 8 bytes into a local u64 from our own timerfd.
        unsafe { libc::read(self.fd.as_raw_fd(), (&mut expirations as *mut u64).cast(), 8) };
        self.armed_for_us = None;
    }
}
