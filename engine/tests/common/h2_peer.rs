//! A small blocking HTTP/2 server for the engine's tests (h2c with prior knowledge, or h2 over
//! TLS with ALPN), written on the engine's own frame and HPACK code, with hostile variants: GOAWAY
//! mid-run, RST_STREAM on some streams, a send window that never opens, an oversized header
//! block, a malformed frame. Like the built-in server's session route, `/__gauntlet/session`
//! echoes the request's cookie (`cookie=[...]`) and `?login=NAME` sets `gauntlet_user=NAME`.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use gauntlet_engine::conn::tls::server_config;
use gauntlet_engine::http2::frame::*;
use gauntlet_engine::http2::hpack::{Decoder, Encoder};

use super::Counters;

/// What the page's body holds.
pub const MARKER: &str = "h2-test-page";
const BODY: &[u8] = b"<html><body>h2-test-page, served over HTTP/2</body></html>";
pub const INTERNAL_ERROR: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    Normal,
    /// After this many responses on a connection: GOAWAY with this error code naming the last
    /// one; it answers nothing more, counts the streams left unprocessed, and closes when the
    /// client does.
    GoawayAfter(u64, u32),
    /// Every n-th stream (over all connections) is reset instead of answered.
    ResetEvery(u64),
    /// SETTINGS_INITIAL_WINDOW_SIZE 0 and never a WINDOW_UPDATE: a request body longer than the
    /// connection's first 65 535 bytes cannot be sent.
    ZeroWindow,
    /// Every response's header block runs past 64 KiB in CONTINUATION frames.
    OversizedHeaders,
    /// A PING of 5 bytes in reply to the first request.
    MalformedFrame,
}

fn read_frame(stream: &mut impl Read) -> io::Result<(FrameHead, Vec<u8>)> {
    let mut head = [0; HEAD_BYTES];
    stream.read_exact(&mut head)?;
    let head = FrameHead::parse(&head);
    let mut payload = vec![0; head.len];
    stream.read_exact(&mut payload)?;
    Ok((head, payload))
}

/// Serve one connection as `behaviour` says; every answered or reset stream counts as a request,
/// every stream a GOAWAY left unprocessed in `counters.unprocessed`.
pub fn serve(mut stream: impl Read + Write, counters: &Counters, behaviour: Behaviour) -> io::Result<()> {
    let mut preface = [0; 24];
    stream.read_exact(&mut preface)?;
    assert_eq!(preface, PREFACE, "the client's preface");
    let mut out = Vec::new();
    let window = if behaviour == Behaviour::ZeroWindow { 0 } else { 1 << 20 };
    write_settings(&mut out, &[(SETTINGS_INITIAL_WINDOW_SIZE, window), (SETTINGS_MAX_CONCURRENT_STREAMS, 100)]);
    stream.write_all(&out)?;
    let (mut decoder, mut encoder) = (Decoder::default(), Encoder::new());
    let mut answered_here = 0;
    // Each open stream's (id, :path, cookie).
    let mut requests: Vec<(u32, String, String)> = Vec::new();
    loop {
        let (head, payload) = read_frame(&mut stream)?;
        let request_ends = match head.kind {
            HEADERS => {
                let (mut path, mut cookie) = (String::new(), String::new());
                decoder
                    .decode(&payload, |name, value| match name {
                        b":path" => path = String::from_utf8_lossy(value).into(),
                        b"cookie" => cookie = String::from_utf8_lossy(value).into(),
                        _ => {}
                    })
                    .expect("the client's header block decodes");
                requests.push((head.stream, path, cookie));
                head.flags & END_STREAM != 0
            }
            DATA => head.flags & END_STREAM != 0,
            _ => false,
        };
        if !request_ends {
            continue;
        }
        out.clear();
        if let Behaviour::GoawayAfter(n, code) = behaviour {
            if answered_here == n {
                // The client closes once its streams are done; the last one was answered.
                write_goaway(&mut out, head.stream - 2, code);
                stream.write_all(&out)?;
                counters.unprocessed.fetch_add(1, Ordering::SeqCst);
                while let Ok((head, _)) = read_frame(&mut stream) {
                    if head.kind == HEADERS {
                        counters.unprocessed.fetch_add(1, Ordering::SeqCst);
                    }
                }
                return Ok(());
            }
        }
        let count = counters.requests.fetch_add(1, Ordering::SeqCst) + 1;
        match behaviour {
            Behaviour::ResetEvery(n) if count % n == 0 => write_rst_stream(&mut out, head.stream, INTERNAL_ERROR),
            Behaviour::MalformedFrame => write_frame(&mut out, PING, 0, 0, &[0; 5]),
            Behaviour::OversizedHeaders => {
                write_frame(&mut out, HEADERS, 0, head.stream, &[0x88]);
                for _ in 0..5 {
                    write_frame(&mut out, CONTINUATION, 0, head.stream, &[0x88; 16_384]);
                }
            }
            _ => {
                let at = requests.iter().position(|r| r.0 == head.stream).expect("a stream the client opened");
                let (_, path, cookie) = requests.swap_remove(at);
                let mut fields: Vec<(&[u8], &[u8])> =
                    vec![(b":status", b"200"), (b"content-type", b"text/html"), (b"x-served-by", b"gauntlet h2 peer")];
                let set_cookie = path.split_once("login=").map(|(_, name)| format!("gauntlet_user={name}; Path=/"));
                if let Some(set_cookie) = &set_cookie {
                    fields.push((b"set-cookie", set_cookie.as_bytes()));
                }
                let mut block = Vec::new();
                encoder.encode(fields, &mut block);
                write_frame(&mut out, HEADERS, END_HEADERS, head.stream, &block);
                let echo = format!("session cookie=[{cookie}]");
                let body = if path.starts_with("/__gauntlet/session") { echo.as_bytes() } else { BODY };
                write_frame(&mut out, DATA, END_STREAM, head.stream, body);
                answered_here += 1;
            }
        }
        stream.write_all(&out)?;
    }
}

/// `serve` over TLS, offering h2 through ALPN.
pub fn serve_tls(socket: TcpStream, counters: &Counters, behaviour: Behaviour) -> io::Result<()> {
    let mut config = (*server_config(None, None).unwrap()).clone();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let session = rustls::ServerConnection::new(Arc::new(config)).unwrap();
    serve(rustls::StreamOwned::new(session, socket), counters, behaviour)
}
