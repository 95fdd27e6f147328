//! What a system without Linux's additions gets: no pidfds (exits are waited
//! for otherwise), on the BSDs no cheap way to find group members (members that
//! outlive the SIGTERM are not chased), and no subreapers (no supervisor).

/// Commands never run under the supervisor here.
pub(crate) const SUPERVISOR: bool = false;

#[cfg(test)]
thread_local! {
    /// As on Linux; without pidfds the waiter thread is used anyway.
    pub(crate) static FORCE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Nothing to do: `/proc/<pid>/environ` and non-dumpable processes are
/// Linux's. (macOS shows a process's environment to its user through
/// `sysctl(KERN_PROCARGS2)`, and nothing a process can do prevents it.)
pub(crate) fn protect_host() {}

/// No pidfds: the caller falls back to a thread. (Generic over the
/// descriptor type, which is each system's own.)
#[cfg(unix)]
pub(crate) fn pidfd_open<Fd>(_pid: u32) -> Option<Fd> {
    None
}

/// There is no cheap way to ask; members that outlive the SIGTERM are not
/// chased. (macOS lists the group, Windows asks its job instead.)
#[cfg(all(unix, not(target_os = "macos")))]
pub(crate) fn group_has_live_members(_pgid: u32) -> bool {
    false
}
