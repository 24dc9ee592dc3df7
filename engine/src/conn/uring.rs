//! io_uring as the way to the peer of plain connections (plan `io: "uring"`). A connection is
//! opened through epoll as usual; once connected, its socket moves to the thread's ring as a
//! registered file with one multishot receive into provided buffers (a buffer ring), each read's
//! kernel receive timestamp (`rx_time`) written ahead of its bytes (a `recvmsg`). A send is
//! one SQE; the loop submits every queued SQE and waits for completions in one `io_uring_enter`.
//! The epoll set (connects, the send timer) is itself polled through the ring, so one wait covers
//! both. The ring lives in a thread-local: each load thread has its own, and the connections'
//! transports reach it without a reference that would tie them to the worker.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use crate::plan::Io;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use mio::net::TcpStream;

use super::{batch, rx_time, Conn};

const SUBMISSION_ENTRIES: u32 = 1024;
const COMPLETION_ENTRIES: u32 = 16 * 1024;
/// Provided receive buffers per thread (a power of two) and their size. Few and large: the kernel
/// takes them in ring order, and 256 of them (16 MiB) ran cold in the cache: 5 µs more per 83 KB
/// image than epoll's one scratch buffer, against 0.7 µs with 32 of 64 KiB (bench/README.md).
/// 128 KiB holds the image in one receive: 2.6 completions a response instead of 3.7, in the same
/// 2 MiB. A completion finding none (-ENOBUFS) re-arms the receive once the loop has recycled
/// what it read.
const BUFFER_COUNT: u16 = 16;
const BUFFER_BYTES: usize = 128 * 1024;
const BUFFER_GROUP: u16 = 0;

/// What a completion was for, in the low bits of its user data.
const RECV: u64 = 0;
const SEND: u64 = 1;
const CANCEL: u64 = 2;
const EPOLL: u64 = 3;

fn user_data(kind: u64, slot: u32, generation: u32) -> u64 {
    (u64::from(generation) << 32) | (u64::from(slot) << 2) | kind
}

/// The buffer ring the kernel picks receive buffers from, and the buffers.
struct ProvidedBuffers {
    ring: *mut types::BufRingEntry,
    ring_bytes: usize,
    memory: Box<[u8]>,
    /// Our copy of the ring's tail (the kernel reads the shared one).
    tail: u16,
}

// The ring memory is only touched by the thread that owns the worker (and the kernel).
unsafe impl Send for ProvidedBuffers {}

impl ProvidedBuffers {
    fn new(ring: &IoUring) -> io::Result<ProvidedBuffers> {
        let ring_bytes = usize::from(BUFFER_COUNT) * std::mem::size_of::<types::BufRingEntry>();
        // SAFETY: an anonymous private mapping, page-aligned as the kernel requires.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ring_bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut buffers = ProvidedBuffers {
            ring: base.cast(),
            ring_bytes,
            memory: vec![0; usize::from(BUFFER_COUNT) * BUFFER_BYTES].into_boxed_slice(),
            tail: 0,
        };
        // SAFETY: the mapping outlives the registration (unregistered with the ring's end).
        unsafe { ring.submitter().register_buf_ring_with_flags(base as u64, BUFFER_COUNT, BUFFER_GROUP, 0)? };
        (0..BUFFER_COUNT).for_each(|bid| buffers.recycle(bid));
        Ok(buffers)
    }

    /// Hand buffer `bid` back to the kernel.
    fn recycle(&mut self, bid: u16) {
        let mask = BUFFER_COUNT - 1;
        // SAFETY: the index is masked into the ring; the entry is ours until the tail passes it.
        let entry = unsafe { &mut *self.ring.add(usize::from(self.tail & mask)) };
        entry.set_addr(self.memory[usize::from(bid) * BUFFER_BYTES..].as_ptr() as u64);
        entry.set_len(BUFFER_BYTES as u32);
        entry.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
        // SAFETY: the tail field sits in the ring's first entry; the kernel reads it with acquire.
        let tail = unsafe { &*(types::BufRingEntry::tail(self.ring).cast::<AtomicU16>()) };
        tail.store(self.tail, Ordering::Release);
    }

    fn bytes(&self, bid: u16, len: usize) -> &[u8] {
        &self.memory[usize::from(bid) * BUFFER_BYTES..][..len]
    }
}

