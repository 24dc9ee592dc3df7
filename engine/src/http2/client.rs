//! One HTTP/2 client connection as a sans-IO state machine: requests in (`open`), bytes in
//! (`feed`), bytes out (`out`) and ended streams out. The worker's loop owns the socket; this
//! owns the protocol: the preface and SETTINGS, stream ids and the server's concurrency limit,
//! both flow-control windows each way, HPACK, GOAWAY, RST_STREAM and connection errors.

use std::sync::Arc;

use super::frame::*;
use super::hpack::{encode_never_indexed, Decoder, Encoder, Field};
use crate::http1::check::{ContentCheck, Marker};
use crate::http1::{Head, Outcome};
use crate::stats::error::ErrorKind;

/// The window this client grants the server, per stream and for the connection: large, as
/// h2load's, so that flow control does not pace a benchmark; WINDOW_UPDATE at half of it.
pub const RECV_WINDOW: i64 = 1 << 24;
/// A response header block (HEADERS and CONTINUATIONs) longer than this ends the connection,
/// as an HTTP/1 head of that size does.
pub const MAX_HEADER_BLOCK_BYTES: usize = 64 * 1024;

/// A request as HTTP/2 sends it: its fields (pseudo-headers first, names lowercase) and body.
#[derive(Debug, Clone)]
pub struct H2Request {
    pub fields: Box<[Field]>,
    pub body: Arc<[u8]>,
}

impl H2Request {
    /// `headers` as the plan gives them; Host becomes :authority, connection-specific ones are
    /// dropped (HTTP/2 forbids them).
    pub fn new(
        method: &str,
        scheme: &str,
        authority: &str,
        path: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> H2Request {
        let host = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("host")).map(|(_, v)| v.as_str());
        let mut fields: Vec<Field> = vec![
            (b":method".as_slice().into(), method.as_bytes().into()),
            (b":scheme".as_slice().into(), scheme.as_bytes().into()),
            (b":authority".as_slice().into(), host.unwrap_or(authority).as_bytes().into()),
            (b":path".as_slice().into(), path.as_bytes().into()),
        ];
        const DROPPED: [&str; 6] =
            ["host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"];
        for (name, value) in headers {
            let name = name.to_ascii_lowercase();
            if !DROPPED.contains(&name.as_str()) {
                fields.push((name.into_bytes().into(), value.as_bytes().into()));
            }
        }
        if !body.is_empty() || method == "POST" || method == "PUT" {
            fields.push((b"content-length".as_slice().into(), body.len().to_string().into_bytes().into()));
        }
        H2Request { fields: fields.into(), body: body.into() }
    }

    fn field_slices(&self) -> impl Iterator<Item = (&[u8], &[u8])> + Clone {
        self.fields.iter().map(|(n, v)| (&n[..], &v[..]))
    }
}

/// A stream that ended: which slot it carried and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    pub slot: usize,
    pub outcome: Outcome,
    /// Bytes of its response: header blocks and DATA payloads.
    pub bytes_in: u64,
}

#[derive(Debug)]
struct Stream {
    id: u32,
    slot: usize,
    send_window: i64,
    recv_window: i64,
    /// The request body and how much of it is sent; None once it all is.
    body: Option<(Arc<[u8]>, usize)>,
    status: Option<u16>,
    check: Option<ContentCheck>,
    bytes_in: u64,
}

/// The server's SETTINGS as they apply to what this client sends.
#[derive(Debug, Clone, Copy)]
struct PeerSettings {
    max_concurrent: usize,
    initial_window: i64,
    max_frame_bytes: usize,
}

/// A header block being assembled from HEADERS and CONTINUATION frames.
#[derive(Debug, Default)]
struct Block {
    stream: u32,
    end_stream: bool,
    bytes: Vec<u8>,
}

/// A DATA frame whose payload is still arriving (unpadded frames are consumed as they come).
#[derive(Debug, Clone, Copy)]
struct DataLeft {
    stream: u32,
    left: usize,
    end_stream: bool,
}

