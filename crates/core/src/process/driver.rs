//! The public ways to start a process, [`spawn`] and [`spawn_async`]: the
//! child is started (`spawn::start`) and handed to a Tokio task that drives
//! it to its result (`supervise`).
//!
//! There used to be a second driver, the caller's event loop polling each
//! child's descriptors; with exits arriving over one socket from the
//! supervisor, the two measured within 3% of each other, and only this one
//! is kept.

use std::io;
use std::sync::OnceLock;

use tokio::runtime::Handle;
use tokio::sync::Semaphore;

use super::handle::Process;
use super::platform;
use super::spawn::{self, spawn_failed};
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
    platform::supported().map_err(|error| spawn_failed(&spec.program, error))?;
    let runtime = Handle::try_current()
        .map_err(|_| spawn_failed(&spec.program, io::Error::other("spawn() must be called inside a tokio runtime")))?;
    supervise::start(spawn::start(spec)?, &runtime)
}

/// [`spawn`] for async callers. Under the supervisor with a reaper idle, the
/// start order goes out from the calling task and the reaper's answer is
/// awaited as an event, holding no thread. Otherwise the spawn holds its
/// thread until the child has exec'd (or a reaper is handed over), which
/// takes milliseconds once hundreds of children compete for the CPU; on a
/// runtime worker that stalls every other task on it (behind a burst of 500
/// spawns, registry collections of other executions waited seconds, eating
/// into their deadline, and timers fired late). So that spawn runs on the
/// blocking pool, at most one per CPU at a time: more would not start
/// children any faster, only contend for the kernel's locks. Must be awaited
/// inside a tokio runtime, as for [`spawn`].
pub async fn spawn_async(spec: ProcessSpec) -> Result<Process, ExecError> {
    // No thread is woken on the way to the reaper, and none waits for it.
    let spec = match spawn::order(spec)? {
        Ok(ordered) => match ordered.started().await? {
            Ok(started) => return supervise::start(started, &Handle::current()),
            Err(spec) => spec,
        },
        Err(spec) => spec,
    };
    static SPAWNING: OnceLock<Semaphore> = OnceLock::new();
    let slots = SPAWNING
        .get_or_init(|| Semaphore::new(std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)));
    // Never closed, so this cannot fail; the permit is held until the child runs.
    let _slot = slots.acquire().await;
    let program = spec.program.clone();
    match tokio::task::spawn_blocking(move || spawn(spec)).await {
        Ok(spawned) => spawned,
        // The blocking task panicked or the runtime is shutting down.
        Err(error) => Err(spawn_failed(&program, io::Error::other(error))),
    }
}
