//! Signals to the process group and the SIGTERM → grace → SIGKILL schedule.
//!
//! Safety rule: the group is only signalled while its leader is unreaped. A
//! zombie leader keeps its pid, which is the group id, from being reused, so a
//! group signal can never reach an unrelated process. The lock in [`Group`]
//! orders every signal before the reap.
//!
//! A group led by the [reaper](super::reaper) is never signalled as a group
//! while the reaper runs. Its SIGTERM goes to the reaper, which passes it on to
//! every descendant; a SIGKILL would kill the reaper before the descendants
//! only it can reach, so its hard kill is SIGUSR1 to the reaper, which
//! SIGKILLs every descendant and exits;
//! the group's SIGKILL follows only if the reaper has not exited [`FORCE_AFTER`]
//! later (it was stopped or killed by the command).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::exit::{Exit, Signal};
use super::platform;
use super::result::{ProcessState, Status};
use super::sync::lock;
use super::teardown;

/// How long output may still drain after the group got SIGKILL. Killed writers
/// close their pipes at once; this only bounds descendants that left the group.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(250);

/// How long a reaper asked to kill everything may take before its group gets
/// SIGKILL anyway.
pub(super) const FORCE_AFTER: Duration = Duration::from_secs(1);

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
    /// The leader is the reaper (see the module comment).
    led_by_reaper: bool,
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
    /// When SIGKILL (for a reaper: SIGUSR1) was sent.
    killed_at: Option<Instant>,
    /// The group's SIGKILL went to a reaper that did not end in time.
    forced: bool,
    /// Nothing but the exited leader is left in the group: a reaper exited on
    /// its own, which it does only once it has no descendant left.
    alone: bool,
    reaped: bool,
}

impl Group {
    /// The group led by `pid`; `reaper` when the leader is the reaper.
    pub(super) fn new(pid: u32, grace: Duration, reaper: bool) -> Self {
        let state = Mutex::new(GroupState::default());
        Self { pgid: pid, grace, led_by_reaper: reaper, state, changed: Notify::new() }
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
    /// A leader that is alone gets no signal, but the grace still bounds how
    /// long a pipe someone else holds is read.
    ///
    /// Only a reaper's exit tells that the group is empty, and only when it
    /// exited on its own: SIGKILL may have come from its own command. Nothing
    /// a command can write (such as the pid namespace's last pid) is trusted.
    pub(super) fn leader_exited(&self, exit: Exit) {
        let mut state = lock(&self.state);
        if state.exit.is_some() {
            return;
        }
        // A reaper hard-killed before it took over its signals dies of the
        // SIGUSR1 itself, having started nothing: that is the SIGKILL it stands for.
        let exit = match exit.signal {
            Some("SIGUSR1") if self.led_by_reaper => Exit { signal: Some("SIGKILL"), ..exit },
            _ => exit,
        };
        state.exit = Some(exit);
        state.alone = self.led_by_reaper && exit.signal != Some("SIGKILL") && exit != Exit::UNKNOWN;
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

    /// When the SIGKILL to a reaper's group is due because the reaper did not
    /// end after its hard kill.
    pub(super) fn force_due(&self) -> Option<Instant> {
        let state = lock(&self.state);
        let waiting = self.led_by_reaper && !state.forced && state.exit.is_none() && !state.reaped;
        state.killed_at.filter(|_| waiting).map(|killed| killed + FORCE_AFTER)
    }

    /// SIGKILLs a reaper's group whose reaper did not end in time.
    pub(super) fn force(&self) {
        let mut state = lock(&self.state);
        if !state.reaped && !state.forced {
            platform::signal_group(self.pgid, Signal::Kill);
            state.forced = true;
        }
    }

    /// Whether the group may hold nothing but the (exited, unreaped) leader,
    /// so that a result can be published at once.
    pub(super) fn known_alone(&self) -> bool {
        let state = lock(&self.state);
        state.alone || state.killed_at.is_some()
    }

    /// Whether a live process other than the (exited, unreaped) leader is
    /// still in the group and has not been sent SIGKILL.
    pub(super) fn members_left(&self) -> bool {
        let state = lock(&self.state);
        !state.reaped && !state.alone && state.killed_at.is_none() && platform::group_has_live_members(self.pgid)
    }

    /// Reaps the exited leader; no group signal can follow.
    pub(super) fn reap(&self) {
        let mut state = lock(&self.state);
        if !state.reaped {
            teardown::forget(self.pgid);
            platform::reap(self.pgid);
            state.reaped = true;
        }
    }

    fn term(&self, state: &mut GroupState) {
        if state.reaped {
            return;
        }
        if self.led_by_reaper && state.exit.is_none() {
            // The reaper passes it on to every descendant, also to a command
            // it had not started yet when this arrived.
            platform::signal_leader(self.pgid, Signal::Term);
        } else {
            platform::signal_group(self.pgid, Signal::Term);
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
        if self.led_by_reaper && state.exit.is_none() {
            platform::signal_reaper(self.pgid);
        } else {
            platform::signal_group(self.pgid, Signal::Kill);
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
        let group = Group::new(u32::MAX >> 1, Duration::from_millis(50), false);
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
