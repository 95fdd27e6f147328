//! POSIX: children start through `posix_spawn` as the leaders of their own
//! groups, groups are signalled with `killpg`, exits are seen with
//! `waitid(WNOWAIT)` and leaders reaped with `waitpid`.
//!
//! Exit detection works without SIGCHLD and without reaping: libuv owns
//! SIGCHLD in a Node process and resets it when its last child closes, so
//! nothing here depends on that signal. The exit is seen first (a readable
//! pidfd where the system has them, or a blocking `waitid(WNOWAIT)` on a
//! dedicated thread) and the leader is reaped only after its group was dealt
//! with; only our own pid is ever waited for, so Node's children are never
//! reaped here.
//!
//! Spawning: `std::process::Command` uses `posix_spawn` (flat cost however large
//! the Node heap is) as long as nothing forces fork: no `pre_exec`, no uid/gid,
//! and an absolute program path. `process_group(0)` does not force fork.
//! `tokio::process` is not used: its fallback waits on SIGCHLD, which libuv
//! takes over.

use std::ffi::CStr;
use std::fs::{DirBuilder, Metadata, OpenOptions};
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;

use tokio::io::unix::AsyncFd;
use tokio::sync::oneshot;

#[cfg(not(target_os = "linux"))]
use super::generic::pidfd_open;
#[cfg(target_os = "linux")]
use super::linux::pidfd_open;
use super::{Leader, SpawnRequest};
use crate::limits::rlimits;
use crate::process::exit::{Exit, Signal};

/// An owned descriptor: a pipe end or a pidfd.
pub(crate) type Fd = OwnedFd;

/// The read end of a pipe, registered with the runtime.
pub(crate) type PipeReader = tokio::net::unix::pipe::Receiver;

/// The write end of a pipe, registered with the runtime.
pub(crate) type PipeWriter = tokio::net::unix::pipe::Sender;

/// The OS errors program lookup and the workdir check report.
pub(crate) const NOT_FOUND: i32 = libc::ENOENT;
/// A file found but not executable.
pub(crate) const DENIED: i32 = libc::EACCES;
/// A workdir that is not a directory.
pub(crate) const NOT_A_DIRECTORY: i32 = libc::ENOTDIR;

/// Process control works here.
pub(crate) fn supported() -> io::Result<()> {
    Ok(())
}

/// Commands can run on a pseudo-terminal.
pub(crate) fn terminals() -> Result<(), &'static str> {
    Ok(())
}

/// Starts `program args…` (an absolute path) as the leader of a new process
/// group with exactly `env`, in `cwd`, its standard streams as `stdio` says;
/// on a terminal, as the leader of a new session whose controlling terminal
/// is the slave, on 0–2.
pub(crate) fn spawn_leader(request: &SpawnRequest) -> io::Result<Leader> {
    let SpawnRequest { program, args, env, cwd, stdio, limits, .. } = *request;
    // No cgroup here: memory is a per-process limit too.
    let resource_limits = rlimits::resource_limits(limits, false);
    let limit = |command: &mut Command| {
        if !resource_limits.is_empty() {
            let calls = resource_limits.clone();
            // SAFETY: the closure runs in the child between fork and exec and
            // makes only async-signal-safe calls (getrlimit, setrlimit).
            unsafe { command.pre_exec(move || rlimits::apply(&calls)) };
        }
    };
    if let Some(size) = stdio.terminal {
        let pty = crate::process::terminal::open(size)?;
        let slave = || pty.slave.try_clone().map(Stdio::from);
        let mut command = Command::new(program);
        command.args(args).env_clear().envs(env.iter().map(|(key, value)| (key, value))).current_dir(cwd);
        command.stdin(slave()?).stdout(slave()?).stderr(slave()?);
        // SAFETY: the closure runs in the child between fork and exec and
        // makes only async-signal-safe calls (setsid, ioctl).
        unsafe { command.pre_exec(crate::process::terminal::become_session_leader_on_stdin) };
        limit(&mut command);
        let child = command.spawn()?;
        let terminal = Some(pty.master);
        return Ok(Leader { pid: child.id(), stdout: None, stderr: None, stdin: None, terminal, terminal_input: None });
    }
    let output = |inherit: bool| if inherit { Stdio::inherit() } else { Stdio::piped() };
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(key, value)| (key, value)))
        .current_dir(cwd)
        .process_group(0)
        .stdin(if stdio.stdin_piped { Stdio::piped() } else { Stdio::null() })
        .stdout(output(stdio.stdout_inherited))
        .stderr(output(stdio.stderr_inherited));
    limit(&mut command);
    let mut child = command.spawn()?;
    Ok(Leader {
        pid: child.id(),
        stdout: child.stdout.take().map(OwnedFd::from),
        stderr: child.stderr.take().map(OwnedFd::from),
        stdin: child.stdin.take().map(OwnedFd::from),
        terminal: None,
        terminal_input: None,
    })
}

