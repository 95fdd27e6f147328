//! The driver: a Tokio task that runs one process from spawn to result
//! (not to be confused with the supervisor process, `crate::supervisor`,
//! which starts and contains commands under it). It feeds stdin, reads
//! both pipes, fires the timer and follows the kill schedule; once the leader
//! exits it ends the rest of the group, reaps the leader and publishes the result.
//! The result is published only once nothing of the group is left running
//! (or SIGKILL went to it), so a caller that sees a result sees a clean slate.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use tokio::io::AsyncWriteExt;
use tokio::runtime::Handle;

use super::exit::{Control, Exit};
use super::group::KillCause;
use super::handle::Process;
use super::lifecycle::{finish, Shared};
use super::output::{read_stream, LiveOutput, OpenStream, Utf8Decoder};
use super::platform::{self, ExitWatch, PipeWriter};
use super::spawn::{spawn_failed, Started};
use super::stream::StreamKind;
use super::sync::lock;
use super::terminal;
use crate::error::ExecError;

/// The child's ends of the world, owned by the task.
struct Io {
    watch: ExitWatch,
    stdout: Option<OpenStream>,
    stderr: Option<OpenStream>,
    stdin: Option<(PipeWriter, Vec<u8>)>,
    live: Option<LiveOutput>,
}

/// Hands a child just started to a task on `runtime` that supervises it to its result.
pub(super) fn start(started: Started, runtime: &Handle) -> Result<Process, ExecError> {
    let Started { shared, program, stdout, stderr, stdin, live, timeout_at, link } = started;
    let _entered = runtime.enter();
    // Registering the pipes and the exit watch with the runtime.
    let wired = (|| {
        let stdout = stdout.map(platform::async_reader).transpose()?;
        let stderr = stderr.map(platform::async_reader).transpose()?;
        let stdin = match stdin {
            Some((pipe, bytes)) => Some((platform::async_writer(pipe)?, bytes)),
            None => None,
        };
        let watch = match link {
            Some(link) => ExitWatch::from_link(link)?,
            None => ExitWatch::new(shared.pid)?,
        };
        let decoded = |reader| (reader, Utf8Decoder::default());
        let (stdout, stderr) = (stdout.map(decoded), stderr.map(decoded));
        // A terminal's input: a pipe for the caller, relayed to the master
        // (unless it is a pipe already: a pseudo console's on Windows).
        let relay = match lock(&shared.handed).terminal.as_mut() {
            Some(terminal) if terminal.input.is_none() => {
                let (input, relay) = terminal::input_relay(&terminal.master)?;
                terminal.input = Some(input);
                Some(relay)
            }
            _ => None,
        };
        io::Result::Ok((Io { watch, stdout, stderr, stdin, live }, relay))
    })();
    let io = match wired {
        Ok((io, relay)) => {
            if let Some(relay) = relay {
                runtime.spawn(relay);
            }
            io
        }
        Err(error) => {
            // Nothing may outlive a failed spawn.
            shared.group.terminate_now();
            shared.group.reap();
            return Err(spawn_failed(&program, error));
        }
    };
    runtime.spawn(run(Arc::clone(&shared), io, timeout_at));
    Ok(Process { shared })
}

/// Runs the process to its result.
fn run(shared: Arc<Shared>, io: Io, timeout_at: Option<Instant>) -> impl Future<Output = ()> {
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
            read_stream(&shared.stdout, StreamKind::Stdout, stdout, live.clone()),
            read_stream(&shared.stderr, StreamKind::Stderr, stderr, live),
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
                // The group's kill, not `Shared::kill`: this task is the driver a kill would tell.
                shared.group.kill(KillCause::Timeout);
            }
            () = sleep_until(shared.group.kill_due()) => {
                shared.group.escalate();
            }
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

/// After the output is drained: members of the group that closed their pipes
/// (a daemonised grandchild) got the SIGTERM too but may ignore it. Wait for
/// them to go (as the platform can tell: see `platform::group_may_be_empty`),
/// and SIGKILL the group when the grace runs out.
async fn sweep(shared: &Shared) {
    while shared.group.members_left() {
        match shared.group.kill_due() {
            Some(due) if Instant::now() < due => {
                tokio::select! {
                    () = platform::group_may_be_empty(shared.pid) => {}
                    () = tokio::time::sleep_until(due.into()) => {}
                }
            }
            _ => {
                shared.group.escalate();
                return;
            }
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

/// Blocks until the killed leader exits: a reaper reports once its tree is
/// gone.
fn wait_killed(shared: &Shared) -> Exit {
    match (shared.group.control(), lock(&shared.link).as_ref()) {
        (Control::Supervised { .. }, Some(link)) => {
            platform::supervisor::read_exit(link, false).ok().flatten().unwrap_or(Exit::UNKNOWN)
        }
        // Without a second descriptor the link closed with the task, and a
        // reaper kills its whole tree when its link closes.
        (Control::Supervised { .. }, None) => Exit { code: None, signal: Some("SIGKILL"), ..Exit::UNKNOWN },
        (Control::Child, _) => platform::wait_exit(shared.pid),
    }
}

/// Still finishes the process when its task is dropped early (runtime shutdown,
/// a panicking sink): SIGKILL the group, then reap and publish on a thread,
/// since waiting for the leader may block.
struct Unfinished(Arc<Shared>);

impl Drop for Unfinished {
    fn drop(&mut self) {
        if self.0.published() {
            return;
        }
        self.0.group.terminate_now();
        let shared = Arc::clone(&self.0);
        // Without a thread there is nothing left to try.
        let _ = thread::Builder::new().spawn(move || {
            shared.group.leader_exited(wait_killed(&shared));
            finish(&shared);
        });
    }
}
