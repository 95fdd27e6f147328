//! The host's side of the supervisor (the program is `crate::supervisor`):
//! start it on first use, keep a pool of the reapers it hands over, start
//! each command with one order to an idle reaper, read the command's
//! reports from that reaper's socket, and start a new supervisor when the
//! last one died.
//!
//! Invariants:
//! - the host never signals a reaper's pid: it orders the reaper on its
//!   socket, and has the supervisor, whose unreaped child it is, continue it
//!   (SIGCONT) when it does not answer;
//! - the supervisor is signalled (SIGCONT, in case a command stopped it) only
//!   through its pidfd, or, without pidfds, while it is unreaped: it is
//!   reaped only when a new one replaces it, under the same lock;
//! - a reaper serves one command at a time: it is leased to a command from
//!   its start order until the host read that command's exit report, and
//!   goes back to the pool only if the report says it takes more. A lease
//!   dropped before (a failed start, a task dropped early) closes the
//!   reaper's socket, which kills whatever the reaper runs and ends it;
//! - every descriptor here is close-on-exec, and a reaper's socket is a
//!   socket (no command can reopen it through `/proc`), so the host's death
//!   closes every reaper's socket and the supervisor's: nothing can hold
//!   that back;
//! - every wait here on the supervisor or a reaper has a deadline
//!   ([`ANSWER_DEADLINE`]), and whoever is waited for is continued every
//!   [`NUDGE_EVERY`] meanwhile: a command of the same user can SIGSTOP
//!   them, and the host's thread must not stop with them.
//!
//! All threads and Node workers of a host share one supervisor and its pool.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError, Weak};
use std::time::{Duration, Instant};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use super::linux::pidfd_open;
use super::{SpawnRequest, StdioPlan};
use crate::limits::Mechanisms;
use crate::process::exit::Exit;
use crate::process::sync::lock;
use crate::supervisor::protocol::{
    Ask, Handout, Hello, LaunchSpec, Order, ProtocolMismatch, Report, Request, CHUNK, MESSAGE_LEN, PROTOCOL_VERSION,
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
    /// Its reaper's socket, readable when the reaper reports.
    pub(crate) link: Link,
    /// On a terminal: its master and the command's own pid.
    pub(crate) terminal: Option<(OwnedFd, u32)>,
}

/// A command's hold on its reaper: the reaper's socket, on which the
/// command's reports arrive. Clones share the hold; when the last goes, the
/// reaper goes back to the pool if it reported the command's exit and takes
/// more, and is let go otherwise (its socket closes).
#[derive(Clone)]
pub(crate) struct Link(Arc<Lease>);

struct Lease {
    /// Taken only when the lease ends.
    reaper: Option<Reaper>,
    /// The command.
    id: u64,
    /// The reaper reported the command's exit and takes more.
    done: AtomicBool,
}

impl AsRawFd for Link {
    fn as_raw_fd(&self) -> RawFd {
        self.0.reaper.as_ref().map_or(-1, |reaper| reaper.socket.as_raw_fd())
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(running) = lock(&RUNNING).as_mut() {
            running.remove(&self.id);
        }
        let Some(reaper) = self.reaper.take() else { return };
        if !self.done.load(Ordering::Acquire) {
            return;
        }
        let mut connection = lock(&CONNECTION);
        if let Some(running) = connection.as_mut().filter(|running| Arc::ptr_eq(&running.socket, &reaper.supervisor)) {
            if running.idle.len() < IDLE_MOST {
                running.idle.push(reaper);
            }
        }
    }
}

/// A reaper the supervisor handed over.
struct Reaper {
    /// The host's end of its socket.
    socket: OwnedFd,
    /// Its pid, its commands' group.
    pid: u32,
    /// The supervisor's number for it.
    number: u64,
    /// The socket of the supervisor that made it.
    supervisor: Arc<OwnedFd>,
}

impl Reaper {
    /// Has the supervisor continue the reaper, which a command of the same
    /// user may have stopped; the supervisor is continued first, unless the
    /// pool is busy (a supervisor being started holds it for seconds): the
    /// caller nudges again, and never waits here.
    fn wake(&self) {
        if let Some(connection) = try_lock(&CONNECTION) {
            if let Some(running) = connection.as_ref().filter(|running| Arc::ptr_eq(&running.socket, &self.supervisor))
            {
                wake(running);
            }
        }
        let request = Request::Continue { reaper: self.number }.encode();
        let _ = socket::send(&self.supervisor, &request, &[], true);
    }
}

