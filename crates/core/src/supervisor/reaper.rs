//! A command's reaper: the child the supervisor forks for each command. It
//! leads the command's process group, is a child subreaper (so every
//! descendant of the command that leaves the group or double-forks is
//! orphaned to it, not to init), starts the command, and reports to the host
//! over the command's link.
//!
//! Invariants (what the host relies on):
//! - it exits only when it has no child left, so at that moment no
//!   descendant of the command runs; it exits as the command did (the same
//!   code, or by the same signal), and the supervisor reports that status to
//!   the host once it reaped this process. Only when the supervisor is gone
//!   does it report `Exited` itself, marked lost;
//! - after the command exits, whatever is left gets SIGTERM (and SIGCONT, so
//!   that a stopped process sees it), and SIGKILL after the grace;
//! - SIGUSR1 (the host's kill, through the supervisor) SIGKILLs every
//!   descendant, and keeps doing so until none is left: a command that forks
//!   faster than one sweep is swept again, never abandoned;
//! - SIGTERM (followed by SIGCONT), SIGINT, SIGHUP and SIGQUIT are passed on to
//!   every descendant: the host's SIGTERM goes to this process alone, so a
//!   command started after the signal arrived still gets it;
//! - the host gone (its end of the link closed) or the supervisor gone
//!   (`PR_SET_PDEATHSIG`, sound because the supervisor is single-threaded)
//!   kills every descendant as SIGUSR1 does;
//! - no descriptor but the command's stdio reaches the command, and this
//!   process holds none of the command's pipes once it runs;
//! - in the cgroup tier the command is born in its own leaf, and a kill is
//!   also a write to the leaf's `cgroup.kill`.

use std::ffi::CString;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::ptr;
use std::time::{Duration, Instant};

use super::cgroup::{clone_into, Leaf};
use super::protocol::{LaunchSpec, Report, CHUNK};
use super::{descriptors, signals, socket, tree};

/// The signals a reaper handles itself, through a signalfd.
const HANDLED: [libc::c_int; 7] =
    [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2];

/// The job-control signals a reaper ignores, so that a command stopping its
/// own group (`kill -TSTP 0`) does not stop the reaper; its command gets the
/// default action back.
const IGNORED: [libc::c_int; 3] = [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU];

/// How long a killing reaper waits for a child to change before it looks again.
const KILL_RESCAN: Duration = Duration::from_millis(1);

/// What the supervisor hands the reaper it forked.
pub(crate) struct Assignment {
    /// The command's link to the host.
    pub(crate) link: OwnedFd,
    /// The command's stdin, stdout and stderr.
    pub(crate) stdio: [OwnedFd; 3],
    /// The command's cgroup leaf, in the cgroup tier.
    pub(crate) leaf: Option<Leaf>,
    /// The supervisor's pid, to tell whether it died before the death signal
    /// was set.
    pub(crate) supervisor: libc::pid_t,
}