pub struct Client {
    /// Bytes to write to the server; the caller drains what the socket takes.
    pub out: Vec<u8>,
    /// The start of a frame split across reads.
    pending: Vec<u8>,
    data: Option<DataLeft>,
    block: Option<Block>,
    decoder: Decoder,
    encoder: Encoder,
    /// Each request's header block once every field of it is indexed, with the encoder's
    /// insertions when it was made: another request's new entries shift the indices it holds.
    blocks: Vec<Option<(usize, Box<[u8]>)>>,
    /// The header block of the request being opened, reused.
    request_block: Vec<u8>,
    streams: Vec<Stream>,
    next_id: u32,
    peer: PeerSettings,
    send_window: i64,
    recv_window: i64,
    /// The last stream id of the server's GOAWAY: no new streams.
    goaway: Option<u32>,
    /// Slots whose streams a graceful GOAWAY left unprocessed; the caller drains it.
    pub unprocessed: Vec<usize>,
    /// Keep each response's Set-Cookie values (sessions): (slot, the values one per line) in
    /// `set_cookies`, which the caller drains.
    pub collect_cookies: bool,
    pub set_cookies: Vec<(usize, Vec<u8>)>,
}

impl Default for Client {
    fn default() -> Client {
        Client::new()
    }
}

/// A connection error: GOAWAY with `code` is queued and the connection ends as `h2_protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionError(pub u32);

type Fed = Result<(), ConnectionError>;

fn protocol_error<T>() -> Result<T, ConnectionError> {
    Err(ConnectionError(PROTOCOL_ERROR))
}

impl Client {
    /// A connection whose preface, SETTINGS and connection window are queued in `out`.
    pub fn new() -> Client {
        let mut out = PREFACE.to_vec();
        write_settings(
            &mut out,
            &[
                (SETTINGS_ENABLE_PUSH, 0),
                (SETTINGS_INITIAL_WINDOW_SIZE, RECV_WINDOW as u32),
                (SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEADER_BLOCK_BYTES as u32),
            ],
        );
        write_window_update(&mut out, 0, (RECV_WINDOW - DEFAULT_WINDOW) as u32);
        Client {
            out,
            pending: Vec::new(),
            data: None,
            block: None,
            decoder: Decoder::default(),
            encoder: Encoder::new(),
            blocks: Vec::new(),
            request_block: Vec::new(),
            streams: Vec::new(),
            next_id: 1,
            peer: PeerSettings {
                max_concurrent: usize::MAX,
                initial_window: DEFAULT_WINDOW,
                max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            },
            send_window: DEFAULT_WINDOW,
            recv_window: RECV_WINDOW,
            goaway: None,
            unprocessed: Vec::new(),
            collect_cookies: false,
            set_cookies: Vec::new(),
        }
    }

    /// Streams open now.
    pub fn active(&self) -> usize {
        self.streams.len()
    }

    /// The server sent GOAWAY: this connection takes no new streams.
    pub fn is_draining(&self) -> bool {
        self.goaway.is_some()
    }

    /// A new stream may open now (the server's concurrency limit, GOAWAY, ids left).
    pub fn can_open(&self) -> bool {
        self.goaway.is_none() && self.streams.len() < self.peer.max_concurrent && self.next_id < (1 << 31)
    }

