//! The supervisor's loop: read the host's requests, hand each command to a
//! reaper forked ahead of need, pass the host's signals on, reap, report, and
//! end everything when the host is gone.
//!
//! Invariants:
//! - single-threaded, so a forked reaper may run anything, and a reaper's
//!   `PR_SET_PDEATHSIG` fires at this process's death, not at a thread's;
//! - a reaper is signalled only while it is this process's unreaped child,
//!   so a signal never reaches a process that reused its pid;
//! - this process is a child subreaper: the descendants of a reaper that was
//!   killed (by its own command, say) are orphaned to it, and it SIGKILLs
//!   every child that is neither a reaper nor a standby, with all its
//!   descendants;
//! - a reaper that exits reported its command's exit itself, and its link
//!   is closed here once it is reaped, so the host publishes a result only
//!   when the reaper's pid is gone; for one that
//!   died of a signal (killed by its command, or in its own leaf's
//!   `cgroup.kill`), this process reports, once nothing of the command is
//!   left: its leaf removed, or no stray child alive. So a host that sees a
//!   result sees a clean slate, even after a command killed its own reaper;
//! - at the end of the host's socket (the host is gone, however it died) every
//!   reaper is told to kill its command's tree, and this process exits once
//!   none is left; the leaves of the cgroup tier are killed and removed.
//!
//! A command costs the host one round trip: [`STANDBY`] reapers are forked
//! ahead of need (each already in its process group, a subreaper, its
//! signals set up, in its leaf). Their replacements are forked off the
//! command's critical path, one at a time, serving the host in between: when
//! a command ends (while the host takes in its result), or after
//! [`REFILL_IDLE`] without a request. Forking right after a handoff would
//! keep the CPU from the reaper that just got the command: on two vCPUs that
//! cost every command about a third of a millisecond.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::cgroup::{clone_into, Cgroups, Leaf};
use super::protocol::{Ask, Hello, Observed, Report, Request, MESSAGE_LEN, SPAWN_FDS};
use super::reaper::{self, Standby};
use super::{descriptors, signals, socket, tree};

/// How many reapers wait, forked, for the next commands.
const STANDBY: usize = 2;

/// The most children reaped in one turn, so that strays forking and exiting
/// without end cannot keep the loop from killing them.
const REAP_BATCH: usize = 4096;

/// How often commands still finishing, and strays still to be killed, are
/// looked at again.
const RETRY: Duration = Duration::from_millis(5);

/// How long after a request the standby is refilled when no command ended
/// in the meantime (long commands, or a burst of them).
const REFILL_IDLE: Duration = Duration::from_millis(2);

/// Runs the supervisor on the host's socket, which is its stdin, in the
/// cgroup tier when `cgroups` allows and the host has it; never returns.
pub(crate) fn serve(cgroups: bool) -> ! {
    // SAFETY: duplicates stdin (the host's socket) to a new close-on-exec
    // descriptor this process owns, before stdin is pointed elsewhere.
    let host = unsafe { libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3) };
    if host < 0 {
        // SAFETY: ends this process.
        unsafe { libc::_exit(2) };
    }
    // SAFETY: just duplicated, owned here alone.
    let host = unsafe { OwnedFd::from_raw_fd(host) };
    descriptors::release_stdio();
    // SAFETY: plain syscalls on this process's own attributes.
    unsafe {
        // No command (the same user) may ptrace the supervisor or a reaper
        // (forks keep this; a command's exec resets it), which would let it
        // end containment from inside.
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        // Its group is its own, but a terminal may still reach it.
        for signal in
            [libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU, libc::SIGPIPE]
        {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    // The host's descriptor limit is its commands'; the supervisor holds a
    // link per running command, so it takes all it may for itself.
    let mut files = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit fills a valid rlimit; setrlimit only raises the soft
    // limit to the hard one, which is always allowed.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut files);
        libc::setrlimit(libc::RLIMIT_NOFILE, &libc::rlimit { rlim_cur: files.rlim_max, rlim_max: files.rlim_max });
    }
    let Ok(signal_fd) = signals::watch(&[libc::SIGCHLD]) else {
        // SAFETY: ends this process.
        unsafe { libc::_exit(2) }
    };
    let mut supervisor = Supervisor {
        // SAFETY: getpid cannot fail.
        me: unsafe { libc::getpid() },
        files,
        host,
        signal_fd,
        cgroups: if cgroups { Cgroups::detect() } else { None },
        leaves: 0,
        standby: VecDeque::new(),
        reapers: HashMap::new(),
        by_id: HashMap::new(),
        finishing: Vec::new(),
        unremoved: Vec::new(),
        strays: false,
        join_ahead: false,
        closing: false,
        refill_due: None,
    };
    // The host waits for this before its first request.
    let controllers = supervisor.cgroups.as_ref().map(Cgroups::controllers).unwrap_or_default();
    let _ = socket::send(&supervisor.host, &Hello { controllers }.encode(), &[], false);
    supervisor.refill_due = Some(Instant::now());
    supervisor.run()
}

