//! What happens to children when the host process goes: every group whose
//! leader is still unreaped gets SIGKILL (a reaper's, SIGUSR1: see
//! [`super::group`]) and the spill directory goes, from an exit hook
//! (`atexit`) installed with the first spawn, or from [`end_all`] for a
//! host about to die of a signal (which runs no exit hook). A host that dies
//! without running anything (SIGKILL, an out-of-memory crash, `abort()`) is
//! covered by the platform's guardian (`platform::guardian`), which hears of
//! every group here. A Node worker's teardown is the binding's job: it ends
//! its own executions from an environment cleanup hook.

use std::collections::BTreeMap;
use std::sync::{Mutex, Once, PoisonError, TryLockError};

use super::exit::Signal;
use super::platform::{self, guardian};
use super::spill::remove_spill_dir;

/// Group ids whose leaders are unreaped, which makes signalling them safe,
/// each with whether its leader is the reaper.
static LIVE: Mutex<BTreeMap<u32, bool>> = Mutex::new(BTreeMap::new());

/// Records a new group and makes sure the exit hook is installed.
pub(super) fn track(pgid: u32, reaper: bool) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| platform::at_host_exit(on_exit));
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    live.insert(pgid, reaper);
    guardian::started(pgid, reaper, &live);
}

/// Forgets a group; called right before its leader is reaped.
pub(super) fn forget(pgid: u32) {
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    live.remove(&pgid);
    guardian::ending(pgid, &live);
}

/// Does what the host's exit does, for a host about to die of a signal:
/// SIGKILLs every group whose leader is still unreaped, then removes the spill
/// directory. Groups started afterwards are tracked as usual.
pub fn end_all() {
    kill_all(&LIVE.lock().unwrap_or_else(PoisonError::into_inner));
    remove_spill_dir();
}

/// SIGKILLs every group; a reaper is asked to SIGKILL its descendants instead,
/// which it does whether or not this process is still there.
fn kill_all(live: &BTreeMap<u32, bool>) {
    for (&pgid, &reaper) in live {
        if reaper {
            platform::signal_reaper(pgid);
        } else {
            // Safe to signal: the leader is unreaped (the caller holds the
            // lock, which orders this before `forget`).
            platform::signal_group(pgid, Signal::Kill);
        }
    }
}

extern "C" fn on_exit() {
    // Other threads keep running during `exit()`: never block here.
    match LIVE.try_lock() {
        Ok(live) => kill_all(&live),
        Err(TryLockError::Poisoned(poisoned)) => kill_all(&poisoned.into_inner()),
        // A spawn under way holds the lock: the guardian ends whatever it misses.
        Err(TryLockError::WouldBlock) => return remove_spill_dir(),
    }
    guardian::dismiss();
    remove_spill_dir();
}
