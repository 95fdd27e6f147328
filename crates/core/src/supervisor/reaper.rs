//! A reaper: a long-lived child of the supervisor that runs the host's
//! commands one at a time. It leads its commands' process group, is a child
//! subreaper (so every descendant of a command that leaves the group or
//! double-forks is orphaned to it, not to init), starts each command the
//! host orders on its socket, and reports to the host on that socket.
//!
//! Invariants (what the host relies on):
//! - it reports `Exited` (the command's own status) only when it has no
//!   child left, so at that moment no descendant of the command runs; only
//!   then does it take the next command, so commands never share it;
//! - while it runs a command, its page shared with the supervisor (`slot`)
//!   names the command: a reaper that dies of a signal (its command killed
//!   it, or it died in its own leaf's `cgroup.kill`) reported nothing, and
//!   the supervisor reports for it once the tree is gone;
//! - after the command exits, whatever is left gets SIGTERM (and SIGCONT, so
//!   that a stopped process sees it), and SIGKILL after the grace;
//! - the host's kill order, and SIGUSR1 (the supervisor's, when the host is
//!   gone), SIGKILL every descendant, and keep doing so until none is left:
//!   a command that forks faster than one sweep is swept again, never
//!   abandoned;
//! - the host's term order, and SIGTERM (followed by SIGCONT), SIGINT,
//!   SIGHUP and SIGQUIT sent to this process, are passed on to every
//!   descendant;
//! - the host gone or done with it (the end of its socket) or the supervisor
//!   gone (`PR_SET_PDEATHSIG`, sound because the supervisor is
//!   single-threaded) kills every descendant as a kill order does, and the
//!   reaper exits once none is left;
//! - no descriptor but the command's stdio reaches the command, and this
//!   process holds none of the command's pipes once it runs;
//! - a command's limits hold from its first instruction: the reaper sets its
//!   leaf's controllers (joining its v1 leaves) before it starts the
//!   command, and the rlimits in its child before `execve`; it reports what
//!   they did (how far the leaf's counters rose, the command's CPU time)
//!   with the command's status, and lifts them before the next command;
//! - in the cgroup tier the reaper lives in its leaf, and so does
//!   everything a command starts; a kill is one write to the leaf's
//!   `cgroup.kill`, which ends the reaper too, after it left the command's
//!   status in its slot if it knew it.

use std::ffi::CString;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr;
use std::time::{Duration, Instant};

use super::cgroup::Leaf;
use super::protocol::{LaunchSpec, Observed, Order, Report, CHUNK, MESSAGE_LEN, START_FDS};
use super::slot::Slot;
use super::{descriptors, signals, socket, tree};
use crate::limits::rlimits::{self, ResourceLimit};
use crate::limits::Limits;

/// The signals a reaper handles itself, through a signalfd.
const HANDLED: [libc::c_int; 7] =
    [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2];

/// The job-control signals a reaper ignores, so that a command stopping its
/// own group (`kill -TSTP 0`) does not stop the reaper; its command gets the
/// default action back.
const IGNORED: [libc::c_int; 3] = [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU];

/// One above the highest signal number (Linux's `_NSIG`).
const SIGNALS: libc::c_int = 65;

/// How long a killing reaper waits for a child to change before it looks again.
const KILL_RESCAN: Duration = Duration::from_millis(1);

/// The most children reaped in one turn: descendants that fork and exit
/// without end keep handing this process zombies, and the turn must still
/// get to killing them.
const REAP_BATCH: usize = 1024;

/// Where a reaper keeps its socket to the host.
const HOST_FD: libc::c_int = 3;

/// What the supervisor gives the reaper it forks.
pub(crate) struct Setup {
    /// The reaper's end of its socket with the host (the supervisor keeps a
    /// copy, and hands the host the other end).
    pub(crate) socket: OwnedFd,
    /// The page it shares with the supervisor.
    pub(crate) slot: Slot,
    /// The cgroup leaf the reaper was born in, in the cgroup tier.
    pub(crate) leaf: Option<Leaf>,
    /// The supervisor's pid, to tell whether it died before the death signal
    /// was set.
    pub(crate) supervisor: libc::pid_t,
    /// The host's descriptor limit, for the commands.
    pub(crate) files: libc::rlimit,
    /// Join the leaf's v1 directories and open its control files now, ahead
    /// of a command with limits.
    pub(crate) join_ahead: bool,
}