/// The running supervisor, with the reapers it handed over that are idle.
struct Connection {
    pid: libc::pid_t,
    pidfd: Option<OwnedFd>,
    socket: Arc<OwnedFd>,
    /// The cgroup controllers its reapers' leaves have, from its hello.
    controllers: Mechanisms,
    /// Idle reapers, the most recently used last.
    idle: Vec<Reaper>,
    /// Reapers asked for and not yet handed over.
    coming: usize,
    /// The supervisor was told that commands have cgroup limits.
    told_cgroup_limits: bool,
}

static CONNECTION: Mutex<Option<Connection>> = Mutex::new(None);

/// The commands running under the supervisor, by number: whom a kill goes to.
static RUNNING: Mutex<Option<HashMap<u64, Weak<Lease>>>> = Mutex::new(None);

/// Command numbers, never reused by one host.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// How many reapers the pool keeps idle or coming before a command takes
/// one: the next command finds one ready, and one is made off its path.
const SPARE: usize = 2;

/// The most idle reapers the pool keeps: after a burst of concurrent
/// commands, those beyond it are let go. Each idle one is a small process
/// (a fork of the supervisor, sharing its pages), a descriptor in the host
/// and, in the cgroup tier, a leaf; a burst of as many commands again then
/// makes no process.
const IDLE_MOST: usize = 64;

/// How many reapers a start tries when the ones it gets turn out dead
/// (something killed them while idle; the pool hears of that only then).
const ATTEMPTS: usize = 8;

/// How long the host waits for the supervisor or a reaper before it
/// continues them (SIGCONT) and waits again: a command of the same user may
/// have stopped them. An answer normally takes well under a millisecond.
const NUDGE_EVERY: Duration = Duration::from_millis(50);

/// How long a caller waiting for a handout sleeps before it looks at the
/// pool again: a handout meant for it may have been collected by another
/// caller. A reaper is made in about a millisecond.
const RECHECK_EVERY: Duration = Duration::from_millis(2);

/// How long a spawn waits in all for its command to start (and a new
/// supervisor for its hello) before it fails with `TimedOut`: the host's
/// thread never waits without end on a process that a command can reach.
/// Far above any answer seen under load; a command that keeps its helpers
/// stopped costs the host this much once per spawn, not forever.
const ANSWER_DEADLINE: Duration = Duration::from_secs(5);

/// Starts `spec`'s program on a reaper of the supervisor `helper` (started
/// first if none runs): the reaper leads the group, the command is its child
/// with exactly its environment in its directory, within its limits, its
/// standard streams as `stdio` says. Returns once the command runs, with the
/// reaper's pid as the leader's.
pub(crate) fn spawn(helper: &Path, request: &SpawnRequest) -> io::Result<Supervised> {
    let pty = request.stdio.terminal.map(crate::process::terminal::open).transpose()?;
    let launch = launch_spec(request, pty.as_ref());
    let (host_ends, remote) = stdio_ends(request.stdio, pty.as_ref())?;
    let mut last = io::Error::other("the supervisor could not be started");
    let deadline = Instant::now() + ANSWER_DEADLINE;
    for _ in 0..ATTEMPTS {
        let reaper = take_reaper(helper, request.limits.needs_cgroup(), deadline)?;
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        match start(&reaper, id, &launch, &remote, deadline) {
            Ok(command) => {
                let terminal = pty.map(|pty| (pty.master, command.unwrap_or(reaper.pid)));
                return Ok(supervised(reaper, id, host_ends, terminal));
            }
            Err(Failure::Refused(error, again)) => {
                if again {
                    give_back(reaper);
                }
                return Err(error);
            }
            Err(Failure::Lost(error)) => last = error,
        }
    }
    Err(last)
}

