//! The load thread's scheduling policy (plan `scheduling`).

use std::io;

use crate::plan::Scheduling;

/// Put the calling thread under `scheduling`, whatever it inherited. Returns what it runs under,
/// and why that is not what was asked when the kernel refused it.
pub fn apply(scheduling: Scheduling) -> (Scheduling, Option<String>) {
    let policy = match scheduling {
        Scheduling::Batch => libc::SCHED_BATCH,
        Scheduling::Normal => libc::SCHED_OTHER,
    };
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 is the calling thread; `param` lives through the call.
    if unsafe { libc::sched_setscheduler(0, policy, &param) } == 0 {
        return (scheduling, None);
    }
    let err = io::Error::last_os_error();
    let kept = current_policy();
    let ran = if kept == libc::SCHED_BATCH { Scheduling::Batch } else { Scheduling::Normal };
    (
        ran,
        Some(format!(
            "{} was refused ({err}): the load threads kept the policy they started with ({kept})",
            name(policy)
        )),
    )
}

/// The calling thread's policy (SCHED_* number).
fn current_policy() -> libc::c_int {
    // SAFETY: pid 0 is the calling thread.
    unsafe { libc::sched_getscheduler(0) }
}

fn name(policy: libc::c_int) -> &'static str {
    if policy == libc::SCHED_BATCH {
        "SCHED_BATCH"
    } else {
        "SCHED_OTHER"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a thread of its own: what it sets stays there.
    fn in_a_thread(test: fn()) {
        std::thread::spawn(test).join().unwrap();
    }

    #[test]
    fn batch_is_set_on_the_calling_thread_only() {
        in_a_thread(|| {
            assert_eq!(apply(Scheduling::Batch), (Scheduling::Batch, None));
            assert_eq!(current_policy(), libc::SCHED_BATCH);
        });
        assert_eq!(current_policy(), libc::SCHED_OTHER);
    }

    #[test]
    fn normal_is_set_over_an_inherited_batch() {
        in_a_thread(|| {
            apply(Scheduling::Batch);
            assert_eq!(apply(Scheduling::Normal), (Scheduling::Normal, None));
            assert_eq!(current_policy(), libc::SCHED_OTHER);
        });
    }
}