    /// Open a stream for `slot` carrying request `index` of the run (its header block is cached
    /// by index); `expect` is the marker its body must hold; a `cookie` (a session's jar, empty
    /// for none) is sent as a never-indexed `cookie` field after the cached block, as browsers send
    /// sensitive fields (RFC 7541 7.1.3): it takes no table space and leaves the cached blocks valid.
    pub fn open(
        &mut self,
        slot: usize,
        index: usize,
        request: &H2Request,
        expect: Option<&Arc<Marker>>,
        cookie: &[u8],
    ) {
        let id = self.next_id;
        self.next_id += 2;
        if self.blocks.len() <= index {
            self.blocks.resize(index + 1, None);
        }
        let end_stream = request.body.is_empty();
        let mut block = std::mem::take(&mut self.request_block);
        block.clear();
        match &self.blocks[index] {
            Some((insertions, cached)) if *insertions == self.encoder.insertions() => block.extend_from_slice(cached),
            _ => {
                self.encoder.encode(request.field_slices(), &mut block);
                if self.encoder.all_indexed(request.field_slices()) {
                    let mut repeat = Vec::new();
                    self.encoder.encode(request.field_slices(), &mut repeat);
                    self.blocks[index] = Some((self.encoder.insertions(), repeat.into()));
                }
            }
        }
        if !cookie.is_empty() {
            encode_never_indexed(b"cookie", cookie, &mut block);
        }
        write_headers(&mut self.out, id, &block, end_stream, self.peer.max_frame_bytes);
        self.request_block = block;
        self.streams.push(Stream {
            id,
            slot,
            send_window: self.peer.initial_window,
            recv_window: RECV_WINDOW,
            body: (!end_stream).then(|| (request.body.clone(), 0)),
            status: None,
            check: expect.map(|m| ContentCheck::new(Arc::clone(m))),
            bytes_in: 0,
        });
        let at = self.streams.len() - 1;
        self.send_body(at);
    }

    /// Give up the stream carrying `slot` (its request timed out): RST_STREAM(CANCEL).
    pub fn cancel(&mut self, slot: usize) {
        if let Some(at) = self.streams.iter().position(|s| s.slot == slot) {
            let stream = self.streams.swap_remove(at);
            write_rst_stream(&mut self.out, stream.id, CANCEL);
        }
    }

    /// End every open stream as `kind` (the connection is gone).
    pub fn end_all(&mut self, kind: ErrorKind, ended: &mut Vec<Ended>) {
        ended.extend(self.streams.drain(..).map(|s| Ended { slot: s.slot, outcome: Err(kind), bytes_in: s.bytes_in }));
    }

    /// The kind of error for streams still open when the connection closed.
    pub fn closed_kind(&self) -> ErrorKind {
        if self.goaway.is_some() {
            ErrorKind::Goaway
        } else {
            ErrorKind::Reset
        }
    }

    /// Send as much of stream `at`'s body as both windows and the frame size allow.
    fn send_body(&mut self, at: usize) {
        let stream = &mut self.streams[at];
        let Some((body, sent)) = stream.body.as_mut() else { return };
        while *sent < body.len() {
            let window = self.send_window.min(stream.send_window);
            if window <= 0 {
                return;
            }
            let n = (body.len() - *sent).min(window as usize).min(self.peer.max_frame_bytes);
            let last = *sent + n == body.len();
            write_frame(&mut self.out, DATA, if last { END_STREAM } else { 0 }, stream.id, &body[*sent..*sent + n]);
            *sent += n;
            self.send_window -= n as i64;
            stream.send_window -= n as i64;
        }
        stream.body = None;
    }

    /// Bytes from the server. Ended streams are appended to `ended`; a connection error queues
    /// GOAWAY and leaves the open streams for the caller to end.
    pub fn feed(&mut self, input: &[u8], ended: &mut Vec<Ended>) -> Fed {
        let fed = self.feed_frames(input, ended);
        if let Err(ConnectionError(code)) = fed {
            // This client accepts no streams from the server: the last one it processed is 0.
            write_goaway(&mut self.out, 0, code);
        }
        fed
    }

    fn feed_frames(&mut self, input: &[u8], ended: &mut Vec<Ended>) -> Fed {
        if self.pending.is_empty() {
            let used = self.frames(input, ended)?;
            self.pending.extend_from_slice(&input[used..]);
        } else {
            self.pending.extend_from_slice(input);
            let pending = std::mem::take(&mut self.pending);
            let result = self.frames(&pending, ended);
            self.pending = pending;
            let used = result?;
            self.pending.drain(..used);
        }
        Ok(())
    }