/// Runs in the child the supervisor just forked: gets ready, then runs the
/// host's commands one at a time until the host is done with it; never
/// returns.
pub(crate) fn run(setup: Setup) -> ! {
    let Setup { socket, slot, mut leaf, supervisor, files, join_ahead } = setup;
    let socket = keep_only(socket);
    // SAFETY: plain syscalls on this process; `setpgid(0, 0)` makes it the
    // leader of a new group.
    unsafe {
        libc::setpgid(0, 0);
        libc::setrlimit(libc::RLIMIT_NOFILE, &files);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGUSR2, 0, 0, 0);
        // The supervisor died before the death signal was set.
        if libc::getppid() != supervisor {
            libc::_exit(0);
        }
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        for signal in IGNORED {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    let Ok(signal_fd) = signals::watch(&HANDLED) else { exit_quietly() };
    let joined = join_ahead && leaf.as_ref().is_some_and(Leaf::join_ahead);
    if join_ahead {
        // The host uses limits a cgroup holds: their files are opened now, ahead.
        if let Some(leaf) = leaf.as_mut() {
            leaf.open_controls(joined);
        }
    }
    // SAFETY: getpid cannot fail.
    let me = unsafe { libc::getpid() };
    let mut reaper = Reaper { me, socket, signal_fd, slot, leaf, joined, buf: vec![0; CHUNK] };
    loop {
        // The host done with it, the supervisor gone, or nonsense: the end.
        let Some((id, stdio, spec)) = reaper.next_command() else { exit_quietly() };
        if !reaper.serve(id, stdio, spec) {
            exit_quietly();
        }
    }
}

/// Closes every descriptor the supervisor had but `socket`, which moves to
/// [`HOST_FD`] (close-on-exec); stdin, stdout and stderr become `/dev/null`.
fn keep_only(socket: OwnedFd) -> OwnedFd {
    descriptors::release_stdio();
    let fd = socket.as_raw_fd();
    if fd != HOST_FD {
        // SAFETY: dup2 onto a descriptor this process is about to close anyway.
        unsafe { libc::dup2(fd, HOST_FD) };
    }
    // The old number is closed with the rest below.
    std::mem::forget(socket);
    descriptors::close_from(HOST_FD + 1);
    // SAFETY: HOST_FD now holds the socket and nothing else owns it.
    let socket = unsafe { OwnedFd::from_raw_fd(HOST_FD) };
    // SAFETY: sets a flag on a descriptor this process owns.
    unsafe { libc::fcntl(HOST_FD, libc::F_SETFD, libc::FD_CLOEXEC) };
    socket
}

fn exit_quietly() -> ! {
    // SAFETY: ends this process; nothing of Rust's needs to run.
    unsafe { libc::_exit(0) }
}

/// Starts the command as this process's child: in the spec's directory,
/// with its environment, its stdio on 0–2, the default action for every
/// signal and an empty signal mask. In a terminal it leads a new session,
/// whose controlling terminal the slave becomes as the child opens it by its
/// path (without `O_NOCTTY`). Through `posix_spawn`; with resource limits to
/// set, through `clone` and `execve` (see [`start_limited`]). Fails with the
/// errno of `chdir` or of the spawn (`execve`'s included).
fn start(spec: &LaunchSpec, stdio: &[OwnedFd; 3], limits: &[ResourceLimit]) -> io::Result<libc::pid_t> {
    let cstring = |bytes: &[u8]| CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL));
    let program = cstring(&spec.program)?;
    let cwd = cstring(&spec.cwd)?;
    let argv = spec.argv.iter().map(|arg| cstring(arg)).collect::<io::Result<Vec<_>>>()?;
    let env = spec.env.iter().map(|entry| cstring(entry)).collect::<io::Result<Vec<_>>>()?;
    let pointers = |list: &[CString]| {
        list.iter().map(|item| item.as_ptr().cast_mut()).chain([ptr::null_mut()]).collect::<Vec<_>>()
    };
    let (argv_ptrs, env_ptrs) = (pointers(&argv), pointers(&env));
    let terminal = spec.terminal.as_deref().map(cstring).transpose()?;
    // SAFETY: chdir with a valid path; this process runs nothing else that
    // depends on its directory.
    if unsafe { libc::chdir(cwd.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if !limits.is_empty() {
        let exec = Exec { program: &program, argv: &argv_ptrs, env: &env_ptrs, terminal: terminal.as_deref() };
        return start_limited(&exec, stdio, limits);
    }
    let mut pid = 0;
    // SAFETY: the attribute and file-action objects are initialised before
    // use and destroyed after; the sets are initialised by sigemptyset; argv
    // and envp are NUL-terminated arrays of NUL-terminated strings that
    // outlive the call; the stdio descriptors are open (above 2, since 0–2
    // are /dev/null here), so each dup2 leaves the others intact; the
    // terminal's path outlives the call.
    let result = unsafe {
        let mut attr = MaybeUninit::<libc::posix_spawnattr_t>::uninit();
        let mut actions = MaybeUninit::<libc::posix_spawn_file_actions_t>::uninit();
        libc::posix_spawnattr_init(attr.as_mut_ptr());
        libc::posix_spawn_file_actions_init(actions.as_mut_ptr());
        let mut empty = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(empty.as_mut_ptr());
        // Every signal: an ignored one stays ignored across exec, and the
        // host's may ignore more than this process does (Node ignores
        // SIGXFSZ, which would turn a file size limit into EFBIG).
        let mut defaults = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigfillset(defaults.as_mut_ptr());
        libc::posix_spawnattr_setsigmask(attr.as_mut_ptr(), empty.as_ptr());
        libc::posix_spawnattr_setsigdefault(attr.as_mut_ptr(), defaults.as_ptr());
        let mut flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
        if terminal.is_some() {
            flags |= libc::c_int::from(libc::POSIX_SPAWN_SETSID);
        }
        libc::posix_spawnattr_setflags(attr.as_mut_ptr(), flags as libc::c_short);
        for (target, fd) in stdio.iter().enumerate() {
            libc::posix_spawn_file_actions_adddup2(actions.as_mut_ptr(), fd.as_raw_fd(), target as libc::c_int);
        }
        if let Some(path) = &terminal {
            // In the new session, this open makes the slave its controlling
            // terminal; 1 and 2 are the same terminal already.
            libc::posix_spawn_file_actions_addopen(actions.as_mut_ptr(), 0, path.as_ptr(), libc::O_RDWR, 0);
        }
        let result = libc::posix_spawn(
            &mut pid,
            program.as_ptr(),
            actions.as_ptr(),
            attr.as_ptr(),
            argv_ptrs.as_ptr(),
            env_ptrs.as_ptr(),
        );
        libc::posix_spawn_file_actions_destroy(actions.as_mut_ptr());
        libc::posix_spawnattr_destroy(attr.as_mut_ptr());
        result
    };
    if result != 0 {
        return Err(io::Error::from_raw_os_error(result));
    }
    Ok(pid)
}

/// What `execve` is called with, ready before the child is started.
struct Exec<'a> {
    program: &'a CString,
    argv: &'a [*mut libc::c_char],
    env: &'a [*mut libc::c_char],
    terminal: Option<&'a std::ffi::CStr>,
}

