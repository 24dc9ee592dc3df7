//! HTTP/2 frames (RFC 9113 section 4 and 6): the 9-byte head, the types and flags the client acts
//! on, and the frames it writes.

/// What a client sends first, before its SETTINGS.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
pub const HEAD_BYTES: usize = 9;
/// The frame size every endpoint accepts; larger frames need the peer's SETTINGS_MAX_FRAME_SIZE.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16_384;
pub const MAX_ALLOWED_FRAME_BYTES: u32 = (1 << 24) - 1;
pub const MAX_WINDOW: i64 = (1 << 31) - 1;
/// Both windows are 65 535 bytes until SETTINGS or WINDOW_UPDATE say otherwise.
pub const DEFAULT_WINDOW: i64 = 65_535;

pub const DATA: u8 = 0;
pub const HEADERS: u8 = 1;
pub const PRIORITY: u8 = 2;
pub const RST_STREAM: u8 = 3;
pub const SETTINGS: u8 = 4;
pub const PUSH_PROMISE: u8 = 5;
pub const PING: u8 = 6;
pub const GOAWAY: u8 = 7;
pub const WINDOW_UPDATE: u8 = 8;
pub const CONTINUATION: u8 = 9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY_FLAG: u8 = 0x20;

pub const SETTINGS_HEADER_TABLE_SIZE: u16 = 1;
pub const SETTINGS_ENABLE_PUSH: u16 = 2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 4;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 5;
pub const SETTINGS_MAX_HEADER_LIST_SIZE: u16 = 6;

pub const NO_ERROR: u32 = 0;
pub const PROTOCOL_ERROR: u32 = 1;
pub const FLOW_CONTROL_ERROR: u32 = 3;
pub const FRAME_SIZE_ERROR: u32 = 6;
pub const CANCEL: u32 = 8;
pub const COMPRESSION_ERROR: u32 = 9;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHead {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl FrameHead {
    pub fn parse(bytes: &[u8; HEAD_BYTES]) -> FrameHead {
        FrameHead {
            len: (usize::from(bytes[0]) << 16) | (usize::from(bytes[1]) << 8) | usize::from(bytes[2]),
            kind: bytes[3],
            flags: bytes[4],
            stream: u32::from_be_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]) & 0x7fff_ffff,
        }
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        let len = (self.len as u32).to_be_bytes();
        out.extend_from_slice(&[len[1], len[2], len[3], self.kind, self.flags]);
        out.extend_from_slice(&self.stream.to_be_bytes());
    }
}

/// Append a frame of `kind` with `payload`.
pub fn write_frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    FrameHead { len: payload.len(), kind, flags, stream }.write(out);
    out.extend_from_slice(payload);
}

pub fn write_settings(out: &mut Vec<u8>, settings: &[(u16, u32)]) {
    let payload: Vec<u8> = settings
        .iter()
        .flat_map(|&(id, value)| [id.to_be_bytes().to_vec(), value.to_be_bytes().to_vec()].concat())
        .collect();
    write_frame(out, SETTINGS, 0, 0, &payload);
}

pub fn write_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    write_frame(out, WINDOW_UPDATE, 0, stream, &increment.to_be_bytes());
}

pub fn write_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    write_frame(out, RST_STREAM, 0, stream, &code.to_be_bytes());
}

pub fn write_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32) {
    let mut payload = last_stream.to_be_bytes().to_vec();
    payload.extend_from_slice(&code.to_be_bytes());
    write_frame(out, GOAWAY, 0, 0, &payload);
}

/// A header block as HEADERS and as many CONTINUATIONs as `max_frame_bytes` needs.
pub fn write_headers(out: &mut Vec<u8>, stream: u32, block: &[u8], end_stream: bool, max_frame_bytes: usize) {
    let mut pieces = block.chunks(max_frame_bytes).peekable();
    let mut kind = HEADERS;
    let mut flags = if end_stream { END_STREAM } else { 0 };
    loop {
        let piece = pieces.next().unwrap_or_default();
        let last = pieces.peek().is_none();
        write_frame(out, kind, flags | if last { END_HEADERS } else { 0 }, stream, piece);
        if last {
            return;
        }
        (kind, flags) = (CONTINUATION, 0);
    }
}

/// The 32-bit big-endian number at `at` of a payload known to be long enough.
pub fn u32_at(payload: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([payload[at], payload[at + 1], payload[at + 2], payload[at + 3]])
}

/// A payload without its padding (PADDED flag); None when the padding is longer than the payload.
pub fn unpadded(flags: u8, payload: &[u8]) -> Option<&[u8]> {
    if flags & PADDED == 0 {
        return Some(payload);
    }
    let (&pad, rest) = payload.split_first()?;
    rest.len().checked_sub(usize::from(pad)).map(|end| &rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_round_trip_and_blocks_split_into_continuations() {
        let head = FrameHead { len: 70_000, kind: HEADERS, flags: END_HEADERS, stream: 7 };
        let mut out = Vec::new();
        head.write(&mut out);
        assert_eq!(FrameHead::parse(out[..9].try_into().unwrap()), head);
        let mut out = Vec::new();
        write_headers(&mut out, 3, &[1; 40], true, 16);
        let first = FrameHead::parse(out[..9].try_into().unwrap());
        assert_eq!((first.len, first.kind, first.flags), (16, HEADERS, END_STREAM));
        let last = FrameHead::parse(out[2 * 25..2 * 25 + 9].try_into().unwrap());
        assert_eq!((last.len, last.kind, last.flags), (8, CONTINUATION, END_HEADERS));
        assert_eq!(out.len(), 3 * 9 + 40);
    }

    #[test]
    fn padding_is_removed_or_refused() {
        assert_eq!(unpadded(PADDED, &[2, b'a', b'b', 0, 0]), Some(&b"ab"[..]));
        assert_eq!(unpadded(PADDED, &[5, b'a']), None);
        assert_eq!(unpadded(0, b"ab"), Some(&b"ab"[..]));
    }
}
