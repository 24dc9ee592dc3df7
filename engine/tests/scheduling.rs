//! The load threads run under the plan's scheduling policy: by default SCHED_BATCH in a closed
//! loop and the kernel's normal policy under a schedule; the result says which.

mod common;

use std::fs;
use std::thread;
use std::time::Duration;

use common::{http_ok, plan, Peer};
use gauntlet_engine::plan::Scheduling;
use gauntlet_engine::run::run;

/// The policy of each of this process's threads named `gauntlet-load-*`, read while they run.
fn load_thread_policies() -> Vec<libc::c_int> {
    let mut policies = Vec::new();
    for task in fs::read_dir("/proc/self/task").unwrap().flatten() {
        let name = fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !name.starts_with("gauntlet-load-") {
            continue;
        }
        let tid: libc::pid_t = task.file_name().to_string_lossy().parse().unwrap();
        // SAFETY: sched_getscheduler reads another thread's policy by its id; -1 if it has ended.
        policies.push(unsafe { libc::sched_getscheduler(tid) });
    }
    policies
}

/// Run `fields` for a second against a peer and read the load threads' policies half-way.
fn policies_during(fields: &str) -> (Vec<libc::c_int>, Scheduling, Option<String>) {
    let peer = Peer::start(http_ok);
    let plan = plan(&peer.url("/"), &format!(r#""connections": 4, "threads": 2, "duration_us": 1000000{fields}"#));
    let running = thread::spawn(move || run(plan).unwrap());
    thread::sleep(Duration::from_millis(500));
    let policies = load_thread_policies();
    let result = running.join().unwrap();
    assert!(result.responses > 0);
    (policies, result.client.scheduling, result.client.scheduling_fallback)
}

#[test]
fn load_threads_run_under_the_plans_policy() {
    let (policies, scheduling, fallback) = policies_during("");
    assert_eq!(policies, [libc::SCHED_BATCH; 2], "by default");
    assert_eq!((scheduling, fallback), (Scheduling::Batch, None));

    let (policies, scheduling, fallback) = policies_during(r#", "scheduling": "normal""#);
    assert_eq!(policies, [libc::SCHED_OTHER; 2]);
    assert_eq!((scheduling, fallback), (Scheduling::Normal, None));

    let (policies, scheduling, _) = policies_during(r#", "rate_per_s": 200"#);
    assert_eq!(policies, [libc::SCHED_OTHER; 2], "under a schedule by default");
    assert_eq!(scheduling, Scheduling::Normal);

    let (policies, scheduling, _) = policies_during(r#", "rate_per_s": 200, "scheduling": "batch""#);
    assert_eq!(policies, [libc::SCHED_BATCH; 2]);
    assert_eq!(scheduling, Scheduling::Batch);
}
