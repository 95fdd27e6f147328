//! The handle callers hold: [`Process`].

use std::sync::Arc;

use tokio::sync::oneshot;

use super::group::KillCause;
use super::lifecycle::{Pipes, Shared};
use super::result::{OutputDelta, OutputRead, ProcessState, RunResult};
use super::stream::StreamKind;
use super::sync::lock;

/// Why [`Process::kill`] was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillReason {
    /// An explicit kill request.
    Requested,
    /// The caller's abort signal fired; reported as `aborted`.
    Aborted,
}

/// A running or finished child. Cheap to clone; all clones share one process.
#[derive(Clone)]
pub struct Process {
    pub(super) shared: Arc<Shared>,
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
        self.shared.kill(match reason {
            KillReason::Requested => KillCause::Requested,
            KillReason::Aborted => KillCause::Aborted,
        })
    }

    /// SIGKILLs the group now, without a grace (environment teardown, process exit).
    pub fn terminate_now(&self) {
        self.shared.terminate_now();
    }

    /// Takes the text produced since the previous call. Unread text is capped at
    /// `max_bytes` per stream, keeping the newest.
    pub fn read_output(&self) -> OutputDelta {
        let (stdout, out_lossy, stdout_spill) = lock(&self.shared.stdout).take_unread();
        let (stderr, err_lossy, stderr_spill) = lock(&self.shared.stderr).take_unread();
        OutputDelta { stdout, stderr, lossy: out_lossy || err_lossy, stdout_spill, stderr_spill }
    }

    /// One stream's text from whole-stream byte `from` on, without consuming
    /// anything (see [`OutputRead`]); also after the process ended. Empty for
    /// a stream not captured here.
    pub fn read_from(&self, stream: StreamKind, from: u64) -> OutputRead {
        let capture = match stream {
            StreamKind::Stdout => &self.shared.stdout,
            StreamKind::Stderr => &self.shared.stderr,
        };
        lock(capture).read_from(from)
    }

    /// The host's ends of the raw pipes ([`Pipes`]); empty after the first call.
    pub fn take_pipes(&self) -> Pipes {
        std::mem::take(&mut *lock(&self.shared.handed))
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
        self.shared.on_finish(Box::new(callback));
    }
}