/// Runs the command of `assignment` to its end, in the child the supervisor
/// just forked; never returns.
pub(crate) fn run(assignment: Assignment) -> ! {
    let Assignment { link, stdio, leaf, supervisor } = assignment;
    // SAFETY: plain syscalls on this process; `setpgid(0, 0)` makes it the
    // leader of a new group.
    unsafe {
        libc::setpgid(0, 0);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR2, 0, 0, 0);
        // The supervisor died before the death signal was set: nothing started.
        if libc::getppid() != supervisor {
            libc::_exit(0);
        }
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        for signal in IGNORED {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    let signal_fd = match signals::watch(&HANDLED) {
        Ok(fd) => fd,
        Err(error) => fail(&link, &error),
    };
    descriptors::release_stdio();
    // Whatever the supervisor held stays out of the command.
    descriptors::all_close_on_exec();
    let Some(spec) = read_spec(&link) else { exit_quietly() };
    let child = match start(&spec, &stdio, leaf.as_ref()) {
        Ok(child) => child,
        Err(error) => fail(&link, &error),
    };
    drop(stdio);
    // SAFETY: getpid cannot fail.
    let me = unsafe { libc::getpid() };
    let _ = socket::send(&link, &Report::Started { pid: me as u32 }.encode(), &[], false);
    let grace = Duration::from_millis(spec.grace_ms);
    Reaper { me, child, grace, signal_fd, link, leaf, status: None, left_behind: false, term_due: None, killing: false, lost: false }
        .run()
}

/// Reports a command that could not start, and exits.
fn fail(link: &OwnedFd, error: &io::Error) -> ! {
    let errno = error.raw_os_error().unwrap_or(libc::EIO);
    let _ = socket::send(link, &Report::Failed { errno }.encode(), &[], false);
    exit_quietly()
}

fn exit_quietly() -> ! {
    // SAFETY: ends this process; nothing of Rust's needs to run.
    unsafe { libc::_exit(0) }
}

/// Reads the launch spec the host sends on the link: packets until the
/// announced length. `None` when the host went away or sent nonsense.
fn read_spec(link: &OwnedFd) -> Option<LaunchSpec> {
    let mut buf = vec![0; CHUNK];
    let mut bytes = Vec::new();
    loop {
        let (len, _) = socket::receive(link.as_raw_fd(), &mut buf, false).ok()??;
        bytes.extend_from_slice(&buf[..len]);
        let whole = LaunchSpec::announced_len(&bytes)?;
        if bytes.len() >= whole {
            return LaunchSpec::decode(&bytes);
        }
    }
}

/// Starts the command as this process's child: in the spec's directory, with
/// its environment, its stdio on 0–2, the default action for every signal
/// handled or ignored here and an empty signal mask; born in `leaf` when
/// there is one. Fails with the errno of `chdir` or `execve`.
fn start(spec: &LaunchSpec, stdio: &[OwnedFd; 3], leaf: Option<&Leaf>) -> io::Result<libc::pid_t> {
    let cstring = |bytes: &[u8]| CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL));
    let program = cstring(&spec.program)?;
    let cwd = cstring(&spec.cwd)?;
    let argv = spec.argv.iter().map(|arg| cstring(arg)).collect::<io::Result<Vec<_>>>()?;
    let env = spec.env.iter().map(|entry| cstring(entry)).collect::<io::Result<Vec<_>>>()?;
    let pointers = |list: &[CString]| list.iter().map(|item| item.as_ptr()).chain([ptr::null()]).collect::<Vec<_>>();
    let (argv_ptrs, env_ptrs) = (pointers(&argv), pointers(&env));
    // SAFETY: chdir with a valid path; this process runs nothing else that
    // depends on its directory.
    if unsafe { libc::chdir(cwd.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let (report_read, report_write) = descriptors::cloexec_pipe()?;
    let fds = [stdio[0].as_raw_fd(), stdio[1].as_raw_fd(), stdio[2].as_raw_fd()];
    // SAFETY: this process is single-threaded (the supervisor forked it and
    // it started no thread), so the child may run anything; it runs only
    // `exec_child`, which never returns.
    let pid = unsafe { clone_into(leaf.map(|leaf| &leaf.fd))? };
    if pid == 0 {
        exec_child(&program, &argv_ptrs, &env_ptrs, fds, report_write.as_raw_fd());
    }
    drop(report_write);
    // The child writes its errno here only if exec failed; a successful exec
    // closes the pipe (close-on-exec) with nothing written.
    let mut errno = [0u8; 4];
    // SAFETY: reads at most 4 bytes into a 4-byte buffer.
    let read = loop {
        let read = unsafe { libc::read(report_read.as_raw_fd(), errno.as_mut_ptr().cast(), 4) };
        if read >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break read;
        }
    };
    if read == 4 {
        let mut status = 0;
        // SAFETY: reaps the child that failed to exec.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
    }
    Ok(pid)
}

/// In the new child: stdio onto 0–2, signals back to their defaults, then
/// `execve`; on failure the errno goes to `report` and the child exits 127.
fn exec_child(program: &CString, argv: &[*const libc::c_char], env: &[*const libc::c_char], stdio: [RawFd; 3], report: RawFd) -> ! {
    // SAFETY: only async-signal-safe calls on descriptors and signal state
    // of this new process; the pointers are NUL-terminated arrays of
    // NUL-terminated strings that live until exec.
    unsafe {
        // Move the sources above 2 first, so that no dup2 overwrites one still needed.
        let mut moved = stdio;
        for fd in &mut moved {
            if *fd <= 2 {
                *fd = libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 3);
            }
        }
        for (target, fd) in moved.into_iter().enumerate() {
            libc::dup2(fd, target as libc::c_int);
        }
        for signal in HANDLED.into_iter().chain(IGNORED).chain([libc::SIGPIPE]) {
            libc::signal(signal, libc::SIG_DFL);
        }
        let mut empty = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(empty.as_mut_ptr());
        libc::sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), ptr::null_mut());
        libc::execve(program.as_ptr(), argv.as_ptr(), env.as_ptr());
        let errno = *libc::__errno_location();
        libc::write(report, (&errno as *const i32).cast(), 4);
        libc::_exit(127)
    }
}

