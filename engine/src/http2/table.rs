//! HPACK's dynamic table as the decoder keeps it: the entries' bytes in one buffer, so that
//! inserting and evicting allocate nothing once the buffer has grown. nginx indexes several fields
//! of every response (date, content-type, content-length, ...), so a table of boxed entries cost an
//! allocation and a free per field.

use std::collections::VecDeque;

/// Where an entry's bytes are: its name, then its value, from `at`, counted in bytes ever appended.
#[derive(Debug, Clone, Copy)]
struct Entry {
    at: u64,
    name_bytes: usize,
    value_bytes: usize,
}

#[derive(Debug, Default)]
pub struct Table {
    /// Newest first.
    entries: VecDeque<Entry>,
    bytes: Vec<u8>,
    /// The `at` of `bytes[0]`.
    base: u64,
}

impl Table {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn push_front(&mut self, name: &[u8], value: &[u8]) {
        // Bytes before the oldest entry are evicted ones: dropped once they are most of the buffer,
        // which so stays within twice the table's size.
        let end = self.base + self.bytes.len() as u64;
        let live_from = self.entries.back().map_or(end, |oldest| oldest.at);
        let dead_bytes = (live_from - self.base) as usize;
        if dead_bytes > self.bytes.len() / 2 {
            self.bytes.drain(..dead_bytes);
            self.base = live_from;
        }
        self.entries.push_front(Entry { at: end, name_bytes: name.len(), value_bytes: value.len() });
        self.bytes.extend_from_slice(name);
        self.bytes.extend_from_slice(value);
    }

    /// Evict the oldest entry; returns its name and value bytes.
    pub fn pop_back(&mut self) -> Option<usize> {
        self.entries.pop_back().map(|entry| entry.name_bytes + entry.value_bytes)
    }

    /// Entry `index`, 0 the newest: (name, value).
    pub fn get(&self, index: usize) -> Option<(&[u8], &[u8])> {
        let entry = self.entries.get(index)?;
        let start = (entry.at - self.base) as usize;
        let (name, rest) = self.bytes[start..].split_at(entry.name_bytes);
        Some((name, &rest[..entry.value_bytes]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_survive_the_buffer_dropping_evicted_bytes() {
        let mut table = Table::default();
        for i in 0..1000u32 {
            let value = i.to_string().repeat(1 + i as usize % 7);
            table.push_front(b"name", value.as_bytes());
            if table.len() > 3 {
                assert_eq!(table.pop_back(), Some(4 + (i - 3).to_string().repeat(1 + (i as usize - 3) % 7).len()));
            }
            assert_eq!(table.get(0), Some((&b"name"[..], value.as_bytes())));
            assert!(table.bytes.len() <= 2 * 4 * (4 + 4 * 7) + 4 + 4 * 7);
        }
        assert_eq!(table.get(2).map(|(_, v)| v.to_vec()), Some(b"997".repeat(1 + 997 % 7)));
        assert_eq!(table.get(3), None);
    }
}