struct Supervisor {
    me: libc::pid_t,
    /// The descriptor limit the host gave, which its commands get back.
    files: libc::rlimit,
    host: OwnedFd,
    signal_fd: OwnedFd,
    cgroups: Option<Cgroups>,
    /// Leaves made so far, which names the next.
    leaves: u64,
    /// Reapers forked ahead of need, oldest first.
    standby: VecDeque<Reaper>,
    /// Reapers running a command, by pid.
    reapers: HashMap<libc::pid_t, Command>,
    /// Reapers running a command, by the command's id.
    by_id: HashMap<u64, libc::pid_t>,
    /// Commands whose reaper died of a signal, each with its status (and
    /// what the reaper saw of its limits) to report once nothing of it is left.
    finishing: Vec<(Command, libc::c_int, Observed)>,
    /// Leaves of reapers gone, not yet empty.
    unremoved: Vec<Leaf>,
    /// A child that is not a reaper may be alive.
    strays: bool,
    /// A command had limits a cgroup holds: reapers join their v1 leaves
    /// while on standby (moving a process between v1 cgroups takes a lock
    /// every fork in the system waits for, so hosts without such limits
    /// never pay for it).
    join_ahead: bool,
    /// The host is gone.
    closing: bool,
    /// When the next reaper is to be forked for the standby, if it is short.
    refill_due: Option<Instant>,
}

/// A reaper, with this process's end of its socket and its leaf.
struct Reaper {
    pid: libc::pid_t,
    socket: OwnedFd,
    leaf: Option<Leaf>,
}

/// A command and the reaper running it.
struct Command {
    id: u64,
    /// The command's link, to report its exit on.
    link: OwnedFd,
    reaper: Reaper,
}

impl Supervisor {
    fn run(mut self) -> ! {
        loop {
            if self.reap() && !self.closing {
                // The host is taking in a result: a good moment to fork.
                self.refill_due = Some(Instant::now());
            }
            if self.strays {
                self.kill_strays();
            }
            self.report_finished();
            let finishing = !self.finishing.is_empty() || !self.unremoved.is_empty();
            if self.closing && self.reapers.is_empty() && !self.strays && !finishing {
                self.standby.clear();
                if let Some(cgroups) = &self.cgroups {
                    cgroups.remove();
                }
                // SAFETY: ends this process; nothing is left to do.
                unsafe { libc::_exit(0) };
            }
            let retry = (self.strays || finishing).then_some(RETRY);
            let refill = self.refill_due.map(|due| due.saturating_duration_since(Instant::now()));
            match refill {
                // One reaper per turn, and only when no request waits.
                Some(Duration::ZERO) if !self.wait(0) => self.refill_one(),
                Some(Duration::ZERO) => {}
                _ => {
                    let timeout = match (retry, refill) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    // Rounded up, so that a due refill is not polled for in a spin.
                    self.wait(timeout.map_or(-1, |timeout| timeout.as_micros().div_ceil(1000) as libc::c_int));
                }
            }
        }
    }

