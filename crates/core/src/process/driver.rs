//! Which driver takes a new process, decided here and nowhere else, and the
//! public ways to start one: [`spawn`], [`spawn_async`], [`Spawner`], and
//! [`Reactor::spawn`] / [`Reactor::spawner`].
//!
//! The rules (see [`start`]); the first that applies wins:
//!
//! | the process                                                  | driver     |
//! |--------------------------------------------------------------|------------|
//! | started without a reactor (`spawn`, `Spawner::default()`)     | supervisor |
//! | with live output (`on_output`) or stdin                      | supervisor |
//! | with a timeout, and the timer thread cannot run              | supervisor |
//! | whose pidfd cannot be opened (an old kernel, seccomp, no pidfds), unless it has a supervisor's link | supervisor |
//! | anything else started with a reactor                         | reactor    |
//!
//! Once driven by a reactor, a process goes to the supervisor, and never back,
//! when it leaves the ordinary path: a kill of any kind (kill, abort, timeout,
//! `terminate_now`), a group that outlives its leader (pipes still open or
//! members left), or the reactor being dropped. The reactor applies these
//! (`Reactor`'s hand-over); nothing else moves a process between drivers.

use std::io;
use std::sync::{Arc, OnceLock};

use tokio::runtime::Handle;
use tokio::sync::Semaphore;

use super::deadline;
use super::handle::Process;
use super::platform::{self, Fd};
use super::reactor::{Inner, Reactor};
use super::spawn::{self, spawn_failed, Started};
use super::spec::ProcessSpec;
use super::supervise;
use crate::error::ExecError;

/// Starts `spec` as the leader of a new process group and returns once it runs.
///
/// Must be called inside a tokio runtime with IO and time enabled: a task on it
/// reads the output, runs the timer and reaps the child. Fails with
/// [`ExecError::InvalidSpec`] for a relative program path and
/// [`ExecError::SpawnFailed`] when the OS refuses, or where process control is
/// not implemented.
pub fn spawn(spec: ProcessSpec) -> Result<Process, ExecError> {
    start(spec, None)
}

/// [`spawn`] for async callers. `posix_spawn` holds its thread until the child
/// has exec'd, which takes milliseconds once hundreds of children compete for
/// the CPU; on a runtime worker that stalls every other task on it (behind a
/// burst of 500 spawns, registry collections of other executions waited
/// seconds, eating into their deadline, and timers fired late). So the spawn
/// runs on the blocking pool, at most one per CPU at a time:
/// more would not start children any faster, only contend for the kernel's
/// locks. Must be awaited inside a tokio runtime, as for [`spawn`].
pub async fn spawn_async(spec: ProcessSpec) -> Result<Process, ExecError> {
    Spawner::default().spawn_async(spec).await
}

/// Where the children a spawner starts go: the runtime's supervisor (the
/// default), or a reactor (see [`Reactor::spawner`]), as the rules in `driver` say.
#[derive(Clone, Default)]
pub struct Spawner {
    reactor: Option<Arc<Inner>>,
}

impl Spawner {
    /// A spawner whose children `reactor` drives where it can take them, or
    /// the runtime's supervisor when there is no reactor.
    pub fn new(reactor: Option<&Reactor>) -> Self {
        Self { reactor: reactor.map(|reactor| Arc::clone(&reactor.inner)) }
    }

    /// Starts `spec` like [`spawn`], on this spawner's driver. With a
    /// reactor, the call need not be inside the runtime.
    pub fn spawn(&self, spec: ProcessSpec) -> Result<Process, ExecError> {
        start(spec, self.reactor.as_ref())
    }

    /// [`spawn_async`], handing the child to this spawner's driver.
    pub async fn spawn_async(&self, spec: ProcessSpec) -> Result<Process, ExecError> {
        static SPAWNING: OnceLock<Semaphore> = OnceLock::new();
        let slots = SPAWNING.get_or_init(|| {
            Semaphore::new(std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get))
        });
        // Never closed, so this cannot fail; the permit is held until the child runs.
        let _slot = slots.acquire().await;
        let program = spec.program.clone();
        let spawner = self.clone();
        match tokio::task::spawn_blocking(move || spawner.spawn(spec)).await {
            Ok(spawned) => spawned,
            // The blocking task panicked or the runtime is shutting down.
            Err(error) => Err(spawn_failed(&program, io::Error::other(error))),
        }
    }
}

// Starting processes on a reactor is defined here, with the choice of driver,
// so that the reactor needs to know nothing of how processes come to it.
impl Reactor {
    /// Starts `spec` like [`spawn`], driven by this reactor where it can be
    /// (see the rules in `driver`), otherwise by the runtime.
    pub fn spawn(&self, spec: ProcessSpec) -> Result<Process, ExecError> {
        start(spec, Some(&self.inner))
    }

    /// Starts processes on this reactor from other threads, for as long as it
    /// lives (afterwards they go to the runtime).
    pub fn spawner(&self) -> Spawner {
        Spawner::new(Some(self))
    }
}

/// Starts `spec` and hands it to its driver: the one place a new process's
/// driver is chosen (the rules are in the table above, first match wins).
fn start(spec: ProcessSpec, reactor: Option<&Arc<Inner>>) -> Result<Process, ExecError> {
    platform::supported().map_err(|error| spawn_failed(&spec.program, error))?;
    let Some(reactor) = reactor else {
        let runtime = Handle::try_current().map_err(|_| {
            spawn_failed(&spec.program, io::Error::other("spawn() must be called inside a tokio runtime"))
        })?;
        return supervise::start(spawn::start(spec)?, &runtime);
    };
    let mut started = spawn::start(spec)?;
    match reactor_can_take(&mut started) {
        Some(exit_fd) => reactor.adopt(started, exit_fd),
        None => supervise::start(started, &reactor.runtime),
    }
}

/// What a reactor watches `started`'s exit through (its supervisor's link,
/// else its pidfd), when the rules let one take it.
fn reactor_can_take(started: &mut Started) -> Option<Fd> {
    if started.live.is_some() || started.stdin.is_some() {
        // Back-pressure on live output and a stdin writer are the runtime's.
        return None;
    }
    if started.timeout_at.is_some() && !deadline::available() {
        // No timer thread: the supervisor keeps the timeout instead.
        return None;
    }
    match started.link.take() {
        Some(link) => Some(link),
        None => platform::pidfd_open(started.shared.pid),
    }
}
