//! A request target (a path and its query) as RFC 3986 lets it stand on a request line: what a
//! URL, a paths mix or a load file gives is percent-encoded here, once, where requests are built.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Bytes a path or a query may hold as they are (RFC 3986 §3.3, §3.4): unreserved, sub-delims,
/// ':', '@', '/' and '?'. '%' is kept only where it starts an escape (%XX).
fn allowed(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&byte)
}

fn escape_at(bytes: &[u8], i: usize) -> bool {
    bytes[i] == b'%' && bytes.len() > i + 2 && bytes[i + 1].is_ascii_hexdigit() && bytes[i + 2].is_ascii_hexdigit()
}

/// `target` with every byte outside the allowed set percent-encoded (`<` as %3C, a space as %20,
/// each byte of a non-ASCII character as its own %XX), escapes already there kept, and the
/// fragment (from '#') left out: no client sends it. Control characters are refused before this
/// (`control_character`).
pub fn encode_target(target: &str) -> Cow<'_, str> {
    let target = target.split_once('#').map_or(target, |(before, _)| before);
    let bytes = target.as_bytes();
    if (0..bytes.len()).all(|i| allowed(bytes[i]) || escape_at(bytes, i)) {
        return Cow::Borrowed(target);
    }
    let mut encoded = String::with_capacity(target.len() + 16);
    for (i, &byte) in bytes.iter().enumerate() {
        if allowed(byte) || escape_at(bytes, i) {
            encoded.push(byte as char);
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    Cow::Owned(encoded)
}

/// The first control character of `target` (CR, LF, tab, NUL, DEL ...), which would end or split
/// the request line: refused rather than encoded, since none belongs in a path anyone meant.
pub fn control_character(target: &str) -> Option<char> {
    target.chars().find(|c| c.is_ascii_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_outside_rfc3986_are_encoded_once() {
        let cases = [
            ("/a/b?c=1&d=e", "/a/b?c=1&d=e"),
            ("/<script>", "/%3Cscript%3E"),
            ("/a b?q=x y", "/a%20b?q=x%20y"),
            ("/\"{}|\\^`[]", "/%22%7B%7D%7C%5C%5E%60%5B%5D"),
            ("/caf\u{e9}", "/caf%C3%A9"),
            ("/already%20done%3c", "/already%20done%3c"),
            ("/100%", "/100%25"),
            ("/50%zz", "/50%25zz"),
            ("/page#part", "/page"),
            ("/~user/(x)*+,;=:@!$'", "/~user/(x)*+,;=:@!$'"),
        ];
        for (given, sent) in cases {
            assert_eq!(encode_target(given), sent, "{given}");
        }
        assert!(matches!(encode_target("/plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn control_characters_are_found() {
        assert_eq!(control_character("/a\r\nX: y"), Some('\r'));
        assert_eq!(control_character("/a\tb"), Some('\t'));
        assert_eq!(control_character("/a b"), None);
    }
}
