//! The built-in reference server: the client's loop design turned around. One thread per core
//! of its own, each with a mio Poll and its own SO_REUSEPORT listener on the shared port, serves
//! the standard workload from memory, keep-alive or not, HTTP/1.0 and 1.1, pipelined requests in
//! order, with fault injection for testing measurement.

pub mod besim;
pub mod command;
mod conn;
pub mod counters;
pub mod faults;
pub mod routes;
pub mod session_route;
pub mod siblings;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token, Waker};
use serde::{Deserialize, Serialize};

use crate::clock::now_us;
use crate::conn::tls;
use crate::conn::transport::{TlsStream, Transport};
use besim::Besim;
use conn::{Served, ServerConn};
pub use counters::ServerStats;
use counters::{CounterTable, Counters, Share};
use faults::Stall;
use routes::Routes;

const LISTENER: Token = Token(usize::MAX - 1);
const WAKER: Token = Token(usize::MAX);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    pub host: String,
    /// 0: the system picks a free port (see `ServerHandle::local_addr`).
    pub port: u16,
    pub threads: usize,
    /// Server-wide periodic stall (0: none); a request's own stall parameters override it.
    pub stall_ms: u64,
    pub stall_every_ms: u64,
    /// Serve HTTPS with a self-signed certificate made at start.
    pub tls: bool,
    /// With `tls`: the only TLS version served, "1.2" or "1.3" (None: both).
    pub tls_version: Option<String>,
    /// With `tls`: the only cipher suite served, by its rustls or IANA name (None: rustls's).
    pub cipher: Option<String>,
    /// Serve BeSim's calls under /besim/ (besim.rs), each held this many µs (None: no BeSim).
    pub besim_service_time_us: Option<u64>,
}

impl Default for ServeConfig {
    fn default() -> ServeConfig {
        ServeConfig {
            host: "127.0.0.1".into(),
            port: 0,
            threads: 2,
            stall_ms: 0,
            stall_every_ms: 0,
            tls: false,
            tls_version: None,
            cipher: None,
            besim_service_time_us: None,
        }
    }
}

/// Why the server did not start: its TLS settings (worded "cause: fix"), or the socket.
#[derive(Debug)]
pub enum ServeError {
    Tls(String),
    Io(io::Error),
}

impl From<io::Error> for ServeError {
    fn from(err: io::Error) -> ServeError {
        ServeError::Io(err)
    }
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Tls(message) => f.write_str(message),
            ServeError::Io(err) => err.fmt(f),
        }
    }
}

/// The TLS settings the config asks for, checked before any socket is bound.
fn tls_config(config: &ServeConfig) -> Result<Option<Arc<rustls::ServerConfig>>, ServeError> {
    if !config.tls {
        if config.tls_version.is_some() || config.cipher.is_some() {
            return Err(ServeError::Tls(
                "a TLS version or cipher suite was given for plain HTTP: serve with TLS".into(),
            ));
        }
        return Ok(None);
    }
    tls::server_config(config.tls_version.as_deref(), config.cipher.as_deref()).map(Some).map_err(ServeError::Tls)
}

/// What a thread's connections need to answer requests.
struct Context {
    routes: Arc<Routes>,
    stall: Stall,
    start_us: u64,
    /// The whole server's counters (every thread of every process).
    counters: Arc<CounterTable>,
    /// This thread's slot in them.
    index: usize,
    besim: Option<Arc<Besim>>,
}

impl Context {
    fn own(&self) -> &Counters {
        &self.counters[self.index]
    }
}

pub struct ServerHandle {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    wakers: Vec<Arc<Waker>>,
    threads: Vec<JoinHandle<()>>,
    counters: Arc<CounterTable>,
}

impl ServerHandle {
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// The whole server's counts: this process's threads, and its siblings' when it has any.
    pub fn stats(&self) -> ServerStats {
        self.counters.sum()
    }

    /// Stop every thread and close every socket; returns once the port is free.
    pub fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        for waker in &self.wakers {
            let _ = waker.wake();
        }
        for thread in self.threads {
            let _ = thread.join();
        }
    }
}

fn bind(address: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = socket2::Socket::new(socket2::Domain::for_address(address), socket2::Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&address.into())?;
    socket.listen(4096)?;
    Ok(socket.into())
}

/// Bind the port on every thread and start serving; returns once the server accepts.
pub fn serve(config: &ServeConfig) -> Result<ServerHandle, ServeError> {
    serve_counted(config, Share::new(1, config.threads.max(1))?)
}

