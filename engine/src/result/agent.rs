//! A distributed run's agents as its result reports them: each one's slice and own figures
//! (`crate::agents` fills them in).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ClientResult;
use crate::stats::latency::LatencySummary;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
/// completed; cancelled (Ctrl-C); lost (no result came back: the worker died or left, or its task
/// failed); unreachable (only connect errors from some second to its end).
pub enum AgentState {
    Completed,
    Cancelled,
    Lost,
    Unreachable,
}

/// The agent's share of the plan.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SliceFigures {
    /// Connections of the slice.
    pub connections: usize,
    /// Load threads of the slice (at most its connections).
    pub threads: usize,
    /// The slice's share of the request count; None without a count.
    pub requests: Option<u64>,
    /// Requests per second: the slice's share of the rate; None in a closed loop.
    pub rate_per_s: Option<f64>,
    /// The slice's share of the session users; None without them.
    pub users: Option<usize>,
    /// The slice's share of each arrival phase's users per second; None without phases.
    pub users_per_s: Option<Vec<f64>>,
}

/// One agent of a distributed run: its slice and its own figures (None when it returned nothing).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct AgentFigures {
    /// The slice's number, 0 to agents - 1.
    pub index: usize,
    /// The Dask worker that ran the slice, tcp://HOST:PORT.
    pub address: String,
    /// How the agent's share ended.
    pub state: AgentState,
    /// Why the agent did not complete, with its cause; None when it did.
    pub reason: Option<String>,
    /// The worker's clock minus the controller's, measured before the run (give or take half a
    /// round trip).
    pub clock_offset_us: i64,
    /// The agent's share of the plan.
    pub slice: SliceFigures,
    /// Milliseconds since 1970 when the agent's load started; None when it returned nothing (so
    /// are the figures below).
    pub started_unix_ms: Option<u64>,
    /// The agent's own measured interval.
    pub elapsed_us: Option<u64>,
    /// Requests the agent ended in its measured interval.
    pub requests: Option<u64>,
    /// Its complete responses.
    pub responses: Option<u64>,
    /// Its requests that ended with an error.
    pub errors_total: Option<u64>,
    /// Bytes it read for measured requests.
    pub bytes_in: Option<u64>,
    /// Bytes it wrote for measured requests.
    pub bytes_out: Option<u64>,
    /// TCP connections it opened for measured requests.
    pub connections_opened: Option<u64>,
    /// Its responses per second of its own measured interval.
    pub requests_per_s: Option<f64>,
    /// Under a rate, the requests it started per second (its share held or not); None otherwise.
    pub achieved_rate_per_s: Option<f64>,
    /// The summary of its latencies.
    pub latency_us: Option<LatencySummary>,
    /// Its latencies, encoded as histogram is: the run's histogram is the merge of these.
    pub histogram: Option<String>,
    /// Its service times, encoded as histogram is.
    pub service_histogram: Option<String>,
    /// What its load threads cost, as client is; busiest_thread_share near 1: that agent saturated.
    pub client: Option<ClientResult>,
}