/// [`start`] with resource limits, which `posix_spawn` cannot set. As
/// `posix_spawn` does, a child that shares this process's memory runs on a
/// stack of its own (`clone` with `CLONE_VM | CLONE_VFORK`): there it does
/// what `posix_spawn`'s attributes do, sets the limits and calls `execve`.
/// This process stays suspended until the child has exec'd or exited, so the
/// child leaves the errno of a failure in shared memory, and nothing of the
/// page tables is copied (a `fork` here cost the command 50–100 µs).
fn start_limited(exec: &Exec, stdio: &[OwnedFd; 3], limits: &[ResourceLimit]) -> io::Result<libc::pid_t> {
    /// Room for `prepare_child` and `execve`, which allocate nothing.
    const STACK: usize = 64 * 1024;
    let mut stack = vec![0u8; STACK];
    let mut child = Child { exec, stdio, limits, errno: 0 };
    // SAFETY: the stack is STACK bytes owned here, alive until the child has
    // exec'd or exited (CLONE_VFORK suspends this process until then); it
    // grows down, so the child starts at its 16-byte aligned top. This
    // process is single-threaded, so nothing else runs beside the child,
    // which only makes syscalls on memory prepared before the clone.
    let pid = unsafe {
        let top = stack.as_mut_ptr().add(STACK);
        let top = top.sub(top as usize % 16);
        libc::clone(run_child, top.cast(), libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD, (&raw mut child).cast())
    };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    drop(stack);
    if child.errno != 0 {
        let mut status = 0;
        // SAFETY: reaps the child that failed to exec.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        return Err(io::Error::from_raw_os_error(child.errno));
    }
    Ok(pid)
}

