//! HTTP/2 in the worker's loop. The schedulers see slots, one per stream a connection may carry
//! (closed loop: connections x streams users); slot `s` rides connection `s / streams`. Each
//! connection (a `Link`) owns its socket and a sans-IO `http2::Client`; a slot's request waits in
//! its link's queue until the link is connected and the server allows another stream. What the
//! HTTP/1 path keeps per connection (timing, backoff, the request) stays in the slot's `Conn`.

use std::collections::VecDeque;
use std::io;
use std::mem;

use mio::{Interest, Token};

use super::{Readiness, Worker};
use crate::conn::tls::TlsNegotiated;
use crate::conn::transport::{ReadEnd, TlsStream, Transport};
use crate::conn::{connect_result, tcp, Conn, Phase};
use crate::http2::{Client, Ended};
use crate::schedule::{Schedule, Scheduler};
use crate::stats::error::ErrorKind;
use crate::stats::unanswered::Stage;

/// One HTTP/2 connection.
#[derive(Default)]
struct Link {
    transport: Option<Transport>,
    client: Client,
    /// The TCP connect completed.
    connected: bool,
    /// Slots whose request waits for a stream, in order.
    waiting: VecDeque<usize>,
    /// Streams opened on this connection.
    opened: u64,
    /// It carried its last stream (keepalive off, calls_per_connection): closed once idle.
    retiring: bool,
    /// Its first response was seen (the TLS handshake is counted then).
    answered: bool,
}

pub(super) struct Links {
    streams: usize,
    links: Vec<Link>,
    /// Streams ended by the last bytes fed, reused between reads.
    ended: Vec<Ended>,
    /// The link whose event is being handled: requests begun meanwhile on it are opened and
    /// written together at the event's end, in one write.
    handling: Option<usize>,
}

impl Links {
    pub(super) fn new(streams: usize) -> Links {
        Links { streams, links: Vec::new(), ended: Vec::new(), handling: None }
    }

    pub(super) fn is_connected(&self, slot: usize) -> bool {
        self.links.get(slot / self.streams).is_some_and(|link| link.connected)
    }

    /// The slot's request ended or was given up: its stream, if still open, is reset; a link
    /// left with nothing to do while it connects is abandoned.
    pub(super) fn release(&mut self, slot: usize) {
        let Some(link) = self.links.get_mut(slot / self.streams) else { return };
        link.client.cancel(slot);
        link.waiting.retain(|&s| s != slot);
        if !link.connected && link.waiting.is_empty() {
            *link = Link::default();
        }
    }

    /// Where slot `slot`'s request is, for the count of unanswered ones; None when idle.
    pub(super) fn stage(&self, slot: usize, conn: &Conn) -> Option<Stage> {
        let link = self.links.get(slot / self.streams);
        match (conn.is_busy(), link.and_then(|l| l.transport.as_ref().filter(|_| l.connected))) {
            (false, _) => None,
            (true, None) => Some(Stage::Connecting),
            (true, Some(transport)) if transport.is_handshaking() => Some(Stage::TlsHandshake),
            (true, Some(_)) => Some(Stage::AwaitingResponse),
        }
    }

    /// Close every connection (the run is over).
    pub(super) fn close_all(&mut self) {
        self.links.clear();
    }
}

impl Worker {
    pub(super) fn h2_links(&mut self) -> &mut Links {
        self.h2.as_mut().expect("an HTTP/2 run")
    }

    /// Queue `slot`'s request on its link and start connecting the link if it is closed.
    pub(super) fn h2_connect(&mut self, slot: usize) -> io::Result<()> {
        let l = slot / self.h2_links().streams;
        if self.h2_links().links.len() <= l {
            self.h2_links().links.resize_with(l + 1, Link::default);
        }
        if self.h2_links().links[l].transport.is_none() {
            let transport = self.h2_socket(l, slot)?;
            let mut link = Link { transport: Some(transport), ..Link::default() };
            link.client.collect_cookies = self.shared.sessions.is_some();
            self.h2_links().links[l] = link;
        }
        self.h2_links().links[l].waiting.push_back(slot);
        Ok(())
    }

