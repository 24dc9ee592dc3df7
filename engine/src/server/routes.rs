//! What the built-in server answers: the standard workload from memory, the workload tree
//! (rendered on its first request: 51 MB, twice), `/hello` computed per request, and its own
//! counters. Static responses are rendered once, head and body together.

use std::collections::HashMap;
use std::io::Write;
use std::sync::OnceLock;

use crate::tree::{tree_body, tree_index, TREE_PREFIX};
use crate::workload::standard_files;

pub const STATS_PATH: &str = "/__gauntlet/stats";
const SERVER_HEADER: &str = "Server: gauntlet-builtin\r\n";
/// Every static file claims this date, so any If-Modified-Since revalidation gets a 304.
const LAST_MODIFIED_HEADER: &str = "Last-Modified: Tue, 01 Nov 2011 00:00:00 GMT\r\n";

/// A response rendered once, in its keep-alive and its closing form.
pub struct Rendered {
    pub keep_alive: Vec<u8>,
    pub close: Vec<u8>,
    /// Bytes of the head (the same in both forms but for the Connection header).
    pub head_keep_alive_bytes: usize,
    pub head_close_bytes: usize,
}

impl Rendered {
    fn new(status: u16, content_type: &str, body: &[u8]) -> Rendered {
        let form = |connection: &str| {
            let mut out = Vec::with_capacity(body.len() + 160);
            write_head(&mut out, status, content_type, body.len(), connection);
            if status == 200 {
                out.truncate(out.len() - 2);
                out.extend_from_slice(LAST_MODIFIED_HEADER.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            let head_bytes = out.len();
            out.extend_from_slice(body);
            (out, head_bytes)
        };
        let (keep_alive, head_keep_alive_bytes) = form("keep-alive");
        let (close, head_close_bytes) = form("close");
        Rendered { keep_alive, close, head_keep_alive_bytes, head_close_bytes }
    }

    /// The bytes to send; a HEAD request gets the head only.
    pub fn bytes(&self, keep_alive: bool, head_only: bool) -> &[u8] {
        match (keep_alive, head_only) {
            (true, false) => &self.keep_alive,
            (true, true) => &self.keep_alive[..self.head_keep_alive_bytes],
            (false, false) => &self.close,
            (false, true) => &self.close[..self.head_close_bytes],
        }
    }
}

pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        304 => "Not Modified",
        400 => "Bad Request",
        404 => "Not Found",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

pub fn write_head(out: &mut Vec<u8>, status: u16, content_type: &str, body_bytes: usize, connection: &str) {
    let _ = write!(
        out,
        "HTTP/1.1 {status} {}\r\n{SERVER_HEADER}Content-Type: {content_type}\r\nContent-Length: {body_bytes}\r\nConnection: {connection}\r\n\r\n",
        reason(status)
    );
}

/// The answer to a revalidation of a static file: nothing has changed.
pub fn write_not_modified(out: &mut Vec<u8>, keep_alive: bool) {
    let connection = if keep_alive { "keep-alive" } else { "close" };
    let _ = write!(
        out,
        "HTTP/1.1 304 Not Modified\r\n{SERVER_HEADER}{LAST_MODIFIED_HEADER}Connection: {connection}\r\n\r\n"
    );
}

/// Everything the server can answer without computing.
pub struct Routes {
    files: Vec<(String, Rendered)>,
    tree: OnceLock<HashMap<String, Rendered>>,
    not_found: Rendered,
}

pub enum Route<'a> {
    Static(&'a Rendered),
    Hello,
    Stats,
}

impl Routes {
    pub fn new() -> Routes {
        let mut files: Vec<(String, Rendered)> = standard_files()
            .iter()
            .map(|f| (format!("/{}", f.name), Rendered::new(200, f.content_type, &f.body)))
            .collect();
        let index = Rendered::new(200, "text/html", crate::workload::WEBTEST_HTML.as_bytes());
        files.push(("/".to_string(), index));
        Routes { files, tree: OnceLock::new(), not_found: Rendered::new(404, "text/plain", b"not found\n") }
    }

    pub fn find(&self, target: &str) -> Route<'_> {
        let path = target.split_once('?').map_or(target, |(path, _)| path);
        match path {
            "/hello" => Route::Hello,
            STATS_PATH => Route::Stats,
            _ if path.starts_with(TREE_PREFIX) => Route::Static(self.tree().get(path).unwrap_or(&self.not_found)),
            _ => Route::Static(self.files.iter().find(|(p, _)| p == path).map_or(&self.not_found, |(_, r)| r)),
        }
    }

    /// Rendered on its first request, so that servers that never serve it never pay for it.
    fn tree(&self) -> &HashMap<String, Rendered> {
        self.tree.get_or_init(|| {
            let files = tree_index();
            files
                .iter()
                .map(|file| (file.path.clone(), Rendered::new(200, "application/octet-stream", &tree_body(file))))
                .collect()
        })
    }
}

impl Default for Routes {
    fn default() -> Routes {
        Routes::new()
    }
}

const HELLO_NAME: &str = "World";

/// `/hello`: the thesis's DT-1 page, formatted for each request as a script would.
pub fn write_hello(out: &mut Vec<u8>, keep_alive: bool, head_only: bool) {
    let mut body = [0u8; 32];
    let mut cursor = &mut body[..];
    let _ = write!(cursor, "Hello, {HELLO_NAME}!");
    let body_bytes = 32 - cursor.len();
    write_head(out, 200, "text/plain", body_bytes, if keep_alive { "keep-alive" } else { "close" });
    if !head_only {
        out.extend_from_slice(&body[..body_bytes]);
    }
}
