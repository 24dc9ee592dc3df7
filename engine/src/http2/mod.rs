//! HTTP/2 for the load engine: frames, HPACK and a sans-IO client connection that the worker's
//! one-loop-per-thread drives (`crate::worker::h2`). Own code rather than a crate: the `h2`
//! crate needs tokio, and the sans-IO HPACK crates decode Huffman strings slowly or allocate per
//! header (docs/load-models.md, "HTTP/2").

pub mod client;
pub mod frame;
pub mod hpack;
pub mod huffman;
mod table;

pub use client::{Client, Ended, H2Request};
