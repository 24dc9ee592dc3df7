//! HPACK (RFC 7541): the decoder keeps the dynamic table the server builds (Huffman strings, size
//! updates, eviction); the encoder indexes each request field the first time a connection sends
//! it, so that later requests are a few index bytes. The encoder never fills its table past the
//! size allowed, so nothing it indexed is evicted and an index, once sent, stays valid.

use std::collections::HashMap;

use super::huffman;
use super::table::Table;

/// RFC 7541 Appendix A.
pub const STATIC_TABLE: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];
/// The table size both sides start with, and the most this client's decoder allows.
pub const DEFAULT_TABLE_BYTES: usize = 4096;
/// An entry's size counts its name and value and this overhead (RFC 7541 4.1).
const ENTRY_OVERHEAD_BYTES: usize = 32;

/// A header field: name and value.
pub type Field = (Box<[u8]>, Box<[u8]>);

/// A header block that is not valid HPACK: a connection error (COMPRESSION_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HpackError;

fn entry_bytes(name: &[u8], value: &[u8]) -> usize {
    name.len() + value.len() + ENTRY_OVERHEAD_BYTES
}

/// An integer with an N-bit prefix; returns it and the bytes used.
fn decode_int(input: &[u8], prefix_bits: u32) -> Result<(usize, usize), HpackError> {
    let mask = (1usize << prefix_bits) - 1;
    let first = usize::from(*input.first().ok_or(HpackError)?) & mask;
    if first < mask {
        return Ok((first, 1));
    }
    let mut value = mask;
    for (i, &b) in input.iter().enumerate().skip(1) {
        let shift = 7 * (i - 1);
        // More than 28 bits of continuation cannot be a size this decoder would accept.
        if shift > 28 {
            return Err(HpackError);
        }
        value += usize::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(HpackError)
}

/// Append an integer with an N-bit prefix, `flags` in the prefix byte's high bits.
pub fn encode_int(value: usize, prefix_bits: u32, flags: u8, out: &mut Vec<u8>) {
    let mask = (1usize << prefix_bits) - 1;
    if value < mask {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | mask as u8);
    let mut rest = value - mask;
    while rest >= 0x80 {
        out.push((rest as u8 & 0x7f) | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

/// A string literal (Huffman or raw), decoded into `out`; returns the bytes used.
fn decode_string(input: &[u8], out: &mut Vec<u8>) -> Result<usize, HpackError> {
    let huffman_coded = input.first().ok_or(HpackError)? & 0x80 != 0;
    let (len, at) = decode_int(input, 7)?;
    let raw = input.get(at..at + len).ok_or(HpackError)?;
    out.clear();
    if huffman_coded {
        RECENT.with_borrow_mut(|recent| recent.decode(raw, out))?;
    } else {
        out.extend_from_slice(raw);
    }
    Ok(at + len)
}

/// Strings `Recent` keeps: room for a response's dozen and a few more.
const RECENT_STRINGS: usize = 16;

/// Huffman strings this thread decoded lately, by their coded bytes, the last used first: a server
/// repeats most of its response fields (server, content-type, last-modified, etag) on every
/// response of a page, and decoding costs a table lookup a symbol where a hit is a few length
/// compares and a copy. Decoding is a function of the bytes, so a hit is exactly what decoding
/// would give; only successes are kept.
struct Recent {
    /// (coded, decoded).
    strings: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Default for Recent {
    fn default() -> Recent {
        Recent { strings: vec![Default::default(); RECENT_STRINGS] }
    }
}

thread_local! {
    static RECENT: std::cell::RefCell<Recent> = std::cell::RefCell::default();
}

impl Recent {
    fn decode(&mut self, coded: &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
        let at = match self.strings.iter().position(|(c, _)| c == coded) {
            Some(at) => at,
            None => {
                // The least recently used one's buffers take the new string.
                let at = RECENT_STRINGS - 1;
                let (kept_coded, decoded) = &mut self.strings[at];
                kept_coded.clear();
                decoded.clear();
                if huffman::decode(coded, decoded).is_err() {
                    decoded.clear();
                    return Err(HpackError);
                }
                kept_coded.extend_from_slice(coded);
                at
            }
        };
        self.strings[..=at].rotate_right(1);
        out.extend_from_slice(&self.strings[0].1);
        Ok(())
    }
}

/// Append a string literal, Huffman-coded when that is shorter.
pub fn encode_string(value: &[u8], out: &mut Vec<u8>) {
    let huffman_len = huffman::encoded_len(value);
    if huffman_len < value.len() {
        encode_int(huffman_len, 7, 0x80, out);
        huffman::encode(value, out);
    } else {
        encode_int(value.len(), 7, 0, out);
        out.extend_from_slice(value);
    }
}

/// One connection's response header decoding.
#[derive(Debug)]
pub struct Decoder {
    table: Table,
    table_bytes: usize,
    max_table_bytes: usize,
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder {
            table: Table::default(),
            table_bytes: 0,
            max_table_bytes: DEFAULT_TABLE_BYTES,
            name: Vec::new(),
            value: Vec::new(),
        }
    }
}

impl Decoder {
    fn evict_to(&mut self, max_bytes: usize) {
        while self.table_bytes > max_bytes {
            let freed = self.table.pop_back().expect("a table over its size has entries");
            self.table_bytes -= freed + ENTRY_OVERHEAD_BYTES;
        }
    }

    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let bytes = entry_bytes(name, value);
        // An entry larger than the table empties it and is not kept (RFC 7541 4.4).
        self.evict_to(self.max_table_bytes.saturating_sub(bytes));
        if bytes <= self.max_table_bytes {
            self.table.push_front(name, value);
            self.table_bytes += bytes;
        }
    }

    fn entry(&self, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
        match index {
            0 => Err(HpackError),
            1..=61 => Ok((STATIC_TABLE[index - 1].0.as_bytes(), STATIC_TABLE[index - 1].1.as_bytes())),
            _ => self.table.get(index - 62).ok_or(HpackError),
        }
    }

    /// Decode a whole header block, calling `field` with each name and value in order.
    pub fn decode(&mut self, block: &[u8], mut field: impl FnMut(&[u8], &[u8])) -> Result<(), HpackError> {
        let mut at = 0;
        let mut fields_seen = false;
        while at < block.len() {
            let first = block[at];
            let rest = &block[at..];
            if first & 0x80 != 0 {
                let (index, used) = decode_int(rest, 7)?;
                let (name, value) = self.entry(index)?;
                field(name, value);
                at += used;
                fields_seen = true;
                continue;
            }
            if first & 0xe0 == 0x20 {
                // Size updates come before the first field (RFC 7541 4.2).
                let (size, used) = decode_int(rest, 5)?;
                if fields_seen || size > DEFAULT_TABLE_BYTES {
                    return Err(HpackError);
                }
                self.max_table_bytes = size;
                self.evict_to(size);
                at += used;
                continue;
            }
            let (indexing, prefix_bits) = if first & 0x40 != 0 { (true, 6) } else { (false, 4) };
            let (name_index, mut used) = decode_int(rest, prefix_bits)?;
            let mut name = std::mem::take(&mut self.name);
            if name_index == 0 {
                used += decode_string(&rest[used..], &mut name)?;
            } else {
                name.clear();
                name.extend_from_slice(self.entry(name_index)?.0);
            }
            let mut value = std::mem::take(&mut self.value);
            used += decode_string(&rest[used..], &mut value)?;
            field(&name, &value);
            if indexing {
                self.insert(&name, &value);
            }
            (self.name, self.value) = (name, value);
            at += used;
            fields_seen = true;
        }
        Ok(())
    }
}

/// One connection's request header encoding.
#[derive(Debug, Default)]
pub struct Encoder {
    /// Insertion number of each field indexed, keyed by name and value.
    indexed: HashMap<Field, usize>,
    inserted: usize,
    table_bytes: usize,
    /// What the server's decoder allows (SETTINGS_HEADER_TABLE_SIZE, at most our default).
    max_table_bytes: usize,
    /// The next block starts with a size update to `max_table_bytes`.
    announce_size: bool,
}

fn static_index(name: &[u8], value: &[u8]) -> (Option<usize>, Option<usize>) {
    let mut name_index = None;
    for (i, (n, v)) in STATIC_TABLE.iter().enumerate() {
        if n.as_bytes() == name {
            if v.as_bytes() == value {
                return (Some(i + 1), Some(i + 1));
            }
            name_index.get_or_insert(i + 1);
        }
    }
    (None, name_index)
}

impl Encoder {
    pub fn new() -> Encoder {
        Encoder { max_table_bytes: DEFAULT_TABLE_BYTES, ..Encoder::default() }
    }

    /// The server's SETTINGS_HEADER_TABLE_SIZE: the table is emptied and refilled within it.
    pub fn set_max_table_bytes(&mut self, bytes: usize) {
        let bytes = bytes.min(DEFAULT_TABLE_BYTES);
        if bytes != self.max_table_bytes || self.table_bytes > bytes {
            self.max_table_bytes = bytes;
            self.indexed.clear();
            self.table_bytes = 0;
            self.announce_size = true;
        }
    }

    /// Entries inserted so far: a block that refers to the table is the same bytes only as long
    /// as this is (each insertion shifts the indices of the entries before it).
    pub fn insertions(&self) -> usize {
        self.inserted
    }

    /// Whether every field of a block is in the table: the block is then the same bytes until
    /// the next insertion.
    pub fn all_indexed<'a>(&self, fields: impl IntoIterator<Item = (&'a [u8], &'a [u8])>) -> bool {
        !self.announce_size
            && fields.into_iter().all(|(n, v)| {
                static_index(n, v).0.is_some() || self.indexed.contains_key(&(Box::from(n), Box::from(v)))
            })
    }

    /// Append the header block of `fields` (lowercase names, pseudo-headers first).
    pub fn encode<'a>(&mut self, fields: impl IntoIterator<Item = (&'a [u8], &'a [u8])>, out: &mut Vec<u8>) {
        if self.announce_size {
            // Emptied to 0 first, so that the server evicts what it held for us.
            encode_int(0, 5, 0x20, out);
            encode_int(self.max_table_bytes, 5, 0x20, out);
            self.announce_size = false;
        }
        for (name, value) in fields {
            let (full, name_index) = static_index(name, value);
            if let Some(index) = full {
                encode_int(index, 7, 0x80, out);
                continue;
            }
            let key = (Box::from(name), Box::from(value));
            if let Some(&number) = self.indexed.get(&key) {
                encode_int(62 + self.inserted - 1 - number, 7, 0x80, out);
                continue;
            }
            let bytes = entry_bytes(name, value);
            let indexing = self.table_bytes + bytes <= self.max_table_bytes;
            let (prefix_bits, flags) = if indexing { (6, 0x40) } else { (4, 0x00) };
            encode_literal(name_index, prefix_bits, flags, name, value, out);
            if indexing {
                self.indexed.insert(key, self.inserted);
                self.inserted += 1;
                self.table_bytes += bytes;
            }
        }
    }
}

/// A literal field: the name by its index (`name_index`) or spelled out, then the value.
fn encode_literal(
    name_index: Option<usize>,
    prefix_bits: u32,
    flags: u8,
    name: &[u8],
    value: &[u8],
    out: &mut Vec<u8>,
) {
    encode_int(name_index.unwrap_or(0), prefix_bits, flags, out);
    if name_index.is_none() {
        encode_string(name, out);
    }
    encode_string(value, out);
}

/// Append `name: value` as a literal that no table along the way may index (RFC 7541 6.2.3).
pub fn encode_never_indexed(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    encode_literal(static_index(name, value).1, 4, 0x10, name, value, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields_of(decoder: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
        let mut fields = Vec::new();
        decoder.decode(block, |n, v| {
            fields.push((String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned()))
        })?;
        Ok(fields)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_rfc_response_examples_decode_with_eviction() {
        // RFC 7541 C.6: three Huffman-coded responses with a 256-byte table.
        let mut decoder = Decoder { max_table_bytes: 256, ..Decoder::default() };
        let first = [
            0x48, 0x82, 0x64, 0x02, 0x58, 0x85, 0xae, 0xc3, 0x77, 0x1a, 0x4b, 0x61, 0x96, 0xd0, 0x7a, 0xbe, 0x94, 0x10,
            0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b, 0x81, 0x66, 0xe0, 0x82, 0xa6, 0x2d, 0x1b, 0xff, 0x6e,
            0x91, 0x9d, 0x29, 0xad, 0x17, 0x18, 0x63, 0xc7, 0x8f, 0x0b, 0x97, 0xc8, 0xe9, 0xae, 0x82, 0xae, 0x43, 0xd3,
        ];
        let expected = pairs(&[
            (":status", "302"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ]);
        assert_eq!(fields_of(&mut decoder, &first).unwrap(), expected);
        assert_eq!(decoder.table_bytes, 222);
        let second = [0x48, 0x83, 0x64, 0x0e, 0xff, 0xc1, 0xc0, 0xbf];
        let fields = fields_of(&mut decoder, &second).unwrap();
        assert_eq!(fields[0], (":status".into(), "307".into()));
        assert_eq!(fields[3], ("location".into(), "https://www.example.com".into()));
        // ":status: 302" was evicted to make room for "307".
        assert_eq!(decoder.table_bytes, 222);
        assert_eq!(decoder.table.len(), 4);
    }

    #[test]
    fn requests_round_trip_and_repeat_as_indices() {
        let fields: [(&[u8], &[u8]); 5] = [
            (b":method", b"GET"),
            (b":scheme", b"https"),
            (b":authority", b"127.0.0.1:8443"),
            (b":path", b"/page.html"),
            (b"x-trace", b"abc"),
        ];
        let mut encoder = Encoder::new();
        let mut decoder = Decoder::default();
        let mut first = Vec::new();
        assert!(!encoder.all_indexed(fields));
        encoder.encode(fields, &mut first);
        assert!(encoder.all_indexed(fields));
        let mut again = Vec::new();
        encoder.encode(fields, &mut again);
        assert_eq!(again.len(), 5, "every field is one index byte the second time");
        let expected: Vec<(String, String)> = fields
            .iter()
            .map(|(n, v)| (String::from_utf8_lossy(n).into_owned(), String::from_utf8_lossy(v).into_owned()))
            .collect();
        assert_eq!(fields_of(&mut decoder, &first).unwrap(), expected);
        assert_eq!(fields_of(&mut decoder, &again).unwrap(), expected);
        // A smaller table from the server: emptied, announced, indexed again.
        encoder.set_max_table_bytes(64);
        let mut smaller = Vec::new();
        encoder.encode(fields, &mut smaller);
        assert_eq!(fields_of(&mut decoder, &smaller).unwrap(), expected);
        assert_eq!(decoder.max_table_bytes, 64);
    }

    #[test]
    fn bad_blocks_are_refused() {
        let mut decoder = Decoder::default();
        // Index 0, an index past the table, a string longer than the block, a size update past
        // the default, a size update after a field.
        for block in [&[0x80][..], &[0xbf, 0x10], &[0x40, 0x05, b'a'], &[0x3f, 0xe1, 0x3f], &[0x82, 0x20]] {
            assert_eq!(fields_of(&mut decoder, block), Err(HpackError), "{block:?}");
        }
    }

    #[test]
    fn recently_decoded_strings_are_exact_and_failures_are_not_kept() {
        let mut recent = Recent::default();
        let mut out = Vec::new();
        // "no-cache" (RFC 7541 C.4.2), twice; a bad string (padding of 8 bits); then "no-cache"
        // and "".
        let no_cache: &[u8] = &[0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf];
        let cases: [(&[u8], Option<&[u8]>); 6] = [
            (no_cache, Some(b"no-cache")),
            (no_cache, Some(b"no-cache")),
            (&[0x07, 0xff], None),
            (&[0x07, 0xff], None),
            (no_cache, Some(b"no-cache")),
            (&[], Some(b"")),
        ];
        for (coded, expected) in cases {
            out.clear();
            let decoded = recent.decode(coded, &mut out);
            assert_eq!(decoded.ok().map(|()| &out[..]), expected, "{coded:?}");
        }
    }

    #[test]
    fn integers_round_trip() {
        for value in [0, 30, 31, 127, 128, 1337, 1 << 20] {
            let mut out = Vec::new();
            encode_int(value, 5, 0x20, &mut out);
            assert_eq!(decode_int(&out, 5), Ok((value, out.len())));
        }
    }
}
