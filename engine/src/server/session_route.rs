//! `/__gauntlet/session`: a page with a memory, for the sessions' tests. `?login=NAME` sets the
//! cookie `gauntlet_user=NAME`, `?logout=1` deletes it (Max-Age=0); every answer echoes the
//! request's method, Cookie header and body as `method=[...] cookie=[...] body=[...]`, so a
//! content marker can tell a logged-in session's page and a POST's form from the others.

use std::io::Write;

pub const SESSION_PATH: &str = "/__gauntlet/session";
const COOKIE_NAME: &str = "gauntlet_user";

/// The whole response to `request` (its head and body as received) for `target`.
pub fn render(target: &str, request: &[u8], keep_alive: bool) -> Vec<u8> {
    let mut headers = [httparse::EMPTY_HEADER; 48];
    let mut parsed = httparse::Request::new(&mut headers);
    let head_bytes = match parsed.parse(request) {
        Ok(httparse::Status::Complete(n)) => n,
        _ => request.len(),
    };
    let cookie = parsed.headers.iter().find(|h| h.name.eq_ignore_ascii_case("cookie")).map_or(&b""[..], |h| h.value);
    let mut body = Vec::new();
    let _ = write!(body, "method=[{}] cookie=[", parsed.method.unwrap_or_default());
    body.extend_from_slice(cookie);
    body.extend_from_slice(b"] body=[");
    body.extend_from_slice(&request[head_bytes..]);
    body.extend_from_slice(b"]\n");
    let query = target.split_once('?').map_or("", |(_, query)| query);
    let set_cookie = query.split('&').find_map(|pair| match pair.split_once('=') {
        Some(("login", name)) => Some(format!("Set-Cookie: {COOKIE_NAME}={name}; Path=/\r\n")),
        Some(("logout", _)) => Some(format!("Set-Cookie: {COOKIE_NAME}=deleted; Max-Age=0; Path=/\r\n")),
        _ => None,
    });
    let connection = if keep_alive { "keep-alive" } else { "close" };
    let mut out = Vec::with_capacity(body.len() + 200);
    let _ = write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: {connection}\r\n{}\r\n",
        body.len(),
        set_cookie.unwrap_or_default()
    );
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(target: &str, request: &str) -> String {
        String::from_utf8(render(target, request.as_bytes(), true)).unwrap()
    }

    #[test]
    fn login_sets_the_cookie_and_every_answer_echoes_it() {
        let login = answer("/__gauntlet/session?login=ann", "GET / HTTP/1.1\r\n\r\n");
        assert!(login.contains("Set-Cookie: gauntlet_user=ann; Path=/\r\n"), "{login}");
        assert!(login.ends_with("method=[GET] cookie=[] body=[]\n"), "{login}");
        let back = answer(SESSION_PATH, "POST / HTTP/1.1\r\nCookie: gauntlet_user=ann\r\nContent-Length: 3\r\n\r\na=1");
        assert!(back.ends_with("method=[POST] cookie=[gauntlet_user=ann] body=[a=1]\n"), "{back}");
        assert!(!back.contains("Set-Cookie"));
        assert!(answer("/__gauntlet/session?logout=1", "GET / HTTP/1.1\r\n\r\n").contains("Max-Age=0"));
    }
}
