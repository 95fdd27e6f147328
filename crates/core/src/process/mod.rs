//! Process control: start a command as the leader of its own process group with
//! exactly the environment it is given, capture its output in bounded memory,
//! and end the whole group when the leader exits, times out or is killed. On
//! Linux the leader is the [`reaper`], which ends every descendant, also those
//! that left the group.
//!
//! Everything here is built to run inside a Node process (see the engineering
//! notes, "Spawning from inside Node: traps"): children start through
//! `posix_spawn` (no `pre_exec`, an absolute program path), and exits are
//! detected without SIGCHLD, which libuv owns.
//!
//! A Tokio task supervises each child (`supervise`), or on Linux a [`Reactor`]
//! that a caller's event loop turns, until the child leaves the ordinary path
//! (a kill, a timeout, a group outliving its leader) and goes to such a task.

#[cfg(target_os = "linux")]
mod deadline;
mod group;
#[cfg(unix)]
mod guardian;
mod output;
mod program;
#[cfg(target_os = "linux")]
mod reactor;
#[cfg(target_os = "linux")]
pub mod reaper;
mod spawn;
mod spill;
#[cfg(unix)]
mod supervise;
#[cfg(unix)]
mod teardown;
#[cfg(unix)]
mod wait;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use group::{Group, KillCause};
use output::Capture;

pub use output::OutputReceipt;
pub use program::{check_workdir, resolve_program};
#[cfg(target_os = "linux")]
pub use reactor::Reactor;
pub use spawn::{spawn, spawn_async, Spawner};
pub use spill::{remove_spill_dir, remove_spill_file, SpillPlace};
#[cfg(unix)]
pub use teardown::end_all;

/// The default time between SIGTERM and SIGKILL.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(3);

/// How much of one output stream is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Bytes kept in memory: the tail of the stream, and the cap on text not yet
    /// taken by [`Process::read_output`].
    pub max_bytes: usize,
    /// The largest spill file; a stream that outgrows it loses its spill file.
    pub spill_max_bytes: u64,
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self { max_bytes: 64_000, spill_max_bytes: 64 * 1024 * 1024 }
    }
}

/// One of the two captured output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamKind {
    /// The child's standard output.
    Stdout,
    /// The child's standard error.
    Stderr,
}

impl StreamKind {
    /// `"stdout"` or `"stderr"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
        }
    }
}

/// Receives output as it arrives, decoded to text; a multi-byte character is
/// never split across two calls. Called from a runtime thread: it must not block
/// for long or panic.
///
/// Each chunk comes with an [`OutputReceipt`]: keep it until the chunk has been
/// consumed (for Node, until the JS callback ran), then drop it. While the
/// receipts a process's sink holds add up to [`LIVE_OUTPUT_BUDGET`], reading
/// that process's pipes pauses and the child blocks on a full pipe, so a
/// consumer slower than the child (a busy JS thread) slows the child down
/// instead of queueing its output without bound.
pub type OutputSink = Arc<dyn Fn(StreamKind, &str, OutputReceipt) + Send + Sync>;

/// How much live output (bytes of text) one process may have handed to its
/// sink and not yet had back as dropped [`OutputReceipt`]s.
pub const LIVE_OUTPUT_BUDGET: usize = 1 << 20;

/// Everything needed to start one child.
pub struct ProcessSpec {
    /// The absolute program path (see [`resolve_program`]).
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

/// Why [`Process::kill`] was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillReason {
    /// An explicit kill request.
    Requested,
    /// The caller's abort signal fired; reported as `aborted`.
    Aborted,
}

/// Output produced since the previous [`Process::read_output`].
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
    /// unless the spec's [`SpillPlace::keep`] asked to keep it.
    pub spill_path: Option<PathBuf>,
    /// Keeps the spill file alive for as long as this result.
    _spill: Option<spill::SpillFile>,
}

/// How a process ended. Every [`Process::wait`] caller gets the same one.
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
    /// The configured timeout, in milliseconds.
    pub timeout_ms: Option<u64>,
    /// From spawn until the group was torn down and the leader reaped.
    pub duration: Duration,
    /// Standard output.
    pub stdout: StreamResult,
    /// Standard error.
    pub stderr: StreamResult,
}

