//! Idle connections as a plan gives them (the C10K load model); `crate::schedule::idle` holds them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The smallest interval between two bytes on one connection.
pub const MIN_SEND_INTERVAL_US: u64 = 1_000;
/// Connections held open beside the measured ones (docs/load-models.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdlePlan {
    /// Connections to open at the start and hold open to the end, besides `connections`.
    #[schemars(range(min = 1))]
    pub connections: usize,
    /// Send one byte of a request head that never ends on each of them this often (slowloris);
    /// None: they send nothing.
    #[serde(default)]
    #[schemars(range(min = 1000))]
    pub send_interval_us: Option<u64>,
}

impl IdlePlan {
    pub fn validate(&self) -> Result<(), String> {
        if self.connections == 0 {
            return Err("idle connections is 0: give at least 1, or leave idle out".into());
        }
        if self.send_interval_us.is_some_and(|us| us < MIN_SEND_INTERVAL_US) {
            return Err(format!(
                "the idle send interval is below {} ms: give 1 ms or more",
                MIN_SEND_INTERVAL_US / 1_000
            ));
        }
        Ok(())
    }
}
