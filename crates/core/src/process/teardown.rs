//! What happens to children when the host process exits: every group whose
//! leader is still unreaped gets SIGKILL and the spill directory goes, from an
//! `atexit` hook installed with the first spawn. (A Node worker's teardown is
//! the binding's job: it ends its own executions from an environment cleanup
//! hook.) A host killed by a signal runs no hook; its children live on.

use std::collections::BTreeSet;
use std::sync::{Mutex, Once, PoisonError};

/// Group ids whose leaders are unreaped: signalling them is always safe.
static LIVE: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// Records a new group and makes sure the exit hook is installed.
pub(super) fn track(pgid: u32) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        // SAFETY: registers a plain `extern "C" fn`; failure only means no hook.
        unsafe { libc::atexit(on_exit) };
    });
    LIVE.lock().unwrap_or_else(PoisonError::into_inner).insert(pgid);
}

/// Forgets a group; called right before its leader is reaped.
pub(super) fn forget(pgid: u32) {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner).remove(&pgid);
}

/// SIGKILLs every group whose leader is still unreaped.
pub fn terminate_all() {
    // Other threads keep running during `exit()`: never block here.
    let Ok(live) = LIVE.try_lock() else { return };
    for &pgid in live.iter() {
        // SAFETY: the leader is unreaped (the lock orders this before `forget`).
        unsafe { libc::killpg(pgid as libc::pid_t, libc::SIGKILL) };
    }
}

extern "C" fn on_exit() {
    terminate_all();
    super::remove_spill_dir();
}
