//! BeSim: the back-end simulator behind the SPECweb-like applications (Banking, Ecommerce,
//! Support). A dynamic page asks it for its data, as a real site asks its database or application
//! server: `GET /besim/<workload>/<call>?id=N` answers, after the configured service time (held
//! by the server's timers, never blocking its loop), rows of deterministic data for `N`, one row a
//! line, fields separated by `|`, the first line `BESIM <workload>/<call> <N> <rows>`.
//!
//! `GET /besim/stats` gives the calls answered per type (JSON); `GET /besim/fail?on=1` makes every
//! call answer 503 until `?on=0` (the "broken back end" of the tests).

use std::fmt::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub const PREFIX: &str = "/besim/";
const STATS: &str = "/besim/stats";
const FAIL: &str = "/besim/fail";

/// One back-end call: its path under /besim/, the rows it answers and the fields of a row.
struct Call {
    path: &'static str,
    rows: u64,
    /// The row's columns; `{n}` is the row number, `{id}` the request's id, `{v}` a number drawn
    /// from both, `{w}` a word drawn from both.
    row: &'static str,
}

const fn call(path: &'static str, rows: u64, row: &'static str) -> Call {
    Call { path, rows, row }
}

/// Every call the three applications make, with answers of about the sizes a real back end gives
/// (a few hundred bytes for a check, a few kilobytes for a list).
const CALLS: [Call; 24] = [
    call("bank/login", 1, "user|{id}|{w} {w}|last-login {v}|status active"),
    call("bank/account_summary", 6, "account|{id}-{n}|{w}|balance {v}.{n}7|available {v}.1{n}|opened 20{n}-0{n}-1{n}"),
    call("bank/check_images", 8, "check|{id}-{n}|{w}|amount {v}.00|front check_front_{n}.gif|back check_back_{n}.gif"),
    call("bank/payees", 12, "payee|{id}-{n}|{w} {w} services|{v} {w} street|account {v}{n}"),
    call("bank/bill_pay", 1, "payment|{id}-{v}|confirmation {v}{v}|scheduled|{w}"),
    call("bank/transfer", 1, "transfer|{id}-{v}|confirmation {v}{v}|completed|{w}"),
    call("bank/profile", 1, "profile|{id}|{w} {w}|{v} {w} avenue|{w}@example.test|phone 555-{v}"),
    call("bank/logout", 1, "logout|{id}|session closed"),
    call("shop/featured", 8, "product|{v}|{w} {w} model {n}|price {v}.99|image product_{n}.jpg"),
    call("shop/search", 20, "result|{v}|{w} {w} {w}|price {v}.49|rating {n}|in stock"),
    call("shop/products", 24, "product|{v}|{w} {w} series {n}|price {v}.95|{w} category|image thumb_{n}.jpg"),
    call("shop/product", 1, "detail|{id}|{w} {w} model {v}|price {v}.99|{w} {w} {w} {w} {w} {w} {w} {w}|weight {v} g"),
    call("shop/options", 10, "option|{id}-{n}|{w} {w}|extra {v}.00|default {n}"),
    call("shop/cart", 5, "item|{id}-{n}|{w} {w}|quantity {n}|price {v}.99"),
    call("shop/login", 1, "customer|{id}|{w} {w}|{w}@example.test|member since 20{n}"),
    call("shop/shipping", 4, "shipping|{n}|{w} delivery|{n} days|cost {v}.50"),
    call("shop/billing", 1, "billing|{id}|card ending {v}|{w} {w}|authorised {v}"),
    call("shop/confirm", 1, "order|{id}-{v}|confirmation {v}{v}|total {v}.97|ships in {v} days"),
    call("support/categories", 12, "category|{n}|{w} {w}|{v} products"),
    call("support/search", 20, "match|{v}|{w} {w} {w}|driver {v}.{n}|score {n}"),
    call("support/catalog", 25, "product|{v}|{w} {w} {v}|{w} family|released 20{n}"),
    call("support/product", 1, "product|{id}|{w} {w} {v}|{w} {w} {w} {w} {w} {w}|warranty {n} years"),
    call("support/files", 15, "file|{v}|{w}_{w}_{n}.bin|size {v}{v}|version {v}.{n}|{w} {w}"),
    call("support/download", 1, "download|{id}|{w}_{w}.bin|size {v}{v}|md5 {v}{v}{v}{v}"),
];

const WORDS: [&str; 16] = [
    "alpha", "brook", "cedar", "delta", "ember", "flint", "grove", "harbor", "iris", "juniper", "kestrel", "linden",
    "maple", "nova", "orchid", "pine",
];

/// A number from the request's id, the row and the column: the same answer for the same request.
fn draw(id: u64, row: u64, column: u64) -> u64 {
    let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ row.wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ column;
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 29)
}