/// Signals every process in the group. ESRCH (nothing left but a zombie) and
/// EPERM (a member changed its credentials) leave nothing to do.
pub(crate) fn signal_group(pgid: u32, signal: Signal) {
    // SAFETY: killpg has no memory effects; the pgid is our unreaped child's pid.
    unsafe { libc::killpg(pgid as libc::pid_t, number(signal)) };
}

fn number(signal: Signal) -> libc::c_int {
    match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    }
}

/// Waits for one child's exit.
pub(crate) enum ExitWatch {
    /// The pidfd turns readable when the process exits.
    Pidfd { pid: i32, fd: AsyncFd<OwnedFd> },
    /// Without a pidfd (other systems, or `pidfd_open` failed): a thread
    /// blocked in `waitid`.
    Thread(oneshot::Receiver<Exit>),
    /// A command under the supervisor: its reaper's socket turns readable
    /// when the reaper reports (see `supervisor.rs`).
    Link(AsyncFd<super::supervisor::Link>),
}

impl ExitWatch {
    /// Watches `pid`, which must be our unreaped child. Needs a tokio runtime.
    pub(crate) fn new(pid: u32) -> io::Result<Self> {
        if let Some(fd) = pidfd_open(pid) {
            return Self::from_pidfd(pid, fd);
        }
        let (tx, rx) = oneshot::channel();
        thread::Builder::new().name(format!("dsh-wait-{pid}")).stack_size(64 * 1024).spawn(move || {
            // The receiver is gone only when the supervising task was dropped.
            let _ = tx.send(wait_exit(pid));
        })?;
        Ok(Self::Thread(rx))
    }

    /// Watches `pid` through its pidfd `fd`. Needs a tokio runtime.
    pub(crate) fn from_pidfd(pid: u32, fd: OwnedFd) -> io::Result<Self> {
        Ok(Self::Pidfd { pid: pid as i32, fd: readable(fd)? })
    }

    /// Watches a supervised command through its reaper's socket. Needs a
    /// tokio runtime.
    pub(crate) fn from_link(link: super::supervisor::Link) -> io::Result<Self> {
        // SAFETY: the link keeps the descriptor open for the AsyncFd's lifetime.
        let registered = unsafe { AsyncFd::register_with_interest(link, tokio::io::Interest::READABLE) };
        Ok(Self::Link(registered.map_err(|error| error.into_parts().1)?))
    }

    /// Resolves once the leader has exited; it stays unreaped. Cancel safe.
    pub(crate) async fn exited(&mut self) -> Exit {
        match self {
            Self::Pidfd { pid, fd } => loop {
                let Ok(mut ready) = fd.readable().await else {
                    return Exit::UNKNOWN;
                };
                match waitid(*pid, true) {
                    Ok(Some(exit)) => return exit,
                    Ok(None) => ready.clear_ready(),
                    Err(_) => return Exit::UNKNOWN,
                }
            },
            Self::Thread(rx) => rx.await.unwrap_or(Exit::UNKNOWN),
            Self::Link(fd) => loop {
                let Ok(mut ready) = fd.readable().await else {
                    return Exit::UNKNOWN;
                };
                match super::supervisor::read_exit(fd.get_ref(), true) {
                    Ok(Some(exit)) => return exit,
                    Ok(None) => ready.clear_ready(),
                    Err(_) => return Exit::UNKNOWN,
                }
            },
        }
    }
}

/// Registers `fd` with the runtime for readability.
fn readable(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the OwnedFd keeps the descriptor open for the AsyncFd's lifetime.
    unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.map_err(|error| error.into_parts().1)
}

/// Blocks until `pid` has exited; it stays unreaped.
pub(crate) fn wait_exit(pid: u32) -> Exit {
    waitid(pid as i32, false).ok().flatten().unwrap_or(Exit::UNKNOWN)
}