    /// Link `l`'s connection, to the target of `slot`'s request: a session's https pages go to
    /// their own target, on a link of their own (sessions: two slots a link, one link a target).
    fn h2_socket(&mut self, l: usize, slot: usize) -> io::Result<Transport> {
        let shared = &self.shared;
        let (address, tls) = match (&shared.https_target, shared.requests[self.conns[slot].request].target) {
            (Some((address, config, name)), 1) => (*address, Some((config, name))),
            _ => (shared.address, shared.tls.as_ref().map(|(config, name)| (config, name))),
        };
        let run_index = l * self.setup.threads + self.setup.index;
        let mut socket = tcp::connect(address, tcp::source_for(&shared.sources, run_index))?;
        self.poll.registry().register(&mut socket, Token(l), Interest::READABLE | Interest::WRITABLE)?;
        Ok(match tls {
            None => Transport::Plain(socket),
            Some((config, name)) => {
                let session = rustls::ClientConnection::new(config.clone(), name.clone())
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                Transport::Tls(Box::new(TlsStream::new(socket, session.into())))
            }
        })
    }

    /// `slot` is connected: its request joins the link's queue for a stream.
    pub(super) fn h2_send(&mut self, schedule: &mut Schedule, slot: usize, now: u64) {
        self.conns[slot].phase = Phase::Reading;
        let l = slot / self.h2_links().streams;
        self.h2_links().links[l].waiting.push_back(slot);
        if self.h2_links().handling != Some(l) {
            self.h2_pump(schedule, l, now);
        }
    }

    /// Open streams for the waiting slots while the server allows (a session's with its cookies),
    /// then write what is queued.
    fn h2_pump(&mut self, schedule: &mut Schedule, l: usize, now: u64) {
        let (keepalive, calls) = (self.shared.keepalive, self.shared.calls_per_connection);
        let h2 = self.h2.as_mut().expect("an HTTP/2 run");
        let link = &mut h2.links[l];
        if !link.connected {
            return;
        }
        while !link.retiring && link.client.can_open() {
            let Some(slot) = link.waiting.pop_front() else { break };
            let index = self.conns[slot].request;
            let request = &self.shared.requests[index];
            let fields = request.h2.as_ref().expect("HTTP/2 runs encode HTTP/2 requests");
            link.client.open(slot, index, fields, request.expect.as_ref(), schedule.cookie(slot));
            link.opened += 1;
            link.retiring = !keepalive || calls == Some(link.opened);
        }
        if let Err(e) = self.h2_flush(l, now) {
            self.h2_fail(schedule, l, now, ErrorKind::of_transfer(&e));
        }
    }