/// What the child of [`start_limited`] runs with, and where it leaves the
/// errno of what failed.
struct Child<'a> {
    exec: &'a Exec<'a>,
    stdio: &'a [OwnedFd; 3],
    limits: &'a [ResourceLimit],
    errno: libc::c_int,
}

/// The child of [`start_limited`]: never returns; it ends by `_exit` when
/// `execve`, or what comes before it, failed, with the errno in its [`Child`].
extern "C" fn run_child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the parent's `Child`, alive while the parent is suspended.
    let child = unsafe { &mut *arg.cast::<Child>() };
    let errno = prepare_child(child.exec, child.stdio, child.limits).err().and_then(|error| error.raw_os_error());
    let exec = child.exec;
    child.errno = errno.unwrap_or_else(|| {
        // SAFETY: argv and envp are NUL-terminated arrays of valid strings.
        unsafe { libc::execve(exec.program.as_ptr(), exec.argv.as_ptr().cast(), exec.env.as_ptr().cast()) };
        io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
    });
    // SAFETY: ends the child without running anything of the parent's.
    unsafe { libc::_exit(127) }
}

/// In the child of [`start_limited`]: a session on the terminal or the stdio on 0–2,
/// default signal actions, an empty mask, and the limits.
fn prepare_child(exec: &Exec, stdio: &[OwnedFd; 3], limits: &[ResourceLimit]) -> io::Result<()> {
    let check = |result: libc::c_int| if result < 0 { Err(io::Error::last_os_error()) } else { Ok(()) };
    // SAFETY: syscalls on this child's own descriptors, session and signal
    // state; every pointer is to memory prepared before the fork.
    unsafe {
        if exec.terminal.is_some() {
            check(libc::setsid())?;
        }
        for (target, fd) in stdio.iter().enumerate() {
            // The stdio are above 2 (0–2 are /dev/null here), so each dup2
            // leaves the others intact.
            check(libc::dup2(fd.as_raw_fd(), target as libc::c_int))?;
        }
        if let Some(path) = exec.terminal {
            // In the new session, this open makes the slave its controlling terminal.
            let fd = libc::open(path.as_ptr(), libc::O_RDWR);
            check(fd)?;
            check(libc::dup2(fd, 0))?;
            libc::close(fd);
        }
        // Every signal, as `posix_spawn` does above; SIGKILL, SIGSTOP and
        // the C library's own refuse, which changes nothing.
        for signal in 1..SIGNALS {
            libc::signal(signal, libc::SIG_DFL);
        }
        let mut empty = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(empty.as_mut_ptr());
        libc::sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), ptr::null_mut());
    }
    rlimits::apply(limits)
}

