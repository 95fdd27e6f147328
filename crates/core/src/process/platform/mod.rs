//! The platform seam: everything process control asks of the operating
//! system, one file per platform. This is the only place in `process/` that
//! selects code by target; the lifecycle and the drivers above it name no
//! platform.
//!
//! | concern                        | API                                                          |
//! |--------------------------------|--------------------------------------------------------------|
//! | whether process control works  | `supported`                                                  |
//! | spawn into a new group         | `spawn_leader` → `Leader` (pid and pipe ends, `Fd`); `terminals` |
//! | signal, terminate              | `signal_group`; under the supervisor `supervisor::ask`       |
//! | watch for the leader's exit    | `ExitWatch` (async), `wait_exit`, `pidfd_open`               |
//! | reap                           | `reap`                                                       |
//! | members left after the leader  | `group_has_live_members`                                     |
//! | pipes for the driver           | `PipeReader`, `PipeWriter`, `async_reader`, `async_writer` |
//! | the supervisor                 | `SUPERVISOR`, `loaded_from`, `supervisor` (spawn on a reaper, ask, read its reports) |
//! | teardown at the host's death   | `at_host_exit`, `guardian`                                   |
//! | the host's own protection      | `protect_host`                                               |
//! | files and programs             | `may_execute`, `owner_only_dir`, `owner_only_file`, `owned_by_this_user` |
//!
//! The files:
//! - `unix.rs`: POSIX (`posix_spawn`, `killpg`, `waitid`/`waitpid`, pipes,
//!   `atexit`), with `guardian.rs`, the process that outlives a dead host to
//!   end its groups;
//! - `linux.rs`: what Linux adds (pidfds, the `/proc` group scan),
//!   with `supervisor.rs`, the host's side of the supervisor (elsewhere
//!   `no_supervisor.rs` stands in);
//! - `macos.rs`: what macOS adds (the members of a group);
//! - `generic.rs`: the stand-ins for the Linux additions elsewhere;
//! - `windows/`: Windows, where a Job Object is the group (`CreateProcessW`
//!   suspended, into its job, then resumed; a completion port for exits),
//!   with `command_line.rs`, the command line and environment block it passes.

// Used on Windows; compiled everywhere so its rules are tested everywhere.
#[cfg_attr(not(windows), allow(dead_code))]
mod command_line;
#[cfg(not(target_os = "linux"))]
mod generic;
#[cfg(unix)]
pub(super) mod guardian;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "linux")]
pub(super) mod supervisor;
#[cfg(not(target_os = "linux"))]
#[path = "no_supervisor.rs"]
pub(super) mod supervisor;
#[cfg(unix)]
mod unix;
#[cfg(not(unix))]
mod windows;

#[cfg(not(target_os = "linux"))]
pub(super) use generic::*;
#[cfg(target_os = "linux")]
pub(super) use linux::*;
#[cfg(target_os = "macos")]
pub(super) use macos::*;
#[cfg(unix)]
pub(super) use unix::*;
#[cfg(not(unix))]
pub(super) use windows::*;

/// A child that leads its own process group (on Windows, its own job), with
/// the host's ends of its pipes: what `spawn_leader` returns.
pub(crate) struct Leader {
    /// Its pid, which also names its group (its job).
    pub(crate) pid: u32,
    /// The read end of its stdout, unless inherited (never on Windows).
    pub(crate) stdout: Option<Fd>,
    /// The read end of its stderr, unless inherited (never on Windows).
    pub(crate) stderr: Option<Fd>,
    /// The write end of its stdin, when it reads from a pipe (else the null device).
    pub(crate) stdin: Option<Fd>,
    /// On a terminal: where its output is read (POSIX: the master; Windows:
    /// the pseudo console's output pipe).
    pub(crate) terminal: Option<Fd>,
    /// On a terminal whose input is a pipe of its own (Windows: the pseudo
    /// console's), the host's end of it. On POSIX the input is written to
    /// the master, through a relay the driver makes.
    pub(crate) terminal_input: Option<Fd>,
}

/// What every spawner here takes (`spawn_leader` on Unix and Windows, and
/// `supervisor::spawn`): one command, as plain data, borrowed from the
/// caller's spec. Nothing of the lifecycle: the platform is the ground
/// floor of `process/`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SpawnRequest<'a> {
    /// The absolute program path.
    pub(crate) program: &'a std::path::Path,
    /// `argv[1..]`.
    pub(crate) args: &'a [String],
    /// The complete environment; nothing else is inherited.
    pub(crate) env: &'a [(String, String)],
    /// The working directory.
    pub(crate) cwd: &'a std::path::Path,
    /// How its standard streams are connected.
    pub(crate) stdio: StdioPlan,
    /// Its resource limits.
    pub(crate) limits: &'a crate::limits::Limits,
    /// Between SIGTERM and SIGKILL to what it leaves behind (the
    /// supervisor's reapers keep this schedule themselves; elsewhere the
    /// lifecycle does).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) grace: std::time::Duration,
}

/// How a child's standard streams are connected: stdin a pipe from the host
/// (else `/dev/null`), and which output streams are the host's own (its fd 1
/// or 2, passed through) rather than a pipe to the host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct StdioPlan {
    pub(crate) stdin_piped: bool,
    pub(crate) stdout_inherited: bool,
    pub(crate) stderr_inherited: bool,
    /// Instead of all of the above: a new pseudo-terminal of this size.
    pub(crate) terminal: Option<crate::process::terminal::TerminalSize>,
}