    /// Handle the whole frames in `input` (and a DATA payload as it arrives); returns bytes used.
    fn frames(&mut self, input: &[u8], ended: &mut Vec<Ended>) -> Result<usize, ConnectionError> {
        let mut at = 0;
        loop {
            if let Some(data) = self.data {
                let n = data.left.min(input.len() - at);
                self.on_data(data.stream, &input[at..at + n], n, ended)?;
                at += n;
                if n < data.left {
                    self.data = Some(DataLeft { left: data.left - n, ..data });
                    return Ok(at);
                }
                self.data = None;
                if data.end_stream {
                    self.end_stream(data.stream, ended);
                }
                continue;
            }
            let Some(head_bytes) = input.get(at..at + HEAD_BYTES) else { return Ok(at) };
            let head = FrameHead::parse(head_bytes.try_into().expect("nine bytes"));
            if head.len > DEFAULT_MAX_FRAME_BYTES {
                return Err(ConnectionError(FRAME_SIZE_ERROR));
            }
            if head.kind == DATA && head.flags & PADDED == 0 && self.block.is_none() {
                self.check_data(&head)?;
                at += HEAD_BYTES;
                self.data =
                    Some(DataLeft { stream: head.stream, left: head.len, end_stream: head.flags & END_STREAM != 0 });
                continue;
            }
            let Some(payload) = input.get(at + HEAD_BYTES..at + HEAD_BYTES + head.len) else { return Ok(at) };
            at += HEAD_BYTES + head.len;
            self.frame(&head, payload, ended)?;
        }
    }

    fn check_data(&self, head: &FrameHead) -> Fed {
        if head.stream == 0 || head.stream >= self.next_id {
            return protocol_error();
        }
        Ok(())
    }

    fn frame(&mut self, head: &FrameHead, payload: &[u8], ended: &mut Vec<Ended>) -> Fed {
        if self.block.is_some() && head.kind != CONTINUATION {
            return protocol_error();
        }
        match head.kind {
            DATA => {
                self.check_data(head)?;
                let data = unpadded(head.flags, payload).ok_or(ConnectionError(PROTOCOL_ERROR))?;
                self.on_data(head.stream, data, payload.len(), ended)?;
                if head.flags & END_STREAM != 0 {
                    self.end_stream(head.stream, ended);
                }
                Ok(())
            }
            HEADERS => self.on_headers(head, payload, ended),
            CONTINUATION => {
                let block =
                    self.block.as_mut().filter(|b| b.stream == head.stream).ok_or(ConnectionError(PROTOCOL_ERROR))?;
                block.bytes.extend_from_slice(payload);
                if block.bytes.len() > MAX_HEADER_BLOCK_BYTES {
                    return protocol_error();
                }
                if head.flags & END_HEADERS != 0 {
                    let block = self.block.take().expect("checked above");
                    self.on_block(block.stream, block.end_stream, &block.bytes, ended)?;
                }
                Ok(())
            }
            RST_STREAM if payload.len() != 4 || head.stream == 0 => protocol_error(),
            RST_STREAM => {
                self.end(head.stream, Err(ErrorKind::StreamReset), ended);
                Ok(())
            }
            SETTINGS => self.on_settings(head, payload),
            PING if payload.len() != 8 || head.stream != 0 => protocol_error(),
            PING => {
                if head.flags & ACK == 0 {
                    write_frame(&mut self.out, PING, ACK, 0, payload);
                }
                Ok(())
            }
            GOAWAY if payload.len() < 8 || head.stream != 0 => protocol_error(),
            GOAWAY => {
                self.on_goaway(u32_at(payload, 0) & 0x7fff_ffff, u32_at(payload, 4), ended);
                Ok(())
            }
            WINDOW_UPDATE if payload.len() != 4 => Err(ConnectionError(FRAME_SIZE_ERROR)),
            WINDOW_UPDATE => self.on_window_update(head.stream, u32_at(payload, 0) & 0x7fff_ffff),
            PRIORITY if payload.len() != 5 => protocol_error(),
            // Push is off (SETTINGS_ENABLE_PUSH 0): a promise is a protocol error.
            PUSH_PROMISE => protocol_error(),
            _ => Ok(()),
        }
    }

