//! Containment on Linux: every command runs under `dsh-shell-env-reaper`
//! (`src/bin/dsh-shell-env-reaper.rs`), a child subreaper that owns all of the
//! command's descendants, also those that leave its process group, and exits
//! only once none is left.
//!
//! Why a process of its own: a descendant that calls `setsid` and whose parent
//! exits is orphaned to the nearest subreaper ancestor, else to init, and then
//! nothing links it to the command any more. A subreaper must be an ancestor
//! of the command, and making the host one would hand it the orphans of every
//! other child Node starts. A cgroup per command would also hold them, but
//! only where the host may create cgroups, and moving a started process into
//! one costs milliseconds (the spawn goes through `posix_spawn`, which cannot
//! start a child in a cgroup on the glibc versions this package supports).
//!
//! The reaper is found next to the code of this crate (the `.node` file for
//! Node, a test binary's directory or its parent for `cargo test`). Without it,
//! commands run as the leaders of their groups as on other systems, and a
//! descendant that leaves the group is not reached. Where the platform has no
//! subreapers (`platform::SUBREAPERS`), there is never a reaper.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use super::platform;
use super::program::check_executable;

/// The reaper's file name.
pub const REAPER_NAME: &str = "dsh-shell-env-reaper";

#[cfg(test)]
thread_local! {
    /// Overrides the reaper for spawns on this thread (`Some(None)`: none), so
    /// tests cover the plain process group and a reaper that misbehaves.
    pub(super) static TEST_REAPER: std::cell::Cell<Option<Option<&'static Path>>> =
        const { std::cell::Cell::new(None) };
}

/// The reaper this process uses, if one was found.
pub fn reaper() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    #[cfg(test)]
    if let Some(reaper) = TEST_REAPER.get() {
        return reaper;
    }
    if !platform::SUBREAPERS {
        return None;
    }
    FOUND.get_or_init(locate).as_deref()
}

/// The program and arguments that run `program args…` under `reaper`, with
/// `grace` between the SIGTERM and the SIGKILL to what the command leaves behind.
pub(super) fn wrap(reaper: &Path, program: &Path, args: &[String], grace: Duration) -> (PathBuf, Vec<String>) {
    let mut wrapped = Vec::with_capacity(args.len() + 2);
    wrapped.push(grace.as_millis().min(u128::from(u64::MAX)).to_string());
    wrapped.push(program.display().to_string());
    wrapped.extend(args.iter().cloned());
    (reaper.to_owned(), wrapped)
}

/// Looks for the reaper in the directory of the file this code was loaded
/// from, then in its parent.
fn locate() -> Option<PathBuf> {
    let image = platform::loaded_from()?;
    let directory = image.parent()?;
    [directory.join(REAPER_NAME), directory.parent()?.join(REAPER_NAME)].into_iter().find(|path| is_executable(path))
}

fn is_executable(path: &Path) -> bool {
    check_executable(path).is_ok()
}
