//! Idle connections held beside the measured ones, and connections from several source
//! addresses, against the built-in server: counted apart, never a request, the server's counts
//! matching.

use std::time::{Duration, Instant};

use gauntlet_engine::plan::Plan;
use gauntlet_engine::run;
use gauntlet_engine::server::{serve, ServeConfig, ServerHandle};
use gauntlet_engine::split::split_plan;

fn plan(server: &ServerHandle, fields: &str) -> Plan {
    let url = format!("http://{}/hello", server.local_addr());
    Plan::from_json(&format!(r#"{{"url": "{url}", {fields}}}"#)).unwrap()
}

/// The server's accepted connections, once they have reached `expected` (bounded wait: accepts
/// of the last connections may trail the run's end).
fn accepted(server: &ServerHandle, expected: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(2);
    while server.stats().connections_accepted < expected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    server.stats().connections_accepted
}

#[test]
fn idle_connections_are_held_open_and_counted_apart() {
    let server = serve(&ServeConfig::default()).unwrap();
    let fields = r#""connections": 2, "requests": 200, "idle": {"connections": 40}"#;
    let result = run::run(plan(&server, fields)).unwrap();
    let idle = result.idle.as_ref().expect("the result counts the idle connections");
    assert_eq!((idle.connections, idle.opened, idle.open_at_end, idle.most_open), (40, 40, 40, 40));
    assert_eq!((idle.closed_by_server, idle.bytes_out), (0, 0));
    assert!(idle.connect_errors.is_empty(), "{idle:?}");
    assert_eq!((result.responses, result.errors_total), (200, 0));
    assert_eq!(server.stats().requests, result.requests, "idle connections made no request");
    assert_eq!(accepted(&server, 42), 42);
    let memory = result.memory.as_ref().unwrap();
    assert_eq!(memory.connections, 42);
    assert!(memory.rss_peak_bytes >= memory.rss_before_bytes && memory.rss_before_bytes > 0, "{memory:?}");
    server.stop();
}

#[test]
fn slow_idle_connections_send_a_head_that_never_ends() {
    let server = serve(&ServeConfig::default()).unwrap();
    // 30 requests at 100/s: the run lasts 300 ms.
    let fields =
        r#""connections": 1, "requests": 30, "rate_per_s": 100, "idle": {"connections": 5, "send_interval_us": 10000}"#;
    let result = run::run(plan(&server, fields)).unwrap();
    let idle = result.idle.unwrap();
    assert_eq!((idle.opened, idle.closed_by_server), (5, 0));
    // One byte per connection every 10 ms for as long as the run lasted (about 300 ms, longer when a
    // loaded machine answers the last request late); a loaded machine may send fewer, never more.
    let most = 5 * (result.elapsed_us / 10_000 + 2);
    assert!((50..=most).contains(&idle.bytes_out), "{} bytes in {} µs", idle.bytes_out, result.elapsed_us);
    assert_eq!((result.responses, server.stats().requests), (30, 30), "no slow head was ever complete");
    server.stop();
}

#[test]
fn connections_from_several_source_addresses_all_reach_the_server() {
    let server = serve(&ServeConfig::default()).unwrap();
    let fields = r#""connections": 6, "requests": 600, "source_addresses": ["127.0.0.2", "127.0.0.3"], "idle": {"connections": 4}"#;
    let result = run::run(plan(&server, fields)).unwrap();
    assert_eq!((result.responses, result.errors_total), (600, 0));
    assert_eq!(result.idle.unwrap().opened, 4);
    assert_eq!(server.stats().requests, 600);
    assert_eq!(accepted(&server, 10), 10);
    server.stop();
}

#[test]
fn bad_source_addresses_are_refused_before_any_load() {
    let server = serve(&ServeConfig::default()).unwrap();
    let cases = [
        (r#"["nowhere"]"#, "not an IP address"),
        (r#"["::1"]"#, "IP version"),
        (r#"["192.0.2.1"]"#, "not on loopback"),
        ("[]", "empty"),
    ];
    for (sources, message) in cases {
        let fields = format!(r#""connections": 1, "requests": 1, "source_addresses": {sources}"#);
        let err = run::run(plan(&server, &fields)).unwrap_err();
        assert!(err.0.contains(message), "{sources}: {err}");
    }
    assert_eq!(server.stats().connections_accepted, 0);
    server.stop();
}

#[test]
fn idle_connections_are_shared_out_exactly() {
    let server = serve(&ServeConfig::default()).unwrap();
    let whole =
        plan(&server, r#""connections": 3, "requests": 30, "idle": {"connections": 7, "send_interval_us": 5000}"#);
    let shares = split_plan(&whole, 3).unwrap();
    let idle: Vec<usize> = shares.iter().map(|s| s.idle.as_ref().unwrap().connections).collect();
    assert_eq!(idle, [3, 2, 2], "evenly, so that no share holds more files than an even share");
    assert!(shares.iter().all(|s| s.idle.as_ref().unwrap().send_interval_us == Some(5000)));
    let few = plan(&server, r#""connections": 3, "requests": 30, "idle": {"connections": 1}"#);
    let held: Vec<bool> = split_plan(&few, 3).unwrap().iter().map(|s| s.idle.is_some()).collect();
    assert_eq!(held.iter().filter(|&&h| h).count(), 1, "a share with no idle connection has no idle plan");
    server.stop();
}