    /// The server processed no stream above `last` (RFC 9113 §6.8). After a graceful GOAWAY
    /// (NO_ERROR: a server at its requests-per-connection limit, or shutting down) their slots are
    /// left in `unprocessed`, in the order they were opened, to be sent again; after an error
    /// code they fail as `goaway`.
    fn on_goaway(&mut self, last: u32, code: u32, ended: &mut Vec<Ended>) {
        self.goaway = Some(self.goaway.map_or(last, |seen| seen.min(last)));
        let (mut lost, kept): (Vec<Stream>, Vec<Stream>) = self.streams.drain(..).partition(|s| s.id > last);
        self.streams = kept;
        lost.sort_unstable_by_key(|s| s.id);
        if code == NO_ERROR {
            self.unprocessed.extend(lost.iter().map(|s| s.slot));
        } else {
            ended.extend(lost.iter().map(|s| Ended {
                slot: s.slot,
                outcome: Err(ErrorKind::Goaway),
                bytes_in: s.bytes_in,
            }));
        }
    }

    fn on_data(&mut self, id: u32, data: &[u8], frame_bytes: usize, ended: &mut Vec<Ended>) -> Fed {
        self.recv_window -= frame_bytes as i64;
        if self.recv_window < 0 {
            return Err(ConnectionError(FLOW_CONTROL_ERROR));
        }
        if self.recv_window <= RECV_WINDOW / 2 {
            write_window_update(&mut self.out, 0, (RECV_WINDOW - self.recv_window) as u32);
            self.recv_window = RECV_WINDOW;
        }
        // DATA for a stream this client reset: counted against the connection window only.
        let Some(stream) = self.streams.iter_mut().find(|s| s.id == id) else { return Ok(()) };
        if stream.status.is_none() {
            return protocol_error();
        }
        stream.recv_window -= frame_bytes as i64;
        if stream.recv_window < 0 {
            self.end(id, Err(ErrorKind::H2Protocol), ended);
            write_rst_stream(&mut self.out, id, FLOW_CONTROL_ERROR);
            return Ok(());
        }
        if stream.recv_window <= RECV_WINDOW / 2 {
            write_window_update(&mut self.out, id, (RECV_WINDOW - stream.recv_window) as u32);
            stream.recv_window = RECV_WINDOW;
        }
        stream.bytes_in += data.len() as u64;
        if let Some(check) = stream.check.as_mut() {
            check.scan(data);
        }
        Ok(())
    }

    fn on_headers(&mut self, head: &FrameHead, payload: &[u8], ended: &mut Vec<Ended>) -> Fed {
        // Only responses: a server never opens streams (push is off), so an even or unused id is
        // a protocol error.
        if head.stream == 0 || head.stream % 2 == 0 || head.stream >= self.next_id {
            return protocol_error();
        }
        let mut fragment = unpadded(head.flags, payload).ok_or(ConnectionError(PROTOCOL_ERROR))?;
        if head.flags & PRIORITY_FLAG != 0 {
            fragment = fragment.get(5..).ok_or(ConnectionError(PROTOCOL_ERROR))?;
        }
        let end_stream = head.flags & END_STREAM != 0;
        if head.flags & END_HEADERS != 0 {
            // The whole block is in this frame: decoded where it lies, without a copy.
            self.on_block(head.stream, end_stream, fragment, ended)
        } else {
            self.block = Some(Block { stream: head.stream, end_stream, bytes: fragment.to_vec() });
            Ok(())
        }
    }

