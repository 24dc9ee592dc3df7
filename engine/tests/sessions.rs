//! Sessions: the exact request sequence of a user, arrivals in phases, revalidations, and QoS
//! classes, checked against what the server saw.

mod common;

use std::collections::HashSet;

use common::{plan, Peer};
use gauntlet_engine::run::run;
use gauntlet_engine::server::routes::{Route, Routes};
use gauntlet_engine::server::{serve, ServeConfig};

const TWO_PAGES: &str = r#"{"types": [{"name": "browse", "weight": 1, "think": {"kind": "fixed", "mean_us": 100000},
    "pages": [{"name": "home", "path": "/a", "embedded": ["/e1", "/e2", "/e3"]},
              {"name": "next", "path": "/b", "embedded": ["/e4"]}]}]"#;

#[test]
fn one_user_fetches_pages_over_two_connections_and_thinks_between_them() {
    let peer = Peer::start(common::http_ok);
    let sessions = format!(r#"{TWO_PAGES}, "users": 1, "if_modified_since_share": 0.5, "seed": 9}}"#);
    let fields = format!(r#""connections": 2, "threads": 1, "duration_us": 350000, "sessions": {sessions}"#);
    let result = run(plan(&peer.url("/"), &fields)).unwrap();
    let log = peer.log();
    let paths: Vec<&str> = log.iter().map(|(_, seen)| seen.path.as_str()).collect();
    // Page 1: /a, then its three images over both connections; 100 ms of thinking; page 2: /b
    // and its image; 100 ms; the next session starts again with /a.
    assert_eq!(paths[0], "/a");
    assert_eq!(paths[1..4].iter().copied().collect::<HashSet<_>>(), HashSet::from(["/e1", "/e2", "/e3"]));
    assert_eq!(&paths[4..8], ["/b", "/e4", "/a", paths[7]]);
    let ports: HashSet<u64> = log.iter().map(|(port, _)| *port).collect();
    assert_eq!(ports.len(), 2, "one user, two connections, kept alive across pages and sessions");
    let embedded = log.iter().filter(|(_, seen)| seen.path.starts_with("/e"));
    let (revalidating, all) = embedded.fold((0, 0), |(r, n), (_, seen)| (r + usize::from(seen.revalidate), n + 1));
    assert!(revalidating > 0 && revalidating < all, "{revalidating} of {all} revalidated");
    assert!(
        log.iter().all(|(_, seen)| !seen.path.starts_with("/a") || !seen.revalidate),
        "main requests never revalidate"
    );
    // Sessions start at about 0, 100, 200 and 300 ms; the fourth's second page would end past 350.
    let sessions = result.sessions.unwrap();
    assert_eq!(sessions.users_started, 4);
    assert_eq!((sessions.pages["home"].count, sessions.pages["next"].count), (4, 3));
    assert_eq!(result.responses as usize, log.len());
}

#[test]
fn revalidations_of_the_builtin_server_get_304() {
    let server = serve(&ServeConfig::default()).unwrap();
    let url = format!("http://{}/", server.local_addr());
    let sessions = r#"{"types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 0},
        "pages": [{"name": "p", "path": "/webtest.html", "embedded": ["/image_small.gif", "/image_10k.png"]}]}],
        "users": 3, "if_modified_since_share": 1.0}"#;
    let result =
        run(plan(&url, &format!(r#""connections": 6, "threads": 2, "duration_us": 300000, "sessions": {sessions}"#)))
            .unwrap();
    server.stop();
    let sessions = result.sessions.unwrap();
    let pages = sessions.pages["p"].count;
    assert!(pages > 10);
    assert_eq!(result.status_codes.get("304").copied().unwrap_or(0), sessions.not_modified);
    assert!(sessions.not_modified >= 2 * pages, "{} 304s for {pages} pages", sessions.not_modified);
    assert_eq!(result.errors_total, 0);
    assert_eq!(sessions.users_dropped, 0, "3 users on 2 threads: 2 users' connections on one, 1 user's on the other");
}

#[test]
fn users_arrive_in_phases_and_leave() {
    let peer = Peer::start(common::http_ok);
    let sessions = r#"{"types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 0},
        "pages": [{"name": "p", "path": "/p", "embedded": ["/x", "/y"]}]}],
        "phases": [{"users_per_s": 40, "duration_us": 1000000}, {"users_per_s": 160, "duration_us": 500000}], "seed": 3}"#;
    let result =
        run(plan(&peer.url("/"), &format!(r#""connections": 400, "threads": 2, "sessions": {sessions}"#))).unwrap();
    let sessions = result.sessions.unwrap();
    // 40 + 80 expected; a Poisson count is within four standard deviations (about 44).
    assert!((76..=164).contains(&sessions.users_started), "{} users", sessions.users_started);
    assert_eq!(sessions.users_dropped, 0);
    // Every user finished or was still on its page when the run ended (how many depends on how
    // the machine's load delayed the last ones, so it is counted, not bounded).
    let in_progress = sessions.users_started - sessions.users_completed;
    assert_eq!(result.timeline.last().unwrap().users_active, in_progress);
    assert!(sessions.users_completed > 0);
    assert!(peer.requests() >= 3 * sessions.users_completed);
    // Each user opens its own two connections: the main request on one, its images over both. A
    // user still on its page at the end may not have opened its second yet (or its first).
    let connections = peer.connections();
    assert!(
        (2 * sessions.users_completed..=2 * sessions.users_started).contains(&connections),
        "{connections} connections for {} users, {in_progress} of them in progress",
        sessions.users_started
    );
    assert!((1_400_000..=1_600_000).contains(&result.elapsed_us), "{}", result.elapsed_us);
}

#[test]
fn users_and_pages_are_counted_per_second_and_per_phase() {
    // Users who stay 200 ms (two pages, thinking between them), arriving at 10/s then 120/s, over
    // a connection cap that drops some of them in the second phase.
    let peer = Peer::start(common::http_ok);
    let sessions = r#"{"types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 200000},
        "pages": [{"name": "home", "path": "/h"}, {"name": "post", "path": "/p"}]}],
        "phases": [{"users_per_s": 10, "duration_us": 2000000}, {"users_per_s": 120, "duration_us": 1500000}], "seed": 5}"#;
    let fields = format!(r#""connections": 24, "threads": 2, "sessions": {sessions}"#);
    let result = run(plan(&peer.url("/"), &fields)).unwrap();
    let sessions = result.sessions.unwrap();
    let timeline = &result.timeline;
    let total =
        |field: fn(&gauntlet_engine::stats::timeline::TimelineEntry) -> u64| timeline.iter().map(field).sum::<u64>();
    let pages: u64 = sessions.pages.values().map(|p| p.count).sum();
    assert_eq!(total(|s| s.users_arrived), sessions.users_started);
    assert_eq!(total(|s| s.users_finished), sessions.users_completed);
    assert_eq!(total(|s| s.users_dropped), sessions.users_dropped);
    assert_eq!(total(|s| s.pages), pages);
    assert!(sessions.users_dropped > 0, "12 users at once cannot hold 120/s of 200 ms sessions");
    // At most 12 users at once (two connections each); the last second ends with those still in a session.
    assert!(timeline.iter().all(|s| s.users_active <= 12));
    let in_progress = sessions.users_started - sessions.users_completed;
    assert_eq!(timeline.last().unwrap().users_active, in_progress);
    let phases = &sessions.phases;
    assert_eq!(
        phases.iter().map(|p| (p.start_us, p.duration_us)).collect::<Vec<_>>(),
        [(0, 2_000_000), (2_000_000, 1_500_000)]
    );
    assert_eq!(phases.iter().map(|p| p.users_arrived).sum::<u64>(), sessions.users_started);
    assert_eq!(phases.iter().map(|p| p.users_dropped).sum::<u64>(), sessions.users_dropped);
    assert_eq!(phases[0].users_dropped, 0, "10/s of 200 ms sessions is about 2 users at once");
    for name in ["home", "post"] {
        assert_eq!(phases.iter().map(|p| p.pages[name].count).sum::<u64>(), sessions.pages[name].count, "{name}");
    }
    // About 20 users in phase 1 (Poisson: within four standard deviations).
    assert!((3..=38).contains(&phases[0].users_arrived), "{}", phases[0].users_arrived);
    assert!(result.responses <= peer.requests() && result.errors_total == 0);
}

