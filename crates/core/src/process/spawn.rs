//! Starting the child as the leader of a new process group, under the
//! supervisor where there is one, with its shared state and the ends of its
//! pipes; no driver yet (`driver` hands it to its Tokio task).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::containment;
use super::exit::Control;
use super::group::Group;
use super::lifecycle::{Outcome, Pipes, Shared, Terminal};
use super::output::{Capture, LiveOutput};
use super::platform::{self, Fd, Leader};
use super::spec::{Input, Output, ProcessSpec};
use super::stream::{OutputLimits, StreamKind};
use super::teardown;
use crate::error::{ExecError, ProtocolMismatch};
use crate::limits::{self, Mechanisms};

/// The cgroup controllers this host's commands get, which decide how each
/// limit is enforced ([`limits::mechanism`]): the supervisor's (started if
/// none runs), or none without one.
pub fn limit_controllers() -> io::Result<Mechanisms> {
    match containment::supervisor() {
        Some(helper) => platform::supervisor::controllers(helper),
        None => Ok(Mechanisms::default()),
    }
}

/// A child that runs, with the ends of its pipes, not yet driven.
pub(super) struct Started {
    pub(super) shared: Arc<Shared>,
    pub(super) program: PathBuf,
    /// The captured streams' pipes, for the driver to read.
    pub(super) stdout: Option<Fd>,
    pub(super) stderr: Option<Fd>,
    /// Stdin with the bytes the driver writes to it.
    pub(super) stdin: Option<(Fd, Vec<u8>)>,
    pub(super) live: Option<LiveOutput>,
    pub(super) timeout_at: Option<Instant>,
    /// Under the supervisor: the link the reaper reports its exit on.
    pub(super) link: Option<platform::supervisor::Link>,
}

/// Starts the child (see [`platform::spawn_leader`]): stdout and stderr piped,
/// stdin piped or `/dev/null`. Fails with [`ExecError::InvalidSpec`] for a
/// relative program path and [`ExecError::SpawnFailed`] when the OS refuses.
pub(super) fn start(spec: ProcessSpec) -> Result<Started, ExecError> {
    refuse_early(&spec)?;
    if spec.limits.any() {
        // Refused here, before anything runs, when a limit cannot be enforced.
        limits::plan(&spec.limits, limit_controllers().map_err(|error| spawn_failed(&spec.program, error))?)?;
    }
    // Before the first command exists, so that none can read the host.
    platform::protect_host();
    let started = Instant::now();
    let request = request_of(&spec);
    let leader = match containment::supervisor() {
        Some(helper) => {
            let supervised =
                platform::supervisor::spawn(helper, &request).map_err(|error| spawn_failed(&spec.program, error))?;
            Spawned::supervised(supervised)
        }
        None => {
            let mut leader = platform::spawn_leader(&request).map_err(|error| spawn_failed(&spec.program, error))?;
            let input = leader.terminal_input.take();
            let terminal = leader.terminal.take().map(|master| Terminal { master, pid: leader.pid, input });
            Spawned { leader, control: Control::Child, link: None, terminal }
        }
    };
    Ok(assemble(spec, started, leader))
}

/// A start order sent to an idle reaper at once (see [`order`]).
pub(super) struct Ordered {
    spec: ProcessSpec,
    started: Instant,
    ordered: platform::supervisor::Ordered,
}

/// Under the supervisor, sends `spec`'s start order to an idle reaper at
/// once, waiting on nothing (see `platform::supervisor::order`). `Err(spec)`
/// where that cannot be done, for [`start`] on a thread that may wait; a
/// spec that cannot run is refused as [`start`] refuses it.
pub(super) fn order(spec: ProcessSpec) -> Result<Result<Ordered, ProcessSpec>, ExecError> {
    if containment::supervisor().is_none() {
        return Ok(Err(spec));
    }
    refuse_early(&spec)?;
    if spec.limits.any() {
        let Some(controllers) = platform::supervisor::try_controllers() else { return Ok(Err(spec)) };
        limits::plan(&spec.limits, controllers)?;
    }
    platform::protect_host();
    let started = Instant::now();
    let ordered =
        platform::supervisor::order(&request_of(&spec)).map_err(|error| spawn_failed(&spec.program, error))?;
    Ok(match ordered {
        Some(ordered) => Ok(Ordered { spec, started, ordered }),
        None => Err(spec),
    })
}

impl Ordered {
    /// Awaits the reaper's answer: the child, started, or the error it could
    /// not start with; `Err(spec)` when the reaper was gone before it took
    /// the order, for [`start`] anew. Needs a tokio runtime.
    pub(super) async fn started(self) -> Result<Result<Started, ProcessSpec>, ExecError> {
        let Self { spec, started, ordered } = self;
        match ordered.started().await {
            Ok(Some(supervised)) => Ok(Ok(assemble(spec, started, Spawned::supervised(supervised)))),
            Ok(None) => Ok(Err(spec)),
            Err(error) => Err(spawn_failed(&spec.program, error)),
        }
    }
}