    /// A complete header block: its status (or trailers), decoded even for a reset stream, so
    /// that the dynamic table stays the server's.
    fn on_block(&mut self, id: u32, end_stream: bool, block: &[u8], ended: &mut Vec<Ended>) -> Fed {
        let (mut status, mut set_cookies, collect_cookies) = (None, Vec::new(), self.collect_cookies);
        let decoded = self.decoder.decode(block, |name, value| {
            if name == b":status" {
                status = std::str::from_utf8(value).ok().and_then(|v| v.parse::<u16>().ok());
            } else if collect_cookies && name == b"set-cookie" {
                set_cookies.extend_from_slice(value);
                set_cookies.push(b'\n');
            }
        });
        if decoded.is_err() {
            return Err(ConnectionError(COMPRESSION_ERROR));
        }
        let Some(stream) = self.streams.iter_mut().find(|s| s.id == id) else { return Ok(()) };
        stream.bytes_in += block.len() as u64;
        if !set_cookies.is_empty() {
            self.set_cookies.push((stream.slot, set_cookies));
        }
        match (stream.status, status) {
            // Informational (1xx): the response is still to come.
            (None, Some(100..=199)) if !end_stream => return Ok(()),
            (None, Some(code)) if (200..=999).contains(&code) => stream.status = Some(code),
            // Trailers end the stream.
            (Some(_), None) if end_stream => {}
            _ => {
                write_rst_stream(&mut self.out, id, PROTOCOL_ERROR);
                self.end(id, Err(ErrorKind::H2Protocol), ended);
                return Ok(());
            }
        }
        if end_stream {
            self.end_stream(id, ended);
        }
        Ok(())
    }

    fn on_settings(&mut self, head: &FrameHead, payload: &[u8]) -> Fed {
        if head.stream != 0 || (head.flags & ACK != 0 && !payload.is_empty()) || payload.len() % 6 != 0 {
            return Err(ConnectionError(if payload.len() % 6 != 0 { FRAME_SIZE_ERROR } else { PROTOCOL_ERROR }));
        }
        if head.flags & ACK != 0 {
            return Ok(());
        }
        for setting in payload.chunks_exact(6) {
            let value = u32_at(setting, 2);
            match u16::from_be_bytes([setting[0], setting[1]]) {
                SETTINGS_HEADER_TABLE_SIZE => self.encoder_table(value as usize),
                SETTINGS_MAX_CONCURRENT_STREAMS => self.peer.max_concurrent = value as usize,
                SETTINGS_INITIAL_WINDOW_SIZE if i64::from(value) > MAX_WINDOW => {
                    return Err(ConnectionError(FLOW_CONTROL_ERROR))
                }
                SETTINGS_INITIAL_WINDOW_SIZE => {
                    let delta = i64::from(value) - self.peer.initial_window;
                    self.peer.initial_window = i64::from(value);
                    for stream in &mut self.streams {
                        stream.send_window += delta;
                        if stream.send_window > MAX_WINDOW {
                            return Err(ConnectionError(FLOW_CONTROL_ERROR));
                        }
                    }
                }
                SETTINGS_MAX_FRAME_SIZE
                    if !(DEFAULT_MAX_FRAME_BYTES as u32..=MAX_ALLOWED_FRAME_BYTES).contains(&value) =>
                {
                    return protocol_error()
                }
                SETTINGS_MAX_FRAME_SIZE => self.peer.max_frame_bytes = value as usize,
                SETTINGS_ENABLE_PUSH if value > 1 => return protocol_error(),
                _ => {}
            }
        }
        write_frame(&mut self.out, SETTINGS, ACK, 0, &[]);
        self.send_bodies();
        Ok(())
    }

    /// The server's table size for what this client encodes; cached blocks are encoded anew.
    fn encoder_table(&mut self, bytes: usize) {
        self.encoder.set_max_table_bytes(bytes);
        self.blocks.clear();
    }

    fn on_window_update(&mut self, id: u32, increment: u32) -> Fed {
        if increment == 0 {
            return protocol_error();
        }
        let window = if id == 0 {
            &mut self.send_window
        } else {
            match self.streams.iter_mut().find(|s| s.id == id) {
                Some(stream) => &mut stream.send_window,
                None => return Ok(()),
            }
        };
        *window += i64::from(increment);
        if *window > MAX_WINDOW {
            return Err(ConnectionError(FLOW_CONTROL_ERROR));
        }
        self.send_bodies();
        Ok(())
    }