/// The request's launch spec, encoded for the start order.
fn launch_spec(request: &SpawnRequest, pty: Option<&crate::process::terminal::Pty>) -> Vec<u8> {
    let SpawnRequest { program, args, env, cwd, limits, grace, .. } = *request;
    let program = program.as_os_str().as_bytes();
    LaunchSpec {
        program: program.to_vec(),
        argv: std::iter::once(program.to_vec()).chain(args.iter().map(|arg| arg.as_bytes().to_vec())).collect(),
        env: env.iter().map(|(key, value)| [key.as_bytes(), b"=", value.as_bytes()].concat()).collect(),
        cwd: cwd.as_os_str().as_bytes().to_vec(),
        grace_ms: u64::try_from(grace.as_millis()).unwrap_or(u64::MAX),
        terminal: pty.map(|pty| pty.path.as_os_str().as_bytes().to_vec()),
        limits: *limits,
    }
    .encode()
}

/// Command `id`, started on `reaper`: leased to it, and reachable for kills.
fn supervised(reaper: Reaper, id: u64, host_ends: HostEnds, terminal: Option<(OwnedFd, u32)>) -> Supervised {
    let pid = reaper.pid;
    let lease = Arc::new(Lease { reaper: Some(reaper), id, done: AtomicBool::new(false) });
    lock(&RUNNING).get_or_insert_with(HashMap::new).insert(id, Arc::downgrade(&lease));
    let HostEnds { stdout, stderr, stdin } = host_ends;
    Supervised { pid, stdout, stderr, stdin, id, link: Link(lease), terminal }
}

/// A start order sent to an idle reaper, its answer not yet read: a start
/// that holds no thread while the reaper answers. Dropped unanswered, the
/// reaper's socket closes, which kills whatever it started and ends it.
pub(crate) struct Ordered {
    reaper: Reaper,
    id: u64,
    host_ends: HostEnds,
}

/// Sends `request`'s start order to an idle reaper, waiting for nothing: not
/// for the supervisor, its pool's lock or room on the reaper's socket.
/// `Ok(None)` where that cannot be done at once (no reaper idle, the pool
/// busy, a terminal, a spec longer than one message, a reaper found dead):
/// the caller starts the command with [`spawn`] instead, which may wait.
pub(crate) fn order(request: &SpawnRequest) -> io::Result<Option<Ordered>> {
    if request.stdio.terminal.is_some() {
        return Ok(None);
    }
    let launch = launch_spec(request, None);
    if launch.len() > CHUNK - MESSAGE_LEN {
        return Ok(None);
    }
    let reaper = {
        let Some(mut guard) = try_lock(&CONNECTION) else { return Ok(None) };
        let Some(connection) = guard.as_mut() else { return Ok(None) };
        // A supervisor that ended is replaced by `spawn`, which may wait.
        if connection.idle.is_empty() || !connection.collect_handouts() {
            return Ok(None);
        }
        connection.top_up(false, request.limits.needs_cgroup());
        match connection.idle.pop() {
            Some(reaper) => reaper,
            None => return Ok(None),
        }
    };
    let (host_ends, remote) = stdio_ends(request.stdio, None)?;
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let order = [&Order::Start { id }.encode()[..], &launch].concat();
    match socket::send(&reaper.socket, &order, &remote.each_ref().map(AsRawFd::as_raw_fd), true) {
        Ok(()) => Ok(Some(Ordered { reaper, id, host_ends })),
        // Dead (the pool hears of that only now), or not reading (an idle
        // reaper's socket has room): let go, its socket closed.
        Err(_) => Ok(None),
    }
}

impl Ordered {
    /// Awaits the reaper's answer, continuing it every [`NUDGE_EVERY`]
    /// without one (a command of the same user may have stopped it), for at
    /// most [`ANSWER_DEADLINE`]: the command, started. `Ok(None)` when the
    /// reaper was gone before it took the command: start it anew with
    /// [`spawn`]. Needs a tokio runtime.
    pub(crate) async fn started(self) -> io::Result<Option<Supervised>> {
        let Self { reaper, id, host_ends } = self;
        let fd = reaper.socket.as_raw_fd();
        // SAFETY: `reaper` owns the socket and outlives `readable`, which is
        // dropped first on every path (declared after it, or dropped by hand).
        let readable =
            unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.map_err(|error| error.into_parts().1)?;
        let deadline = tokio::time::Instant::now() + ANSWER_DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                let _ = socket::send(&reaper.socket, &Order::Kill { id }.encode(), &[], true);
                return Err(timed_out());
            }
            let Ok(ready) = tokio::time::timeout(left.min(NUDGE_EVERY), readable.readable()).await else {
                reaper.wake();
                continue;
            };
            let mut ready = ready?;
            match answer(&reaper.socket, id) {
                // Started (its own pid matters only on a terminal, which is never ordered here).
                Ok(Some(_)) => break,
                Ok(None) => ready.clear_ready(),
                Err(Failure::Refused(error, again)) => {
                    drop(readable);
                    if again {
                        give_back(reaper);
                    }
                    return Err(error);
                }
                Err(Failure::Lost(_)) => return Ok(None),
            }
        }
        // Deregistered before the exit watch registers the same socket.
        drop(readable);
        Ok(Some(supervised(reaper, id, host_ends, None)))
    }
}

