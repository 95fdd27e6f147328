//! The task that runs one process from spawn to result: it feeds stdin, reads
//! both pipes, fires the timer and follows the kill schedule; once the leader
//! exits it ends the rest of the group, reaps the leader and publishes the result.
//! The result is published only once nothing of the group is left running
//! (or SIGKILL went to it), so a caller that sees a result sees a clean slate.

use std::future::Future;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;

use super::group::{Exit, KillCause};
use super::output::{read_stream, LiveOutput, OpenStream};
use super::wait::{self, ExitWatch};
use super::{lock, Outcome, RunResult, Shared, StreamKind};

/// The child's ends of the world, owned by the task.
pub(super) struct Io {
    pub(super) watch: ExitWatch,
    pub(super) stdout: Option<OpenStream>,
    pub(super) stderr: Option<OpenStream>,
    pub(super) stdin: Option<(pipe::Sender, Vec<u8>)>,
    pub(super) live: Option<LiveOutput>,
}

/// Runs the process to its result.
pub(super) fn run(shared: Arc<Shared>, io: Io, timeout_at: Option<Instant>) -> impl Future<Output = ()> {
    // Made now, not at the first poll: a task dropped before it ever ran must
    // still end the process.
    let guard = Unfinished(shared);
    async move {
        drive(&guard.0, io, timeout_at).await;
        sweep(&guard.0).await;
        finish(&guard.0);
    }
}

/// Everything up to the reap. Every fd in `io` is closed when it returns.
async fn drive(shared: &Shared, io: Io, mut timeout_at: Option<Instant>) {
    let Io { mut watch, stdout, stderr, stdin, live } = io;
    let readers = async {
        tokio::join!(
            read_stream(shared, StreamKind::Stdout, stdout, live.clone()),
            read_stream(shared, StreamKind::Stderr, stderr, live),
        );
    };
    let feed = async move {
        if let Some((mut pipe, bytes)) = stdin {
            // EPIPE only means the child stopped reading; the pipe closes on drop.
            let _ = pipe.write_all(&bytes).await;
        }
    };
    tokio::pin!(readers, feed);
    let (mut read_all, mut fed) = (false, false);

    let exit = loop {
        tokio::select! {
            exit = watch.exited() => break exit,
            () = &mut readers, if !read_all => read_all = true,
            () = &mut feed, if !fed => fed = true,
            () = sleep_until(timeout_at) => {
                timeout_at = None;
                shared.group.kill(KillCause::Timeout);
            }
            () = sleep_until(shared.group.kill_due()) => {
                shared.group.escalate();
            }
            () = sleep_until(shared.group.force_due()) => shared.group.force(),
            () = shared.group.changed.notified() => {}
        }
    };
    shared.group.leader_exited(exit);

    // Whatever still holds the pipes got SIGTERM: read until they close, or
    // until the grace ends, then SIGKILL and drain briefly.
    while !read_all {
        tokio::select! {
            () = &mut readers => read_all = true,
            () = sleep_until(shared.group.drain_deadline()) => {
                if !shared.group.escalate() {
                    break;
                }
            }
            () = shared.group.changed.notified() => {}
        }
    }
}

/// How often [`sweep`] looks for group members that outlived the SIGTERM.
const SWEEP_INTERVAL: Duration = Duration::from_millis(10);

/// After the output is drained: members of the group that closed their pipes
/// (a daemonised grandchild) got the SIGTERM too but may ignore it. Wait for
/// them to go, and SIGKILL the group when the grace runs out.
async fn sweep(shared: &Shared) {
    while shared.group.members_left() {
        match shared.group.kill_due() {
            Some(due) if Instant::now() < due => tokio::time::sleep(SWEEP_INTERVAL).await,
            _ => {
                shared.group.escalate();
                return;
            }
        }
    }
}

/// Reaps the leader and publishes the result.
pub(super) fn finish(shared: &Shared) {
    shared.group.reap();
    let state = shared.group.state();
    let cause = shared.group.cause();
    let result = RunResult {
        exit_code: state.exit_code,
        signal: state.signal,
        timed_out: cause == Some(KillCause::Timeout),
        aborted: cause == Some(KillCause::Aborted),
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

/// Sleeps until `deadline`; forever when there is none.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

/// Blocks until the leader exits, forcing a reaper that does not end after
/// its hard kill.
fn wait_forcing(shared: &Shared) -> Exit {
    while let Some(due) = shared.group.force_due() {
        match wait::wait_exit(shared.pid as i32, true) {
            Ok(Some(exit)) => return exit,
            Ok(None) if Instant::now() < due => thread::sleep(SWEEP_INTERVAL),
            Ok(None) => shared.group.force(),
            Err(_) => return Exit::UNKNOWN,
        }
    }
    wait::wait_blocking(shared.pid)
}

/// Ends a process that cannot be supervised any more (its pipes could not be
/// handed to the runtime): as for a task dropped early.
pub(super) fn abandon(shared: Arc<Shared>) {
    drop(Unfinished(shared));
}

/// Still finishes the process when its task is dropped early (runtime shutdown,
/// a panicking sink): SIGKILL the group, then reap and publish on a thread,
/// since waiting for the leader may block.
struct Unfinished(Arc<Shared>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if matches!(*lock(&self.0.outcome), Outcome::Published(_)) {
            return;
        }
        self.0.group.terminate_now();
        let shared = Arc::clone(&self.0);
        // Without a thread there is nothing left to try.
        let _ = thread::Builder::new().spawn(move || {
            shared.group.leader_exited(wait_forcing(&shared));
            finish(&shared);
        });
    }
}
