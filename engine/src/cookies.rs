//! A session's cookie jar: what Set-Cookie headers set, sent back as one Cookie header. Name and
//! value only (no domain, path or secure scoping: a session talks to one site); Max-Age=0, a
//! negative Max-Age or an Expires in a past year deletes. The pairs live in one buffer
//! ("a=1; b=2") reused from session to session, so a steady run allocates nothing.

use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug, Default)]
pub struct CookieJar {
    /// "name=value" pairs joined by "; ", as the Cookie header carries them.
    pairs: Vec<u8>,
}

const SEPARATOR: &[u8] = b"; ";

impl CookieJar {
    /// The Cookie header's value; empty when the jar is.
    pub fn header_value(&self) -> &[u8] {
        &self.pairs
    }

    /// A new session: forget every cookie.
    pub fn clear(&mut self) {
        self.pairs.clear();
    }

    /// Take in Set-Cookie header values, one per line.
    pub fn take_set_cookies(&mut self, lines: &[u8]) {
        for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            self.set(line);
        }
    }

    /// One Set-Cookie value: "name=value; Attr=...; ...".
    fn set(&mut self, set_cookie: &[u8]) {
        let mut parts = set_cookie.split(|&b| b == b';');
        let Some((name, value)) = parts.next().and_then(|pair| split_pair(pair)) else { return };
        if name.is_empty() || name.contains(&b' ') {
            return;
        }
        self.remove(name);
        if parts.any(deletes) {
            return;
        }
        if !self.pairs.is_empty() {
            self.pairs.extend_from_slice(SEPARATOR);
        }
        self.pairs.extend_from_slice(name);
        self.pairs.push(b'=');
        self.pairs.extend_from_slice(value);
    }

    fn remove(&mut self, name: &[u8]) {
        let mut start = 0;
        while start < self.pairs.len() {
            let end = memchr::memmem::find(&self.pairs[start..], SEPARATOR).map_or(self.pairs.len(), |at| start + at);
            let pair = &self.pairs[start..end];
            if pair.len() > name.len() && pair.starts_with(name) && pair[name.len()] == b'=' {
                // The pair and one separator next to it.
                let (from, to) = match (start, end) {
                    (_, e) if e < self.pairs.len() => (start, e + SEPARATOR.len()),
                    (0, e) => (0, e),
                    (s, e) => (s - SEPARATOR.len(), e),
                };
                self.pairs.drain(from..to);
                return;
            }
            start = end + SEPARATOR.len();
        }
    }
}

fn split_pair(pair: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = pair.iter().position(|&b| b == b'=')?;
    Some((pair[..at].trim_ascii(), pair[at + 1..].trim_ascii()))
}

/// An attribute that ends the cookie now: Max-Age of 0 or less, or an Expires in a past year.
fn deletes(attribute: &[u8]) -> bool {
    let Some((name, value)) = split_pair(attribute) else { return false };
    if name.eq_ignore_ascii_case(b"max-age") {
        return std::str::from_utf8(value).ok().and_then(|text| text.parse::<i64>().ok()).is_some_and(|age| age <= 0);
    }
    name.eq_ignore_ascii_case(b"expires") && year_of(value).is_some_and(|year| year < current_year())
}

/// The four-digit year of an HTTP date ("Thu, 01-Jan-1970 00:00:01 GMT").
fn year_of(date: &[u8]) -> Option<u32> {
    date.split(|b| !b.is_ascii_digit())
        .find(|digits| digits.len() == 4)
        .map(|digits| digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
}

fn current_year() -> u32 {
    let seconds = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    1970 + (seconds as f64 / (365.2425 * 86_400.0)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jar(lines: &[&str]) -> String {
        let mut jar = CookieJar::default();
        for line in lines {
            jar.take_set_cookies(line.as_bytes());
        }
        String::from_utf8(jar.header_value().to_vec()).unwrap()
    }

    #[test]
    fn cookies_are_set_replaced_and_joined() {
        assert_eq!(jar(&["PHPSESSID=abc; path=/; HttpOnly"]), "PHPSESSID=abc");
        assert_eq!(jar(&["a=1\nb=2", "a=3"]), "b=2; a=3");
        assert_eq!(jar(&["a=1", "b=2", "c=3", "b=4"]), "a=1; c=3; b=4");
        assert_eq!(jar(&["ab=1", "a=2"]), "ab=1; a=2");
        assert_eq!(jar(&["no pair", "=x", "x y=1"]), "");
    }

    #[test]
    fn max_age_zero_and_past_expiry_delete() {
        assert_eq!(jar(&["a=1", "b=2", "a=deleted; Max-Age=0"]), "b=2");
        assert_eq!(jar(&["a=1", "b=2", "b=x; expires=Thu, 01-Jan-1970 00:00:01 GMT"]), "a=1");
        assert_eq!(jar(&["a=1", "a=2; Max-Age=-1"]), "");
        assert_eq!(jar(&["a=1; Max-Age=3600", "c=1; Expires=Fri, 01 Jan 2100 00:00:00 GMT"]), "a=1; c=1");
    }

    #[test]
    fn a_cleared_jar_is_empty() {
        let mut jar = CookieJar::default();
        jar.take_set_cookies(b"a=1");
        jar.clear();
        assert!(jar.header_value().is_empty());
    }
}
