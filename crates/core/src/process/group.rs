//! Signals to the process group and the SIGTERM → grace → SIGKILL schedule.
//!
//! Safety rule: the group is only signalled while its leader is unreaped. A
//! zombie leader keeps its pid, which is the group id, from being reused, so a
//! group signal can never reach an unrelated process. The lock in [`Group`]
//! orders every signal before the reap.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::{lock, ProcessState, Status};

/// How long output may still drain after the group got SIGKILL. Killed writers
/// close their pipes at once; this only bounds descendants that left the group.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(250);

/// How the group leader ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Exit {
    pub(super) code: Option<i32>,
    pub(super) signal: Option<&'static str>,
}

impl Exit {
    /// The status could not be read (the child was reaped by someone else, for
    /// instance when SIGCHLD is ignored).
    pub(super) const UNKNOWN: Exit = Exit { code: None, signal: None };
}

/// Why this package killed a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KillCause {
    Timeout,
    Requested,
    Aborted,
}

/// The two signals this package sends.
#[derive(Debug, Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

/// One process group and its kill schedule.
pub(super) struct Group {
    /// The leader's pid, which is the group id.
    pgid: u32,
    grace: Duration,
    state: Mutex<GroupState>,
    /// Wakes the supervising task when a kill changes the schedule.
    pub(super) changed: Notify,
}

#[derive(Default)]
struct GroupState {
    /// The leader's exit, once seen (it may still be unreaped).
    exit: Option<Exit>,
    /// The first kill wins.
    cause: Option<KillCause>,
    /// When SIGKILL is due after the SIGTERM.
    kill_due: Option<Instant>,
    /// When SIGKILL was sent.
    killed_at: Option<Instant>,
    /// The leader exited before any other process was started: nothing else
    /// is in the group, and nothing can join it.
    alone: bool,
    reaped: bool,
}

impl Group {
    pub(super) fn new(pid: u32, grace: Duration) -> Self {
        Self { pgid: pid, grace, state: Mutex::new(GroupState::default()), changed: Notify::new() }
    }

    /// The state as [`super::Process::state`] reports it.
    pub(super) fn state(&self) -> ProcessState {
        let state = lock(&self.state);
        let Some(exit) = state.exit else {
            return ProcessState { status: Status::Running, exit_code: None, signal: None };
        };
        let status = if state.cause.is_some() { Status::Killed } else { Status::Completed };
        ProcessState { status, exit_code: exit.code, signal: exit.signal }
    }

    /// The kill cause, for the final result.
    pub(super) fn cause(&self) -> Option<KillCause> {
        lock(&self.state).cause
    }

    /// Starts SIGTERM → grace → SIGKILL, once, while the leader runs.
    pub(super) fn kill(&self, cause: KillCause) -> bool {
        let mut state = lock(&self.state);
        if state.exit.is_some() || state.cause.is_some() || state.reaped {
            return false;
        }
        state.cause = Some(cause);
        self.term(&mut state);
        drop(state);
        self.changed.notify_one();
        true
    }

    /// SIGKILLs the group at once.
    pub(super) fn terminate_now(&self) {
        let mut state = lock(&self.state);
        if state.exit.is_none() {
            state.cause.get_or_insert(KillCause::Requested);
        }
        self.hard_kill(&mut state);
        drop(state);
        self.changed.notify_one();
    }

    /// Records the leader's exit and sends SIGTERM to whatever is left of the
    /// group, starting the grace unless a kill already started it. Only the
    /// first call counts (a reactor may have seen the exit before its hand-over).
    /// A leader that started nothing is alone: no signal, which would also
    /// wake the exiting leader just to have it preempt this thread, but the
    /// grace still bounds how long a pipe someone else holds is read.
    pub(super) fn leader_exited(&self, exit: Exit) {
        let mut state = lock(&self.state);
        if state.exit.is_some() {
            return;
        }
        state.exit = Some(exit);
        state.alone = no_process_started_since(self.pgid);
        self.after_exit(&mut state);
    }

    /// The signal and grace after the leader's exit, as `state.alone` says.
    fn after_exit(&self, state: &mut GroupState) {
        if state.killed_at.is_none() {
            if state.alone {
                self.start_grace(state);
            } else {
                self.term(state);
            }
        }
    }

    /// When the SIGTERM's grace runs out, while SIGKILL is still to come.
    pub(super) fn kill_due(&self) -> Option<Instant> {
        let state = lock(&self.state);
        state.kill_due.filter(|_| state.killed_at.is_none())
    }

    /// After the leader exited: how long output may still be read. Until the
    /// grace ends, then for [`DRAIN_AFTER_KILL`] after the SIGKILL.
    pub(super) fn drain_deadline(&self) -> Option<Instant> {
        let state = lock(&self.state);
        match state.killed_at {
            Some(killed) => Some(killed + DRAIN_AFTER_KILL),
            None => state.kill_due,
        }
    }

    /// Sends the SIGKILL that ends the grace. Returns `false` when it was
    /// already sent.
    pub(super) fn escalate(&self) -> bool {
        let mut state = lock(&self.state);
        if state.killed_at.is_some() {
            return false;
        }
        self.hard_kill(&mut state);
        true
    }

    /// Whether a live process other than the (exited, unreaped) leader is
    /// still in the group and has not been sent SIGKILL.
    pub(super) fn members_left(&self) -> bool {
        let state = lock(&self.state);
        !state.reaped && !state.alone && state.killed_at.is_none() && group_has_live_members(self.pgid)
    }

