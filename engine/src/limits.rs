//! Open-file limits: each connection is a descriptor.

use crate::plan::PlanError;

/// Descriptors the process needs besides its connections (epoll, wakers, stdio, Python).
const RESERVED_FILES: u64 = 64;

/// Raise the soft open-files limit to the hard limit; returns the (soft, hard) limits now in force.
pub fn raise_open_files() -> (u64, u64) {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return (0, 0);
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit.rlim_cur = limit.rlim_max;
            }
        }
    }
    (limit.rlim_cur, limit.rlim_max)
}

/// Refuse a connection count that the open-files limit cannot hold.
pub fn check_connections(connections: usize) -> Result<(), PlanError> {
    let (soft, hard) = raise_open_files();
    let needed = connections as u64 + RESERVED_FILES;
    if needed > soft {
        return Err(PlanError(format!(
            "{connections} connections need about {needed} open files but this process may open {soft} (hard limit {hard}): use fewer connections, or raise the limit (ulimit -n {needed}, or /etc/security/limits.conf for the hard limit)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_limit_reaches_hard_limit() {
        let (soft, hard) = raise_open_files();
        assert_eq!(soft, hard);
        assert!(check_connections(1).is_ok());
        let err = check_connections(usize::MAX / 2).unwrap_err();
        assert!(err.0.contains("ulimit -n"), "{err}");
    }
}
