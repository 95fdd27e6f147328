//! Process control: start a command as the leader of its own process group with
//! exactly the environment it is given, capture its output in bounded memory,
//! and end the whole group when the leader exits, times out or is killed. On
//! Linux the leader is a reaper under the supervisor ([`containment`]), which
//! ends every descendant, also those that left the group.
//!
//! Everything here is built to run inside a Node process (see the engineering
//! notes, "Spawning from inside Node: traps"): children start through
//! `posix_spawn` (no `pre_exec`, an absolute program path), and exits are
//! detected without SIGCHLD, which libuv owns.
//!
//! Three layers, each using only those below it (ARCHITECTURE.md has the
//! module graph):
//! - the driver takes a child from spawn to result: a Tokio task per child
//!   (`supervise`), started by [`spawn`] or [`spawn_async`] (`driver`);
//! - the lifecycle: the shared state
//!   (`lifecycle`), the kill schedule (`group`), the result and its
//!   publication, the handle ([`Process`]), output capture and spill files;
//! - the platform (`platform`): spawning into a group, signals, exits,
//!   reaping, teardown at the host's death. Only there does
//!   code depend on the target.

pub mod containment;
mod driver;
mod exit;
mod group;
mod handle;
mod lifecycle;
mod output;
mod platform;
mod program;
mod result;
mod spawn;
mod spec;
mod spill;
mod stream;
mod supervise;
mod sync;
mod teardown;
pub mod terminal;

#[cfg(test)]
mod tests;

pub use driver::{spawn, spawn_async};
pub use handle::{KillReason, Process};
pub use lifecycle::{Pipes, Terminal};
pub use output::{OutputReceipt, OutputSink, LIVE_OUTPUT_BUDGET};
pub use program::{check_workdir, resolve_program, Search, DEFAULT_PATHEXT};
pub use result::{OutputDelta, OutputRead, ProcessState, RunResult, SpillError, Status, StreamResult};
pub use spawn::limit_controllers;
pub use spec::{Input, Output, ProcessSpec, DEFAULT_GRACE};
pub use spill::{check_spill_base, remove_spill_dir, remove_spill_file, SpillPlace};
pub use stream::{OutputLimits, StreamKind};
pub use teardown::end_all;

/// Whether a file's metadata says this process's user owns it: the one
/// ownership check, for the spill sweep and the command directories' trust
/// (`false` where the platform cannot tell from metadata: Windows).
pub(crate) fn owned_by_this_user(meta: &std::fs::Metadata) -> bool {
    platform::owned_by_this_user(meta)
}

/// The host's environment variable that, set to `1` before the first
/// command, keeps the host dumpable. By default a host that spawns becomes
/// non-dumpable (Linux), so that its commands cannot read the credentials
/// the scrub kept from them out of `/proc/<host>/environ`; a developer who
/// needs `gdb -p`, `perf -p` or core dumps of the host sets this.
pub const KEEP_DUMPABLE: &str = "DSH_SHELL_ENV_DUMPABLE";
