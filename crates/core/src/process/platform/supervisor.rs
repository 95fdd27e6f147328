//! The host's side of the supervisor (the program is `crate::supervisor`):
//! start it on first use, ask it for each command, read each command's
//! reports from its link, and start a new one when it died.
//!
//! Invariants:
//! - the host never signals a reaper's pid: it asks the supervisor, whose
//!   unreaped children the reapers are (so a pid is never reused under it);
//! - the supervisor is signalled (SIGCONT, in case a command stopped it) only
//!   through its pidfd, or, without pidfds, while it is unreaped: it is
//!   reaped only when a new one replaces it, under the same lock;
//! - every descriptor here is close-on-exec, and a command's link is a socket
//!   (no command can reopen it through `/proc`), so the host's death closes
//!   every link and the supervisor's socket: nothing can hold that back;
//! - every wait here on the supervisor or a reaper has a deadline
//!   ([`ANSWER_DEADLINE`]), and whoever is waited for is continued every
//!   [`NUDGE_EVERY`] meanwhile: a command of the same user can SIGSTOP
//!   them, and the host's thread must not stop with them.
//!
//! All threads and Node workers of a host share one supervisor.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::linux::pidfd_open;
use super::{SpawnRequest, StdioPlan};
use crate::limits::Mechanisms;
use crate::process::exit::Exit;
use crate::process::sync::lock;
use crate::supervisor::protocol::{
    Ask, Hello, LaunchSpec, ProtocolMismatch, Report, Request, CHUNK, MESSAGE_LEN, PROTOCOL_VERSION,
};
use crate::supervisor::socket;

/// A command started under the supervisor.
pub(crate) struct Supervised {
    /// The reaper's pid, which is also the group id.
    pub(crate) pid: u32,
    /// The read end of its stdout, unless inherited.
    pub(crate) stdout: Option<OwnedFd>,
    /// The read end of its stderr, unless inherited.
    pub(crate) stderr: Option<OwnedFd>,
    /// The write end of its stdin, when it reads from a pipe.
    pub(crate) stdin: Option<OwnedFd>,
    /// The host's number for the command.
    pub(crate) id: u64,
    /// The host's end of the command's link, readable when the reaper reports.
    pub(crate) link: OwnedFd,
    /// On a terminal: its master and the command's own pid.
    pub(crate) terminal: Option<(OwnedFd, u32)>,
}

/// The running supervisor.
struct Connection {
    pid: libc::pid_t,
    pidfd: Option<OwnedFd>,
    socket: Arc<OwnedFd>,
    /// The cgroup controllers its commands' leaves have, from its hello.
    controllers: Mechanisms,
}

static CONNECTION: Mutex<Option<Connection>> = Mutex::new(None);

/// Command numbers, never reused by one host.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// How many times a spawn is tried when the supervisor or the reaper it went
/// to died: once more than the reapers on standby, which something may have
/// killed all at once (the supervisor hears of their deaths only later).
const ATTEMPTS: usize = 3;

/// How long the host waits for the supervisor or a reaper before it
/// continues them (SIGCONT) and waits again: a command of the same user may
/// have stopped them. An answer normally takes well under a millisecond.
const NUDGE_EVERY: Duration = Duration::from_millis(50);

/// How long a spawn waits in all for its command to start (and a new
/// supervisor for its hello) before it fails with `TimedOut`: the host's
/// thread never waits without end on a process that a command can reach.
/// Far above any answer seen under load; a command that keeps its helpers
/// stopped costs the host this much once per spawn, not forever.
const ANSWER_DEADLINE: Duration = Duration::from_secs(5);

