//! What a reaper shares with the supervisor that forked it: one page of
//! memory, mapped shared before the fork, where the reaper records the
//! command it runs, its leaf's counters when the command started, and the
//! exit report it could not send (written before it dies in its own
//! leaf's `cgroup.kill`).
//!
//! The supervisor reads it when it reaps a reaper that did not exit on its
//! own: a reaper that died idle had no command (its socket's end tells the
//! host so, and a start the host sent meanwhile is tried elsewhere); one
//! that died with a command has its report sent by the supervisor, once the
//! command's strays are gone. Recording costs a store to memory, not a
//! message on the command's critical path.
//!
//! No command can write the page: reapers are not dumpable (no
//! `/proc/<pid>/mem` or ptrace for the same user), and a command's `execve`
//! drops the mapping.

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::protocol::MESSAGE_LEN;

/// The page's layout. Every field is an atomic: the reaper writes while the
/// supervisor may read.
#[repr(C)]
struct Page {
    /// The host's number for the command the reaper runs; 0 while idle.
    command: AtomicU64,
    /// The leaf's counters (OOM kills, forks refused) when the command started.
    baseline: [AtomicU64; 2],
    /// 1 once `report` holds an exit report.
    told: AtomicU32,
    /// The exit report, [`MESSAGE_LEN`] bytes, as four words.
    report: [AtomicU32; MESSAGE_LEN / 4],
}

/// One reaper's shared page. The supervisor's copy unmaps it on drop; the
/// reaper's copy lives as long as the reaper (which ends with `_exit`).
pub(crate) struct Slot {
    page: NonNull<Page>,
}

impl Slot {
    /// Maps a new page, zeroed: no command, nothing told.
    pub(crate) fn new() -> io::Result<Self> {
        // SAFETY: an anonymous shared mapping of one page, owned by the Slot;
        // the kernel zeroes it, which is a valid `Page` (all atomics at 0).
        let address = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page_size(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if address == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        NonNull::new(address.cast()).map(|page| Self { page }).ok_or_else(|| io::Error::other("mmap returned null"))
    }

    fn page(&self) -> &Page {
        // SAFETY: the mapping is valid, aligned and zero-initialised, and
        // lives as long as this Slot (see `new` and `Drop`).
        unsafe { self.page.as_ref() }
    }

    /// Records the command the reaper starts (`id`), with its leaf's
    /// counters at that moment; 0 when it is idle again.
    pub(crate) fn set_command(&self, id: u64, baseline: [u64; 2]) {
        let page = self.page();
        page.told.store(0, Ordering::Relaxed);
        for (field, value) in page.baseline.iter().zip(baseline) {
            field.store(value, Ordering::Relaxed);
        }
        page.command.store(id, Ordering::Release);
    }

    /// The command the reaper was running (0: none), with its baseline.
    pub(crate) fn command(&self) -> (u64, [u64; 2]) {
        let page = self.page();
        let id = page.command.load(Ordering::Acquire);
        (id, page.baseline.each_ref().map(|field| field.load(Ordering::Relaxed)))
    }

    /// Leaves the command's exit report for the supervisor.
    pub(crate) fn tell(&self, report: [u8; MESSAGE_LEN]) {
        let page = self.page();
        for (field, word) in page.report.iter().zip(report.chunks_exact(4)) {
            field.store(u32::from_ne_bytes([word[0], word[1], word[2], word[3]]), Ordering::Relaxed);
        }
        page.told.store(1, Ordering::Release);
    }

    /// The exit report the reaper left, if any.
    pub(crate) fn told(&self) -> Option<[u8; MESSAGE_LEN]> {
        let page = self.page();
        if page.told.load(Ordering::Acquire) != 1 {
            return None;
        }
        let mut report = [0; MESSAGE_LEN];
        for (word, field) in report.chunks_exact_mut(4).zip(&page.report) {
            word.copy_from_slice(&field.load(Ordering::Relaxed).to_ne_bytes());
        }
        Some(report)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // SAFETY: unmaps the page this Slot mapped; no reference to it outlives `self`.
        unsafe { libc::munmap(self.page.as_ptr().cast(), page_size()) };
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096).max(std::mem::size_of::<Page>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_forked_reaper_records_the_supervisor_reads() {
        let slot = Slot::new().unwrap();
        assert_eq!(slot.command(), (0, [0, 0]));
        assert_eq!(slot.told(), None);
        // SAFETY: the child only stores to the shared page and exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            slot.set_command(42, [1, 2]);
            slot.tell([7; MESSAGE_LEN]);
            // SAFETY: ends the child without running the test harness's code.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(slot.command(), (42, [1, 2]));
        assert_eq!(slot.told(), Some([7; MESSAGE_LEN]));
        slot.set_command(0, [0, 0]);
        assert_eq!(slot.told(), None, "a new command clears what the last one told");
    }
}