    fn send_bodies(&mut self) {
        for at in 0..self.streams.len() {
            self.send_body(at);
        }
    }

    /// The server ended stream `id`: a response if it had a status.
    fn end_stream(&mut self, id: u32, ended: &mut Vec<Ended>) {
        let Some(stream) = self.streams.iter().find(|s| s.id == id) else { return };
        let outcome = match (stream.status, &stream.check) {
            (None, _) => Err(ErrorKind::H2Protocol),
            (Some(status), Some(check)) if !check.found() && status < 400 => Err(ErrorKind::Content),
            (Some(status), _) => Ok(Head { status, keep_alive: true }),
        };
        self.end(id, outcome, ended);
    }

    fn end(&mut self, id: u32, outcome: Outcome, ended: &mut Vec<Ended>) {
        if let Some(at) = self.streams.iter().position(|s| s.id == id) {
            let stream = self.streams.swap_remove(at);
            ended.push(Ended { slot: stream.slot, outcome, bytes_in: stream.bytes_in });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frames in `bytes` (after the preface, if it starts with one): (head, payload).
    fn frames_of(mut bytes: &[u8]) -> Vec<(FrameHead, Vec<u8>)> {
        bytes = bytes.strip_prefix(PREFACE).unwrap_or(bytes);
        let mut found = Vec::new();
        while bytes.len() >= HEAD_BYTES {
            let head = FrameHead::parse(bytes[..HEAD_BYTES].try_into().unwrap());
            found.push((head, bytes[HEAD_BYTES..HEAD_BYTES + head.len].to_vec()));
            bytes = &bytes[HEAD_BYTES + head.len..];
        }
        found
    }

    fn sent(client: &mut Client) -> Vec<(FrameHead, Vec<u8>)> {
        frames_of(&std::mem::take(&mut client.out))
    }

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_frame(&mut out, kind, flags, stream, payload);
        out
    }

    #[test]
    fn a_body_waits_for_window_and_goes_when_it_opens() {
        let mut client = Client::new();
        let mut ended = Vec::new();
        let mut settings = Vec::new();
        write_settings(&mut settings, &[(SETTINGS_INITIAL_WINDOW_SIZE, 10), (SETTINGS_MAX_CONCURRENT_STREAMS, 1)]);
        client.feed(&settings, &mut ended).unwrap();
        sent(&mut client);
        let request = H2Request::new("POST", "http", "h", "/", &[], &[7; 25]);
        client.open(0, 0, &request, None, b"");
        assert!(!client.can_open(), "the server allows one stream at a time");
        let data: Vec<usize> = sent(&mut client).iter().filter(|(h, _)| h.kind == DATA).map(|(h, _)| h.len).collect();
        assert_eq!(data, [10], "only the stream's window goes");
        client.feed(&frame(WINDOW_UPDATE, 0, 1, &100u32.to_be_bytes()), &mut ended).unwrap();
        let data: Vec<(usize, u8)> =
            sent(&mut client).iter().filter(|(h, _)| h.kind == DATA).map(|(h, _)| (h.len, h.flags)).collect();
        assert_eq!(data, [(15, END_STREAM)]);
    }

    #[test]
    fn consumed_data_is_granted_again_and_responses_end_their_slots() {
        let mut client = Client::new();
        let mut ended = Vec::new();
        let request = H2Request::new("GET", "http", "h", "/", &[], b"");
        client.open(3, 0, &request, None, b"");
        sent(&mut client);
        client.feed(&frame(HEADERS, END_HEADERS, 1, &[0x88]), &mut ended).unwrap();
        let chunk = vec![0; DEFAULT_MAX_FRAME_BYTES];
        let frames_for_half = (RECV_WINDOW / 2) as usize / DEFAULT_MAX_FRAME_BYTES;
        for _ in 0..frames_for_half {
            client.feed(&frame(DATA, 0, 1, &chunk), &mut ended).unwrap();
        }
        let updates: Vec<u32> =
            sent(&mut client).iter().filter(|(h, _)| h.kind == WINDOW_UPDATE).map(|(h, _)| h.stream).collect();
        assert_eq!(updates, [0, 1], "the connection's and the stream's windows");
        client.feed(&frame(DATA, END_STREAM, 1, b"end"), &mut ended).unwrap();
        let bytes_in = (frames_for_half * DEFAULT_MAX_FRAME_BYTES + 3 + 1) as u64;
        assert_eq!(ended, [Ended { slot: 3, outcome: Ok(Head { status: 200, keep_alive: true }), bytes_in }]);
        assert_eq!(client.active(), 0);
    }

    #[test]
    fn cached_header_blocks_stay_right_as_other_requests_fill_the_table() {
        let mut client = Client::new();
        let paths = ["/a", "/b", "/a", "/c", "/b", "/a"];
        let requests: Vec<H2Request> =
            ["/a", "/b", "/c"].iter().map(|p| H2Request::new("GET", "http", "h", p, &[], b"")).collect();
        for (slot, path) in paths.iter().enumerate() {
            let index = (path.as_bytes()[1] - b'a') as usize;
            client.open(slot, index, &requests[index], None, b"");
        }
        let mut server = Decoder::default();
        let mut decoded = Vec::new();
        for (head, payload) in sent(&mut client).iter().filter(|(h, _)| h.kind == HEADERS) {
            assert_eq!(head.flags & END_HEADERS, END_HEADERS);
            server
                .decode(payload, |name, value| {
                    if name == b":path" {
                        decoded.push(value.to_vec())
                    }
                })
                .unwrap();
        }
        assert_eq!(decoded, paths.map(|p| p.as_bytes().to_vec()));
    }

    #[test]
    fn a_cookie_follows_the_cached_block_never_indexed() {
        let mut client = Client::new();
        let request = H2Request::new("GET", "http", "h", "/a", &[], b"");
        for (slot, cookie) in [&b""[..], b"id=1", b"id=2"].into_iter().enumerate() {
            client.open(slot, 0, &request, None, cookie);
        }
        let blocks: Vec<Vec<u8>> =
            sent(&mut client).into_iter().filter(|(h, _)| h.kind == HEADERS).map(|(_, payload)| payload).collect();
        let mut server = Decoder::default();
        let mut cookies = Vec::new();
        for block in &blocks {
            let mut cookie = None;
            let decoded = server.decode(block, |name, value| {
                if name == b"cookie" {
                    cookie = Some(value.to_vec());
                }
            });
            decoded.unwrap();
            cookies.push(cookie);
        }
        assert_eq!(cookies, [None, Some(b"id=1".to_vec()), Some(b"id=2".to_vec())]);
        let cached = client.blocks[0].as_ref().expect("the request's block is cached").1.to_vec();
        for (block, value) in blocks[1..].iter().zip([b"id=1", b"id=2"]) {
            // The cached block, then cookie by the static table's entry 32 (0001 1111, 32 - 15).
            let mut expected = [&cached[..], &[0x1f, 17]].concat();
            super::super::hpack::encode_string(value, &mut expected);
            assert_eq!(block, &expected);
        }
        assert_eq!(client.encoder.insertions(), 2, ":authority and :path, no cookie");
    }

    #[test]
    fn a_frame_split_anywhere_reads_the_same() {
        let mut response = frame(HEADERS, END_HEADERS, 1, &[0x88]);
        response.extend(frame(DATA, 0, 1, b"abc"));
        response.extend(frame(DATA, END_STREAM | PADDED, 1, &[2, b'd', 0, 0]));
        for cut in 0..response.len() {
            let mut client = Client::new();
            client.open(0, 0, &H2Request::new("GET", "http", "h", "/", &[], b""), None, b"");
            let mut ended = Vec::new();
            client.feed(&response[..cut], &mut ended).unwrap();
            client.feed(&response[cut..], &mut ended).unwrap();
            assert_eq!(ended.len(), 1, "cut at {cut}");
            assert_eq!((ended[0].outcome, ended[0].bytes_in), (Ok(Head { status: 200, keep_alive: true }), 5));
        }
    }
}
