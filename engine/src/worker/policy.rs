//! The load thread's scheduling policy (plan `scheduling`).

use std::io;

use crate::plan::Scheduling;

/// Put the calling thread under `scheduling`. Returns what it runs under, and why that is not
/// what was asked when the kernel refused it.
pub fn apply(scheduling: Scheduling) -> (Scheduling, Option<String>) {
    let policy = match scheduling {
        Scheduling::Batch => libc::SCHED_BATCH,
        Scheduling::Normal => return (Scheduling::Normal, None),
    };
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` lives through the call.
    if unsafe { libc::sched_setscheduler(0, policy, &param) } == 0 {
        return (scheduling, None);
    }
    let err = io::Error::last_os_error();
    (Scheduling::Normal, Some(format!("SCHED_BATCH was refused ({err}): the load threads ran under the normal policy")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy_of_this_thread() -> libc::c_int {
        // SAFETY: pid 0 is the calling thread.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[test]
    fn batch_is_set_on_the_calling_thread_only() {
        std::thread::spawn(|| {
            assert_eq!(apply(Scheduling::Batch), (Scheduling::Batch, None));
            assert_eq!(policy_of_this_thread(), libc::SCHED_BATCH);
        })
        .join()
        .unwrap();
        assert_eq!(policy_of_this_thread(), libc::SCHED_OTHER);
    }

    #[test]
    fn normal_leaves_the_thread_as_it_is() {
        std::thread::spawn(|| {
            assert_eq!(apply(Scheduling::Normal), (Scheduling::Normal, None));
            assert_eq!(policy_of_this_thread(), libc::SCHED_OTHER);
        })
        .join()
        .unwrap();
    }
}