struct Reaper {
    me: libc::pid_t,
    child: libc::pid_t,
    grace: Duration,
    signal_fd: OwnedFd,
    link: OwnedFd,
    leaf: Option<Leaf>,
    /// The command's wait status, once it exited.
    status: Option<libc::c_int>,
    /// What the command left behind got its SIGTERM.
    left_behind: bool,
    /// When what is left after the command's exit gets SIGKILL.
    term_due: Option<Instant>,
    /// Every descendant is being SIGKILLed.
    killing: bool,
    /// The supervisor died.
    lost: bool,
}

impl Reaper {
    fn run(mut self) -> ! {
        loop {
            let children_left = self.reap_all();
            if let Some(status) = self.status {
                if !children_left {
                    // No child left, so no descendant either: they are orphaned to us.
                    self.exit(status);
                }
                if !self.left_behind {
                    self.left_behind = true;
                    self.after_exit();
                }
            }
            if self.term_due.is_some_and(|due| Instant::now() >= due) {
                self.killing = true;
            }
            let mut found = 0;
            if self.killing {
                if let Some(leaf) = &self.leaf {
                    leaf.kill();
                }
                found = tree::signal_descendants(self.me, &[libc::SIGKILL]);
            }
            let timeout = match (self.killing, found) {
                // Something was just killed: reap it and sweep again at once.
                (true, 1..) => Some(Duration::ZERO),
                (true, 0) => Some(KILL_RESCAN),
                (false, _) => self.term_due.map(|due| due.saturating_duration_since(Instant::now())),
            };
            self.wait(timeout);
        }
    }

    /// Reaps every exited child. Returns whether a child is left.
    fn reap_all(&mut self) -> bool {
        loop {
            let mut status = 0;
            // SAFETY: waits for any child of ours, without blocking.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid == 0 {
                return true;
            }
            if pid < 0 {
                match io::Error::last_os_error().raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // ECHILD: nothing left.
                    _ => return false,
                }
            }
            if pid == self.child && self.status.is_none() {
                self.status = Some(status);
            }
        }
    }

    /// The command exited: SIGTERM to what it left behind, SIGKILL after
    /// the grace. Nothing to do when it left nothing.
    fn after_exit(&mut self) {
        if tree::signal_descendants(self.me, &[libc::SIGTERM, libc::SIGCONT]) > 0 {
            self.term_due = Some(Instant::now() + self.grace);
        }
    }

    /// Waits up to `timeout` (forever for `None`) for a signal or for the
    /// host to go, and acts on what came.
    fn wait(&mut self, timeout: Option<Duration>) {
        let millis = timeout.map_or(-1, |timeout| timeout.as_millis().min(i32::MAX as u128) as libc::c_int);
        let mut polls = [
            libc::pollfd { fd: self.signal_fd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.link.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: two valid pollfds.
        if unsafe { libc::poll(polls.as_mut_ptr(), 2, millis) } <= 0 {
            return;
        }
        if polls[1].revents != 0 {
            let mut buf = [0; 16];
            // The host sends nothing after the spec: anything readable is its end.
            if !matches!(socket::receive(self.link.as_raw_fd(), &mut buf, true), Ok(Some(_))) {
                self.killing = true;
            }
        }
        while let Some(signal) = signals::next(&self.signal_fd) {
            self.on_signal(signal);
        }
    }

    fn on_signal(&mut self, signal: libc::c_int) {
        match signal {
            libc::SIGCHLD => {}
            libc::SIGUSR1 => self.killing = true,
            libc::SIGUSR2 => {
                self.killing = true;
                self.lost = true;
            }
            _ => {
                let signals: &[libc::c_int] =
                    if signal == libc::SIGTERM { &[libc::SIGTERM, libc::SIGCONT] } else { &[signal] };
                tree::signal_descendants(self.me, signals);
            }
        }
    }

    /// Nothing is left: exits as the command did, for the supervisor to
    /// report; without a supervisor, reports itself.
    fn exit(&self, status: libc::c_int) -> ! {
        if self.lost {
            let _ = socket::send(&self.link, &Report::Exited { status, lost: true }.encode(), &[], false);
        }
        exit_as(status)
    }
}

/// Exits as a process with wait status `status` did: with its code, or by
/// its signal (without a core dump).
fn exit_as(status: libc::c_int) -> ! {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        // SAFETY: resets one disposition, disables core files, unblocks and
        // raises the signal; all plain syscalls.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            let mut set = MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(set.as_mut_ptr());
            libc::sigaddset(set.as_mut_ptr(), signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, set.as_ptr(), ptr::null_mut());
            libc::raise(signal);
            libc::_exit(128 + signal)
        }
    }
    // SAFETY: ends this process; nothing of Rust's needs to run.
    unsafe { libc::_exit(if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 1 }) }
}
