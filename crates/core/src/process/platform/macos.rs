//! What macOS adds: listing a process group's members (`proc_listpgrppids`),
//! so members that outlive their leader's SIGTERM are found and get SIGKILL
//! when the grace ends, as on Linux. macOS has no child subreaper, so a
//! descendant that leaves the group is out of reach (an orphan goes to
//! launchd).

/// Whether a process other than the (exited, unreaped) leader is in the
/// group `pgid`. Where the list cannot be read, the answer is no, as on
/// systems without such a list.
pub(crate) fn group_has_live_members(pgid: u32) -> bool {
    let Ok(group) = libc::pid_t::try_from(pgid) else { return false };
    let mut pids = vec![0 as libc::pid_t; 64];
    loop {
        let size = (pids.len() * size_of::<libc::pid_t>()) as libc::c_int;
        // SAFETY: `pids` is writable for `size` bytes; the call fills at most that.
        // It returns a count of pids (libproc divides the bytes it got).
        let filled = unsafe { libc::proc_listpgrppids(group, pids.as_mut_ptr().cast(), size) };
        if filled <= 0 {
            return false;
        }
        let count = (filled as usize).min(pids.len());
        // A full buffer may have been cut short: ask again with room to spare.
        if count == pids.len() && pids.len() < 1 << 16 {
            pids.resize(pids.len() * 4, 0);
            continue;
        }
        return pids[..count].iter().any(|&pid| pid != group && pid > 0);
    }
}
