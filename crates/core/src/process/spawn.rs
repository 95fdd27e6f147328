//! Starting the child.
//!
//! `std::process::Command` uses `posix_spawn` (flat cost however large the Node
//! heap is) as long as nothing forces fork: no `pre_exec`, no uid/gid, and an
//! absolute program path. `process_group(0)` does not force fork. `tokio::process`
//! is not used: its fallback waits on SIGCHLD, which libuv takes over.

use std::io;
#[cfg(unix)]
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use tokio::sync::Semaphore;

use super::group::Group;
use super::output::{Capture, LiveOutput};
use super::{Outcome, Process, ProcessSpec, Shared, StreamKind};
use crate::error::ExecError;

/// Starts `spec` as the leader of a new process group and returns once it runs.
///
/// Must be called inside a tokio runtime with IO and time enabled: a task on it
/// reads the output, runs the timer and reaps the child. Fails with
/// [`ExecError::InvalidSpec`] for a relative program path and
/// [`ExecError::SpawnFailed`] when the OS refuses.
#[cfg(unix)]
pub fn spawn(spec: ProcessSpec) -> Result<Process, ExecError> {
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| spawn_failed(&spec.program, io::Error::other("spawn() must be called inside a tokio runtime")))?;
    start(spec)?.supervise(&runtime)
}

/// A child that runs, with the ends of its pipes, not yet supervised.
#[cfg(unix)]
pub(super) struct Started {
    pub(super) shared: Arc<Shared>,
    pub(super) program: PathBuf,
    pub(super) stdout: OwnedFd,
    pub(super) stderr: OwnedFd,
    pub(super) stdin: Option<(OwnedFd, Vec<u8>)>,
    pub(super) live: Option<LiveOutput>,
    pub(super) timeout_at: Option<Instant>,
}

/// Starts the child: `posix_spawn`, stdout and stderr piped, stdin piped or `/dev/null`.
#[cfg(unix)]
pub(super) fn start(spec: ProcessSpec) -> Result<Started, ExecError> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    if !spec.program.is_absolute() {
        return Err(ExecError::invalid_spec("program", "must be an absolute path"));
    }
    let started = Instant::now();
    let reaper = contain(&spec)?;
    let (program, args) = match reaper {
        Some(reaper) => super::reaper::wrap(reaper, &spec.program, &spec.args, spec.grace),
        None => (spec.program.clone(), spec.args.clone()),
    };
    let mut child = Command::new(program)
        .args(args)
        .env_clear()
        .envs(spec.env.iter().map(|(key, value)| (key, value)))
        .current_dir(&spec.cwd)
        .process_group(0)
        .stdin(if spec.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| spawn_failed(&spec.program, error))?;
    let pid = child.id();
    super::teardown::track(pid, reaper.is_some());
    let shared = Arc::new(Shared {
        pid,
        started,
        timeout: spec.timeout,
        group: Group::new(pid, spec.grace, reaper.is_some()),
        stdout: Mutex::new(Capture::new(StreamKind::Stdout, pid, spec.stdout, spec.spill.clone())),
        stderr: Mutex::new(Capture::new(StreamKind::Stderr, pid, spec.stderr, spec.spill.clone())),
        outcome: Mutex::new(Outcome::Pending(Vec::new())),
        #[cfg(target_os = "linux")]
        reactor: OnceLock::new(),
    });
    Ok(Started {
        shared,
        program: spec.program,
        stdout: child.stdout.take().expect("piped").into(),
        stderr: child.stderr.take().expect("piped").into(),
        stdin: child.stdin.take().map(OwnedFd::from).zip(spec.stdin),
        live: spec.on_output.map(LiveOutput::new),
        timeout_at: spec.timeout.and_then(|timeout| started.checked_add(timeout)),
    })
}

/// The reaper to run `spec` under, if there is one. The reaper would report a
/// program it cannot start only through its exit code, so the checks `execve`
/// makes first are made here, to fail the spawn as before.
#[cfg(target_os = "linux")]
fn contain(spec: &ProcessSpec) -> Result<Option<&'static Path>, ExecError> {
    let Some(reaper) = super::reaper::reaper() else { return Ok(None) };
    super::program::check_executable(&spec.program)
        .map_err(|errno| spawn_failed(&spec.program, io::Error::from_raw_os_error(errno)))?;
    Ok(Some(reaper))
}

#[cfg(all(unix, not(target_os = "linux")))]
fn contain(_spec: &ProcessSpec) -> Result<Option<&'static Path>, ExecError> {
    Ok(None)
}

#[cfg(unix)]
impl Started {
    /// Hands the child to a task on `runtime` that supervises it to its result.
    pub(super) fn supervise(self, runtime: &tokio::runtime::Handle) -> Result<Process, ExecError> {
        use super::output::Utf8Decoder;
        use super::supervise::{self, Io};
        use super::wait::ExitWatch;
        use tokio::net::unix::pipe;

        let Started { shared, program, stdout, stderr, stdin, live, timeout_at } = self;
        let _entered = runtime.enter();
        // Registering the pipes and the exit watch with the runtime.
        let wired = (|| {
            let stdout = pipe::Receiver::from_owned_fd(stdout)?;
            let stderr = pipe::Receiver::from_owned_fd(stderr)?;
            let stdin = match stdin {
                Some((pipe, bytes)) => Some((pipe::Sender::from_owned_fd(pipe)?, bytes)),
                None => None,
            };
            let watch = ExitWatch::new(shared.pid)?;
            let (stdout, stderr) = (Some((stdout, Utf8Decoder::default())), Some((stderr, Utf8Decoder::default())));
            io::Result::Ok(Io { watch, stdout, stderr, stdin, live })
        })();
        let io = match wired {
            Ok(io) => io,
            Err(error) => {
                // Nothing may outlive a failed spawn.
                shared.group.terminate_now();
                shared.group.reap();
                return Err(spawn_failed(&program, error));
            }
        };
        runtime.spawn(supervise::run(Arc::clone(&shared), io, timeout_at));
        Ok(Process { shared })
    }
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

/// Where [`Spawner::spawn_async`] hands the children it starts: the runtime's
/// supervisor (the default), or a reactor (see [`super::Reactor::spawner`]).
#[derive(Clone, Default)]
pub struct Spawner {
    #[cfg(target_os = "linux")]
    reactor: Option<Arc<super::reactor::Inner>>,
}

impl Spawner {
    /// A spawner whose children `reactor` drives.
    #[cfg(target_os = "linux")]
    pub(super) fn onto(reactor: Arc<super::reactor::Inner>) -> Self {
        Self { reactor: Some(reactor) }
    }

    /// [`spawn_async`], handing the child to this spawner's supervisor.
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

    fn spawn(&self, spec: ProcessSpec) -> Result<Process, ExecError> {
        #[cfg(target_os = "linux")]
        if let Some(reactor) = &self.reactor {
            return reactor.spawn(spec);
        }
        spawn(spec)
    }
}

/// Process control is only implemented for Unix; elsewhere spawning fails.
#[cfg(not(unix))]
pub fn spawn(spec: ProcessSpec) -> Result<Process, ExecError> {
    let unsupported = io::Error::new(io::ErrorKind::Unsupported, "process control is only implemented on Unix");
    Err(spawn_failed(&spec.program, unsupported))
}

pub(super) fn spawn_failed(program: &Path, source: io::Error) -> ExecError {
    ExecError::SpawnFailed { program: program.display().to_string(), source }
}