/// Starts `spec`'s program under the supervisor `helper` (started first if
/// none runs): a reaper leading a new group, the command its child with
/// exactly its environment in its directory, within its limits, its
/// standard streams as `stdio` says. Returns once the command runs, with the
/// reaper's pid as the leader's.
pub(crate) fn spawn(helper: &Path, request: &SpawnRequest) -> io::Result<Supervised> {
    let SpawnRequest { program, args, env, cwd, stdio, limits, grace } = *request;
    let pty = stdio.terminal.map(crate::process::terminal::open).transpose()?;
    let program = program.as_os_str().as_bytes();
    let launch = LaunchSpec {
        program: program.to_vec(),
        argv: std::iter::once(program.to_vec()).chain(args.iter().map(|arg| arg.as_bytes().to_vec())).collect(),
        env: env.iter().map(|(key, value)| [key.as_bytes(), b"=", value.as_bytes()].concat()).collect(),
        cwd: cwd.as_os_str().as_bytes().to_vec(),
        grace_ms: u64::try_from(grace.as_millis()).unwrap_or(u64::MAX),
        terminal: pty.as_ref().map(|pty| pty.path.as_os_str().as_bytes().to_vec()),
        limits: *limits,
    }
    .encode();
    let mut last = io::Error::other("the supervisor could not be started");
    let deadline = Instant::now() + ANSWER_DEADLINE;
    for _ in 0..ATTEMPTS {
        let socket = connect(helper)?;
        let cgroup_limits = limits.memory_bytes.is_some() || limits.processes.is_some();
        match start(&socket, &launch, cgroup_limits, stdio, pty.as_ref(), deadline) {
            Ok(started) => return Ok(started),
            Err(Failure::Refused(error)) => return Err(error),
            Err(Failure::Gone(error)) => {
                forget_if_current(&socket);
                last = error;
            }
            Err(Failure::Lost(error)) => {
                // Its reaper died before the command started (something
                // killed it); the supervisor may be fine, or dying.
                forget_if_current_and_dead(&socket);
                last = error;
            }
        }
    }
    Err(last)
}

/// Why a spawn did not happen.
enum Failure {
    /// The command cannot start (its errno).
    Refused(io::Error),
    /// The supervisor is gone (its socket closed): a new one may do it.
    Gone(io::Error),
    /// The command's reaper went away before it started the command.
    Lost(io::Error),
}

