//! Containment on Linux: every command runs under the supervisor
//! (`dsh-shell-env-supervisor`, the core's `supervisor` module), one process
//! per host that forks long-lived reapers, each running one command at a
//! time: a child subreaper that owns all of the command's descendants, also
//! those that leave its process group, and reports the command's exit only
//! once none is left.
//!
//! Why processes of their own: a descendant that calls `setsid` and whose
//! parent exits is orphaned to the nearest subreaper ancestor, else to init,
//! and then nothing links it to the command any more. A subreaper must be an
//! ancestor of the command, and making the host one would hand it the orphans
//! of every other child Node starts. Forking from the host is not an option
//! either: `fork` in a Node process copies its page tables and is unsafe
//! before `exec` in a multithreaded process. The supervisor is small and
//! single-threaded, so it forks in a tenth of an `exec`.
//!
//! The supervisor program is found next to the code of this crate (the
//! `.node` file for Node, a test binary's directory or its parent for
//! `cargo test`). Without it, commands run as the leaders of their groups as
//! on other systems, and a descendant that leaves the group is not reached.
//! Where the platform has no supervisor (`platform::SUPERVISOR`), there is
//! never one.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::platform;
use super::program::check_executable;
pub use crate::supervisor::PROGRAM_NAME;

#[cfg(test)]
thread_local! {
    /// Overrides the supervisor program for spawns on this thread
    /// (`Some(None)`: none), so tests cover the plain process group.
    pub(super) static TEST_SUPERVISOR: std::cell::Cell<Option<Option<&'static Path>>> =
        const { std::cell::Cell::new(None) };
}

/// The supervisor program this process uses, if one was found.
pub fn supervisor() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    #[cfg(test)]
    if let Some(program) = TEST_SUPERVISOR.get() {
        return program;
    }
    if !platform::SUPERVISOR {
        return None;
    }
    FOUND.get_or_init(locate).as_deref()
}

/// Looks for the program in the directory of the file this code was loaded
/// from, then in its parent.
fn locate() -> Option<PathBuf> {
    let image = platform::loaded_from()?;
    let directory = image.parent()?;
    [directory.join(PROGRAM_NAME), directory.parent()?.join(PROGRAM_NAME)]
        .into_iter()
        .find(|path| check_executable(path).is_ok())
}
