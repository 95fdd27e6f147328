//! What the supervisor and a reaper do with their own descriptors.

/// Points stdin, stdout and stderr at `/dev/null`: the supervisor's stdin
/// is its socket, which a reaper must not hold, and neither holds a pipe of
/// a command's.
pub(crate) fn release_stdio() {
    // SAFETY: opens a new descriptor and duplicates it over 0, 1 and 2.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            libc::close(null);
        }
    }
}

/// Closes every descriptor from `first` on.
pub(crate) fn close_from(first: libc::c_int) {
    // SAFETY: close_range only closes descriptors of this process.
    let done = unsafe { libc::syscall(libc::SYS_close_range, first as u32, u32::MAX, 0) } == 0;
    if done {
        return;
    }
    // Before Linux 5.9: one by one.
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return };
    let fds: Vec<i32> = entries.flatten().filter_map(|entry| entry.file_name().to_str()?.parse().ok()).collect();
    for fd in fds.into_iter().filter(|&fd| fd >= first) {
        // SAFETY: closes a descriptor of this process that nothing here uses
        // (or the directory's own, already closed).
        unsafe { libc::close(fd) };
    }
}
