//! CPU time of the calling thread (user + system), from getrusage(RUSAGE_THREAD), and the time it
//! spent runnable but waiting for a CPU, from the scheduler's /proc/thread-self/schedstat.

pub fn thread_cpu_us() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given; on failure it stays zeroed.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr());
        usage.assume_init()
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    micros(usage.ru_utime) + micros(usage.ru_stime)
}

/// Run-queue wait of the calling thread so far (schedstat's second field, in ns), 0 when the
/// kernel does not expose it. Read twice per thread and run, never per request.
pub fn thread_cpu_wait_us() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|text| text.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |wait_ns| wait_ns / 1_000)
}

#[cfg(test)]
mod tests {
    use super::{thread_cpu_us, thread_cpu_wait_us};

    fn spin(iterations: u64) {
        let mut x = 0u64;
        for i in 0..iterations {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
    }

    /// The first CPU this thread may run on (a cpuset may leave out CPU 0).
    fn first_allowed_cpu() -> usize {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; pid 0 is the calling thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set), 0);
            (0..libc::CPU_SETSIZE as usize).find(|&cpu| libc::CPU_ISSET(cpu, &set)).expect("an allowed CPU")
        }
    }

    fn pin_to_cpu(cpu: usize) {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; pid 0 is the calling thread.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            assert_eq!(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set), 0);
        }
    }

    #[test]
    fn grows_with_work_and_not_with_sleep() {
        let before = thread_cpu_us();
        spin(20_000_000);
        let worked = thread_cpu_us() - before;
        assert!(worked > 1_000, "{worked} µs");
        let before = thread_cpu_us();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(thread_cpu_us() - before < 10_000);
    }

    #[test]
    fn waiting_grows_when_threads_share_one_cpu() {
        if std::fs::metadata("/proc/thread-self/schedstat").is_err() {
            return; // the kernel has no schedstat: the figure is documented as 0 then
        }
        let busy_ms = 300;
        let cpu = first_allowed_cpu();
        let threads: Vec<_> = (0..3)
            .map(|_| {
                std::thread::spawn(move || {
                    pin_to_cpu(cpu);
                    let (wait_before, cpu_before) = (thread_cpu_wait_us(), thread_cpu_us());
                    let end = std::time::Instant::now() + std::time::Duration::from_millis(busy_ms);
                    while std::time::Instant::now() < end {
                        spin(10_000);
                    }
                    (thread_cpu_wait_us() - wait_before, thread_cpu_us() - cpu_before)
                })
            })
            .collect();
        let figures: Vec<(u64, u64)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        // Three spinning threads on one CPU for 300 ms: together they wait about twice what they run.
        let (waited_us, ran_us) = figures.iter().fold((0, 0), |(w, r), (wait, cpu)| (w + wait, r + cpu));
        assert!(waited_us > ran_us / 2, "waited {waited_us} µs, ran {ran_us} µs");
    }
}