    /// Write what the client queued, as far as the socket takes it.
    fn h2_flush(&mut self, l: usize, now: u64) -> io::Result<()> {
        let measuring = self.window.measures(now);
        let h2 = self.h2.as_mut().expect("an HTTP/2 run");
        let link = &mut h2.links[l];
        let Some(transport) = link.transport.as_mut() else { return Ok(()) };
        transport.flush()?;
        let mut written = 0;
        while written < link.client.out.len() {
            match transport.write(&link.client.out[written..]) {
                // TLS took nothing: its buffer is full until the socket drains (a writable event).
                Ok(0) => break,
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        link.client.out.drain(..written);
        if measuring {
            self.recorder.counts.bytes_out += written as u64;
        }
        Ok(())
    }

    pub(super) fn h2_event(&mut self, schedule: &mut Schedule, l: usize, readiness: Readiness, now: u64) {
        let Some(link) = self.h2.as_ref().and_then(|h2| h2.links.get(l)) else { return };
        let Some(transport) = link.transport.as_ref() else { return };
        if !link.connected {
            match connect_result(transport.socket()) {
                None => return,
                Some(Err(kind)) => return self.h2_connect_failed(schedule, l, now, kind),
                Some(Ok(())) => self.h2_link_up(l, now),
            }
        }
        if readiness.readable {
            let read = self.h2_read(l, readiness.peer_closed, now);
            self.h2_resend_unprocessed(l, now);
            self.h2_store_cookies(schedule, l);
            match read {
                Ok(true) => {}
                Ok(false) => return self.h2_closed(schedule, l, now),
                // After a GOAWAY the server may close abruptly (a reset): the GOAWAY explains it.
                Err(ErrorKind::Reset) if self.h2_links().links[l].client.is_draining() => {
                    return self.h2_closed(schedule, l, now)
                }
                Err(kind) => return self.h2_fail(schedule, l, now, kind),
            }
            self.h2_links().handling = Some(l);
            self.h2_ended(schedule, l, now);
            self.h2_links().handling = None;
        }
        if self.h2.as_ref().is_some_and(|h2| h2.links[l].transport.is_some()) {
            self.h2_pump(schedule, l, now);
            self.h2_retire_if_idle(schedule, l, now);
        }
    }

    fn h2_link_up(&mut self, l: usize, now: u64) {
        let h2 = self.h2.as_mut().expect("an HTTP/2 run");
        let link = &mut h2.links[l];
        link.connected = true;
        for &slot in &link.waiting {
            self.conns[slot].backoff.succeeded();
            self.conns[slot].phase = Phase::Reading;
        }
        if self.window.measures(now) {
            self.recorder.counts.connections_opened += 1;
        }
    }

    /// Read and feed what has arrived; Ok(false) when the server closed the connection.
    fn h2_read(&mut self, l: usize, peer_closed: bool, now: u64) -> Result<bool, ErrorKind> {
        let measuring = self.window.measures(now);
        let h2 = self.h2.as_mut().expect("an HTTP/2 run");
        let link = &mut h2.links[l];
        let (client, ended) = (&mut link.client, &mut h2.ended);
        let (mut fed, mut bytes) = (Ok(()), 0u64);
        let transport = link.transport.as_mut().expect("checked by the caller");
        let conns = &mut self.conns;
        let read = transport.read_with(&mut self.scratch, peer_closed, |input, arrived_us| {
            bytes += input.len() as u64;
            let before = ended.len();
            fed = client.feed(input, ended);
            // The streams this input ended were answered when the kernel received it.
            for end in &ended[before..] {
                conns[end.slot].answered_us = arrived_us;
            }
            fed.is_ok()
        });
        if measuring {
            self.recorder.bytes_in(bytes);
        }
        if fed.is_err() {
            return Err(ErrorKind::H2Protocol);
        }
        read.map(|end| end == ReadEnd::Drained).map_err(|e| ErrorKind::of_transfer(&e))
    }

    /// Requests whose streams a graceful GOAWAY left unprocessed go back to the front of their
    /// link's queue, for the connection that replaces it once its other streams are done. They
    /// keep their due time, start and deadline: their latency counts from the first send. Left
    /// unprocessed a second time (a server going away for good), one fails as `goaway`.
    fn h2_resend_unprocessed(&mut self, l: usize, now: u64) {
        let h2 = self.h2.as_mut().expect("an HTTP/2 run");
        let unprocessed = mem::take(&mut h2.links[l].client.unprocessed);
        for &slot in unprocessed.iter().rev() {
            if mem::replace(&mut self.conns[slot].resent, true) {
                h2.ended.push(Ended { slot, outcome: Err(ErrorKind::Goaway), bytes_in: 0 });
                continue;
            }
            h2.links[l].waiting.push_front(slot);
            if self.conns[slot].measured && now < self.window.measure_end_us {
                self.recorder.counts.goaway_resent += 1;
            }
        }
    }

    /// A session's jar takes the cookies its responses set, before their slots go on.
    fn h2_store_cookies(&mut self, schedule: &mut Schedule, l: usize) {
        let client = &mut self.h2_links().links[l].client;
        if client.set_cookies.is_empty() {
            return;
        }
        for (slot, set_cookies) in mem::take(&mut client.set_cookies) {
            schedule.store_cookies(slot, &set_cookies);
        }
    }

    /// Count and free the slots whose streams ended.
    fn h2_ended(&mut self, schedule: &mut Schedule, l: usize, now: u64) {
        let mut ended = mem::take(&mut self.h2_links().ended);
        for end in ended.drain(..) {
            self.conns[end.slot].bytes_in = end.bytes_in;
            if end.outcome.is_ok() {
                self.h2_answered(l, end.slot, now);
            }
            self.end_request(schedule, end.slot, now, end.outcome, true);
        }
        self.h2_links().ended = ended;
    }

    /// A link's first response: its TLS handshake counts, and tells what was negotiated.
    fn h2_answered(&mut self, l: usize, slot: usize, now: u64) {
        let counted = self.conns[slot].measured && now < self.window.measure_end_us;
        let h2 = self.h2.as_mut().expect("an HTTP/2 run");
        let link = &mut h2.links[l];
        if mem::replace(&mut link.answered, true) {
            return;
        }
        let Some(Transport::Tls(tls)) = link.transport.as_ref() else { return };
        if self.negotiated_tls.is_none() {
            self.negotiated_tls = TlsNegotiated::of(&tls.session);
        }
        if let (true, Some(resumed)) = (counted, link.transport.as_ref().and_then(Transport::resumed)) {
            self.recorder.tls_handshake(resumed);
        }
    }

    /// A connection that drained (GOAWAY, or its last stream) closes once its streams are done;
    /// requests still waiting get a new connection.
    fn h2_retire_if_idle(&mut self, schedule: &mut Schedule, l: usize, now: u64) {
        let link = &self.h2_links().links[l];
        if (link.retiring || link.client.is_draining()) && link.client.active() == 0 {
            self.h2_closed(schedule, l, now);
        }
    }

    /// The connection closed: its open streams fail (`goaway` after a GOAWAY, else `reset`);
    /// waiting requests go on a new connection.
    fn h2_closed(&mut self, schedule: &mut Schedule, l: usize, now: u64) {
        let kind = self.h2_links().links[l].client.closed_kind();
        let link = mem::take(&mut self.h2_links().links[l]);
        let mut ended = Vec::new();
        let mut client = link.client;
        client.end_all(kind, &mut ended);
        self.h2_links().ended.extend(ended);
        self.h2_ended(schedule, l, now);
        let waiting: Vec<usize> = link.waiting.into_iter().filter(|&slot| self.conns[slot].is_busy()).collect();
        for slot in waiting {
            self.conns[slot].phase = Phase::Connecting;
            if let Err(e) = self.open(slot, now) {
                self.end_request(schedule, slot, now, Err(ErrorKind::of_connect(&e)), false);
            }
        }
    }

    /// A connection error: every stream and waiting request on the link fails as `kind`.
    fn h2_fail(&mut self, schedule: &mut Schedule, l: usize, now: u64, kind: ErrorKind) {
        // The GOAWAY the client queued, if the socket takes it.
        let _ = self.h2_flush(l, now);
        let link = mem::take(&mut self.h2_links().links[l]);
        self.h2_end_all(schedule, l, link, kind, now);
    }

    fn h2_connect_failed(&mut self, schedule: &mut Schedule, l: usize, now: u64, kind: ErrorKind) {
        let link = mem::take(&mut self.h2_links().links[l]);
        if self.window.measures(now) {
            self.recorder.connect_failed(kind);
        }
        for &slot in &link.waiting {
            self.conns[slot].backoff.failed(now);
        }
        self.h2_end_all(schedule, l, link, kind, now);
    }

    fn h2_end_all(&mut self, schedule: &mut Schedule, l: usize, mut link: Link, kind: ErrorKind, now: u64) {
        let mut ended = Vec::new();
        link.client.end_all(kind, &mut ended);
        ended.extend(link.waiting.iter().map(|&slot| Ended { slot, outcome: Err(kind), bytes_in: 0 }));
        self.h2_links().ended.extend(ended);
        self.h2_ended(schedule, l, now);
    }

    /// A scheduler retired `slot` (a session ended): its connection closes once none of its
    /// slots has a request in flight.
    pub(super) fn h2_close(&mut self, slot: usize) {
        let streams = self.h2_links().streams;
        let l = slot / streams;
        let idle = (l * streams..(l + 1) * streams).all(|s| self.conns.get(s).is_none_or(|c| !c.is_busy()));
        if idle && l < self.h2_links().links.len() {
            self.h2_links().links[l] = Link::default();
        }
    }
}
