//! The supervisor's loop: make reapers when the host asks for them and hand
//! each one's socket to the host, continue one the host cannot reach, reap,
//! report for a reaper that died with a command, end the strays it left,
//! and end everything when the host is gone.
//!
//! The host talks to its reapers directly: a command's start and exit never
//! pass through this process, which a command's critical path does not
//! reach. It makes reapers only when the host asks (its pool of idle ones
//! running low), so a host whose reapers come back from each command causes
//! no fork at all.
//!
//! Invariants:
//! - single-threaded, so a forked reaper may run anything, and a reaper's
//!   `PR_SET_PDEATHSIG` fires at this process's death, not at a thread's;
//! - a reaper is signalled only while it is this process's unreaped child,
//!   so a signal never reaches a process that reused its pid (the host asks
//!   this process to continue one, by its number);
//! - this process is a child subreaper: the descendants of a reaper that was
//!   killed (by its own command, say) are orphaned to it, and it SIGKILLs
//!   every child that is not a reaper, with all its descendants;
//! - it keeps a copy of each reaper's end of its socket until it reaped the
//!   reaper, so the host sees that socket's end only then. For a reaper that
//!   died with a command (its slot names one), it first reports the
//!   command's exit on that copy, once nothing of the command is left: its
//!   leaf removed, or no stray child alive. So a host that sees a result sees
//!   a clean slate, even after a command killed its own reaper;
//! - at the end of the host's socket (the host is gone, however it died) every
//!   reaper is told to kill its command's tree, and this process exits once
//!   none is left; the leaves of the cgroup tier are killed and removed.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use super::cgroup::{clone_into, Cgroups, Leaf};
use super::protocol::{Handout, Hello, Observed, Report, Request, MESSAGE_LEN};
use super::reaper::{self, Setup};
use super::slot::Slot;
use super::{descriptors, signals, socket, tree};

/// The most reapers the host may have asked for and not yet received: a
/// request beyond it is cut down.
const MOST_WANTED: u32 = 1024;

/// The most children reaped in one turn, so that strays forking and exiting
/// without end cannot keep the loop from killing them.
const REAP_BATCH: usize = 4096;

/// How often commands still finishing, and strays still to be killed, are
/// looked at again.
const RETRY: Duration = Duration::from_millis(5);

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
    let supervisor = Supervisor {
        // SAFETY: getpid cannot fail.
        me: unsafe { libc::getpid() },
        files,
        host,
        signal_fd,
        cgroups: if cgroups { Cgroups::detect() } else { None },
        made: 0,
        reapers: HashMap::new(),
        finishing: Vec::new(),
        unremoved: Vec::new(),
        strays: false,
        join_ahead: false,
        closing: false,
        wanted: 0,
    };
    // The host waits for this before its first request.
    let controllers = supervisor.cgroups.as_ref().map(Cgroups::controllers).unwrap_or_default();
    let _ = socket::send(&supervisor.host, &Hello { controllers }.encode(), &[], false);
    supervisor.run()
}

struct Supervisor {
    me: libc::pid_t,
    /// The descriptor limit the host gave, which its commands get back.
    files: libc::rlimit,
    host: OwnedFd,
    signal_fd: OwnedFd,
    cgroups: Option<Cgroups>,
    /// Reapers made so far, which numbers the next (and names its leaf).
    made: u64,
    /// Every live reaper, by pid.
    reapers: HashMap<libc::pid_t, Reaper>,
    /// Reapers that died with a command, each with the command's number,
    /// status and what was seen of its limits, to report once nothing of it
    /// is left.
    finishing: Vec<(Reaper, u64, libc::c_int, Observed)>,
    /// Leaves of reapers gone, not yet empty.
    unremoved: Vec<Leaf>,
    /// A child that is not a reaper may be alive.
    strays: bool,
    /// The host runs commands with limits a cgroup holds: reapers join their
    /// v1 leaves as they are made (moving a process between v1 cgroups takes
    /// a lock every fork in the system waits for, so hosts without such
    /// limits never pay for it).
    join_ahead: bool,
    /// The host is gone.
    closing: bool,
    /// Reapers the host asked for and did not get yet.
    wanted: u32,
}