    /// Waits up to `millis` (forever for -1) for the host or a child, and
    /// serves what came. Returns whether anything came.
    fn wait(&mut self, millis: libc::c_int) -> bool {
        let mut polls = [
            libc::pollfd { fd: self.signal_fd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd {
                fd: if self.closing { -1 } else { self.host.as_raw_fd() },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds (a negative fd is ignored).
        if unsafe { libc::poll(polls.as_mut_ptr(), 2, millis) } <= 0 {
            return false;
        }
        while signals::next(&self.signal_fd).is_some() {}
        if polls[1].revents != 0 {
            self.serve_host();
            if self.closing {
                self.refill_due = None;
            } else if self.standby.len() < STANDBY && self.refill_due.is_none() {
                self.refill_due = Some(Instant::now() + REFILL_IDLE);
            }
        }
        true
    }

    /// Handles every request waiting on the host's socket.
    fn serve_host(&mut self) {
        let mut buf = [0; MESSAGE_LEN + 1];
        loop {
            match socket::receive(self.host.as_raw_fd(), &mut buf, true) {
                Ok(Some((len, fds))) => match Request::decode(&buf[..len]) {
                    Some(Request::Spawn { id, cgroup_limits }) => {
                        // Reapers forked from now on join their v1 leaves
                        // ahead: this host uses such limits.
                        self.join_ahead |= cgroup_limits;
                        self.spawn(id, &buf[..len], fds)
                    }
                    Some(Request::Signal { id, ask }) => self.signal(id, ask),
                    // A malformed request: its descriptors close here.
                    None => {}
                },
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return,
                // The end: the host is gone.
                Ok(None) | Err(_) => return self.close(),
            }
        }
    }

    /// Hands command `id` (the `request` that came with `fds`: its link and
    /// stdio) to a reaper on standby, forked now if none is.
    fn spawn(&mut self, id: u64, request: &[u8], fds: Vec<OwnedFd>) {
        if fds.len() != SPAWN_FDS.len() {
            // Without its link no one hears of the command: nothing to start.
            return;
        }
        let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
        loop {
            let reaper = match self.standby.pop_front() {
                Some(reaper) => reaper,
                None => match self.fork_reaper() {
                    Ok(reaper) => reaper,
                    Err(error) => {
                        let errno = error.raw_os_error().unwrap_or(libc::EAGAIN);
                        let _ = socket::send(&fds[0], &Report::Failed { errno }.encode(), &[], true);
                        return;
                    }
                },
            };
            // A command may have stopped the reapers on standby: the one that
            // takes this command is continued first, or the host would wait
            // for its answer in vain.
            // SAFETY: `reaper.pid` is this process's unreaped child (see the invariants).
            unsafe { libc::kill(reaper.pid, libc::SIGCONT) };
            // A reaper that died on standby (its socket's end) is reaped as a
            // stray; the next one takes the command.
            if socket::send(&reaper.socket, request, &raw, true).is_err() {
                if let Some(leaf) = reaper.leaf {
                    leaf.kill();
                    leaf.remove();
                }
                continue;
            }
            let Some(link) = fds.into_iter().next() else { return };
            self.by_id.insert(id, reaper.pid);
            self.reapers.insert(reaper.pid, Command { id, link, reaper });
            return;
        }
    }

    /// Forks one reaper for the standby; the next is due at once until
    /// [`STANDBY`] wait.
    fn refill_one(&mut self) {
        self.refill_due = None;
        if self.standby.len() >= STANDBY {
            return;
        }
        match self.fork_reaper() {
            Ok(reaper) => self.standby.push_back(reaper),
            // Out of processes or memory: the next command forks its own.
            Err(_) => return,
        }
        if self.standby.len() < STANDBY {
            self.refill_due = Some(Instant::now());
        }
    }

    /// Forks a reaper on standby, born in a new leaf in the cgroup tier.
    fn fork_reaper(&mut self) -> io::Result<Reaper> {
        let (ours, theirs) = socket::pair()?;
        let leaf = self.cgroups.as_ref().and_then(|cgroups| {
            self.leaves += 1;
            cgroups.leaf(self.leaves)
        });
        // SAFETY: this process is single-threaded, so the child may run anything.
        let born = unsafe { clone_into(leaf.as_ref()) };
        let pid = match born {
            Ok(pid) => pid,
            Err(error) => {
                if let Some(leaf) = leaf {
                    leaf.remove();
                }
                return Err(error);
            }
        };
        if pid == 0 {
            // Every descriptor but its own socket is closed there first.
            let join_ahead = self.join_ahead;
            reaper::run(Standby { socket: theirs, leaf, supervisor: self.me, files: self.files, join_ahead });
        }
        Ok(Reaper { pid, socket: ours, leaf })
    }

    /// Passes the host's `ask` on to command `id`'s reaper, woken first in
    /// case its command stopped it.
    fn signal(&self, id: u64, ask: Ask) {
        let Some(&pid) = self.by_id.get(&id) else { return };
        let signal = match ask {
            Ask::Term => libc::SIGTERM,
            Ask::Kill => libc::SIGUSR1,
            // SIGCONT is sent below, alone.
            Ask::Continue => 0,
        };
        // SAFETY: `pid` is this process's unreaped child (see the invariants).
        unsafe {
            libc::kill(pid, libc::SIGCONT);
            libc::kill(pid, signal);
        }
    }

    /// The host is gone: every reaper kills its tree; those on standby end.
    fn close(&mut self) {
        self.closing = true;
        // Their sockets close: they see the end and exit.
        self.standby.clear();
        for (&pid, command) in &self.reapers {
            if let Some(leaf) = &command.reaper.leaf {
                leaf.kill();
            }
            // SAFETY: as in `signal`.
            unsafe {
                libc::kill(pid, libc::SIGCONT);
                libc::kill(pid, libc::SIGUSR1);
            }
        }
    }

    /// Reaps every child that exited: a reaper's command is finishing; a stray
    /// was dealt with. Returns whether a reaper was reaped (its command ended,
    /// or it died on standby), so that the standby may be short.
    fn reap(&mut self) -> bool {
        let mut ended = false;
        for _ in 0..REAP_BATCH {
            let mut status = 0;
            // SAFETY: waits for any child of ours, without blocking.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                if pid < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                break;
            }
            if let Some(command) = self.reapers.remove(&pid) {
                ended = true;
                self.by_id.remove(&command.id);
                if !libc::WIFSIGNALED(status) {
                    // It reported, with nothing left: the link's end tells the
                    // host it is reaped (see `platform::supervisor::read_exit`);
                    // its empty leaf goes after that.
                    let Command { link, reaper, .. } = command;
                    drop(link);
                    if let Some(leaf) = reaper.leaf.filter(|leaf| !leaf.remove()) {
                        self.unremoved.push(leaf);
                    }
                    continue;
                }
                // Killed by its command, leaving descendants to us, or in its
                // own leaf's kill, having told the command's status first.
                self.strays = true;
                // Untold: nothing watched its leaf's limits to the end.
                let unwatched = || (status, command.reaper.leaf.as_ref().map(Leaf::unwatched).unwrap_or_default());
                let (status, observed) = told_status(&command.reaper.socket).unwrap_or_else(unwatched);
                self.finishing.push((command, status, observed));
            } else if let Some(index) = self.standby.iter().position(|reaper| reaper.pid == pid) {
                // Killed on standby (a command can signal any process of its user).
                ended = true;
                if let Some(reaper) = self.standby.remove(index) {
                    if let Some(leaf) = reaper.leaf {
                        leaf.remove();
                    }
                }
            } else {
                self.strays = true;
            }
        }
        ended
    }

    /// Reports every command whose reaper died of a signal, once nothing of
    /// it is left: its leaf removed (killed first: what is left there outlived
    /// its reaper), or no stray alive. Removes the leaves still to go.
    fn report_finished(&mut self) {
        let strays = self.strays;
        self.finishing.retain(|(command, status, told)| {
            // Counted before the leaf goes.
            let counted = command.reaper.leaf.as_ref().map(Leaf::observed).unwrap_or_default();
            let clean = match &command.reaper.leaf {
                Some(leaf) => remove_killing(leaf),
                None => !strays,
            };
            if clean {
                let Observed { cpu_ms, ended_after_exit, tampered, unwatched, .. } = *told;
                let observed = Observed { cpu_ms, ended_after_exit, tampered, unwatched, ..counted };
                let report = Report::Exited { status: *status, lost: false, observed };
                let _ = socket::send(&command.link, &report.encode(), &[], true);
            }
            !clean
        });
        self.unremoved.retain(|leaf| !remove_killing(leaf));
    }

    /// SIGKILLs every child that is neither a reaper nor on standby, with its
    /// descendants: orphans of a reaper that did not live to end them.
    fn kill_strays(&mut self) {
        let children = tree::children_of(self.me).unwrap_or_default();
        let ours = |pid: &libc::pid_t| self.reapers.contains_key(pid) || self.standby.iter().any(|r| r.pid == *pid);
        let strays: Vec<libc::pid_t> = children.into_iter().filter(|pid| !ours(pid)).collect();
        for &stray in &strays {
            tree::signal_descendants(stray, &[libc::SIGKILL]);
            // SAFETY: `stray` is this process's unreaped child.
            unsafe { libc::kill(stray, libc::SIGKILL) };
        }
        // Strays found now may still have children of their own to hand on.
        self.strays = !strays.is_empty();
    }
}

/// Removes `leaf`, or kills what is still in it for the next try.
fn remove_killing(leaf: &Leaf) -> bool {
    leaf.remove() || {
        leaf.kill();
        false
    }
}

/// The command status (and what it saw of its limits) a reaper told before
/// it killed its own leaf, if any.
fn told_status(socket: &OwnedFd) -> Option<(libc::c_int, Observed)> {
    let mut buf = [0; MESSAGE_LEN];
    let mut told = None;
    while let Ok(Some((len, _))) = socket::receive(socket.as_raw_fd(), &mut buf, true) {
        if let Some(Report::Exited { status, observed, .. }) = Report::decode(&buf[..len]) {
            told = Some((status, observed));
        }
    }
    told
}
