//! The built-in server's counters: one cache line per thread of every process serving the port, in
//! one memory file they all map, so `/__gauntlet/stats`, the per-connection delay and the last line
//! count the whole server however many processes serve it. The first process makes the file; each
//! sibling (`siblings.rs`) inherits its descriptor and is told it, with its first slot, in
//! `GAUNTLET_SERVE_COUNTERS` ("FD FIRST_SLOT").

use std::io;
use std::ops::Deref;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

const HANDED_DOWN: &str = "GAUNTLET_SERVE_COUNTERS";

/// What the server has done, summed over its threads and processes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStats {
    /// Requests answered (or reset on request), not counting the stats endpoint's own.
    pub requests: u64,
    pub connections_accepted: u64,
}

/// One thread's counts (zero bytes are zero counts: a new file is a zeroed table).
#[repr(C, align(64))]
pub struct Counters {
    pub requests: AtomicU64,
    pub connections: AtomicU64,
    /// Connections open now.
    pub open: AtomicU64,
}

/// The slots, mapped shared from the memory file.
pub struct CounterTable {
    slots: NonNull<Counters>,
    len: usize,
    file: OwnedFd,
}

// SAFETY: the table is only read and written through atomics, and its mapping lives as long as it.
unsafe impl Send for CounterTable {}
// SAFETY: as above.
unsafe impl Sync for CounterTable {}

impl CounterTable {
    /// `len` zeroed slots in a new memory file; `inheritable` leaves its descriptor open across exec,
    /// for the siblings a first process starts.
    fn new(len: usize, inheritable: bool) -> io::Result<CounterTable> {
        let flags = if inheritable { 0 } else { libc::MFD_CLOEXEC };
        // SAFETY: a NUL-terminated name and flags; the result is checked.
        let fd = unsafe { libc::memfd_create(c"gauntlet-serve-counters".as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just made, owned by nothing else.
        let file = unsafe { OwnedFd::from_raw_fd(fd) };
        let bytes = (len.max(1) * size_of::<Counters>()) as libc::off_t;
        // SAFETY: resizes the file this table owns.
        if unsafe { libc::ftruncate(file.as_raw_fd(), bytes) } != 0 {
            return Err(io::Error::last_os_error());
        }
        CounterTable::map(file)
    }

    fn map(file: OwnedFd) -> io::Result<CounterTable> {
        // SAFETY: fstat on an open descriptor into a zeroed struct.
        let mut status: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(file.as_raw_fd(), &mut status) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let bytes = status.st_size as usize;
        let len = bytes / size_of::<Counters>();
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "the counters' file holds no slot"));
        }
        let protection = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: maps the whole file, shared; the result is checked, and unmapped on drop.
        let address =
            unsafe { libc::mmap(std::ptr::null_mut(), bytes, protection, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        if address == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let slots = NonNull::new(address.cast::<Counters>()).ok_or_else(io::Error::last_os_error)?;
        Ok(CounterTable { slots, len, file })
    }

    pub fn sum(&self) -> ServerStats {
        self.iter().fold(ServerStats::default(), |s, c| ServerStats {
            requests: s.requests + c.requests.load(Ordering::Relaxed),
            connections_accepted: s.connections_accepted + c.connections.load(Ordering::Relaxed),
        })
    }

    /// Connections open on the whole server now.
    pub fn open(&self) -> u64 {
        self.iter().map(|c| c.open.load(Ordering::Relaxed)).sum()
    }
}

impl Deref for CounterTable {
    type Target = [Counters];

    fn deref(&self) -> &[Counters] {
        // SAFETY: `len` slots mapped at `slots`, page-aligned, zero-initialised atomics.
        unsafe { std::slice::from_raw_parts(self.slots.as_ptr(), self.len) }
    }
}

impl Drop for CounterTable {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping made in `map`, which nothing borrows any more.
        unsafe { libc::munmap(self.slots.as_ptr().cast(), self.len * size_of::<Counters>()) };
    }
}

/// The slots one process's threads count in: `first` and the ones after it, one per thread.
#[derive(Clone)]
pub struct Share {
    pub table: Arc<CounterTable>,
    pub first: usize,
}

impl Share {
    /// A table for `processes` processes of `threads` threads each, this one first; with more than
    /// one, its descriptor stays open across exec for the siblings (`handed_down` gives each one
    /// its slots).
    pub fn new(processes: usize, threads: usize) -> io::Result<Share> {
        Ok(Share { table: Arc::new(CounterTable::new(processes * threads, processes > 1)?), first: 0 })
    }

    /// The environment a sibling process gets: the table's descriptor and its first slot.
    pub fn handed_down(&self, first: usize) -> (&'static str, String) {
        (HANDED_DOWN, format!("{} {first}", self.table.file.as_raw_fd()))
    }

    /// The share a first process handed this one (None: this is the first, or the only, process).
    pub fn inherited() -> Result<Option<Share>, String> {
        let Ok(value) = std::env::var(HANDED_DOWN) else { return Ok(None) };
        let parsed =
            value.split_once(' ').and_then(|(fd, first)| Some((fd.parse::<RawFd>().ok()?, first.parse().ok()?)));
        let Some((fd, first)) = parsed else {
            return Err(format!("{HANDED_DOWN}={value} is not 'FD FIRST_SLOT': unset it"));
        };
        // SAFETY: the descriptor the first process left open for this one; nothing else owns it.
        let file = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: marks that descriptor close-on-exec.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        let table = CounterTable::map(file)
            .map_err(|e| format!("the counters handed down in {HANDED_DOWN} cannot be mapped ({e}): unset it"))?;
        Ok(Some(Share { table: Arc::new(table), first }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_mapping_of_the_file_sees_the_first_ones_counts() {
        let share = Share::new(2, 3).unwrap();
        assert_eq!(share.table.len(), 6);
        assert_eq!(share.table.sum(), ServerStats::default());
        // SAFETY: a duplicate of the table's open descriptor, owned by the second mapping.
        let again = unsafe { OwnedFd::from_raw_fd(libc::dup(share.table.file.as_raw_fd())) };
        let second = CounterTable::map(again).unwrap();
        second[4].requests.fetch_add(5, Ordering::Relaxed);
        second[5].open.fetch_add(2, Ordering::Relaxed);
        share.table[0].connections.fetch_add(1, Ordering::Relaxed);
        assert_eq!(share.table.sum(), ServerStats { requests: 5, connections_accepted: 1 });
        assert_eq!((share.table.open(), second.sum()), (2, share.table.sum()));
    }
}
