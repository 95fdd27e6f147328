//! What happens to children when the host process goes: every group whose
//! leader is still unreaped gets SIGKILL (a reaper is asked to kill its tree:
//! see [`super::group`]) and the spill directory goes, from an exit hook
//! (`atexit`) installed with the first spawn, or from [`end_all`] for a
//! host about to die of a signal (which runs no exit hook). A host that dies
//! without running anything (SIGKILL, an out-of-memory crash, `abort()`)
//! closes its sockets to the supervisor and its reapers, which then kill
//! every tree; groups the host leads itself (no supervisor) are covered by
//! the platform's guardian (`platform::guardian`), which hears of each of
//! them here. A Node worker's teardown is the binding's job: it ends its own
//! executions from an environment cleanup hook.

use std::collections::BTreeMap;
use std::sync::{Mutex, Once, PoisonError, TryLockError};

use super::exit::{Control, Signal};
use super::platform::{self, guardian};
use super::spill::remove_spill_dir;
use crate::supervisor::protocol::Ask;

/// Group ids whose leaders are unreaped, which makes signalling them safe,
/// each with how its leader is reached.
static LIVE: Mutex<BTreeMap<u32, Control>> = Mutex::new(BTreeMap::new());

/// Records a new group and makes sure the exit hook is installed.
pub(super) fn track(pgid: u32, control: Control) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| platform::at_host_exit(on_exit));
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    live.insert(pgid, control);
    if control == Control::Child {
        guardian::started(pgid, &children(&live));
    }
}

/// Forgets a group; called right before its leader is reaped.
pub(super) fn forget(pgid: u32) {
    let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    if live.remove(&pgid) == Some(Control::Child) {
        guardian::ending(pgid, &children(&live));
    }
}

/// The groups the host leads itself, which only the guardian watches.
fn children(live: &BTreeMap<u32, Control>) -> Vec<u32> {
    live.iter().filter(|(_, &control)| control == Control::Child).map(|(&pgid, _)| pgid).collect()
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
fn kill_all(live: &BTreeMap<u32, Control>) {
    for (&pgid, &control) in live {
        match control {
            Control::Supervised { id } => platform::supervisor::ask(id, Ask::Kill),
            // Safe to signal: the leader is unreaped (the caller holds the
            // lock, which orders this before `forget`).
            Control::Child => platform::signal_group(pgid, Signal::Kill),
        }
    }
}

extern "C" fn on_exit() {
    // Other threads keep running during `exit()`: never block here. Commands
    // under the supervisor are left to it: the host's sockets close at its
    // exit, and asking would take the supervisor's lock.
    let children = |live: &BTreeMap<u32, Control>| -> BTreeMap<u32, Control> {
        live.iter().filter(|(_, &control)| control == Control::Child).map(|(&pgid, &control)| (pgid, control)).collect()
    };
    match LIVE.try_lock() {
        Ok(live) => kill_all(&children(&live)),
        Err(TryLockError::Poisoned(poisoned)) => kill_all(&children(&poisoned.into_inner())),
        // A spawn under way holds the lock: the guardian ends whatever it misses.
        Err(TryLockError::WouldBlock) => return remove_spill_dir(),
    }
    guardian::dismiss();
    remove_spill_dir();
}
