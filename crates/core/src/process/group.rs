//! Signals to the process group and the SIGTERM → grace → SIGKILL schedule.
//!
//! Safety rule: the host signals a group only while its leader is the
//! host's unreaped child. A zombie leader keeps its pid, which is the group
//! id, from being reused, so a group signal can never reach an unrelated
//! process. The lock in [`Group`] orders every signal before the reap.
//!
//! A group led by a reaper under the supervisor ([`Control::Supervised`]) is
//! never signalled by the host at all: its SIGTERM and its hard kill are asks
//! to the supervisor, which signals its own child, the reaper. The reaper
//! passes a SIGTERM on to every descendant, and for the hard kill SIGKILLs
//! every descendant until none is left; it reports its exit only then, so
//! its exit says the group is empty.

use crate::limits::Observed;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::exit::{Control, Exit, Signal};
use super::platform;
use super::result::{ProcessState, Status};
use super::sync::lock;
use super::teardown;
use crate::supervisor::protocol::Ask;

/// How long output may still drain after the group got SIGKILL. Killed writers
/// close their pipes at once; this only bounds descendants that left the group.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(250);

/// Why this package killed a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KillCause {
    /// The timer ran out.
    Timeout,
    /// An explicit kill, or a teardown's.
    Requested,
    /// The caller's abort signal.
    Aborted,
}

/// One process group and its kill schedule.
pub(super) struct Group {
    /// The leader's pid, which is the group id.
    pgid: u32,
    grace: Duration,
    /// How the leader is reached (see the module comment).
    control: Control,
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
    /// When SIGKILL (for a reaper: the ask to kill) was sent.
    killed_at: Option<Instant>,
    /// Nothing but the exited leader is left in the group: a reaper reports
    /// its exit only once it has no descendant left.
    alone: bool,
    reaped: bool,
}

impl Group {
    /// The group led by `pid`, reached as `control` says.
    pub(super) fn new(pid: u32, grace: Duration, control: Control) -> Self {
        let state = Mutex::new(GroupState::default());
        Self { pgid: pid, grace, control, state, changed: Notify::new() }
    }

    /// The state as [`super::Process::state`] reports it.
    pub(super) fn state(&self) -> ProcessState {
        let state = lock(&self.state);
        let Some(exit) = state.exit else {
            return ProcessState { status: Status::Running, exit_code: None, signal: None };
        };
        let status = if state.cause.is_some() || exit.lost { Status::Killed } else { Status::Completed };
        ProcessState { status, exit_code: exit.code, signal: exit.signal }
    }

    /// How the leader is reached.
    pub(super) fn control(&self) -> Control {
        self.control
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
    /// first call counts (a task dropped early reads the exit again).
    /// A leader that is alone gets no signal, but the grace still bounds how
    /// long a pipe someone else holds is read.
    ///
    /// Only the supervisor's side tells that the group is empty: a reaper
    /// reports once it has no descendant left, and for a reaper its command
    /// killed the supervisor reports once it ended what that left. The host
    /// has nothing left to signal. Nothing a command can write (such as the
    /// pid namespace's last pid) is trusted.
    pub(super) fn leader_exited(&self, exit: Exit) {
        let mut state = lock(&self.state);
        if state.exit.is_some() {
            return;
        }
        state.exit = Some(exit);
        state.alone = matches!(self.control, Control::Supervised { .. });
        self.after_exit(&mut state);
    }

    /// What the command's limits did, as its reaper saw.
    pub(super) fn observed(&self) -> Observed {
        lock(&self.state).exit.map_or(Observed::NONE, |exit| exit.observed)
    }

    /// Whether the supervisor died while the command ran.
    pub(super) fn lost(&self) -> bool {
        lock(&self.state).exit.is_some_and(|exit| exit.lost)
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
        !state.reaped && !state.alone && state.killed_at.is_none() && platform::group_has_live_members(self.pgid)
    }

    /// Reaps the exited leader (the supervisor reaps its reapers itself); no
    /// group signal can follow.
    pub(super) fn reap(&self) {
        let mut state = lock(&self.state);
        if !state.reaped {
            teardown::forget(self.pgid);
            if self.control == Control::Child {
                platform::reap(self.pgid);
            }
            state.reaped = true;
        }
    }

    fn term(&self, state: &mut GroupState) {
        if state.reaped {
            return;
        }
        // Without a grace a SIGTERM would only race the SIGKILL: a handler
        // that wins the race runs (and may write) although it had no time.
        if self.grace.is_zero() {
            self.hard_kill(state);
            return;
        }
        match self.control {
            // The reaper passes it on to every descendant, also to a command
            // it had not started yet when this arrived.
            Control::Supervised { id } if state.exit.is_none() => platform::supervisor::ask(id, Ask::Term),
            // A reaper's exit says nothing is left.
            Control::Supervised { .. } => {}
            Control::Child => platform::signal_group(self.pgid, Signal::Term),
        }
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
        match self.control {
            Control::Supervised { id } if state.exit.is_none() => platform::supervisor::ask(id, Ask::Kill),
            Control::Supervised { .. } => {}
            Control::Child => platform::signal_group(self.pgid, Signal::Kill),
        }
        state.killed_at = Some(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_leader_gets_no_signal_but_its_pipes_are_still_read_only_for_the_grace() {
        // No process has this pid, and none is signalled: the group is alone.
        let group = Group::new(u32::MAX >> 1, Duration::from_millis(50), Control::Child);
        let mut state = lock(&group.state);
        state.exit = Some(Exit { code: Some(0), signal: None, ..Exit::UNKNOWN });
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
