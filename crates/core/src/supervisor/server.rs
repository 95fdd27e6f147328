//! The supervisor's loop: read the host's requests, fork a reaper per
//! command, pass the host's signals on, reap, and end everything when the
//! host is gone.
//!
//! Invariants:
//! - single-threaded, so a forked reaper may run anything, and a reaper's
//!   `PR_SET_PDEATHSIG` fires at this process's death, not at a thread's;
//! - a reaper is signalled only while it is this process's unreaped child,
//!   so a signal never reaches a process that reused its pid;
//! - this process is a child subreaper: the descendants of a reaper that was
//!   killed (by its own command, say) are orphaned to it, and it SIGKILLs
//!   every child that is not one of its reapers, with all its descendants;
//! - a command's exit is reported to the host (on the command's link) only
//!   once its reaper is reaped and nothing of the command is left: its leaf
//!   removed, and no stray child alive. So a host that sees a result sees a
//!   clean slate, even after a command killed its own reaper;
//! - at the end of the host's socket (the host is gone, however it died) every
//!   reaper is told to kill its command's tree, and this process exits once
//!   none is left; the leaves of the cgroup tier are killed and removed.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use super::cgroup::{Cgroups, Leaf};
use super::protocol::{Ask, Report, Request, MESSAGE_LEN, SPAWN_FDS};
use super::reaper::{self, Assignment};
use super::{descriptors, signals, socket, tree};

/// How often commands still finishing, and strays still to be killed, are
/// looked at again.
const RETRY: Duration = Duration::from_millis(5);

