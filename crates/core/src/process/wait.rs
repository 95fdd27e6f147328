//! Exit detection without SIGCHLD and without reaping.
//!
//! libuv owns SIGCHLD in a Node process and resets it when its last child
//! closes, so nothing here depends on that signal. The exit is seen first (a
//! readable pidfd, or a blocking `waitid(WNOWAIT)` on a dedicated thread) and
//! the leader is reaped only after its group was dealt with; only our own pid is
//! ever waited for, so Node's children are never reaped here.

use std::io;
use std::mem::MaybeUninit;
use std::thread;

use tokio::sync::oneshot;

use super::group::Exit;

/// Waits for one child's exit.
pub(super) enum ExitWatch {
    /// Linux: the pidfd turns readable when the process exits.
    #[cfg(target_os = "linux")]
    Pidfd { pid: i32, fd: tokio::io::unix::AsyncFd<std::os::fd::OwnedFd> },
    /// Elsewhere, or when `pidfd_open` fails: a thread blocked in `waitid`.
    Thread(oneshot::Receiver<Exit>),
    /// The exit was already seen (by a reactor, before it handed the process on).
    Exited(Exit),
}

#[cfg(test)]
thread_local! {
    /// Makes [`ExitWatch::new`] on this thread use the waiter thread, so tests
    /// cover the fallback without strace.
    pub(super) static FORCE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl ExitWatch {
    /// Watches `pid`, which must be our unreaped child. Needs a tokio runtime.
    pub(super) fn new(pid: u32) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        if let Some(fd) = pidfd_open(pid) {
            return Self::from_pidfd(pid, fd);
        }
        let (tx, rx) = oneshot::channel();
        thread::Builder::new().name(format!("dsh-wait-{pid}")).stack_size(64 * 1024).spawn(move || {
            // The receiver is gone only when the supervising task was dropped.
            let _ = tx.send(wait_blocking(pid));
        })?;
        Ok(Self::Thread(rx))
    }

    /// Watches `pid` through its pidfd `fd`. Needs a tokio runtime.
    #[cfg(target_os = "linux")]
    pub(super) fn from_pidfd(pid: u32, fd: std::os::fd::OwnedFd) -> io::Result<Self> {
        // SAFETY: the OwnedFd keeps the pidfd open for the AsyncFd's lifetime.
        let fd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
            .map_err(|error| error.into_parts().1)?;
        Ok(Self::Pidfd { pid: pid as i32, fd })
    }

    /// Resolves once the leader has exited; it stays unreaped. Cancel safe.
    pub(super) async fn exited(&mut self) -> Exit {
        match self {
            #[cfg(target_os = "linux")]
            Self::Pidfd { pid, fd } => loop {
                let Ok(mut ready) = fd.readable().await else {
                    return Exit::UNKNOWN;
                };
                match wait_exit(*pid, true) {
                    Ok(Some(exit)) => return exit,
                    Ok(None) => ready.clear_ready(),
                    Err(_) => return Exit::UNKNOWN,
                }
            },
            Self::Thread(rx) => rx.await.unwrap_or(Exit::UNKNOWN),
            Self::Exited(exit) => *exit,
        }
    }
}

/// Blocks until `pid` has exited; it stays unreaped.
pub(super) fn wait_blocking(pid: u32) -> Exit {
    wait_exit(pid as i32, false).ok().flatten().unwrap_or(Exit::UNKNOWN)
}

/// `pidfd_open(pid, 0)`, or `None` where it is unavailable (ENOSYS on old
/// kernels, EPERM under seccomp, …): the caller falls back to the thread.
#[cfg(target_os = "linux")]
pub(super) fn pidfd_open(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;

    #[cfg(test)]
    if FORCE_THREAD.get() {
        return None;
    }
    // SAFETY: a plain syscall; on success it returns a new fd we now own
    // (always close-on-exec).
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a non-negative result is that new descriptor, owned by no one else.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Waits for `pid` to exit without reaping it (`WNOWAIT`). With `poll`, returns
/// `None` at once when it is still running.
pub(super) fn wait_exit(pid: i32, poll: bool) -> io::Result<Option<Exit>> {
    let flags = libc::WEXITED | libc::WNOWAIT | if poll { libc::WNOHANG } else { 0 };
    loop {
        let mut info = MaybeUninit::<libc::siginfo_t>::zeroed();
        // SAFETY: `info` is a valid, zeroed siginfo_t for the kernel to fill.
        if unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, info.as_mut_ptr(), flags) } == -1 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        // SAFETY: zeroed, then possibly filled by waitid.
        let info = unsafe { info.assume_init() };
        // SAFETY: after waitid these union fields hold the child's status.
        let (child, status) = unsafe { (info.si_pid(), info.si_status()) };
        // WNOHANG with nothing to report leaves si_pid zero.
        if poll && child == 0 {
            return Ok(None);
        }
        return Ok(Some(if info.si_code == libc::CLD_EXITED {
            Exit { code: Some(status), signal: None }
        } else {
            Exit { code: None, signal: Some(signal_name(status)) }
        }));
    }
}

/// Reaps `pid`, which has exited. ECHILD (already reaped elsewhere) is fine.
pub(super) fn reap(pid: u32) {
    let pid = pid as libc::pid_t;
    let mut status = 0;
    // SAFETY: waits for our own child only; `status` is a valid out pointer.
    while unsafe { libc::waitpid(pid, &mut status, 0) } == -1
        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    {}
}

/// The conventional name of a signal number, as Node spells it.
fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGSYS => "SIGSYS",
        #[cfg(any(target_os = "linux", target_os = "android"))]
        libc::SIGSTKFLT => "SIGSTKFLT",
        #[cfg(any(target_os = "linux", target_os = "android"))]
        libc::SIGPWR => "SIGPWR",
        // Real-time signals have no fixed names.
        _ => "SIGUNKNOWN",
    }
}
