//! What a child is started from.

use std::path::PathBuf;
use std::time::Duration;

use super::output::OutputSink;
use super::spill::SpillPlace;
use super::stream::OutputLimits;
use super::terminal::TerminalSize;
use crate::limits::Limits;

/// The default time between SIGTERM and SIGKILL.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(3);

/// Everything needed to start one child.
pub struct ProcessSpec {
    /// The absolute program path (see [`resolve_program`](super::resolve_program)).
    pub program: PathBuf,
    /// `argv[1..]`.
    pub args: Vec<String>,
    /// The complete child environment; nothing else is inherited.
    pub env: Vec<(String, String)>,
    /// The child's working directory.
    pub cwd: PathBuf,
    /// What the child reads on standard input.
    pub stdin: Input,
    /// Where standard output goes.
    pub stdout: Output,
    /// Where standard error goes.
    pub stderr: Output,
    /// Where spill files go and whether they outlive the result.
    pub spill: SpillPlace,
    /// Kill the group after this long; `None` runs without a timer (background jobs).
    pub timeout: Option<Duration>,
    /// Time between SIGTERM and SIGKILL to the group; zero sends SIGKILL alone.
    pub grace: Duration,
    /// Live output, if wanted.
    pub on_output: Option<OutputSink>,
    /// Run on a new pseudo-terminal of this size instead: the command leads
    /// a session of its own with the terminal on 0–2, and the caller takes
    /// the master ([`Process::take_pipes`](super::Process::take_pipes)); `stdin`,
    /// `stdout` and `stderr` are not used. On Windows a pseudo console of
    /// this size, whose two pipes the caller takes.
    pub terminal: Option<TerminalSize>,
    /// Resource limits of the command (see [`crate::limits`]).
    pub limits: Limits,
}

/// What a child reads on standard input.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Input {
    /// `/dev/null` (`NUL` on Windows).
    #[default]
    Null,
    /// These bytes, written to a pipe that is then closed.
    Data(Vec<u8>),
    /// A pipe whose write end the caller takes ([`Process::take_pipes`](super::Process::take_pipes)).
    Pipe,
}

/// Where one of a child's output streams goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Captured here within these limits: a tail in memory, the whole stream
    /// in a spill file once it overflows.
    Capture(OutputLimits),
    /// A pipe whose read end the caller takes ([`Process::take_pipes`](super::Process::take_pipes)),
    /// raw: nothing is read or kept here.
    Pipe,
    /// The host's own stream (its fd 1 or 2), passed through.
    Inherit,
}

impl Default for Output {
    /// Captured within the default limits.
    fn default() -> Self {
        Self::Capture(OutputLimits::default())
    }
}

impl Output {
    /// The capture limits, for a captured stream.
    pub(super) fn limits(self) -> Option<OutputLimits> {
        match self {
            Self::Capture(limits) => Some(limits),
            Self::Pipe | Self::Inherit => None,
        }
    }
}

impl ProcessSpec {
    /// A spec with no arguments, an empty environment, stdin from `/dev/null`,
    /// output captured within the default limits, the default grace, and no
    /// timer.
    pub fn new(program: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: cwd.into(),
            stdin: Input::Null,
            stdout: Output::default(),
            stderr: Output::default(),
            spill: SpillPlace::default(),
            timeout: None,
            grace: DEFAULT_GRACE,
            on_output: None,
            terminal: None,
            limits: Limits::default(),
        }
    }
}