impl Drop for ProvidedBuffers {
    fn drop(&mut self) {
        // SAFETY: mapped in new() with this size; the ring (dropped first) no longer uses it.
        unsafe { libc::munmap(self.ring.cast(), self.ring_bytes) };
    }
}

/// The message header every multishot receive is armed with: no address, and room for the
/// timestamp's control message, which the kernel writes into each buffer ahead of the payload.
struct RecvHeader(Box<libc::msghdr>);

// Only read by the kernel at submission and by the owning thread when parsing its buffers.
unsafe impl Send for RecvHeader {}

impl RecvHeader {
    fn new() -> RecvHeader {
        // SAFETY: a zeroed msghdr is valid: no address, no buffers; the control length is all the
        // kernel reads from it for a multishot receive (the buffers are the provided ones).
        let mut header: Box<libc::msghdr> = Box::new(unsafe { std::mem::zeroed() });
        header.msg_controllen = rx_time::CONTROL_BYTES;
        RecvHeader(header)
    }
}

/// A receive's bytes waiting in a provided buffer, and when the kernel received them.
struct Received {
    bid: u16,
    start: usize,
    len: usize,
    arrived_us: Option<u64>,
}

/// One thread's ring. Field order matters: the ring is torn down before its buffers.
pub struct Ring {
    ring: IoUring,
    buffers: ProvidedBuffers,
    recv_header: RecvHeader,
    /// Registered file slots: one per connection of the thread.
    slots: u32,
    /// Bytes being sent on each slot; owned here so that a send in flight never outlives them.
    outboxes: Vec<Vec<u8>>,
    /// Outboxes grown out of: a cancelled send of a closed connection may still read one.
    retired: Vec<Vec<u8>>,
    /// A new connection's generation, so that completions for an earlier one on the slot are told apart.
    next_generation: u32,
    epoll_armed: bool,
    /// The plan's batch window (µs; 0: none): see `wait`.
    batch_us: u32,
    /// Sends queued since the last wait: their completions come at once and do not count as a batch.
    queued_sends: usize,
    /// Completions taken off the queue in one wait (kept to reuse its memory).
    completions: Vec<cqueue::Entry>,
}

impl Ring {
    /// A ring for `connections` connections of one thread, or why the kernel refused it.
    pub fn new(connections: usize, batch_us: u32) -> io::Result<Ring> {
        // Completions are posted only when the thread asks for them (deferred task work): no
        // interrupt per packet. Created disabled: the load thread that submits enables it.
        let ring = IoUring::builder()
            .setup_cqsize(COMPLETION_ENTRIES)
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_r_disabled()
            .build(SUBMISSION_ENTRIES)?;
        if batch_us > 0 && !ring.params().is_feature_min_timeout() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "io_batch_us needs Linux 6.12 (IORING_FEAT_MIN_TIMEOUT)",
            ));
        }
        let slots = u32::try_from(connections.max(1)).unwrap_or(u32::MAX).min(1 << 30);
        ring.submitter().register_files_sparse(slots)?;
        let buffers = ProvidedBuffers::new(&ring)?;
        Ok(Ring {
            ring,
            buffers,
            recv_header: RecvHeader::new(),
            slots,
            outboxes: vec![Vec::new(); slots as usize],
            retired: Vec::new(),
            next_generation: 0,
            epoll_armed: false,
            batch_us,
            queued_sends: 0,
            completions: Vec::with_capacity(COMPLETION_ENTRIES as usize),
        })
    }

    fn push(&mut self, entry: squeue::Entry) -> io::Result<()> {
        // SAFETY: every entry's memory (outboxes, buffer ring) lives as long as the ring.
        while unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.ring.submit()?;
        }
        Ok(())
    }

    fn arm_recv(&mut self, slot: u32, generation: u32) -> io::Result<()> {
        let recv = opcode::RecvMsgMulti::new(types::Fixed(slot), &*self.recv_header.0, BUFFER_GROUP).build();
        self.push(recv.user_data(user_data(RECV, slot, generation)))
    }

    fn send(&mut self, slot: u32, generation: u32, from: usize) -> io::Result<()> {
        let out = &self.outboxes[slot as usize][from..];
        let send =
            opcode::Send::new(types::Fixed(slot), out.as_ptr(), out.len() as u32).flags(libc::MSG_NOSIGNAL).build();
        self.queued_sends += 1;
        self.push(send.user_data(user_data(SEND, slot, generation)))
    }
}

