//! Starting the child as the leader of a new process group, under the reaper
//! where there is one, with its shared state and the ends of its pipes; no
//! driver yet (that choice is `driver`'s).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::group::Group;
use super::lifecycle::{Outcome, Shared};
use super::output::{Capture, LiveOutput};
use super::platform::{self, Fd, Leader};
use super::program::check_executable;
use super::reaper;
use super::spec::ProcessSpec;
use super::stream::StreamKind;
use super::teardown;
use crate::error::ExecError;

/// A child that runs, with the ends of its pipes, not yet driven.
pub(super) struct Started {
    pub(super) shared: Arc<Shared>,
    pub(super) program: PathBuf,
    pub(super) stdout: Fd,
    pub(super) stderr: Fd,
    pub(super) stdin: Option<(Fd, Vec<u8>)>,
    pub(super) live: Option<LiveOutput>,
    pub(super) timeout_at: Option<Instant>,
}

/// Starts the child (see [`platform::spawn_leader`]): stdout and stderr piped,
/// stdin piped or `/dev/null`. Fails with [`ExecError::InvalidSpec`] for a
/// relative program path and [`ExecError::SpawnFailed`] when the OS refuses.
pub(super) fn start(spec: ProcessSpec) -> Result<Started, ExecError> {
    if !spec.program.is_absolute() {
        return Err(ExecError::invalid_spec("program", "must be an absolute path"));
    }
    let started = Instant::now();
    let reaper = contain(&spec)?;
    let (program, args) = match reaper {
        Some(reaper) => reaper::wrap(reaper, &spec.program, &spec.args, spec.grace),
        None => (spec.program.clone(), spec.args.clone()),
    };
    let Leader { pid, stdout, stderr, stdin } =
        platform::spawn_leader(&program, &args, &spec.env, &spec.cwd, spec.stdin.is_some())
            .map_err(|error| spawn_failed(&spec.program, error))?;
    teardown::track(pid, reaper.is_some());
    let shared = Arc::new(Shared {
        pid,
        started,
        timeout: spec.timeout,
        group: Group::new(pid, spec.grace, reaper.is_some()),
        stdout: Mutex::new(Capture::new(StreamKind::Stdout, pid, spec.stdout, spec.spill.clone())),
        stderr: Mutex::new(Capture::new(StreamKind::Stderr, pid, spec.stderr, spec.spill.clone())),
        outcome: Mutex::new(Outcome::Pending(Vec::new())),
        on_kill: std::sync::OnceLock::new(),
    });
    Ok(Started {
        shared,
        program: spec.program,
        stdout,
        stderr,
        stdin: stdin.zip(spec.stdin),
        live: spec.on_output.map(LiveOutput::new),
        timeout_at: spec.timeout.and_then(|timeout| started.checked_add(timeout)),
    })
}

/// The reaper to run `spec` under, if there is one. The reaper would report a
/// program it cannot start only through its exit code, so the checks `execve`
/// makes first are made here, to fail the spawn as before.
fn contain(spec: &ProcessSpec) -> Result<Option<&'static Path>, ExecError> {
    let Some(reaper) = reaper::reaper() else { return Ok(None) };
    check_executable(&spec.program)
        .map_err(|errno| spawn_failed(&spec.program, io::Error::from_raw_os_error(errno)))?;
    Ok(Some(reaper))
}

/// The error for a spawn of `program` that failed with `source`.
pub(super) fn spawn_failed(program: &Path, source: io::Error) -> ExecError {
    ExecError::SpawnFailed { program: program.display().to_string(), source }
}
