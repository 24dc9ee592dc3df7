//! Sessions that walk a transition table, keep cookies, POST forms and switch to https for some
//! pages, against the built-in server's session route (it sets a cookie at login, deletes it at
//! logout, and echoes the method, the Cookie header and the body of every request).

mod common;

use common::plan;
use gauntlet_engine::run::run;
use gauntlet_engine::server::{serve, ServeConfig};

const LOGIN: &str = r#"{"name": "login", "path": "/__gauntlet/session?login=ann", "expect": "cookie=[]"}"#;
const ACCOUNT: &str = r#"{"name": "account", "path": "/__gauntlet/session", "method": "POST", "body": "amount=5",
    "expect": "method=[POST] cookie=[gauntlet_user=ann] body=[amount=5]"}"#;
const LOGOUT: &str =
    r#"{"name": "logout", "path": "/__gauntlet/session?logout=1", "expect": "cookie=[gauntlet_user=ann]"}"#;
const GONE: &str = r#"{"name": "gone", "path": "/__gauntlet/session", "expect": "method=[GET] cookie=[] body=[]"}"#;
/// login, then account 1 + a geometric number of times (mean 2), logout, and a page after it.
const WALK: &str = r#""start": "login", "transitions": {"login": {"account": 1}, "account": {"account": 0.5, "logout": 0.5},
    "logout": {"gone": 1}, "gone": {"end": 1}}"#;

#[test]
fn a_session_carries_its_cookie_posts_its_form_and_walks_the_table() {
    let server = serve(&ServeConfig::default()).unwrap();
    let url = format!("http://{}/", server.local_addr());
    // A stranger asks for the account page without logging in: its marker never shows.
    let sessions = format!(
        r#"{{"users": 4, "seed": 5, "types": [
            {{"name": "member", "weight": 3, "think": {{"kind": "fixed", "mean_us": 0}}, {WALK},
              "pages": [{LOGIN}, {ACCOUNT}, {LOGOUT}, {GONE}]}},
            {{"name": "stranger", "weight": 1, "think": {{"kind": "fixed", "mean_us": 0}},
              "pages": [{{"name": "peek", "path": "/__gauntlet/session", "expect": "cookie=[gauntlet_user=ann]"}}]}}]}}"#
    );
    let fields = format!(r#""connections": 8, "threads": 2, "duration_us": 1000000, "sessions": {sessions}"#);
    let result = run(plan(&url, &fields)).unwrap();
    server.stop();
    let pages = result.sessions.unwrap().pages;
    let count = |name: &str| pages[name].count;
    for name in ["login", "account", "logout", "gone"] {
        let page = &pages[name];
        assert!(page.count > 20, "{name}: {} pages", page.count);
        assert_eq!((page.errors, page.invalid, page.fail), (0, 0, 0), "{name} failed its check");
    }
    // Each session ends after `gone`; a few are cut off by the end of the run.
    assert!(count("login").abs_diff(count("gone")) <= 4, "{} logins, {} ends", count("login"), count("gone"));
    let visits = count("account") as f64 / count("login") as f64;
    assert!((1.5..=2.5).contains(&visits), "{visits} account pages a session, 2 expected");
    let peek = &pages["peek"];
    assert!(peek.count > 5);
    let failed = (peek.errors, peek.invalid, peek.fail, peek.good);
    assert_eq!(failed, (peek.count, peek.count, peek.count, 0), "a failed check fails QoS");
    assert_eq!(result.errors.get("content").copied(), Some(peek.count));
}

#[test]
fn https_pages_go_to_the_https_target_with_the_same_cookies() {
    let plain = serve(&ServeConfig::default()).unwrap();
    let secure = serve(&ServeConfig { tls: true, ..ServeConfig::default() }).unwrap();
    let (url, https_url) =
        (format!("http://{}/", plain.local_addr()), format!("https://127.0.0.1:{}/", secure.local_addr().port()));
    let pay = r#"{"name": "pay", "path": "/__gauntlet/session", "scheme": "https", "method": "POST", "body": "to=bob",
        "embedded": ["/image_small.gif", "/image_10k.png"], "expect": "cookie=[gauntlet_user=ann] body=[to=bob]"}"#;
    let sessions = format!(
        r#"{{"users": 2, "https_url": "{https_url}", "types": [{{"name": "shop", "weight": 1,
            "think": {{"kind": "fixed", "mean_us": 0}}, "pages": [{LOGIN}, {pay}]}}]}}"#
    );
    let fields = format!(r#""connections": 8, "threads": 1, "duration_us": 600000, "sessions": {sessions}"#);
    let result = run(plan(&url, &fields)).unwrap();
    let (plain_stats, secure_stats) = (plain.stats(), secure.stats());
    plain.stop();
    secure.stop();
    let pages = result.sessions.unwrap().pages;
    let (logins, pays) = (&pages["login"], &pages["pay"]);
    assert!(pays.count > 10, "{} https pages", pays.count);
    assert_eq!((logins.errors, pays.errors, result.errors_total), (0, 0, 0), "{:?}", result.errors);
    // Logins on the plain server, payments and their images on the TLS one, each over its own pair.
    assert!(plain_stats.requests.abs_diff(logins.count) <= 2, "{plain_stats:?} for {} logins", logins.count);
    assert!(secure_stats.requests.abs_diff(3 * pays.count) <= 6, "{secure_stats:?} for {} payments", pays.count);
    assert_eq!((plain_stats.connections_accepted, secure_stats.connections_accepted), (2, 4));
    assert!(result.tls.unwrap().handshakes >= 2);
}