thread_local! {
    static RING: RefCell<Option<Ring>> = const { RefCell::new(None) };
}

/// Make `ring` this thread's ring (its only submitter): connections adopted from now on use it.
pub fn install(ring: Ring) -> io::Result<()> {
    ring.ring.submitter().register_enable_rings()?;
    RING.with_borrow_mut(|slot| *slot = Some(ring));
    Ok(())
}

/// Drop this thread's ring (after every connection on it is closed).
pub fn uninstall() {
    RING.with_borrow_mut(|slot| *slot = None);
}

pub fn installed() -> bool {
    RING.with_borrow(Option::is_some)
}

/// A connection whose socket is on the ring.
pub struct RingStream {
    /// Owns the descriptor (closed on drop, after the ring lets go of it).
    pub socket: TcpStream,
    slot: u32,
    generation: u32,
    /// Receives not read yet.
    inbox: VecDeque<Received>,
    eof: bool,
    error: Option<i32>,
    /// Bytes of the send in flight, and how many the kernel has taken.
    sending: usize,
    sent: usize,
}

/// Where a socket sits on the ring: its registered file's slot, and the generation that tells
/// its completions from those of an earlier socket in that slot.
pub struct RingSlot {
    slot: u32,
    generation: u32,
}

/// Put a freshly connected plain socket on the thread's ring as connection `slot`; None (the
/// socket stays on epoll) when there is no ring or the slot is out of range.
pub fn adopt(socket: &mut TcpStream, slot: usize, registry: &mio::Registry) -> io::Result<Option<RingSlot>> {
    let fd = socket.as_raw_fd();
    RING.with_borrow_mut(|ring| {
        let Some(ring) = ring.as_mut() else { return Ok(None) };
        let Ok(slot) = u32::try_from(slot) else { return Ok(None) };
        if slot >= ring.slots {
            return Ok(None);
        }
        registry.deregister(socket)?;
        ring.ring.submitter().register_files_update(slot, &[fd])?;
        let generation = ring.next_generation;
        ring.next_generation = ring.next_generation.wrapping_add(1);
        ring.arm_recv(slot, generation)?;
        Ok(Some(RingSlot { slot, generation }))
    })
}

impl RingStream {
    pub fn new(socket: TcpStream, at: RingSlot) -> RingStream {
        let RingSlot { slot, generation } = at;
        RingStream { socket, slot, generation, inbox: VecDeque::new(), eof: false, error: None, sending: 0, sent: 0 }
    }

