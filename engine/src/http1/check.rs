//! The content check: a response is what it should be only if its body holds the request's
//! marker (a string only a correct page holds). The body is searched as it streams by, chunk
//! framing removed; a marker split across two reads is found through the last `len - 1` bytes
//! of the previous one, kept in a small tail. Requests without a marker pay nothing.

use std::sync::Arc;

use memchr::memmem::Finder;

/// A marker, searched for with a precomputed finder; shared by every response that expects it.
#[derive(Debug)]
pub struct Marker {
    finder: Finder<'static>,
}

impl Marker {
    /// None for an absent or empty marker: nothing to check.
    pub fn new(text: Option<&str>) -> Option<Arc<Marker>> {
        text.filter(|t| !t.is_empty()).map(|t| Arc::new(Marker { finder: Finder::new(t.as_bytes()).into_owned() }))
    }

    fn len(&self) -> usize {
        self.finder.needle().len()
    }
}

/// One response's search for its marker.
#[derive(Debug)]
pub struct ContentCheck {
    marker: Arc<Marker>,
    found: bool,
    /// The last bytes of the body so far, at most the marker's length less one.
    tail: Vec<u8>,
}

impl ContentCheck {
    pub fn new(marker: Arc<Marker>) -> ContentCheck {
        ContentCheck { marker, found: false, tail: Vec::new() }
    }

    pub fn found(&self) -> bool {
        self.found
    }

    /// The next bytes of the body.
    pub fn scan(&mut self, data: &[u8]) {
        if self.found || data.is_empty() {
            return;
        }
        let keep = self.marker.len() - 1;
        // A match that begins in the tail ends within the first `keep` bytes of `data`.
        self.tail.extend_from_slice(&data[..data.len().min(keep)]);
        if self.marker.finder.find(&self.tail).is_some() || self.marker.finder.find(data).is_some() {
            self.found = true;
            self.tail = Vec::new();
            return;
        }
        if data.len() >= keep {
            self.tail.clear();
            self.tail.extend_from_slice(&data[data.len() - keep..]);
        } else {
            let excess = self.tail.len().saturating_sub(keep);
            self.tail.drain(..excess);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found_in(marker: &str, reads: &[&[u8]]) -> bool {
        let mut check = ContentCheck::new(Marker::new(Some(marker)).unwrap());
        for read in reads {
            check.scan(read);
        }
        check.found()
    }

    #[test]
    fn a_marker_is_found_within_one_read_or_across_several() {
        assert!(found_in("Seed post", &[b"<h2>Seed post 50</h2>"]));
        assert!(found_in("Seed post", &[b"<h2>Se", b"ed po", b"st 50"]));
        assert!(found_in("Seed post", &[b"S", b"e", b"e", b"d", b" ", b"p", b"o", b"s", b"t"]));
        assert!(found_in("abc", &[b"xxab", b"cxx"]));
    }

    #[test]
    fn a_page_without_the_marker_fails_also_when_its_pieces_are_there() {
        assert!(!found_in("Seed post", &[b"Error establishing a database connection"]));
        assert!(!found_in("Seed post", &[b"Seed pos", b"x Seed", b" pot"]));
        assert!(!found_in("abc", &[b"ab", b"", b"xc"]));
    }

    #[test]
    fn no_marker_is_nothing_to_check() {
        assert!(Marker::new(None).is_none());
        assert!(Marker::new(Some("")).is_none());
    }
}
