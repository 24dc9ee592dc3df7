//! Gauntlet's native load engine: plans in, measurements out.

pub mod clock;
pub mod conn;
pub mod http1;
pub mod limits;
pub mod plan;
pub mod request;
pub mod result;
pub mod run;
pub mod stats;
pub mod worker;

#[cfg(feature = "python")]
mod python;
pub mod schedule;
pub mod server;
pub mod tree;
pub mod workload;