fn start(
    socket: &OwnedFd,
    spec: &[u8],
    cgroup_limits: bool,
    stdio: StdioPlan,
    pty: Option<&crate::process::terminal::Pty>,
    deadline: Instant,
) -> Result<Supervised, Failure> {
    let refused = Failure::Refused;
    let (link, link_remote) = socket::pair().map_err(refused)?;
    if let Some(pty) = pty {
        // The command's 0–2 are the slave (it opens it again, by its path, to
        // make it its controlling terminal); the host keeps the master.
        let slave = || pty.slave.try_clone().map_err(refused);
        let (stdin_remote, stdout_remote, stderr_remote) = (slave()?, slave()?, slave()?);
        let master = pty.master.try_clone().map_err(refused)?;
        let remote = [link_remote, stdin_remote, stdout_remote, stderr_remote];
        let (pid, command, id) = request(socket, &link, spec, cgroup_limits, remote, deadline)?;
        return Ok(Supervised {
            pid,
            stdout: None,
            stderr: None,
            stdin: None,
            id,
            link,
            terminal: Some((master, command)),
        });
    }
    // An inherited stream: the command gets a copy of the host's own.
    let output = |inherit: bool, host_fd: RawFd| -> io::Result<(Option<OwnedFd>, OwnedFd)> {
        if inherit {
            // SAFETY: duplicates one of this process's standard descriptors
            // to a new close-on-exec one it owns.
            let fd = unsafe { libc::fcntl(host_fd, libc::F_DUPFD_CLOEXEC, 3) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: just made, owned here alone.
            Ok((None, unsafe { OwnedFd::from_raw_fd(fd) }))
        } else {
            let (read, write) = pipe()?;
            Ok((Some(read), write))
        }
    };
    let (stdout, stdout_remote) = output(stdio.stdout_inherited, 1).map_err(refused)?;
    let (stderr, stderr_remote) = output(stdio.stderr_inherited, 2).map_err(refused)?;
    let (stdin, stdin_remote) = if stdio.stdin_piped {
        let (read, write) = pipe().map_err(refused)?;
        (Some(write), read)
    } else {
        (None, dev_null().map_err(refused)?)
    };
    let remote = [link_remote, stdin_remote, stdout_remote, stderr_remote];
    let (pid, _, id) = request(socket, &link, spec, cgroup_limits, remote, deadline)?;
    Ok(Supervised { pid, stdout, stderr, stdin, id, link, terminal: None })
}

/// Asks the supervisor for a reaper with the command's `remote` ends (link
/// and stdio, in the order of `SPAWN_FDS`), sends `spec` on `link` and waits
/// for the command to run: its reaper's pid, its own (the reaper's again when
/// the command killed its reaper before that reported), and the host's number.
/// Gives up at `deadline`: the link is dropped, which ends the command
/// should its reaper start it after all, and the reaper is killed.
fn request(
    socket: &OwnedFd,
    link: &OwnedFd,
    spec: &[u8],
    cgroup_limits: bool,
    remote: [OwnedFd; 4],
    deadline: Instant,
) -> Result<(u32, u32, u64), Failure> {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let nudge = || ask(id, Ask::Continue);
    let unanswered = |error: io::Error| {
        if error.kind() == io::ErrorKind::TimedOut {
            ask(id, Ask::Kill);
            Failure::Refused(error)
        } else {
            Failure::Lost(error)
        }
    };
    let fds: [RawFd; 4] = remote.each_ref().map(AsRawFd::as_raw_fd);
    send_within(socket, &Request::Spawn { id, cgroup_limits }.encode(), &fds, deadline, &nudge).map_err(|error| {
        if error.kind() == io::ErrorKind::TimedOut {
            Failure::Refused(error)
        } else {
            Failure::Gone(error)
        }
    })?;
    // The supervisor and the reaper hold them now.
    drop(remote);
    for chunk in spec.chunks(CHUNK) {
        send_within(link, chunk, &[], deadline, &nudge).map_err(unanswered)?;
    }
    let mut buf = [0; MESSAGE_LEN];
    let lost = || Failure::Lost(io::Error::other("the command's reaper ended before it started the command"));
    let mut assigned = None;
    loop {
        ready(link.as_raw_fd(), libc::POLLIN, deadline, &nudge).map_err(unanswered)?;
        let peeked = socket::peek(link.as_raw_fd(), &mut buf).map_err(Failure::Lost)?;
        // The end first: the supervisor died before a reaper took the command.
        let report = peeked.and_then(|len| Report::decode(&buf[..len])).ok_or_else(lost)?;
        if !matches!(report, Report::Exited { .. }) {
            // Taken; an exit report stays for the exit watch to read.
            socket::receive(link.as_raw_fd(), &mut buf, false).map_err(Failure::Lost)?;
        }
        match report {
            Report::Assigned { pid } => assigned = Some(pid),
            Report::Started { pid, command } => return Ok((pid, command, id)),
            Report::Failed { errno } => return Err(Failure::Refused(io::Error::from_raw_os_error(errno))),
            // The reaper died of a signal after it took the command and
            // before it reported the start: its command killed it (it may,
            // at once), and the supervisor ended what was left. The command
            // started; its own pid is unknown. Dead before it took the
            // command (killed on standby), it is lost: the next try goes to
            // another reaper.
            Report::Exited { .. } => return assigned.map(|pid| (pid, pid, id)).ok_or_else(lost),
        }
    }
}

/// Sends one message on `socket` as [`socket::send`] does, waiting for room
/// at most until `deadline` (see [`ready`]).
fn send_within(socket: &OwnedFd, bytes: &[u8], fds: &[RawFd], deadline: Instant, nudge: &dyn Fn()) -> io::Result<()> {
    loop {
        match socket::send(socket, bytes, fds, true) {
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                ready(socket.as_raw_fd(), libc::POLLOUT, deadline, nudge)?;
            }
            sent => return sent,
        }
    }
}

