//! Gauntlet's native load engine: plans in, measurements out.

pub mod agents;
pub mod clock;
pub mod conn;
pub mod cookies;
/// The fuzz targets' entry points, also replayed over their corpus by `cargo test`.
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod http1;
pub mod http2;
pub mod limits;
pub mod merge;
pub mod plan;
pub mod random;
pub mod request;
pub mod result;
pub mod run;
pub mod stats;
pub mod worker;

#[cfg(feature = "python")]
mod python;
pub mod schedule;
pub mod schema;
pub mod server;
pub mod split;
pub mod tree;
pub mod uri;
pub mod workload;
