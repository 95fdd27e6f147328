//! What callers learn about a process: its state while it runs, the output
//! since the last read, and the result once it ended.

use crate::limits::{Limit, LimitSet};
use std::path::PathBuf;
use std::time::Duration;

use super::spill::SpillFile;

/// Where a process is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The group leader has not exited yet.
    Running,
    /// The leader exited on its own (or by a signal from outside this package).
    Completed,
    /// The leader exited after this package killed it (timeout, kill, abort, terminate).
    Killed,
}

impl Status {
    /// Every status, in the order a process goes through them.
    pub const ALL: [Self; 3] = [Self::Running, Self::Completed, Self::Killed];

    /// The name JS callers see: `"running"`, `"completed"` or `"killed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Killed => "killed",
        }
    }
}

/// A snapshot of a process's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessState {
    /// Running, completed or killed.
    pub status: Status,
    /// The exit code, when the leader exited normally.
    pub exit_code: Option<i32>,
    /// The signal name (`"SIGTERM"`, …), when a signal ended the leader.
    pub signal: Option<&'static str>,
}

/// One stream's text from a whole-stream byte offset on
/// ([`Process::read_from`](super::Process::read_from)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputRead {
    /// The text from the offset asked for; the whole retained tail when that
    /// offset slid out of it.
    pub text: String,
    /// The offset to read from next: the end of what was read (a character
    /// still incomplete is left for the next read).
    pub next_offset: u64,
    /// The offset asked for slid out of the tail kept in memory: what lay
    /// between is only in the spill file, if anywhere.
    pub lossy: bool,
    /// The file holding the whole stream, once it started spilling and while
    /// it stays whole.
    pub spill_path: Option<PathBuf>,
}

/// Output produced since the previous [`Process::read_output`](super::Process::read_output).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputDelta {
    /// New standard output text.
    pub stdout: String,
    /// New standard error text.
    pub stderr: String,
    /// Something was dropped (over `max_bytes` unread) or replaced (invalid
    /// UTF-8) since the previous read.
    pub lossy: bool,
    /// The file holding the whole of standard output, once it started spilling.
    pub stdout_spill: Option<PathBuf>,
    /// The file holding the whole of standard error, once it started spilling.
    pub stderr_spill: Option<PathBuf>,
}

/// The captured result of one stream.
#[derive(Debug)]
pub struct StreamResult {
    /// The last `max_bytes` bytes, starting at a character boundary, decoded lossily.
    pub text: String,
    /// The stream was longer than `text`.
    pub truncated: bool,
    /// The complete stream, when it overflowed and stayed under `spill_max_bytes`.
    /// The file is deleted when the last handle to its result is dropped,
    /// unless the spec's [`SpillPlace::keep`](super::SpillPlace::keep) asked to keep it.
    pub spill_path: Option<PathBuf>,
    /// Why the stream's spill file could not be made or written (a full
    /// disk, a quota, its directory removed): the output past `text` is
    /// lost, and this says so. `None` when nothing failed, also when the
    /// stream only passed `spill_max_bytes`.
    pub spill_error: Option<SpillError>,
    /// Keeps the spill file alive for as long as this result.
    pub(super) _spill: Option<SpillFile>,
}

/// A spill file that could not be made or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillError {
    /// The OS error's name, as Node gives it (`ENOSPC`, `EDQUOT`, `EIO`,
    /// `ENOENT`), `UNKNOWN` for one without.
    pub code: &'static str,
    /// What failed, in words.
    pub message: String,
}

impl From<&std::io::Error> for SpillError {
    fn from(error: &std::io::Error) -> Self {
        let code = crate::error::os_error_code(error);
        Self {
            code,
            message: format!(
                "the spill file could not be written ({code}: {error}): the output before the kept tail is lost"
            ),
        }
    }
}

/// How a process ended. Every [`Process::wait`](super::Process::wait) caller gets the same one.
#[derive(Debug)]
pub struct RunResult {
    /// The exit code, when the leader exited normally.
    pub exit_code: Option<i32>,
    /// The signal name, when a signal ended the leader.
    pub signal: Option<&'static str>,
    /// The timer killed it (never together with `aborted`).
    pub timed_out: bool,
    /// An abort killed it (never together with `timed_out`).
    pub aborted: bool,
    /// The supervisor died while the command ran, so the command was killed
    /// (see [`SUPERVISOR_LOST`](crate::error::SUPERVISOR_LOST)).
    pub supervisor_lost: bool,
    /// The limit whose enforcement ended the command (see [`crate::limits::attribute`]).
    pub limit: Option<Limit>,
    /// Limits the command reached without being ended by them.
    pub limits_hit: LimitSet,
    /// Limits the command tampered with, which may not have held: it changed
    /// their cgroup files, or killed the reaper that watched them (see
    /// [`crate::limits::attribute`]).
    pub limits_tampered: LimitSet,
    /// Processes of the command still running when its leader exited,
    /// which the package then ended (a `cmd &` left behind): counted under
    /// the supervisor (Linux), 0 elsewhere; 255 stands for 255 or more.
    pub ended_after_exit: u32,
    /// The configured timeout, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// From spawn until the group was torn down and the leader reaped.
    pub duration: Duration,
    /// Standard output.
    pub stdout: StreamResult,
    /// Standard error.
    pub stderr: StreamResult,
}