/// A running or finished child. Cheap to clone; all clones share one process.
#[derive(Clone)]
pub struct Process {
    shared: Arc<Shared>,
}

/// What the handle, the supervising task and the readers share.
struct Shared {
    pid: u32,
    started: Instant,
    timeout: Option<Duration>,
    group: Group,
    stdout: Mutex<Capture>,
    stderr: Mutex<Capture>,
    outcome: Mutex<Outcome>,
    /// The reactor driving the process, while one does (see [`Reactor`]).
    #[cfg(target_os = "linux")]
    reactor: std::sync::OnceLock<std::sync::Weak<reactor::Inner>>,
}

/// The result once published, or the callbacks waiting for it.
enum Outcome {
    Pending(Vec<FinishCallback>),
    Published(Arc<RunResult>),
}

type FinishCallback = Box<dyn FnOnce(Arc<RunResult>) + Send>;

impl Shared {
    fn capture(&self, kind: StreamKind) -> &Mutex<Capture> {
        match kind {
            StreamKind::Stdout => &self.stdout,
            StreamKind::Stderr => &self.stderr,
        }
    }
}

impl Process {
    /// The child's pid, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.shared.pid
    }

    /// Whether the leader is still running and how it ended.
    pub fn state(&self) -> ProcessState {
        self.shared.group.state()
    }

    /// Starts SIGTERM to the group, then SIGKILL after the grace. Returns `true`
    /// the first time while the leader runs, `false` after that.
    pub fn kill(&self, reason: KillReason) -> bool {
        let started = self.shared.group.kill(match reason {
            KillReason::Requested => KillCause::Requested,
            KillReason::Aborted => KillCause::Aborted,
        });
        if started {
            self.hand_to_runtime();
        }
        started
    }

    /// SIGKILLs the group now, without a grace (environment teardown, process exit).
    pub fn terminate_now(&self) {
        self.shared.group.terminate_now();
        self.hand_to_runtime();
    }

    /// The timeout ran out (for a process a reactor drives; the runtime's
    /// supervisor keeps its own timer).
    #[cfg(target_os = "linux")]
    fn expire(&self) {
        if self.shared.group.kill(KillCause::Timeout) {
            self.hand_to_runtime();
        }
    }

    /// A killed process leaves its reactor's fast path: the runtime's
    /// supervisor follows the kill schedule from here.
    fn hand_to_runtime(&self) {
        #[cfg(target_os = "linux")]
        if let Some(reactor) = self.shared.reactor.get().and_then(std::sync::Weak::upgrade) {
            reactor.release(&self.shared);
        }
    }

    /// Takes the text produced since the previous call. Unread text is capped at
    /// `max_bytes` per stream, keeping the newest.
    pub fn read_output(&self) -> OutputDelta {
        let (stdout, out_lossy, stdout_spill) = lock(&self.shared.stdout).take_unread();
        let (stderr, err_lossy, stderr_spill) = lock(&self.shared.stderr).take_unread();
        OutputDelta { stdout, stderr, lossy: out_lossy || err_lossy, stdout_spill, stderr_spill }
    }

    /// Waits until the group is gone and the leader reaped.
    pub async fn wait(&self) -> Arc<RunResult> {
        let (sender, receiver) = oneshot::channel();
        self.on_finish(move |result| {
            let _ = sender.send(result);
        });
        match receiver.await {
            Ok(result) => result,
            // Only a process whose result can never be published drops its
            // callbacks (see `supervise::Unfinished`): it never finishes.
            Err(_) => std::future::pending().await,
        }
    }

    /// Calls `callback` with the result once the group is gone and the leader
    /// reaped: on the thread that publishes it (a runtime worker), or right
    /// away on this thread when it is already published. It must not block.
    /// Unlike [`Process::wait`] this needs no task of its own, so a result can
    /// be handed on (to a JS thread) without waking another thread first.
    pub fn on_finish(&self, callback: impl FnOnce(Arc<RunResult>) + Send + 'static) {
        let result = match &mut *lock(&self.shared.outcome) {
            Outcome::Pending(waiting) => return waiting.push(Box::new(callback)),
            Outcome::Published(result) => Arc::clone(result),
        };
        callback(result);
    }
}

/// Locks a mutex, ignoring poisoning: every critical section here leaves the
/// data consistent, so a panic elsewhere must not take output or kills with it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
