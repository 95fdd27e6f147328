//! What the supervisor and a reaper do with their own descriptors.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

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

/// Marks every descriptor above 2 close-on-exec, so that nothing this
/// process holds reaches the command it executes.
pub(crate) fn all_close_on_exec() {
    // SAFETY: close_range only changes descriptor flags of this process.
    let done = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) } == 0;
    if done {
        return;
    }
    // Before Linux 5.11: one by one.
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return };
    let fds: Vec<i32> = entries.flatten().filter_map(|entry| entry.file_name().to_str()?.parse().ok()).collect();
    for fd in fds.into_iter().filter(|&fd| fd > 2) {
        // SAFETY: sets a flag on a descriptor of this process (or fails for
        // the directory's own, already closed).
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// A pipe with both ends close-on-exec: (read, write).
pub(crate) fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just created and are owned here alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}
