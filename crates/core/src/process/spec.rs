//! What a child is started from.

use std::path::PathBuf;
use std::time::Duration;

use super::output::OutputSink;
use super::spill::SpillPlace;
use super::stream::OutputLimits;

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
    /// `None`: stdin is `/dev/null`. `Some`: written to a pipe, then closed.
    pub stdin: Option<Vec<u8>>,
    /// Limits for standard output.
    pub stdout: OutputLimits,
    /// Limits for standard error.
    pub stderr: OutputLimits,
    /// Where spill files go and whether they outlive the result.
    pub spill: SpillPlace,
    /// Kill the group after this long; `None` runs without a timer (background jobs).
    pub timeout: Option<Duration>,
    /// Time between SIGTERM and SIGKILL to the group.
    pub grace: Duration,
    /// Live output, if wanted.
    pub on_output: Option<OutputSink>,
}

impl ProcessSpec {
    /// A spec with no arguments, an empty environment, stdin from `/dev/null`,
    /// default limits and grace, and no timer.
    pub fn new(program: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: cwd.into(),
            stdin: None,
            stdout: OutputLimits::default(),
            stderr: OutputLimits::default(),
            spill: SpillPlace::default(),
            timeout: None,
            grace: DEFAULT_GRACE,
            on_output: None,
        }
    }
}
