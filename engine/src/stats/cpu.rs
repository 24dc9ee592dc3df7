//! CPU time of the calling thread (user + system), from getrusage(RUSAGE_THREAD).

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

#[cfg(test)]
mod tests {
    use super::thread_cpu_us;

    #[test]
    fn grows_with_work_and_not_with_sleep() {
        let before = thread_cpu_us();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        let worked = thread_cpu_us() - before;
        assert!(worked > 1_000, "{worked} µs");
        let before = thread_cpu_us();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(thread_cpu_us() - before < 10_000);
    }
}
