//! The words the lifecycle and the platform share: how a group leader ended,
//! and the two signals the kill schedule sends. Both are plain data, so that
//! the schedule never names a platform's signal numbers.

use crate::limits::Observed;

/// How the group leader ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Exit {
    /// The exit code, when the leader exited normally.
    pub(super) code: Option<i32>,
    /// The signal name (`"SIGTERM"`, …), when a signal ended it.
    pub(super) signal: Option<&'static str>,
    /// The supervisor died while the command ran, so its reaper ended it.
    pub(super) lost: bool,
    /// What its limits did, as far as the reaper saw (nothing without one).
    pub(super) observed: Observed,
}

impl Exit {
    /// The status could not be read (the child was reaped by someone else, for
    /// instance when SIGCHLD is ignored).
    pub(super) const UNKNOWN: Exit = Exit { code: None, signal: None, lost: false, observed: Observed::NONE };
}

/// Who leads a command's group, and so how the host reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Control {
    /// The host's own child: its group is signalled with `killpg` while it is
    /// unreaped, and the host reaps it.
    Child,
    /// A reaper under the supervisor, the host's number `id` for it: the
    /// host asks the supervisor to signal it, and never reaps it. It reports
    /// its exit only once nothing of its command is left.
    Supervised {
        /// The host's number for the command.
        id: u64,
    },
}

/// The two signals this package sends to a group or its leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Signal {
    /// Asks to end (SIGTERM).
    Term,
    /// Ends at once (SIGKILL).
    Kill,
}