/// A reaper: its pid and number, this process's copy of its end of its
/// socket, its leaf and the page it shares.
struct Reaper {
    pid: libc::pid_t,
    socket: OwnedFd,
    leaf: Option<Leaf>,
    slot: Slot,
    number: u64,
}

impl Supervisor {
    fn run(mut self) -> ! {
        loop {
            self.reap();
            if self.strays {
                self.kill_strays();
            }
            self.report_finished();
            let finishing = !self.finishing.is_empty() || !self.unremoved.is_empty();
            if self.closing && self.reapers.is_empty() && !self.strays && !finishing {
                if let Some(cgroups) = &self.cgroups {
                    cgroups.remove();
                }
                // SAFETY: ends this process; nothing is left to do.
                unsafe { libc::_exit(0) };
            }
            if self.wanted > 0 {
                // One reaper per turn, so that the host's other requests and
                // dying reapers are served in between.
                self.wanted -= 1;
                self.hand_out();
                self.wait(0);
                continue;
            }
            let retry = (self.strays || finishing).then_some(RETRY);
            self.wait(retry.map_or(-1, |retry| retry.as_millis() as libc::c_int));
        }
    }

    /// Waits up to `millis` (forever for -1) for the host or a child, and
    /// serves what came.
    fn wait(&mut self, millis: libc::c_int) {
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
            return;
        }
        while signals::next(&self.signal_fd).is_some() {}
        if polls[1].revents != 0 {
            self.serve_host();
        }
    }

    /// Handles every request waiting on the host's socket.
    fn serve_host(&mut self) {
        let mut buf = [0; MESSAGE_LEN + 1];
        loop {
            match socket::receive(self.host.as_raw_fd(), &mut buf, true) {
                Ok(Some((len, _))) => match Request::decode(&buf[..len]) {
                    Some(Request::Reapers { count, cgroup_limits }) => {
                        // Reapers made from now on join their v1 leaves
                        // ahead: this host uses such limits.
                        self.join_ahead |= cgroup_limits;
                        self.wanted = self.wanted.saturating_add(u32::from(count)).min(MOST_WANTED);
                    }
                    Some(Request::Continue { reaper }) => self.continue_reaper(reaper),
                    // A malformed request: any descriptors close here.
                    None => {}
                },
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return,
                // The end: the host is gone.
                Ok(None) | Err(_) => return self.close(),
            }
        }
    }

    /// Makes a reaper and hands the host its socket. A reaper that cannot be
    /// made, or handed over, is not: the host asks again when it still needs one.
    fn hand_out(&mut self) {
        let Ok((reaper, host_end)) = self.make_reaper() else { return };
        let handout = Handout { reaper: reaper.number, pid: reaper.pid as u32 };
        if socket::send(&self.host, &handout.encode(), &[host_end.as_raw_fd()], true).is_err() {
            return self.discard(reaper);
        }
        self.reapers.insert(reaper.pid, reaper);
    }

    /// Forks a reaper, born in a new leaf in the cgroup tier; returns it
    /// with the host's end of its socket (it has the other end, and so does
    /// the returned record).
    fn make_reaper(&mut self) -> io::Result<(Reaper, OwnedFd)> {
        let (host_end, reaper_end) = socket::pair()?;
        let slot = Slot::new()?;
        self.made += 1;
        let number = self.made;
        let leaf = self.cgroups.as_ref().and_then(|cgroups| cgroups.leaf(number));
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
            let setup = Setup {
                socket: reaper_end,
                slot,
                leaf,
                supervisor: self.me,
                files: self.files,
                join_ahead: self.join_ahead,
            };
            // Every descriptor but its own socket (the host's end among
            // them) is closed there first.
            reaper::run(setup);
        }
        Ok((Reaper { pid, socket: reaper_end, leaf, slot, number }, host_end))
    }

    /// Kills a reaper that could not be handed out; it is reaped as a stray.
    fn discard(&mut self, reaper: Reaper) {
        // SAFETY: `reaper.pid` is this process's unreaped child.
        unsafe { libc::kill(reaper.pid, libc::SIGKILL) };
        self.strays = true;
        if let Some(leaf) = reaper.leaf.filter(|leaf| !remove_killing(leaf)) {
            self.unremoved.push(leaf);
        }
    }

    /// Continues reaper `number`, which a command may have stopped.
    fn continue_reaper(&self, number: u64) {
        if let Some(reaper) = self.reapers.values().find(|reaper| reaper.number == number) {
            // SAFETY: `reaper.pid` is this process's unreaped child (see the invariants).
            unsafe { libc::kill(reaper.pid, libc::SIGCONT) };
        }
    }

    /// The host is gone: every reaper kills its tree and ends.
    fn close(&mut self) {
        self.closing = true;
        self.wanted = 0;
        for (&pid, reaper) in &self.reapers {
            if let Some(leaf) = &reaper.leaf {
                leaf.kill();
            }
            // SAFETY: `pid` is this process's unreaped child (see the invariants).
            unsafe {
                libc::kill(pid, libc::SIGCONT);
                libc::kill(pid, libc::SIGUSR1);
            }
        }
    }

    /// Reaps every child that exited: a reaper that ended idle is forgotten;
    /// one that died with a command has it finishing; a stray was dealt with.
    fn reap(&mut self) {
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
            let Some(reaper) = self.reapers.remove(&pid) else {
                self.strays = true;
                continue;
            };
            let (command, baseline) = reaper.slot.command();
            if command == 0 {
                // Idle, or its command reported: its socket's copy closes
                // here, and the host sees the end; its empty leaf goes.
                if let Some(leaf) = reaper.leaf.filter(|leaf| !leaf.remove()) {
                    self.unremoved.push(leaf);
                }
                continue;
            }
            // Killed by its command, leaving descendants to us, or in its
            // own leaf's kill, having left the command's status first.
            self.strays = true;
            let told = reaper.slot.told().and_then(|bytes| Report::decode(&bytes));
            let (status, observed) = match told {
                Some(Report::Exited { status, observed, .. }) => (status, observed),
                // Untold: nothing watched its leaf's limits to the end.
                _ => {
                    let counted = reaper.leaf.as_ref().map(|leaf| leaf.observed_since(baseline)).unwrap_or_default();
                    let unwatched = reaper.leaf.as_ref().map(Leaf::unwatched).unwrap_or_default().unwatched;
                    (status, Observed { unwatched, ..counted })
                }
            };
            self.finishing.push((reaper, command, status, observed));
        }
    }

    /// Reports every command whose reaper died with it, once nothing of it is
    /// left: its leaf removed (killed first: what is left there outlived its
    /// reaper), or no stray alive. Removes the leaves still to go.
    fn report_finished(&mut self) {
        let strays = self.strays;
        self.finishing.retain(|(reaper, id, status, observed)| {
            let clean = match &reaper.leaf {
                Some(leaf) => remove_killing(leaf),
                None => !strays,
            };
            if clean {
                let report =
                    Report::Exited { id: *id, status: *status, lost: false, retired: true, observed: *observed };
                let _ = socket::send(&reaper.socket, &report.encode(), &[], true);
            }
            !clean
        });
        self.unremoved.retain(|leaf| !remove_killing(leaf));
    }

    /// SIGKILLs every child that is not a reaper, with its descendants:
    /// orphans of a reaper that did not live to end them.
    fn kill_strays(&mut self) {
        let children = tree::children_of(self.me).unwrap_or_default();
        let strays: Vec<libc::pid_t> = children.into_iter().filter(|pid| !self.reapers.contains_key(pid)).collect();
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
