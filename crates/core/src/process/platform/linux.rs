//! What Linux adds to POSIX: pidfds (an exit as a readable descriptor), a
//! `/proc` scan for group members, and the supervisor (`supervisor.rs`),
//! whose reapers are subreapers running one command at a time.

use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::Once;

/// Commands can run under the supervisor, each under a reaper of its own.
pub(crate) const SUPERVISOR: bool = true;

#[cfg(test)]
thread_local! {
    /// Makes [`pidfd_open`] on this thread fail, so tests cover the waiter
    /// thread without strace.
    pub(crate) static FORCE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes this process non-dumpable, once, unless the host's environment has
/// [`KEEP_DUMPABLE`](crate::process::KEEP_DUMPABLE) set to `1`.
///
/// Why: a command runs as the host's user, and the same user may read a
/// dumpable process's `/proc/<pid>/environ` (the host's initial environment,
/// every credential the scrub kept from the command included, even ones
/// since deleted from `process.env`), its memory and its descriptors. A
/// non-dumpable process's `/proc` entries belong to root and it cannot be
/// ptraced without `CAP_SYS_PTRACE`, as `ssh-agent` and `gpg-agent` do it.
/// It also writes no core dump. The process still reads its own entries.
pub(crate) fn protect_host() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os(crate::process::KEEP_DUMPABLE).is_some_and(|value| value == "1") {
            return;
        }
        // SAFETY: a plain prctl on this process's own attribute.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    });
}

/// `pidfd_open(pid, 0)`, or `None` where it is unavailable (ENOSYS on old
/// kernels, EPERM under seccomp, …): the caller falls back to a thread.
pub(crate) fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    #[cfg(test)]
    if FORCE_THREAD.get() {
        return None;
    }
    // SAFETY: a plain syscall; on success it returns a new fd we now own
    // (always close-on-exec).
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a non-negative result is that new descriptor, owned by no one else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Whether any process but `pgid` itself is a live (not zombie) member of
/// group `pgid`.
///
/// Every live pid in `/proc` is asked for its group, one `getpgid` call each;
/// only a match reads `/proc/<pid>/stat` for its state. The scan is not
/// narrowed by the namespace's last pid: a privileged command can write it.
pub(crate) fn group_has_live_members(pgid: u32) -> bool {
    let is_member = |pid: u32| {
        // SAFETY: getpgid only reads the kernel's process table.
        pid != pgid
            && unsafe { libc::getpgid(pid as libc::pid_t) } == pgid as libc::pid_t
            && stat_state(pid).is_some_and(|state| state != 'Z' && state != 'X')
    };
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries.flatten().filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok()).any(is_member)
}

/// The state letter of `pid`, from `/proc/<pid>/stat`: `pid (comm) state …`,
/// where `comm` may itself hold spaces and parentheses.
fn stat_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.get(stat.rfind(')')? + 1..)?.split_ascii_whitespace().next()?.chars().next()
}