    /// What a read comes to when nothing is waiting: the error, the end, or WouldBlock.
    fn nothing_waiting(&self) -> io::Result<usize> {
        match (self.error, self.eof) {
            (Some(errno), _) => Err(io::Error::from_raw_os_error(errno)),
            (None, true) => Ok(0),
            (None, false) => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    pub fn closed_by_peer(&self) -> bool {
        self.eof || self.error.is_some()
    }

    /// Hand the next receive's bytes to `take` in place, with when the kernel received them
    /// (None where it gave no timestamp), then recycle its buffer.
    pub fn read_with(&mut self, take: impl FnOnce(&[u8], Option<u64>)) -> io::Result<usize> {
        let Some(Received { bid, start, len, arrived_us }) = self.inbox.pop_front() else {
            return self.nothing_waiting();
        };
        RING.with_borrow_mut(|ring| {
            let ring = ring.as_mut().expect("a ring stream outlived its ring");
            take(&ring.buffers.bytes(bid, start + len)[start..], arrived_us);
            ring.buffers.recycle(bid);
        });
        Ok(len)
    }

    /// Queue `buf` whole for sending; a failure shows on the next read.
    pub fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(errno) = self.error {
            return Err(io::Error::from_raw_os_error(errno));
        }
        RING.with_borrow_mut(|ring| {
            let ring = ring.as_mut().expect("a ring stream outlived its ring");
            if self.sent < self.sending {
                // One request at a time: a request while the last one is still going out means
                // the peer answered before reading it all; the connection is not usable.
                return Err(io::Error::other("a request was sent while the last one was still going out"));
            }
            let out = &mut ring.outboxes[self.slot as usize];
            if out.capacity() < buf.len() {
                ring.retired.push(std::mem::replace(out, Vec::with_capacity(buf.len())));
            }
            out.clear();
            out.extend_from_slice(buf);
            self.sending = buf.len();
            self.sent = 0;
            ring.send(self.slot, self.generation, 0)
        })?;
        Ok(buf.len())
    }
}

impl Drop for RingStream {
    fn drop(&mut self) {
        RING.with_borrow_mut(|ring| {
            let Some(ring) = ring.as_mut() else { return };
            for received in &self.inbox {
                ring.buffers.recycle(received.bid);
            }
            // Cancel what is in flight on the slot and issue the cancel before the slot is
            // emptied and reused; the socket closes once the cancelled requests let go of it.
            let cancel = opcode::AsyncCancel2::new(types::CancelBuilder::fd(types::Fixed(self.slot)).all()).build();
            let issued = ring.push(cancel.user_data(user_data(CANCEL, self.slot, self.generation)));
            if issued.and_then(|()| ring.ring.submit()).is_err()
                || ring.ring.submitter().register_files_update(self.slot, &[-1 as RawFd]).is_err()
            {
                // The kernel still holds the socket: a shutdown ends the connection all the same.
                let _ = self.socket.shutdown(std::net::Shutdown::Both);
            }
        });
    }
}

/// Arm the poll of the thread's epoll set through the ring.
fn arm_epoll(ring: &mut Ring, epoll_fd: RawFd) -> io::Result<()> {
    // One-shot, armed again after each drain: armed while events are pending, it completes at once.
    let poll = opcode::PollAdd::new(types::Fd(epoll_fd), libc::POLLIN as u32).build();
    ring.push(poll.user_data(user_data(EPOLL, 0, 0)))?;
    ring.epoll_armed = true;
    Ok(())
}

/// Submit what is queued and wait up to `timeout` for a completion, then hand each one to its
/// connection: `ready` gets the connections that have something to read (data, end or error).
/// With a batch window the wait asks for a share of the `in_flight` requests' completions (besides
/// the sends', which complete as they are submitted) and returns with what has come once the
/// window has passed: fewer wake-ups, each response handled at most the window late.
/// Returns whether the epoll set has events.
pub fn wait(
    epoll_fd: RawFd,
    timeout: Duration,
    in_flight: usize,
    conns: &mut [Conn],
    ready: &mut Vec<usize>,
) -> io::Result<bool> {
    RING.with_borrow_mut(|ring| {
        let ring = ring.as_mut().expect("uring::wait without a ring");
        if !ring.epoll_armed {
            arm_epoll(ring, epoll_fd)?;
        }
        let timespec = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&timespec);
        let (wanted, args) = match ring.batch_us {
            0 => (1, args),
            batch_us => (ring.queued_sends + batch::wanted(in_flight), args.min_wait_usec(batch_us)),
        };
        ring.queued_sends = 0;
        match ring.ring.submitter().submit_with_args(wanted, &args) {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR | libc::EBUSY)) => {}
            Err(e) => return Err(e),
        }
        let mut epoll_ready = false;
        let mut completions = std::mem::take(&mut ring.completions);
        completions.extend(ring.ring.completion());
        for cqe in completions.drain(..) {
            let data = cqe.user_data();
            let (kind, slot, generation) = (data & 3, ((data >> 2) & 0x3fff_ffff) as u32, (data >> 32) as u32);
            if kind == EPOLL {
                epoll_ready = true;
                ring.epoll_armed = false;
                continue;
            }
            let stream = conns
                .get_mut(slot as usize)
                .and_then(|c| c.stream.as_mut())
                .and_then(|t| t.ring_mut())
                .filter(|stream| stream.generation == generation);
            match (kind, stream) {
                (RECV, stream) => on_recv(ring, &cqe, stream, ready),
                (SEND, Some(stream)) => on_send(ring, cqe.result(), stream, ready)?,
                _ => {}
            }
        }
        ring.completions = completions;
        Ok(epoll_ready)
    })
}