/// Runs the supervisor on the host's socket, which is its stdin; never returns.
pub(crate) fn serve() -> ! {
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
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        // Its group is its own, but a terminal may still reach it.
        for signal in [libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU, libc::SIGPIPE] {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    let Ok(signal_fd) = signals::watch(&[libc::SIGCHLD]) else {
        // SAFETY: ends this process.
        unsafe { libc::_exit(2) }
    };
    let supervisor = Supervisor {
        // SAFETY: getpid cannot fail.
        me: unsafe { libc::getpid() },
        host,
        signal_fd,
        cgroups: Cgroups::detect(),
        reapers: HashMap::new(),
        by_id: HashMap::new(),
        finishing: Vec::new(),
        strays: false,
        closing: false,
    };
    supervisor.run()
}

struct Supervisor {
    me: libc::pid_t,
    host: OwnedFd,
    signal_fd: OwnedFd,
    cgroups: Option<Cgroups>,
    /// Live reapers by pid.
    reapers: HashMap<libc::pid_t, Command>,
    /// Live reapers by command id.
    by_id: HashMap<u64, libc::pid_t>,
    /// Commands whose reaper was reaped, not yet reported.
    finishing: Vec<(Command, libc::c_int)>,
    /// A child that is not a reaper may be alive.
    strays: bool,
    /// The host is gone.
    closing: bool,
}

/// One command: its number, its link to the host, its leaf.
struct Command {
    id: u64,
    link: OwnedFd,
    leaf: Option<Leaf>,
}

impl Supervisor {
    fn run(mut self) -> ! {
        loop {
            self.reap();
            if self.strays {
                self.kill_strays();
            }
            self.report_finished();
            if self.closing && self.reapers.is_empty() && !self.strays && self.finishing.is_empty() {
                if let Some(cgroups) = &self.cgroups {
                    cgroups.remove();
                }
                // SAFETY: ends this process; nothing is left to do.
                unsafe { libc::_exit(0) };
            }
            let retry = self.strays || !self.finishing.is_empty();
            self.wait(if retry { RETRY.as_millis() as libc::c_int } else { -1 });
        }
    }

    /// Waits up to `millis` (forever for -1) for the host or a child, and
    /// serves what came.
    fn wait(&mut self, millis: libc::c_int) {
        let mut polls = [
            libc::pollfd { fd: self.signal_fd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: if self.closing { -1 } else { self.host.as_raw_fd() }, events: libc::POLLIN, revents: 0 },
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
                Ok(Some((len, fds))) => match Request::decode(&buf[..len]) {
                    Some(Request::Spawn { id }) => self.spawn(id, fds),
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

    /// Forks the reaper of command `id`, with the link and stdio that came
    /// with the request.
    fn spawn(&mut self, id: u64, fds: Vec<OwnedFd>) {
        let Ok([link, stdin, stdout, stderr]) = <[OwnedFd; SPAWN_FDS.len()]>::try_from(fds) else {
            // Without its link no one hears of the command: nothing to start.
            return;
        };
        let leaf = self.cgroups.as_ref().and_then(|cgroups| cgroups.leaf(id));
        // Kept to report the exit on; the reaper gets its own copy.
        let Ok(kept) = link.try_clone() else { return };
        // SAFETY: this process is single-threaded, so the child may run anything.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // The reaper holds neither of the supervisor's own descriptors: a
            // copy of its end of the host's socket would keep the host from
            // seeing the supervisor's death.
            // SAFETY: the child's copies; `reaper::run` never returns, so the
            // structs that own them are never dropped here.
            unsafe {
                libc::close(self.host.as_raw_fd());
                libc::close(self.signal_fd.as_raw_fd());
            }
            reaper::run(Assignment { link, stdio: [stdin, stdout, stderr], leaf, supervisor: self.me });
        }
        if pid < 0 {
            let errno = io::Error::last_os_error().raw_os_error().unwrap_or(libc::EAGAIN);
            let _ = socket::send(&link, &Report::Failed { errno }.encode(), &[], true);
            if let Some(leaf) = leaf {
                leaf.remove();
            }
            return;
        }
        self.reapers.insert(pid, Command { id, link: kept, leaf });
        self.by_id.insert(id, pid);
    }

    /// Passes the host's `ask` on to command `id`'s reaper, woken first in
    /// case its command stopped it.
    fn signal(&self, id: u64, ask: Ask) {
        let Some(&pid) = self.by_id.get(&id) else { return };
        let signal = match ask {
            Ask::Term => libc::SIGTERM,
            Ask::Kill => libc::SIGUSR1,
        };
        // SAFETY: `pid` is this process's unreaped child (see the invariants).
        unsafe {
            libc::kill(pid, libc::SIGCONT);
            libc::kill(pid, signal);
        }
    }

    /// The host is gone: every reaper kills its tree.
    fn close(&mut self) {
        self.closing = true;
        for (&pid, Command { leaf, .. }) in &self.reapers {
            if let Some(leaf) = leaf {
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
    /// was dealt with.
    fn reap(&mut self) {
        loop {
            let mut status = 0;
            // SAFETY: waits for any child of ours, without blocking.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                if pid < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                break;
            }
            match self.reapers.remove(&pid) {
                Some(command) => {
                    self.by_id.remove(&command.id);
                    // A reaper that died of a signal may have been killed by
                    // its command, leaving descendants to us.
                    if libc::WIFSIGNALED(status) {
                        self.strays = true;
                    }
                    self.finishing.push((command, status));
                }
                None => self.strays = true,
            }
        }
    }

    /// Reports every finishing command with nothing left: its leaf removed
    /// (killed first: what is left there outlived its reaper), and no stray
    /// alive. The reaper exited as its command did, so its status is the
    /// command's.
    fn report_finished(&mut self) {
        let strays = self.strays;
        self.finishing.retain(|(command, status)| {
            let clean = match &command.leaf {
                Some(leaf) => leaf.remove() || {
                    leaf.kill();
                    false
                },
                None => !strays,
            };
            if clean {
                let report = Report::Exited { status: *status, lost: false };
                let _ = socket::send(&command.link, &report.encode(), &[], true);
            }
            !clean
        });
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