/// `serve`, counting in `share` (one slot per thread from its first).
pub fn serve_counted(config: &ServeConfig, share: Share) -> Result<ServerHandle, ServeError> {
    let tls = tls_config(config)?;
    let wanted = (config.host.as_str(), config.port).to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("the host '{}' has no address", config.host))
    })?;
    let first = bind(wanted)?;
    let address = first.local_addr()?;
    let mut listeners = vec![first];
    for _ in 1..config.threads.max(1) {
        listeners.push(bind(address)?);
    }
    if share.first + listeners.len() > share.table.len() {
        let slots = share.table.len();
        return Err(ServeError::Io(io::Error::other(format!(
            "{} threads from slot {} of {slots} counters",
            listeners.len(),
            share.first
        ))));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let routes = Arc::new(Routes::new());
    let stall = Stall { ms: config.stall_ms, every_ms: config.stall_every_ms };
    let besim = config.besim_service_time_us.map(|us| Arc::new(Besim::new(us)));
    let start_us = now_us();
    let mut wakers = Vec::new();
    let mut threads = Vec::new();
    for (index, listener) in listeners.into_iter().enumerate() {
        let poll = Poll::new()?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
        let mut server = ServerLoop {
            poll,
            listener: TcpListener::from_std(listener),
            conns: Vec::new(),
            free: Vec::new(),
            tls: tls.clone(),
            next_generation: 0,
            timers: BinaryHeap::new(),
            context: Context {
                routes: routes.clone(),
                stall,
                start_us,
                counters: share.table.clone(),
                index: share.first + index,
                besim: besim.clone(),
            },
            stop: stop.clone(),
            scratch: vec![0; 64 * 1024].into_boxed_slice(),
        };
        server.poll.registry().register(&mut server.listener, LISTENER, Interest::READABLE)?;
        wakers.push(waker);
        threads.push(thread::Builder::new().name(format!("gauntlet-serve-{index}")).spawn(move || server.run())?);
    }
    Ok(ServerHandle { address, stop, wakers, threads, counters: share.table })
}

/// Say once why connections were left waiting (EMFILE: this process's open-files limit).
fn report_accept_failure(err: &io::Error) {
    static REPORTED: AtomicBool = AtomicBool::new(false);
    if !REPORTED.swap(true, Ordering::Relaxed) {
        eprintln!("gauntlet serve: cannot accept a connection ({err}): more connections than one process may open files need more processes (--processes)");
    }
}

struct ServerLoop {
    poll: Poll,
    listener: TcpListener,
    conns: Vec<Option<ServerConn>>,
    free: Vec<usize>,
    tls: Option<Arc<rustls::ServerConfig>>,
    /// Tells a reused slot's connection from the one a timer was set for.
    next_generation: u64,
    /// (due, slot, generation): held responses waiting for their time.
    timers: BinaryHeap<Reverse<(u64, usize, u64)>>,
    context: Context,
    stop: Arc<AtomicBool>,
    scratch: Box<[u8]>,
}

impl ServerLoop {
    fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        while !self.stop.load(Ordering::SeqCst) {
            let timeout =
                self.timers.peek().map(|Reverse((due, ..))| Duration::from_micros(due.saturating_sub(now_us())));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return;
                }
            }
            for event in events.iter() {
                match event.token() {
                    WAKER => {}
                    LISTENER => self.accept(),
                    Token(slot) => {
                        let peer_closed = event.is_read_closed() || event.is_error();
                        self.serve(slot, event.is_readable() || peer_closed, event.is_writable(), peer_closed);
                    }
                }
            }
            self.release_due();
        }
    }

    fn accept(&mut self) {
        loop {
            let (mut socket, _) = match self.listener.accept() {
                Ok(accepted) => accepted,
                // A connection reset while it waited in the queue: the next one may be fine, and
                // returning early would leave the rest of a full queue without a readiness edge.
                Err(e) if matches!(e.kind(), io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted) => continue,
                Err(e) => {
                    if e.kind() != io::ErrorKind::WouldBlock {
                        report_accept_failure(&e);
                    }
                    return;
                }
            };
            let _ = socket.set_nodelay(true);
            let slot = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.conns.len() - 1
            });
            let interest = Interest::READABLE | Interest::WRITABLE;
            if self.poll.registry().register(&mut socket, Token(slot), interest).is_err() {
                self.free.push(slot);
                continue;
            }
            let stream = match &self.tls {
                None => Transport::Plain(socket),
                Some(config) => match rustls::ServerConnection::new(config.clone()) {
                    Ok(session) => Transport::Tls(Box::new(TlsStream::new(socket, session.into()))),
                    Err(_) => {
                        self.free.push(slot);
                        continue;
                    }
                },
            };
            let counters = self.context.own();
            counters.connections.fetch_add(1, Ordering::Relaxed);
            counters.open.fetch_add(1, Ordering::Relaxed);
            self.next_generation += 1;
            self.conns[slot] = Some(ServerConn::new(stream, self.next_generation));
        }
    }

    fn serve(&mut self, slot: usize, readable: bool, writable: bool, peer_closed: bool) {
        let Some(conn) = self.conns.get_mut(slot).and_then(Option::as_mut) else { return };
        let served = conn.on_ready(readable, writable, peer_closed, &mut self.scratch, &self.context);
        self.after(slot, served);
    }

    fn after(&mut self, slot: usize, served: Served) {
        match served {
            Served::Open => {}
            Served::HeldUntil(due_us) => {
                let generation = self.conns[slot].as_ref().map_or(0, |c| c.generation);
                self.timers.push(Reverse((due_us, slot, generation)));
            }
            Served::Close => {
                self.context.own().open.fetch_sub(1, Ordering::Relaxed);
                self.conns[slot] = None;
                self.free.push(slot);
            }
        }
    }

    fn release_due(&mut self) {
        let now = now_us();
        while let Some(&Reverse((due, slot, generation))) = self.timers.peek() {
            if due > now {
                return;
            }
            self.timers.pop();
            let Some(conn) = self.conns.get_mut(slot).and_then(Option::as_mut) else { continue };
            if conn.generation != generation {
                continue;
            }
            let served = conn.release(&self.context);
            self.after(slot, served);
        }
    }
}