/// Why a start did not happen.
enum Failure {
    /// The command cannot start: its errno, or no answer in time; with
    /// whether the reaper takes the next command.
    Refused(io::Error, bool),
    /// The reaper was gone before it took the command: another may.
    Lost(io::Error),
}

/// The host's ends of a command's stdio.
struct HostEnds {
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
    stdin: Option<OwnedFd>,
}

/// The command's stdio: the host's ends, and the command's (stdin, stdout,
/// stderr) for the start order.
fn stdio_ends(stdio: StdioPlan, pty: Option<&crate::process::terminal::Pty>) -> io::Result<(HostEnds, [OwnedFd; 3])> {
    if let Some(pty) = pty {
        // The command's 0–2 are the slave (it opens it again, by its path, to
        // make it its controlling terminal); the host keeps the master.
        let slave = || pty.slave.try_clone();
        return Ok((HostEnds { stdout: None, stderr: None, stdin: None }, [slave()?, slave()?, slave()?]));
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
    let (stdout, stdout_remote) = output(stdio.stdout_inherited, 1)?;
    let (stderr, stderr_remote) = output(stdio.stderr_inherited, 2)?;
    let (stdin, stdin_remote) = if stdio.stdin_piped {
        let (read, write) = pipe()?;
        (Some(write), read)
    } else {
        (None, dev_null()?)
    };
    Ok((HostEnds { stdout, stderr, stdin }, [stdin_remote, stdout_remote, stderr_remote]))
}

/// An idle reaper from the pool, waiting for the supervisor to hand one
/// over when none is (until `deadline`), and asking for more when the pool
/// runs low. Starts the supervisor when none runs, and a new one when it died.
fn take_reaper(helper: &Path, cgroup_limits: bool, deadline: Instant) -> io::Result<Reaper> {
    // The supervisor this call asked for a reaper of its own, if it did.
    let mut asked_of: Option<Arc<OwnedFd>> = None;
    let mut last_nudge = Instant::now();
    loop {
        let mut guard = lock(&CONNECTION);
        if guard.is_none() {
            *guard = Some(launch(helper)?);
        }
        let Some(connection) = guard.as_mut() else { continue };
        if !connection.collect_handouts() {
            // The supervisor is gone: its reapers died with it.
            let old = guard.take();
            drop(guard);
            if let Some(old) = old {
                end_supervisor(old);
            }
            continue;
        }
        let asked = asked_of.as_ref().is_some_and(|socket| Arc::ptr_eq(socket, &connection.socket));
        if connection.top_up(connection.idle.is_empty() && !asked, cgroup_limits) {
            asked_of = Some(Arc::clone(&connection.socket));
        }
        if let Some(reaper) = connection.idle.pop() {
            return Ok(reaper);
        }
        let socket = Arc::clone(&connection.socket);
        drop(guard);
        // Woken by a handout, or after RECHECK_EVERY: another caller may
        // have collected this one's handout into the pool meanwhile, and the
        // socket then stays quiet.
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out());
        }
        let mut poll = libc::pollfd { fd: socket.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        let millis = left.min(RECHECK_EVERY).as_millis().max(1) as libc::c_int;
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut poll, 1, millis) };
        if last_nudge.elapsed() >= NUDGE_EVERY {
            last_nudge = Instant::now();
            if let Some(running) = lock(&CONNECTION).as_ref().filter(|running| Arc::ptr_eq(&running.socket, &socket)) {
                wake(running);
            }
        }
    }
}