/// What [`start`] refuses before asking anything of the system.
fn refuse_early(spec: &ProcessSpec) -> Result<(), ExecError> {
    if !spec.program.is_absolute() {
        return Err(ExecError::invalid_spec("program", "must be an absolute path"));
    }
    if spec.terminal.is_some() {
        if let Err(reason) = platform::terminals() {
            return Err(ExecError::Unsupported { feature: "a terminal".into(), reason: reason.into() });
        }
    }
    Ok(())
}

/// What the platform's spawners take of `spec`.
fn request_of(spec: &ProcessSpec) -> platform::SpawnRequest<'_> {
    platform::SpawnRequest {
        program: &spec.program,
        args: &spec.args,
        env: &spec.env,
        cwd: &spec.cwd,
        stdio: platform::StdioPlan {
            stdin_piped: spec.stdin != Input::Null,
            stdout_inherited: spec.stdout == Output::Inherit,
            stderr_inherited: spec.stderr == Output::Inherit,
            terminal: spec.terminal,
        },
        limits: &spec.limits,
        grace: spec.grace,
    }
}

/// A leader that runs, as either spawner left it.
struct Spawned {
    leader: Leader,
    control: Control,
    /// Under the supervisor: the link the reaper reports on.
    link: Option<platform::supervisor::Link>,
    /// The terminal's master, with the command's own pid (under the
    /// supervisor the leader is the reaper; otherwise the command itself).
    terminal: Option<Terminal>,
}

impl Spawned {
    fn supervised(supervised: platform::supervisor::Supervised) -> Self {
        let platform::supervisor::Supervised { pid, stdout, stderr, stdin, id, link, terminal } = supervised;
        Self {
            leader: Leader { pid, stdout, stderr, stdin, terminal: None, terminal_input: None },
            control: Control::Supervised { id },
            link: Some(link),
            terminal: terminal.map(|(master, pid)| Terminal { master, pid, input: None }),
        }
    }
}

/// The child's shared state and pipe ends, from `spec` and what the spawner
/// made of it (started at `started`).
fn assemble(spec: ProcessSpec, started: Instant, spawned: Spawned) -> Started {
    let Spawned { leader: Leader { pid, stdout, stderr, stdin, .. }, control, link, terminal } = spawned;
    // Each pipe goes to the driver (captured, or stdin data to write) or to
    // the caller (a raw pipe), never both.
    let (stdout, stdout_handed) = route(spec.stdout, stdout);
    let (stderr, stderr_handed) = route(spec.stderr, stderr);
    let (stdin, stdin_handed) = match spec.stdin {
        Input::Data(bytes) => (stdin.map(|pipe| (pipe, bytes)), None),
        Input::Pipe => (None, stdin),
        Input::Null => (None, None),
    };
    teardown::track(pid, control);
    let shared = Arc::new(Shared {
        pid,
        started,
        timeout: spec.timeout,
        group: Group::new(pid, spec.grace, control),
        stdout: Mutex::new(Capture::new(StreamKind::Stdout, pid, limits(spec.stdout), spec.spill.clone())),
        stderr: Mutex::new(Capture::new(StreamKind::Stderr, pid, limits(spec.stderr), spec.spill.clone())),
        handed: Mutex::new(Pipes { stdin: stdin_handed, stdout: stdout_handed, stderr: stderr_handed, terminal }),
        outcome: Mutex::new(Outcome::Pending(Vec::new())),
        link: Mutex::new(link.clone()),
        limits: spec.limits,
    });
    Started {
        shared,
        program: spec.program,
        stdout,
        stderr,
        stdin,
        live: spec.on_output.map(LiveOutput::new),
        timeout_at: spec.timeout.and_then(|timeout| started.checked_add(timeout)),
        link,
    }
}

/// A captured stream's pipe goes to the driver, a raw one to the caller;
/// an inherited stream has none.
fn route(output: Output, pipe: Option<Fd>) -> (Option<Fd>, Option<Fd>) {
    match output {
        Output::Capture(_) => (pipe, None),
        Output::Pipe => (None, pipe),
        Output::Inherit => (None, None),
    }
}

/// The capture limits of `output`; a stream not captured here keeps nothing.
fn limits(output: Output) -> OutputLimits {
    output.limits().unwrap_or(OutputLimits { max_bytes: 0, spill_max_bytes: 0 })
}

/// The error for a spawn of `program` that failed with `source`; a
/// supervisor of another build is an error of its own.
pub(super) fn spawn_failed(program: &Path, source: io::Error) -> ExecError {
    if let Some(&mismatch) = source.get_ref().and_then(|inner| inner.downcast_ref::<ProtocolMismatch>()) {
        return ExecError::SupervisorMismatch(mismatch);
    }
    ExecError::SpawnFailed { program: program.display().to_string(), source }
}
