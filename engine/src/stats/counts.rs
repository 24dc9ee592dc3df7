//! The scalar counts of a run. Each thread records into its own `Counts` (`super::Recorder`),
//! threads and agents add theirs up with one `merge`, and a result carries them as they are,
//! flattened into its JSON: a new count is a field here and its recording site
//! (docs/architecture.md, "Adding a result figure").

use std::borrow::Borrow;
use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    /// Bytes read from the server for measured requests, heads and bodies as on the wire.
    pub bytes_in: u64,
    /// Bytes written for measured requests.
    pub bytes_out: u64,
    /// Connections established (TCP connect completed) for measured requests.
    pub connections_opened: u64,
    /// Connect attempts the peer refused (nothing listening).
    pub connects_refused: u64,
    /// Connect attempts that failed otherwise (timeout, unreachable, no local port free).
    pub connects_failed: u64,
    /// Connects made again after a refused or failed one, each after a backoff (1 ms doubling to 100 ms).
    pub connect_retries: u64,
    /// HTTP/2: requests whose stream a graceful GOAWAY (NO_ERROR) left unprocessed, sent again on
    /// a new connection instead of failing (RFC 9113 §6.8); each counted once in `requests` when it
    /// ends. A resend is not an error, but one turned away a second time then fails as `goaway`
    /// too. 0 for HTTP/1 and in results from before it was counted.
    #[serde(default)]
    pub goaway_resent: u64,
    /// HTTP/1: requests with an idempotent method (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) that a
    /// kept-alive connection lost (closed or reset before any byte of the answer, as Apache's event
    /// MPM closes idle connections while its workers are busy) and that were sent again on a new
    /// connection, once, as browsers do (RFC 9112 §9.3.1); each counted once in `requests` when it
    /// ends, its latency from the first send. A resend is not an error (wrk counts these as
    /// read errors), but one that fails again, a connection's first request, a partial answer
    /// or a POST still fails as before. 0 in results from before it was counted.
    #[serde(default)]
    pub stale_resent: u64,
    /// HTTP/1: times bytes arrived that no request asked for: after a complete response (a server
    /// answering twice, or ahead of the next request), or on a connection with no request
    /// outstanding. The request answered first keeps its outcome; the connection is closed and
    /// the next request opens a new one, so nothing is taken for another request's answer. Not
    /// an error; 0 in results from before it was counted.
    #[serde(default)]
    pub unsolicited: u64,
    /// The bytes of those arrivals that were read before the connection closed (in `bytes_in` too).
    #[serde(default)]
    pub unsolicited_bytes: u64,
    /// Measured responses whose end time (and so latency) is when the kernel received the segment
    /// that completed them (SO_TIMESTAMPNS); the others were timed when the engine read them: on
    /// io_uring, a response ended by the server's close, or where the kernel stamped nothing. 0
    /// in results from before it was counted.
    #[serde(default)]
    pub rx_timestamped: u64,
    /// Waits on epoll (warm-up included) that napped under the batch window (plan `io_batch_us`)
    /// before collecting what had come: 0 without a window, when too few requests were in flight
    /// or they came too fast for a nap to pay, on io_uring (whose waits batch in the kernel), and
    /// in results from before it was counted.
    #[serde(default)]
    pub batch_naps: u64,
}

impl Counts {
    /// Add `other`'s counts to these (every field: the pattern below must name each one).
    pub fn merge(&mut self, other: &Counts) {
        let &Counts {
            bytes_in,
            bytes_out,
            connections_opened,
            connects_refused,
            connects_failed,
            connect_retries,
            goaway_resent,
            stale_resent,
            unsolicited,
            unsolicited_bytes,
            rx_timestamped,
            batch_naps,
        } = other;
        self.bytes_in += bytes_in;
        self.bytes_out += bytes_out;
        self.connections_opened += connections_opened;
        self.connects_refused += connects_refused;
        self.connects_failed += connects_failed;
        self.connect_retries += connect_retries;
        self.goaway_resent += goaway_resent;
        self.stale_resent += stale_resent;
        self.unsolicited += unsolicited;
        self.unsolicited_bytes += unsolicited_bytes;
        self.rx_timestamped += rx_timestamped;
        self.batch_naps += batch_naps;
    }

    /// The counts of several parts (threads, agents) added up.
    pub fn sum<'a>(parts: impl IntoIterator<Item = &'a Counts>) -> Counts {
        parts.into_iter().fold(Counts::default(), |mut total, part| {
            total.merge(part);
            total
        })
    }
}

/// Counts by name (error kinds, status codes) added up over parts: threads, processes or agents.
pub fn sum_keyed<M: Borrow<BTreeMap<String, u64>>>(parts: impl IntoIterator<Item = M>) -> BTreeMap<String, u64> {
    let mut total = BTreeMap::new();
    for part in parts {
        for (key, count) in part.borrow() {
            *total.entry(key.clone()).or_insert(0) += count;
        }
    }
    total
}
