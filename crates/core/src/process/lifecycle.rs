//! A process's life as every driver sees it: the state the handle, the driver
//! and the readers share, the kills that change its schedule, and the one
//! publication of its result to whoever waits.
//!
//! Invariant: the result is published only once nothing of the group is left
//! running (or SIGKILL went to it), and the leader is reaped first, so a caller
//! that sees a result sees a clean slate. Publishing happens once; callbacks
//! registered before it run on the publishing thread, later ones at once.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::group::{Group, KillCause};
use super::output::Capture;
use super::result::RunResult;
use super::sync::lock;
use crate::limits::{attribute, Ending, Limits};

/// What the handle, the driver and the readers share.
pub(super) struct Shared {
    pub(super) pid: u32,
    pub(super) started: Instant,
    pub(super) timeout: Option<Duration>,
    pub(super) group: Group,
    pub(super) stdout: Mutex<Capture>,
    pub(super) stderr: Mutex<Capture>,
    /// The raw pipes the caller takes ([`Process::take_pipes`](super::Process::take_pipes)).
    pub(super) handed: Mutex<Pipes>,
    pub(super) outcome: Mutex<Outcome>,
    /// Under the supervisor, a second hold on the command's reaper, for the
    /// one reader left when the driver's task is gone (`supervise`); let go
    /// when the result is published, not when the handle goes.
    pub(super) link: Mutex<Option<super::platform::supervisor::Link>>,
    /// The command's resource limits, to tell which ended it.
    pub(super) limits: Limits,
}

/// The host's ends of a child's raw pipes, for the caller: the write end of
/// stdin, the read ends of stdout and stderr; each present only for a stream
/// spawned as [`Input::Pipe`](super::Input::Pipe) or [`Output::Pipe`](super::Output::Pipe).
#[derive(Debug, Default)]
pub struct Pipes {
    /// Write here to feed the child's stdin; close it to end its input.
    pub stdin: Option<super::platform::Fd>,
    /// The child's stdout.
    pub stdout: Option<super::platform::Fd>,
    /// The child's stderr.
    pub stderr: Option<super::platform::Fd>,
    /// The terminal the child runs on, when spawned on one.
    pub terminal: Option<Terminal>,
}

/// The host's side of a command on a pseudo-terminal (Windows: a pseudo
/// console).
#[derive(Debug)]
pub struct Terminal {
    /// Read the command's output from it. On POSIX the master, which does
    /// not block (`O_NONBLOCK`, set on it for the input relay): wait for it
    /// to be readable, as an event loop does. On Windows the host's end of
    /// the pseudo console's output pipe, overlapped; it ends once the
    /// console is closed, at the command's exit. Read it to its end: before
    /// Windows 11 24H2, conhost (and the thread closing the console) waits
    /// until its last output has been read.
    pub master: super::platform::Fd,
    /// The write end of a pipe whose bytes reach the terminal as typed
    /// input. On POSIX they are relayed to the master without ever blocking
    /// (see `terminal::input_relay`), and this is set once the driver runs;
    /// on Windows it is the pseudo console's input pipe, overlapped.
    pub input: Option<super::platform::Fd>,
    /// The command's own pid, its session's and first group's id (the
    /// execution's pid is its reaper's).
    pub pid: u32,
}

/// The result once published, or the callbacks waiting for it.
pub(super) enum Outcome {
    Pending(Vec<FinishCallback>),
    Published(Arc<RunResult>),
}

/// Called once with the published result.
pub(super) type FinishCallback = Box<dyn FnOnce(Arc<RunResult>) + Send>;

impl Shared {
    /// Starts SIGTERM → grace → SIGKILL for `cause`, once, while the leader
    /// runs; the driving task hears of it through the group. Returns whether
    /// this call started it.
    pub(super) fn kill(&self, cause: KillCause) -> bool {
        self.group.kill(cause)
    }

    /// SIGKILLs the group now, without a grace.
    pub(super) fn terminate_now(&self) {
        self.group.terminate_now();
    }

    /// Registers `callback` for the result, or calls it at once with the
    /// result already published.
    pub(super) fn on_finish(&self, callback: FinishCallback) {
        let result = match &mut *lock(&self.outcome) {
            Outcome::Pending(waiting) => return waiting.push(callback),
            Outcome::Published(result) => Arc::clone(result),
        };
        callback(result);
    }

    /// Whether the result was published.
    pub(super) fn published(&self) -> bool {
        matches!(*lock(&self.outcome), Outcome::Published(_))
    }
}

/// Reaps the leader and publishes the result. The driver calls it once the
/// group is dealt with (see the module's invariant).
pub(super) fn finish(shared: &Shared) {
    shared.group.reap();
    *lock(&shared.link) = None;
    let state = shared.group.state();
    let cause = shared.group.cause();
    let lost = shared.group.lost();
    let ending = Ending { signal: state.signal, code: state.exit_code, killed_here: cause.is_some() || lost };
    let observed = shared.group.observed();
    let limits = attribute(&shared.limits, ending, observed);
    let result = RunResult {
        exit_code: state.exit_code,
        signal: state.signal,
        timed_out: cause == Some(KillCause::Timeout),
        aborted: cause == Some(KillCause::Aborted),
        supervisor_lost: lost,
        limit: limits.ended_by,
        limits_hit: limits.hit,
        limits_tampered: limits.tampered,
        ended_after_exit: observed.ended_after_exit,
        timeout_ms: shared.timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        duration: shared.started.elapsed(),
        stdout: lock(&shared.stdout).finish(),
        stderr: lock(&shared.stderr).finish(),
    };
    let result = Arc::new(result);
    let published = Outcome::Published(Arc::clone(&result));
    // Called outside the lock: a callback may ask for the outcome again.
    if let Outcome::Pending(waiting) = std::mem::replace(&mut *lock(&shared.outcome), published) {
        for callback in waiting {
            callback(Arc::clone(&result));
        }
    }
}