/// Waits until `fd` is ready for `events` (or at its end), calling `nudge`
/// every [`NUDGE_EVERY`] without it; fails with `TimedOut` at `deadline`.
fn ready(fd: RawFd, events: libc::c_short, deadline: Instant, nudge: &dyn Fn()) -> io::Result<()> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let waited = ANSWER_DEADLINE.as_secs();
            let message =
                format!("the supervisor did not start the command within {waited} s: a command may keep it stopped");
            return Err(io::Error::new(io::ErrorKind::TimedOut, message));
        }
        let mut poll = libc::pollfd { fd, events, revents: 0 };
        let millis = left.min(NUDGE_EVERY).as_millis().max(1) as libc::c_int;
        // SAFETY: one valid pollfd.
        match unsafe { libc::poll(&mut poll, 1, millis) } {
            0 => nudge(),
            ready if ready > 0 => return Ok(()),
            _ => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
}

/// Asks the supervisor to pass `ask` on to command `id`. Nothing happens
/// when the supervisor is gone: its reapers then kill their commands anyway.
pub(crate) fn ask(id: u64, ask: Ask) {
    let guard = lock(&CONNECTION);
    let Some(connection) = guard.as_ref() else { return };
    wake(connection);
    let socket = Arc::clone(&connection.socket);
    drop(guard);
    // Never blocks: a supervisor that stopped reading cannot hold a caller.
    let _ = socket::send(&socket, &Request::Signal { id, ask }.encode(), &[], true);
}

/// Reads command `link` for its exit: `Ok(None)` while it runs (with
/// `nonblocking`). The exit is the reaper's report (kept in `reported`)
/// once the link ends: the supervisor closes its end when it reaped the
/// reaper, so the leader is reaped when its result is published, as a
/// child's would be. The link's end without a report means that the
/// supervisor died and the reaper with it, before either could report:
/// lost, and reported as a SIGKILL.
pub(crate) fn read_exit(link: &OwnedFd, nonblocking: bool, reported: &mut Option<Exit>) -> io::Result<Option<Exit>> {
    let mut buf = [0; MESSAGE_LEN];
    loop {
        if !nonblocking {
            // The link may be in non-blocking mode (a driver registered it):
            // wait for it here instead.
            let mut poll = libc::pollfd { fd: link.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut poll, 1, -1) };
        }
        match socket::receive(link.as_raw_fd(), &mut buf, true) {
            Ok(Some((len, _))) => {
                if let Some(Report::Exited { status, lost, observed }) = Report::decode(&buf[..len]) {
                    *reported = Some(Exit { lost, observed, ..Exit::from_wait_status(status) });
                }
            }
            Ok(None) => {
                return Ok(Some(reported.unwrap_or(Exit { signal: Some("SIGKILL"), lost: true, ..Exit::UNKNOWN })))
            }
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(error) => return Err(error),
        }
    }
}

/// The cgroup controllers the supervisor's command leaves have (starting the
/// supervisor when none runs), which decide how limits are enforced.
pub(crate) fn controllers(helper: &Path) -> io::Result<Mechanisms> {
    connect(helper)?;
    Ok(lock(&CONNECTION).as_ref().map(|running| running.controllers).unwrap_or_default())
}

/// The supervisor's socket, starting the supervisor when none runs.
fn connect(helper: &Path) -> io::Result<Arc<OwnedFd>> {
    let mut connection = lock(&CONNECTION);
    if let Some(running) = connection.as_ref() {
        wake(running);
        return Ok(Arc::clone(&running.socket));
    }
    let started = launch(helper)?;
    let socket = Arc::clone(&started.socket);
    *connection = Some(started);
    Ok(socket)
}

