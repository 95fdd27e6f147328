//! The words the lifecycle and the platform share: how a group leader ended,
//! and the two signals the kill schedule sends. Both are plain data, so that
//! the schedule never names a platform's signal numbers.

/// How the group leader ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Exit {
    /// The exit code, when the leader exited normally.
    pub(super) code: Option<i32>,
    /// The signal name (`"SIGTERM"`, …), when a signal ended it.
    pub(super) signal: Option<&'static str>,
}

impl Exit {
    /// The status could not be read (the child was reaped by someone else, for
    /// instance when SIGCHLD is ignored).
    pub(super) const UNKNOWN: Exit = Exit { code: None, signal: None };
}

/// The two signals this package sends to a group or its leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Signal {
    /// Asks to end (SIGTERM).
    Term,
    /// Ends at once (SIGKILL).
    Kill,
}