#[test]
fn users_of_pages_without_resources_use_one_connection_and_leave() {
    let peer = Peer::start(common::http_ok);
    let sessions = r#"{"types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 1000},
        "pages": [{"name": "p", "path": "/p"}, {"name": "q", "path": "/q"}]}],
        "phases": [{"users_per_s": 40, "duration_us": 500000}], "seed": 5}"#;
    let result =
        run(plan(&peer.url("/"), &format!(r#""connections": 20, "threads": 1, "sessions": {sessions}"#))).unwrap();
    let sessions = result.sessions.unwrap();
    assert!(sessions.users_started >= 5, "{} users", sessions.users_started);
    assert!(sessions.users_completed + 2 >= sessions.users_started, "{sessions:?}");
    assert_eq!(peer.connections(), sessions.users_started, "a user without resources opens one connection");
}

#[test]
fn qos_classes_by_time_and_by_byte_rate() {
    let server = serve(&ServeConfig::default()).unwrap();
    let url = format!("http://{}/", server.local_addr());
    let sessions = r#"{"types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 0},
        "pages": [{"name": "slow", "path": "/hello?delay_ms=30"},
                  {"name": "download", "path": "/image_large.jpg", "download": true}]}],
        "users": 2, "qos": {"good_us": 20000, "tolerable_us": 100000,
                            "download_good_bytes_per_s": 1000000, "download_tolerable_bytes_per_s": 500000}}"#;
    let result =
        run(plan(&url, &format!(r#""connections": 4, "threads": 1, "duration_us": 500000, "sessions": {sessions}"#)))
            .unwrap();
    server.stop();
    let pages = result.sessions.unwrap().pages;
    let slow = &pages["slow"];
    assert!(slow.count > 5);
    assert_eq!((slow.good, slow.tolerable, slow.fail), (0, slow.count, 0), "30 ms pages are tolerable");
    assert!(slow.page_time_us.p50 >= 30_000);
    let download = &pages["download"];
    assert_eq!(download.good, download.count, "83,572 B in well under 80 ms is over 1 MB/s");
    let routes = Routes::new();
    let Route::Static(image) = routes.find("/image_large.jpg") else { panic!("a static file") };
    assert_eq!(download.bytes_in, download.count * image.bytes(true, false).len() as u64, "head and body");
}

#[test]
fn a_page_answered_with_an_error_status_fails_qos() {
    let server = serve(&ServeConfig::default()).unwrap();
    let url = format!("http://{}/", server.local_addr());
    let sessions = r#"{"types": [{"name": "t", "weight": 1, "think": {"kind": "fixed", "mean_us": 0},
        "pages": [{"name": "broken", "path": "/hello?status=500"},
                  {"name": "image", "path": "/webtest.html", "embedded": ["/missing.gif"]},
                  {"name": "fine", "path": "/webtest.html", "embedded": ["/image_small.gif"]}]}],
        "users": 2}"#;
    let result =
        run(plan(&url, &format!(r#""connections": 4, "threads": 1, "duration_us": 300000, "sessions": {sessions}"#)))
            .unwrap();
    server.stop();
    let pages = result.sessions.unwrap().pages;
    for name in ["broken", "image"] {
        let page = &pages[name];
        assert!(page.count > 5, "{name}: {} pages", page.count);
        assert_eq!((page.good, page.tolerable, page.fail, page.errors), (0, 0, page.count, page.count), "{name}");
    }
    let fine = &pages["fine"];
    assert_eq!((fine.fail, fine.errors), (0, 0));
}
