//! The supervisor: one small process per host that starts, contains and ends
//! the host's commands (the `dsh-shell-env-supervisor` program, see
//! `src/bin/`; the host's side is `process::platform::supervisor`).
//!
//! The host starts it on first use, with one end of a close-on-exec socket
//! pair as its stdin. When the host needs reapers it sends a
//! [`protocol::Request`]; the supervisor forks each (`reaper`: it takes its
//! own process group and becomes a child subreaper) and hands the host one
//! end of a socket to it. The host keeps the reapers it got in a pool and
//! talks to each directly: per command, one [`protocol::Order`] with the
//! command's stdio and [`protocol::LaunchSpec`], answered by its pid and,
//! once nothing of it is left, its status; then the reaper takes the next
//! command. No process is made per command: a reaper is forked (a fork of
//! this small single-threaded process costs a tenth of an `exec`) only when
//! the host runs more commands at once than it has reapers.
//!
//! When the host dies, by whatever cause, its sockets close: the supervisor
//! and every reaper see the end and kill every tree, including commands the
//! host had not yet heard had started. When the supervisor dies, every reaper
//! gets its death signal and kills its tree; the host reports those commands
//! as killed and starts a new supervisor on next use.
//!
//! Where the host's cgroup v2 directory allows it, each command is born in a
//! leaf cgroup of its own (`cgroup`), and `cgroup.kill` ends it whole.

#[cfg(target_os = "linux")]
mod cgroup;
#[cfg(target_os = "linux")]
mod descriptors;
pub mod protocol;
#[cfg(target_os = "linux")]
mod reaper;
#[cfg(target_os = "linux")]
mod server;
#[cfg(target_os = "linux")]
mod signals;
#[cfg(target_os = "linux")]
mod slot;
#[cfg(target_os = "linux")]
pub mod socket;
#[cfg(target_os = "linux")]
mod tree;

/// The supervisor program's file name.
pub const PROGRAM_NAME: &str = "dsh-shell-env-supervisor";

/// The host's environment variable that, set to `1` when the supervisor
/// starts, keeps it from the cgroup tier (for tests, and hosts whose cgroup
/// tree is managed by someone who must not see new directories in it).
pub const NO_CGROUPS: &str = "DSH_SHELL_ENV_NO_CGROUPS";

/// The supervisor's argument for [`NO_CGROUPS`].
pub const NO_CGROUPS_FLAG: &str = "--no-cgroups";

/// The supervisor program: serves the host on its stdin; never returns.
#[cfg(target_os = "linux")]
pub fn main() -> ! {
    let no_cgroups = std::env::args_os().skip(1).any(|arg| arg == NO_CGROUPS_FLAG);
    server::serve(!no_cgroups)
}