    /// Reaps the exited leader; no group signal can follow.
    pub(super) fn reap(&self) {
        let mut state = lock(&self.state);
        if !state.reaped {
            #[cfg(unix)]
            {
                super::teardown::forget(self.pgid);
                super::wait::reap(self.pgid);
            }
            state.reaped = true;
        }
    }

    fn term(&self, state: &mut GroupState) {
        if state.reaped {
            return;
        }
        signal_group(self.pgid, Signal::Term);
        self.start_grace(state);
    }

    /// Starts the grace before SIGKILL, unless a kill already started it.
    fn start_grace(&self, state: &mut GroupState) {
        // A grace too long to represent never runs out.
        state.kill_due = state.kill_due.or_else(|| Instant::now().checked_add(self.grace));
    }

    fn hard_kill(&self, state: &mut GroupState) {
        if state.reaped || state.killed_at.is_some() {
            return;
        }
        signal_group(self.pgid, Signal::Kill);
        state.killed_at = Some(Instant::now());
    }
}

/// Signals every process in the group. ESRCH (nothing left but a zombie) and
/// EPERM (a member changed its credentials) leave nothing to do.
#[cfg(unix)]
fn signal_group(pgid: u32, signal: Signal) {
    let signal = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: killpg has no memory effects; the pgid is our unreaped child's pid.
    unsafe { libc::killpg(pgid as libc::pid_t, signal) };
}

/// Whether any process but `pgid` itself is a live (not zombie) member of
/// group `pgid`. Elsewhere than on Linux there is no cheap way to ask, and
/// members that outlive the SIGTERM are not chased.
///
/// Every other member was created after the leader, so on Linux only the pids
/// handed out since then can be members: the candidates are the pids after
/// `pgid` up to the namespace's last pid (wrapping at `pid_max`). Each costs
/// one `getpgid` call; only a match reads `/proc/<pid>/stat` for its state.
/// When many pids were handed out since (a long command on a busy host) the
/// live pids in `/proc` are fewer than the candidates, so those are checked.
#[cfg(target_os = "linux")]
fn group_has_live_members(pgid: u32) -> bool {
    const MAX_CANDIDATES: u32 = 4096;
    // Fixed at boot, so read once; the last pid changes with every fork.
    static PID_MAX: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    let is_member = |pid: u32| {
        // SAFETY: getpgid only reads the kernel's process table.
        pid != pgid
            && unsafe { libc::getpgid(pid as libc::pid_t) } == pgid as libc::pid_t
            && stat_state(pid).is_some_and(|state| state != 'Z' && state != 'X')
    };
    let max = *PID_MAX.get_or_init(|| read_number("/proc/sys/kernel/pid_max"));
    if let (Some(last), Some(max)) = (last_pid(), max) {
        let handed_out = if last >= pgid { last - pgid } else { max - pgid + last };
        if handed_out <= MAX_CANDIDATES {
            return (1..=handed_out).map(|offset| (pgid + offset - 1) % max + 1).any(is_member);
        }
    }
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries.flatten().filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok()).any(is_member)
}

/// Whether no process was started since `pgid`, the leader: then the group
/// can hold nothing but the leader (every other member is created after it).
/// The namespace's last pid is still the leader's; a zombie leader's pid is
/// never handed out again, so a wrap of the pid space cannot fake that.
#[cfg(target_os = "linux")]
fn no_process_started_since(pgid: u32) -> bool {
    last_pid() == Some(pgid)
}

/// The pid namespace's most recently handed-out pid.
#[cfg(target_os = "linux")]
fn last_pid() -> Option<u32> {
    read_number("/proc/sys/kernel/ns_last_pid")
}

#[cfg(not(target_os = "linux"))]
fn no_process_started_since(_pgid: u32) -> bool {
    false
}

/// A small number from a `/proc` file, read without allocating (this runs
/// after every exit).
#[cfg(target_os = "linux")]
fn read_number(path: &str) -> Option<u32> {
    use std::io::Read;
    let mut buffer = [0u8; 24];
    let length = std::fs::File::open(path).ok()?.read(&mut buffer).ok()?;
    std::str::from_utf8(&buffer[..length]).ok()?.trim().parse().ok()
}

/// The state letter of `pid`, from `/proc/<pid>/stat`: `pid (comm) state …`,
/// where `comm` may itself hold spaces and parentheses.
#[cfg(target_os = "linux")]
fn stat_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.get(stat.rfind(')')? + 1..)?.split_ascii_whitespace().next()?.chars().next()
}

#[cfg(not(target_os = "linux"))]
fn group_has_live_members(_pgid: u32) -> bool {
    false
}

/// No process can exist where spawning is unsupported.
#[cfg(not(unix))]
fn signal_group(_pgid: u32, _signal: Signal) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_leader_gets_no_signal_but_its_pipes_are_still_read_only_for_the_grace() {
        // No process has this pid, and none is signalled: the group is alone.
        let group = Group::new(u32::MAX >> 1, Duration::from_millis(50));
        let mut state = lock(&group.state);
        state.exit = Some(Exit { code: Some(0), signal: None });
        state.alone = true;
        group.after_exit(&mut state);
        let due = state.kill_due.expect("the grace started");
        assert!(due <= Instant::now() + Duration::from_millis(50));
        assert!(state.killed_at.is_none());
        drop(state);
        assert_eq!(group.drain_deadline(), Some(due));
        assert!(!group.members_left());
    }
}