/// The reaper between commands: what it keeps from one to the next.
struct Reaper {
    me: libc::pid_t,
    /// To the host.
    socket: OwnedFd,
    signal_fd: OwnedFd,
    slot: Slot,
    leaf: Option<Leaf>,
    /// It is in its leaf's v1 directories, and their files are open.
    joined: bool,
    /// Room for one packet from the host.
    buf: Vec<u8>,
}

/// One command's run, from its start to its report.
struct Running {
    id: u64,
    child: libc::pid_t,
    grace: Duration,
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
    /// The host is gone, or done with this reaper.
    host_gone: bool,
    /// Milliseconds of CPU the command used, once it exited.
    cpu_ms: Option<u64>,
    /// Processes still running when the command exited (then ended).
    ended_after_exit: u32,
    /// The command's limits: those its leaf holds have their counters reported.
    limits: Limits,
    /// The leaf's counters when the command started.
    baseline: [u64; 2],
}

impl Reaper {
    /// Waits for the host's next start order: the command's number, stdio
    /// and spec. `None` at the end of the socket (the host is gone or done
    /// with this reaper), at the supervisor's death, or on nonsense.
    fn next_command(&mut self) -> Option<(u64, [OwnedFd; 3], LaunchSpec)> {
        loop {
            let mut polls = [
                libc::pollfd { fd: self.signal_fd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: self.socket.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: two valid pollfds.
            if unsafe { libc::poll(polls.as_mut_ptr(), 2, -1) } <= 0 {
                continue;
            }
            while let Some(signal) = signals::next(&self.signal_fd) {
                // The supervisor gone, or leaving (its host is gone).
                if signal == libc::SIGUSR2 || signal == libc::SIGUSR1 {
                    return None;
                }
            }
            if polls[1].revents == 0 {
                continue;
            }
            let (len, fds) = socket::receive(self.socket.as_raw_fd(), &mut self.buf, true).ok()??;
            match Order::decode(&self.buf[..len]) {
                Some(Order::Start { id }) => {
                    let stdio = <[OwnedFd; START_FDS.len()]>::try_from(fds).ok()?;
                    let spec = self.read_spec(len)?;
                    return Some((id, stdio, spec));
                }
                // An order for a command that already ended.
                Some(Order::Term { .. } | Order::Kill { .. }) => {}
                None => return None,
            }
        }
    }

    /// Reads the rest of a launch spec whose start came in the start order
    /// of `first` bytes: packets until the announced length.
    fn read_spec(&mut self, first: usize) -> Option<LaunchSpec> {
        let mut bytes = self.buf[MESSAGE_LEN..first].to_vec();
        loop {
            let whole = LaunchSpec::announced_len(&bytes)?;
            if bytes.len() >= whole {
                return LaunchSpec::decode(&bytes);
            }
            let (len, _) = socket::receive(self.socket.as_raw_fd(), &mut self.buf, false).ok()??;
            bytes.extend_from_slice(&self.buf[..len]);
        }
    }

    /// Runs command `id` to its end and reports it. Returns whether this
    /// reaper may take another.
    fn serve(&mut self, id: u64, stdio: [OwnedFd; 3], spec: LaunchSpec) -> bool {
        let cgroup_limits = spec.limits.needs_cgroup();
        let baseline = match self.leaf.as_ref().filter(|_| cgroup_limits) {
            Some(leaf) => leaf.counters(&spec.limits),
            None => [0, 0],
        };
        // From here a death of this process means the command may have run.
        self.slot.set_command(id, baseline);
        let started = self.start(&spec, &stdio, cgroup_limits);
        drop(stdio);
        let child = match started {
            Ok(child) => child,
            Err(error) => {
                let errno = error.raw_os_error().unwrap_or(libc::EIO);
                self.lift(&spec.limits, cgroup_limits);
                self.slot.set_command(0, [0, 0]);
                return socket::send(&self.socket, &Report::Failed { id, errno }.encode(), &[], false).is_ok();
            }
        };
        let _ = socket::send(&self.socket, &Report::Started { id, command: child as u32 }.encode(), &[], false);
        let mut running = Running {
            id,
            child,
            grace: Duration::from_millis(spec.grace_ms),
            status: None,
            left_behind: false,
            term_due: None,
            killing: false,
            lost: false,
            host_gone: false,
            cpu_ms: None,
            ended_after_exit: 0,
            limits: spec.limits,
            baseline,
        };
        let status = self.run(&mut running);
        let retired = running.lost || running.host_gone;
        let report = Report::Exited { id, status, lost: running.lost, retired, observed: self.observed(&running) };
        // Sent before the slot is cleared: killed in between, this reaper
        // has the supervisor report the command again, which the host
        // ignores; the other way round, the host would hear of no exit.
        let sent = socket::send(&self.socket, &report.encode(), &[], false).is_ok();
        self.slot.set_command(0, [0, 0]);
        self.lift(&running.limits, cgroup_limits);
        sent && !retired
    }

    /// Sets the command's cgroup limits on the leaf (joining its v1
    /// directories the first time) and starts it.
    fn start(&mut self, spec: &LaunchSpec, stdio: &[OwnedFd; 3], cgroup_limits: bool) -> io::Result<libc::pid_t> {
        if let Some(leaf) = self.leaf.as_mut().filter(|_| cgroup_limits) {
            if !self.joined {
                // Every v1 directory of the leaf at once, whatever this
                // command's limits: the next command's may be others, and
                // `joined` says that all were joined. Where that fails,
                // `apply` joins the ones this command needs, each time.
                self.joined = leaf.join_ahead();
                if self.joined {
                    leaf.open_controls(true);
                }
            }
            leaf.apply(&spec.limits, self.joined)?;
        }
        let memory_in_cgroup = self.leaf.as_ref().is_some_and(|leaf| leaf.holds_memory());
        start(spec, stdio, &rlimits::resource_limits(&spec.limits, memory_in_cgroup))
    }

    /// Lifts the cgroup limits a command had, for the next one; a leaf whose
    /// limits cannot be lifted is not used again.
    fn lift(&mut self, limits: &Limits, cgroup_limits: bool) {
        if let Some(leaf) = self.leaf.as_ref().filter(|_| cgroup_limits) {
            if leaf.lift(limits).is_err() {
                exit_quietly();
            }
        }
    }

    /// Runs until the command and every descendant are gone; returns the
    /// command's wait status.
    fn run(&mut self, running: &mut Running) -> libc::c_int {
        loop {
            let children_left = self.reap_some(running);
            if let Some(status) = running.status {
                if !children_left {
                    // No child left, so no descendant either: they are orphaned to us.
                    return status;
                }
                if !running.left_behind {
                    running.left_behind = true;
                    self.after_exit(running);
                }
            }
            if running.term_due.is_some_and(|due| Instant::now() >= due) {
                running.killing = true;
            }
            let mut found = 0;
            if running.killing {
                self.kill_leaf(running);
                found = tree::signal_descendants(self.me, &[libc::SIGKILL]);
            }
            let timeout = match (running.killing, found) {
                // Something was just killed: reap it and sweep again at once.
                (true, 1..) => Some(Duration::ZERO),
                (true, 0) => Some(KILL_RESCAN),
                (false, _) => running.term_due.map(|due| due.saturating_duration_since(Instant::now())),
            };
            self.wait(running, timeout);
        }
    }

    /// Reaps exited children, at most [`REAP_BATCH`]. Returns whether a
    /// child may be left.
    fn reap_some(&self, running: &mut Running) -> bool {
        for _ in 0..REAP_BATCH {
            let mut status = 0;
            let mut usage = MaybeUninit::<libc::rusage>::zeroed();
            // SAFETY: waits for any child of ours, without blocking; `usage`
            // is a valid rusage to fill.
            let pid = unsafe { libc::wait4(-1, &mut status, libc::WNOHANG, usage.as_mut_ptr()) };
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
            if pid == running.child && running.status.is_none() {
                running.status = Some(status);
                // SAFETY: wait4 filled it for the child it returned.
                let usage = unsafe { usage.assume_init() };
                let millis = |time: libc::timeval| time.tv_sec as u64 * 1000 + time.tv_usec as u64 / 1000;
                running.cpu_ms = Some(millis(usage.ru_utime) + millis(usage.ru_stime));
            }
        }
        true
    }

    /// The command exited: SIGTERM to what it left behind, SIGKILL after
    /// the grace. Nothing to do when it left nothing.
    fn after_exit(&self, running: &mut Running) {
        let left = tree::signal_descendants(self.me, &[libc::SIGTERM, libc::SIGCONT]);
        running.ended_after_exit = u32::try_from(left).unwrap_or(u32::MAX);
        if left > 0 {
            // A grace too long to represent never runs out.
            running.term_due = Instant::now().checked_add(running.grace);
        }
    }

    /// Waits up to `timeout` (forever for `None`) for a signal or an order
    /// from the host, and acts on what came.
    fn wait(&mut self, running: &mut Running, timeout: Option<Duration>) {
        let millis = timeout.map_or(-1, |timeout| timeout.as_millis().min(i32::MAX as u128) as libc::c_int);
        let mut polls = [
            libc::pollfd { fd: self.signal_fd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd {
                fd: if running.host_gone { -1 } else { self.socket.as_raw_fd() },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds (a negative fd is ignored).
        if unsafe { libc::poll(polls.as_mut_ptr(), 2, millis) } <= 0 {
            return;
        }
        if polls[1].revents != 0 {
            self.take_orders(running);
        }
        while let Some(signal) = signals::next(&self.signal_fd) {
            on_signal(self.me, running, signal);
        }
    }

    /// Acts on the host's orders for the running command; the end of the
    /// socket kills it.
    fn take_orders(&mut self, running: &mut Running) {
        loop {
            match socket::receive(self.socket.as_raw_fd(), &mut self.buf, true) {
                Ok(Some((len, _))) => match Order::decode(&self.buf[..len]) {
                    Some(Order::Kill { id }) if id == running.id => running.killing = true,
                    Some(Order::Term { id }) if id == running.id => {
                        tree::signal_descendants(self.me, &[libc::SIGTERM, libc::SIGCONT]);
                    }
                    // For a command that ended, or nonsense (its descriptors close here).
                    _ => {}
                },
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return,
                Ok(None) | Err(_) => {
                    running.host_gone = true;
                    running.killing = true;
                    return;
                }
            }
        }
    }

    /// In the cgroup tier, kills the whole leaf at once, this process with it:
    /// the supervisor reports the command's status, left in the slot first if
    /// known (else the command died of the kill too: SIGKILL). Returns only
    /// where the kill could not be written.
    fn kill_leaf(&self, running: &Running) {
        let Some(leaf) = &self.leaf else { return };
        if let Some(status) = running.status {
            let id = running.id;
            let report = Report::Exited { id, status, lost: false, retired: true, observed: self.observed(running) };
            self.slot.tell(report.encode());
        }
        leaf.kill();
    }

    /// What the command's limits did, as its leaf counted (only the counters
    /// of the limits it has: a command without them pays no read), and its CPU.
    fn observed(&self, running: &Running) -> Observed {
        let counted = match (&self.leaf, running.limits.needs_cgroup()) {
            (Some(leaf), true) => leaf.observed_for(&running.limits, running.baseline),
            _ => Observed::default(),
        };
        Observed { cpu_ms: running.cpu_ms, ended_after_exit: running.ended_after_exit, ..counted }
    }
}

fn on_signal(me: libc::pid_t, running: &mut Running, signal: libc::c_int) {
    match signal {
        libc::SIGCHLD => {}
        libc::SIGUSR1 => running.killing = true,
        libc::SIGUSR2 => {
            running.killing = true;
            running.lost = true;
        }
        _ => {
            let signals: &[libc::c_int] =
                if signal == libc::SIGTERM { &[libc::SIGTERM, libc::SIGCONT] } else { &[signal] };
            tree::signal_descendants(me, signals);
        }
    }
}