fn render(call: &Call, id: u64) -> String {
    let mut body = String::with_capacity(64 + call.rows as usize * call.row.len() * 2);
    let _ = writeln!(body, "BESIM {} {id} {}", call.path, call.rows);
    for n in 0..call.rows {
        let mut column = 0;
        let mut rest = call.row;
        while let Some(start) = rest.find('{') {
            body.push_str(&rest[..start]);
            let end = start + rest[start..].find('}').unwrap_or(0);
            column += 1;
            let value = draw(id, n, column);
            let _ = match &rest[start + 1..end] {
                "n" => write!(body, "{n}"),
                "id" => write!(body, "{id}"),
                "v" => write!(body, "{}", value % 9_000 + 1_000),
                _ => write!(body, "{}", WORDS[(value % WORDS.len() as u64) as usize]),
            };
            rest = &rest[end + 1..];
        }
        body.push_str(rest);
        body.push('\n');
    }
    body
}

/// What BeSim answers a request: status, content type and body.
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

/// The simulator: its service time, its failure switch and its counts per call.
pub struct Besim {
    pub service_time_us: u64,
    failing: AtomicBool,
    counts: [AtomicU64; CALLS.len()],
}

fn id_of(target: &str) -> u64 {
    let query = target.split_once('?').map_or("", |(_, query)| query);
    query.split('&').find_map(|pair| pair.strip_prefix("id=")).and_then(|v| v.parse().ok()).unwrap_or(0)
}

impl Besim {
    pub fn new(service_time_us: u64) -> Besim {
        Besim { service_time_us, failing: AtomicBool::new(false), counts: Default::default() }
    }

    /// How long a request for `target` is held before its answer: the service time for a call.
    pub fn hold_us(&self, target: &str) -> u64 {
        let path = target.split_once('?').map_or(target, |(path, _)| path);
        if path.starts_with(PREFIX) && path != STATS && path != FAIL {
            self.service_time_us
        } else {
            0
        }
    }

    /// The answer for a target under /besim/; None for any other target (the server's own routes).
    pub fn answer(&self, target: &str) -> Option<Answer> {
        let path = target.split_once('?').map_or(target, |(path, _)| path);
        let call_path = path.strip_prefix(PREFIX)?;
        let answer = |status, content_type, body| Some(Answer { status, content_type, body });
        match path {
            STATS => answer(200, "application/json", self.stats_json()),
            FAIL => {
                let on = target.split_once('?').is_some_and(|(_, query)| query.split('&').any(|p| p == "on=1"));
                self.failing.store(on, Ordering::SeqCst);
                answer(200, "text/plain", format!("failing {on}\n"))
            }
            _ => match CALLS.iter().position(|c| c.path == call_path) {
                None => answer(404, "text/plain", format!("BeSim has no call {call_path}\n")),
                Some(_) if self.failing.load(Ordering::SeqCst) => {
                    answer(503, "text/plain", "BeSim is failing on request\n".into())
                }
                Some(index) => {
                    self.counts[index].fetch_add(1, Ordering::Relaxed);
                    answer(200, "text/plain", render(&CALLS[index], id_of(target)))
                }
            },
        }
    }

    /// `{"calls": {"bank/login": 3, ...}, "total": N, "failing": false}`, every call listed.
    fn stats_json(&self) -> String {
        let calls: serde_json::Map<String, serde_json::Value> = CALLS
            .iter()
            .zip(&self.counts)
            .map(|(call, count)| (call.path.to_string(), count.load(Ordering::Relaxed).into()))
            .collect();
        let total: u64 = self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        serde_json::json!({"calls": calls, "total": total, "failing": self.failing.load(Ordering::SeqCst)}).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_deterministic_rows_of_the_call() {
        let besim = Besim::new(0);
        let first = besim.answer("/besim/bank/account_summary?id=42").unwrap();
        let again = besim.answer("/besim/bank/account_summary?id=42").unwrap();
        assert_eq!(first.body, again.body);
        assert!(first.body.starts_with("BESIM bank/account_summary 42 6\n"));
        assert_eq!(first.body.lines().count(), 7);
        assert!(first.body.lines().skip(1).all(|line| line.starts_with("account|42-")));
        assert!(!first.body.contains('{'));
        let other = besim.answer("/besim/bank/account_summary?id=43").unwrap();
        assert_ne!(first.body, other.body);
    }

    #[test]
    fn counts_calls_and_fails_on_request() {
        let besim = Besim::new(500);
        assert_eq!(besim.hold_us("/besim/shop/cart?id=1"), 500);
        assert_eq!(besim.hold_us("/besim/stats"), 0);
        assert_eq!(besim.hold_us("/index.html"), 0);
        besim.answer("/besim/shop/cart?id=1");
        besim.answer("/besim/shop/cart?id=2");
        assert_eq!(besim.answer("/besim/shop/nothing").unwrap().status, 404);
        assert!(besim.answer("/other").is_none());
        besim.answer("/besim/fail?on=1");
        assert_eq!(besim.answer("/besim/support/files?id=3").unwrap().status, 503);
        let stats: serde_json::Value = serde_json::from_str(&besim.answer("/besim/stats").unwrap().body).unwrap();
        assert_eq!(stats["calls"]["shop/cart"], 2);
        assert_eq!(stats["calls"]["support/files"], 0);
        assert_eq!(stats["total"], 2);
        assert_eq!(stats["failing"], true);
        besim.answer("/besim/fail?on=0");
        assert_eq!(besim.answer("/besim/support/files?id=3").unwrap().status, 200);
    }
}