fn on_recv(ring: &mut Ring, cqe: &cqueue::Entry, stream: Option<&mut RingStream>, ready: &mut Vec<usize>) {
    let bid = cqueue::buffer_select(cqe.flags());
    let Some(stream) = stream else {
        // A completion for a connection that is gone: only its buffer matters.
        if let Some(bid) = bid {
            ring.buffers.recycle(bid);
        }
        return;
    };
    match (cqe.result(), bid) {
        (n, Some(bid)) if n > 0 => match received(ring, bid, n as usize) {
            Some(received) if received.len > 0 => stream.inbox.push_back(received),
            // The peer's end of stream: the kernel's header with no payload.
            Some(_) => {
                ring.buffers.recycle(bid);
                stream.eof = true;
            }
            None => {
                ring.buffers.recycle(bid);
                stream.error = Some(libc::EPROTO);
            }
        },
        (0, _) => stream.eof = true,
        (errno, _) if errno == -libc::ENOBUFS => {}
        (errno, _) => stream.error = Some(-errno),
    }
    ready.push(stream.slot as usize);
    // The multishot receive ended (a full buffer ring, or the kernel's choice): arm it again.
    let rearm = !cqueue::more(cqe.flags()) && !stream.eof && stream.error.is_none();
    if rearm {
        if let Err(e) = ring.arm_recv(stream.slot, stream.generation) {
            stream.error = e.raw_os_error().or(Some(libc::EIO));
        }
    }
}

/// Where the payload of a receive of `n` bytes into buffer `bid` lies, past the kernel's header
/// and control data, and the timestamp in them; None if the kernel wrote less than its header.
fn received(ring: &Ring, bid: u16, n: usize) -> Option<Received> {
    let buffer = ring.buffers.bytes(bid, n);
    let message = types::RecvMsgOut::parse(buffer, &ring.recv_header.0).ok()?;
    let arrived_us = match message.is_control_data_truncated() {
        true => None,
        false => rx_time::arrival_us_in(message.control_data()),
    };
    let payload = message.payload_data();
    let start = payload.as_ptr() as usize - buffer.as_ptr() as usize;
    Some(Received { bid, start, len: payload.len(), arrived_us })
}

fn on_send(ring: &mut Ring, result: i32, stream: &mut RingStream, ready: &mut Vec<usize>) -> io::Result<()> {
    if result < 0 {
        stream.error = Some(-result);
        ready.push(stream.slot as usize);
        return Ok(());
    }
    stream.sent += result as usize;
    if stream.sent < stream.sending {
        ring.send(stream.slot, stream.generation, stream.sent)?;
    }
    Ok(())
}

/// Why a plan whose connections carry one request each runs on epoll.
pub const ONE_REQUEST_PER_CONNECTION: &str =
    "a connection per request runs on epoll: moving each new socket onto io_uring cost more than it saved";

/// The thread's ring when the plan asks for io_uring; Err: why the thread runs on epoll instead.
pub fn ring_for(io: Io, tls: bool, connections: usize, batch_us: u64) -> Result<Option<Ring>, String> {
    match (io, tls) {
        (Io::Epoll, _) => Ok(None),
        (Io::Uring, true) => Err("io_uring carries plain http:// only: https runs on epoll".into()),
        (Io::Uring, false) => {
            Ring::new(connections, u32::try_from(batch_us).unwrap_or(u32::MAX)).map(Some).map_err(|e| match e.kind() {
                io::ErrorKind::Unsupported => format!("{e}: running on epoll, which keeps the window"),
                _ => format!(
                    "io_uring is unavailable ({e}): running on epoll; check kernel.io_uring_disabled and seccomp"
                ),
            })
        }
    }
}