/// Starts a supervisor: `helper` in a group of its own, its stdin one end
/// of the socket pair, nothing else inherited. With
/// [`NO_CGROUPS`](crate::supervisor::NO_CGROUPS) set to `1` in the host's
/// environment, it does not use the cgroup tier.
fn launch(helper: &Path) -> io::Result<Connection> {
    let (host, remote) = socket::pair()?;
    let no_cgroups = std::env::var_os(crate::supervisor::NO_CGROUPS).is_some_and(|value| value == "1");
    let child = Command::new(helper)
        .args(no_cgroups.then_some(crate::supervisor::NO_CGROUPS_FLAG))
        .env_clear()
        .current_dir("/")
        .process_group(0)
        .stdin(Stdio::from(remote))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let pid = child.id() as libc::pid_t;
    // Reaped when replaced (see `forget_if_current`), not through this handle.
    drop(child);
    let end = |error: io::Error| {
        // SAFETY: `pid` is this process's unreaped child; SIGKILL ends it
        // even when stopped, so the wait is short.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        Err(error)
    };
    // SAFETY: `pid` is this process's unreaped child.
    let nudge = || unsafe {
        libc::kill(pid, libc::SIGCONT);
    };
    if let Err(error) = ready(host.as_raw_fd(), libc::POLLIN, Instant::now() + ANSWER_DEADLINE, &nudge) {
        return end(error);
    }
    let mut buf = [0; MESSAGE_LEN];
    let first = socket::receive(host.as_raw_fd(), &mut buf, true).ok().flatten().map(|(len, _)| &buf[..len]);
    match first.and_then(Hello::version_of) {
        Some(PROTOCOL_VERSION) => {}
        Some(found) => {
            return end(io::Error::new(
                io::ErrorKind::InvalidData,
                ProtocolMismatch { expected: PROTOCOL_VERSION, found },
            ))
        }
        None => return end(io::Error::other("the supervisor ended before it was ready")),
    }
    let Some(Hello { controllers }) = first.and_then(Hello::decode) else {
        return end(io::Error::other("the supervisor's hello is malformed"));
    };
    Ok(Connection { pid, pidfd: pidfd_open(pid as u32), socket: Arc::new(host), controllers })
}

/// Forgets the supervisor behind `socket`, if it is still the current one
/// and has exited (or is exiting: its socket closed), so that the next spawn
/// starts a new one; a live one is kept, with every command it runs.
fn forget_if_current_and_dead(socket: &Arc<OwnedFd>) {
    let connection = lock(&CONNECTION);
    let Some(running) = connection.as_ref().filter(|running| Arc::ptr_eq(&running.socket, socket)) else { return };
    let mut poll = libc::pollfd { fd: running.socket.as_raw_fd(), events: 0, revents: 0 };
    // SAFETY: one valid pollfd; asks only whether the peer hung up.
    let hung_up = unsafe { libc::poll(&mut poll, 1, 0) } > 0 && poll.revents & (libc::POLLHUP | libc::POLLERR) != 0;
    drop(connection);
    if hung_up {
        forget_if_current(socket);
    }
}

/// Forgets the supervisor behind `socket`, if it is still the current one:
/// the next spawn starts a new one. The old one is killed and reaped.
fn forget_if_current(socket: &Arc<OwnedFd>) {
    let mut connection = lock(&CONNECTION);
    if !connection.as_ref().is_some_and(|running| Arc::ptr_eq(&running.socket, socket)) {
        return;
    }
    let old = connection.take().expect("checked above");
    drop(connection);
    // SAFETY: `old.pid` is this process's unreaped child (see the invariants).
    unsafe {
        libc::kill(old.pid, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(old.pid, &mut status, 0);
    }
}

/// Continues a supervisor that a command may have stopped.
fn wake(connection: &Connection) {
    match &connection.pidfd {
        // SAFETY: a pidfd we own; SIGCONT with no siginfo.
        Some(pidfd) => unsafe {
            libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), libc::SIGCONT, std::ptr::null::<u8>(), 0);
        },
        // SAFETY: the supervisor is this process's unreaped child.
        None => unsafe {
            libc::kill(connection.pid, libc::SIGCONT);
        },
    }
}

/// A pipe with both ends close-on-exec: (read, write).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both were just created and are owned here alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn dev_null() -> io::Result<OwnedFd> {
    Ok(std::fs::File::open("/dev/null")?.into())
}