/// Waits for `pid` to exit without reaping it (`WNOWAIT`). With `poll`, returns
/// `None` at once when it is still running.
fn waitid(pid: i32, poll: bool) -> io::Result<Option<Exit>> {
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
            Exit { code: Some(status), signal: None, ..Exit::UNKNOWN }
        } else {
            Exit { code: None, signal: Some(signal_name(status)), ..Exit::UNKNOWN }
        }));
    }
}

/// Resolves when the group led by `pgid` may have lost its last member: no
/// system here tells, so after a short wait, and the caller looks again.
pub(crate) async fn group_may_be_empty(_pgid: u32) {
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
}

/// Reaps `pid`, which has exited. ECHILD (already reaped elsewhere) is fine.
pub(crate) fn reap(pid: u32) {
    let pid = pid as libc::pid_t;
    let mut status = 0;
    // SAFETY: waits for our own child only; `status` is a valid out pointer.
    while unsafe { libc::waitpid(pid, &mut status, 0) } == -1
        && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    {}
}

impl Exit {
    /// The exit a `waitpid` status stands for. (Only the supervisor's
    /// reports are read this way.)
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn from_wait_status(status: i32) -> Self {
        if libc::WIFEXITED(status) {
            Exit { code: Some(libc::WEXITSTATUS(status)), ..Exit::UNKNOWN }
        } else if libc::WIFSIGNALED(status) {
            Exit { signal: Some(signal_name(libc::WTERMSIG(status))), ..Exit::UNKNOWN }
        } else {
            Exit::UNKNOWN
        }
    }
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

/// Registers a pipe's read end with the runtime (inside its context).
pub(crate) fn async_reader(fd: Fd) -> io::Result<PipeReader> {
    PipeReader::from_owned_fd(fd)
}

/// Registers a pipe's write end with the runtime (inside its context).
pub(crate) fn async_writer(fd: Fd) -> io::Result<PipeWriter> {
    PipeWriter::from_owned_fd(fd)
}

/// Runs `hook` when the host exits in order (`atexit`).
pub(crate) fn at_host_exit(hook: extern "C" fn()) {
    // SAFETY: registers a plain `extern "C" fn`; failure only means no hook.
    unsafe { libc::atexit(hook) };
}

/// The file holding this crate's code: the shared object or executable it is
/// linked into.
pub(crate) fn loaded_from() -> Option<PathBuf> {
    let mut info = MaybeUninit::<libc::Dl_info>::zeroed();
    // SAFETY: dladdr only reads the loader's tables for an address of our own
    // code and fills `info`; `dli_fname` then points to a NUL-terminated path
    // the loader owns for as long as the object stays loaded, and it is copied
    // at once.
    unsafe {
        if libc::dladdr(loaded_from as *const libc::c_void, info.as_mut_ptr()) == 0 {
            return None;
        }
        let name = info.assume_init().dli_fname;
        if name.is_null() {
            return None;
        }
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(CStr::from_ptr(name).to_bytes()));
        // An executable may be reported by the name it was started with.
        std::fs::canonicalize(path).ok()
    }
}

/// `Ok` when this process may execute the regular file `path`, else the errno
/// `execve` would give.
pub(crate) fn may_execute(path: &Path) -> Result<(), i32> {
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| libc::ENOENT)?;
    // SAFETY: a valid NUL-terminated path; access only reads it.
    if unsafe { libc::access(path.as_ptr(), libc::X_OK) } != 0 {
        return Err(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EACCES));
    }
    Ok(())
}

/// A directory made by `builder` is this user's alone (0700).
pub(crate) fn owner_only_dir(builder: &mut DirBuilder) {
    builder.mode(0o700);
}

/// A file made by `options` is this user's alone (0600).
pub(crate) fn owner_only_file(options: &mut OpenOptions) {
    options.mode(0o600);
}

/// An open by `options` never waits and never follows a final symlink: a
/// FIFO opens at once (`O_NONBLOCK`), a link fails (`O_NOFOLLOW`), and a
/// terminal does not become the host's (`O_NOCTTY`). For files another
/// process of this user, a command, may have put in place.
pub(crate) fn never_blocking_open(options: &mut OpenOptions) {
    options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY);
}

/// What a file that is neither a regular file, a directory nor a symlink is.
pub(crate) fn special_file_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "a special file"
    }
}

/// Nothing more to do: [`owner_only_dir`] made the directory 0700.
pub(crate) fn restrict_to_owner(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// Whether `meta` is of a file this process's (effective) user owns.
pub(crate) fn owned_by_this_user(meta: &Metadata) -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    meta.uid() == unsafe { libc::geteuid() }
}