impl Connection {
    /// Asks the supervisor for reapers before a caller takes one: one of its
    /// own for a caller that found the pool empty (`empty_handed`; whoever
    /// takes it), and as many as keep [`SPARE`] idle or coming beyond that;
    /// tells it first that commands have cgroup limits. Returns whether the
    /// caller's own was asked for.
    fn top_up(&mut self, empty_handed: bool, cgroup_limits: bool) -> bool {
        let own = usize::from(empty_handed);
        let spare = SPARE.saturating_sub(self.idle.len().saturating_sub(1 - own) + self.coming);
        let count = own + spare;
        let tell = cgroup_limits && !self.told_cgroup_limits;
        if count == 0 && !tell {
            return false;
        }
        let request = Request::Reapers { count: count as u16, cgroup_limits };
        if socket::send(&self.socket, &request.encode(), &[], true).is_err() {
            return false;
        }
        self.coming += count;
        self.told_cgroup_limits |= cgroup_limits;
        own == 1
    }

    /// Takes every reaper the supervisor handed over into the pool.
    /// Returns `false` when the supervisor's socket ended.
    fn collect_handouts(&mut self) -> bool {
        let mut buf = [0; MESSAGE_LEN];
        loop {
            match socket::receive(self.socket.as_raw_fd(), &mut buf, true) {
                Ok(Some((len, fds))) => {
                    let Some(Handout { reaper: number, pid }) = Handout::decode(&buf[..len]) else { continue };
                    self.coming = self.coming.saturating_sub(1);
                    let Some(socket) = fds.into_iter().next() else { continue };
                    let supervisor = Arc::clone(&self.socket);
                    self.idle.insert(0, Reaper { socket, pid, number, supervisor });
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return true,
                Ok(None) | Err(_) => return false,
            }
        }
    }
}

/// Puts a reaper that is ready for another command back in the pool.
fn give_back(reaper: Reaper) {
    drop(Lease { reaper: Some(reaper), id: 0, done: AtomicBool::new(true) });
}

/// Orders `reaper` to start command `id` with `spec` and `stdio`, and waits
/// for its answer: the command's own pid, or `None` when the command killed
/// its reaper before that answered (the supervisor's exit report then waits
/// on the socket for the exit watch). Gives up at `deadline`: the reaper is
/// ordered to kill the command, should it start it after all, and let go.
fn start(
    reaper: &Reaper,
    id: u64,
    spec: &[u8],
    stdio: &[OwnedFd; 3],
    deadline: Instant,
) -> Result<Option<u32>, Failure> {
    let nudge = || reaper.wake();
    let link = &reaper.socket;
    let lost = |error: io::Error| match error.kind() {
        io::ErrorKind::TimedOut => {
            let _ = socket::send(link, &Order::Kill { id }.encode(), &[], true);
            Failure::Refused(error, false)
        }
        _ => Failure::Lost(error),
    };
    let first = spec.len().min(CHUNK - MESSAGE_LEN);
    let order = [&Order::Start { id }.encode()[..], &spec[..first]].concat();
    let fds = stdio.each_ref().map(AsRawFd::as_raw_fd);
    send_within(link, &order, &fds, deadline, &nudge).map_err(lost)?;
    for chunk in spec[first..].chunks(CHUNK) {
        send_within(link, chunk, &[], deadline, &nudge).map_err(lost)?;
    }
    loop {
        ready(link.as_raw_fd(), libc::POLLIN, deadline, &nudge).map_err(lost)?;
        if let Some(answered) = answer(link, id)? {
            return Ok(answered);
        }
    }
}

/// Reads `reaper`'s answer to start order `id` without waiting: `None` while
/// none has come; else the command's own pid, or `None` when the command
/// killed its reaper before that answered (see [`start`]).
fn answer(link: &OwnedFd, id: u64) -> Result<Option<Option<u32>>, Failure> {
    let mut buf = [0; MESSAGE_LEN];
    let gone = || Failure::Lost(io::Error::other("the reaper ended before it took the command"));
    loop {
        let len = match socket::peek(link.as_raw_fd(), &mut buf, true) {
            Ok(Some(len)) => len,
            Ok(None) => return Err(gone()),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(None),
            Err(error) => return Err(Failure::Lost(error)),
        };
        let report = Report::decode(&buf[..len]);
        if !matches!(report, Some(Report::Exited { id: of, .. }) if of == id) {
            // Taken; this command's exit report stays for the exit watch.
            socket::receive(link.as_raw_fd(), &mut buf, false).map_err(Failure::Lost)?;
        }
        match report {
            Some(Report::Started { id: of, command }) if of == id => return Ok(Some(Some(command))),
            Some(Report::Failed { id: of, errno }) if of == id => {
                return Err(Failure::Refused(io::Error::from_raw_os_error(errno), true))
            }
            // The reaper died after it took the command and before it
            // answered: its command killed it (it may, at once), and the
            // supervisor ended what was left. The command started; its own
            // pid is unknown.
            Some(Report::Exited { id: of, .. }) if of == id => return Ok(Some(None)),
            // A report of an earlier command, sent again by the supervisor.
            _ => {}
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
            return Err(timed_out());
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

/// Locks the pool if no one holds it, ignoring poisoning as
/// [`lock`] does: `None` when it is held (a supervisor being started holds it
/// for seconds, and a start that may not wait goes another way).
fn try_lock<T>(mutex: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match mutex.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// A start that got no answer within [`ANSWER_DEADLINE`].
fn timed_out() -> io::Error {
    let waited = ANSWER_DEADLINE.as_secs();
    let message = format!("the supervisor did not start the command within {waited} s: a command may keep it stopped");
    io::Error::new(io::ErrorKind::TimedOut, message)
}

/// Passes `ask` on to command `id`'s reaper, continued first in case a
/// command stopped it. Nothing happens when the command has ended.
pub(crate) fn ask(id: u64, ask: Ask) {
    let lease = lock(&RUNNING).as_ref().and_then(|running| running.get(&id)).and_then(Weak::upgrade);
    let Some(reaper) = lease.as_ref().and_then(|lease| lease.reaper.as_ref()) else { return };
    reaper.wake();
    let order = match ask {
        Ask::Term => Order::Term { id },
        Ask::Kill => Order::Kill { id },
    };
    // Never blocks: a reaper that stopped reading cannot hold a caller. A
    // kill that finds its queue full still ends the command: the host's
    // end of the socket closes when the host goes.
    let _ = socket::send(&reaper.socket, &order.encode(), &[], true);
}

/// Reads command `link`'s reports for its exit: `Ok(None)` while it runs
/// (with `nonblocking`). The exit is the command's `Exited` report, sent by
/// its reaper once nothing of the command is left (or by the supervisor,
/// for a reaper that died with it). The socket's end without one means that
/// the supervisor died and the reaper with it, before either could report:
/// lost, and reported as a SIGKILL.
pub(crate) fn read_exit(link: &Link, nonblocking: bool) -> io::Result<Option<Exit>> {
    let mut buf = [0; MESSAGE_LEN];
    let lease = &link.0;
    loop {
        if !nonblocking {
            // The socket may be in non-blocking mode: wait for it here instead.
            let mut poll = libc::pollfd { fd: link.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut poll, 1, -1) };
        }
        match socket::receive(link.as_raw_fd(), &mut buf, true) {
            Ok(Some((len, _))) => {
                if let Some(Report::Exited { id, status, lost, retired, observed }) = Report::decode(&buf[..len]) {
                    if id == lease.id {
                        lease.done.store(!retired, Ordering::Release);
                        return Ok(Some(Exit { lost, observed, ..Exit::from_wait_status(status) }));
                    }
                }
            }
            Ok(None) => return Ok(Some(Exit { signal: Some("SIGKILL"), lost: true, ..Exit::UNKNOWN })),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                if nonblocking {
                    return Ok(None);
                }
            }
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

/// The cgroup controllers of the running supervisor's command leaves,
/// waiting for nothing: `None` when none runs or the pool is busy.
pub(crate) fn try_controllers() -> Option<Mechanisms> {
    try_lock(&CONNECTION)?.as_ref().map(|running| running.controllers)
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
    // Reaped when replaced (see `end_supervisor`), not through this handle.
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
    Ok(Connection {
        pid,
        pidfd: pidfd_open(pid as u32),
        socket: Arc::new(host),
        controllers,
        idle: Vec::new(),
        coming: 0,
        told_cgroup_limits: false,
    })
}

/// Kills and reaps a supervisor that is no longer the current one.
fn end_supervisor(old: Connection) {
    // SAFETY: `old.pid` is this process's unreaped child (see the invariants);
    // SIGKILL ends it even when stopped, so the wait is short.
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
