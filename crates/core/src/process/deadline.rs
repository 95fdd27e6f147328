//! Timeouts of the processes a [`Reactor`](super::Reactor) drives, fired from one thread
//! of their own: the caller's event loop may be busy, and a timeout must not
//! wait for it.
//!
//! Adding a deadline later than every pending one (the usual case: equal
//! timeouts, started one after another) wakes nothing; the thread sleeps until
//! the earliest. A removed deadline costs at most one early wake-up.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError, Weak};
use std::thread;
use std::time::Instant;

use super::group::KillCause;
use super::lifecycle::Shared;
use super::sync::lock;

/// Identifies one pending deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Key(Instant, u64);

/// The pending deadlines, and until when the thread sleeps (`None`: until
/// notified).
struct Pending {
    deadlines: BTreeMap<Key, Weak<Shared>>,
    sleeping_until: Option<Instant>,
}

static PENDING: Mutex<Pending> = Mutex::new(Pending { deadlines: BTreeMap::new(), sleeping_until: None });
static CHANGED: Condvar = Condvar::new();
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Whether the timer thread runs, started by the first call. When it cannot
/// be started, no process may rely on [`add`].
pub(super) fn available() -> bool {
    static RUNNING: OnceLock<bool> = OnceLock::new();
    *RUNNING
        .get_or_init(|| thread::Builder::new().name("dsh-deadlines".into()).stack_size(64 * 1024).spawn(run).is_ok())
}

/// Expires `shared`'s process at `at`, unless the deadline is removed first.
/// Only once [`available`] said the timer thread runs.
pub(super) fn add(at: Instant, shared: &Arc<Shared>) -> Key {
    let key = Key(at, NEXT.fetch_add(1, Ordering::Relaxed));
    let mut pending = lock(&PENDING);
    pending.deadlines.insert(key, Arc::downgrade(shared));
    // Only a deadline before the thread's wake-up changes how long it sleeps.
    if pending.sleeping_until.is_none_or(|until| at < until) {
        CHANGED.notify_one();
    }
    key
}

/// Drops a deadline that is no longer needed.
pub(super) fn remove(key: Key) {
    lock(&PENDING).deadlines.remove(&key);
}

fn run() {
    let mut pending = lock(&PENDING);
    loop {
        let now = Instant::now();
        let first = pending.deadlines.first_key_value().map(|(Key(at, _), _)| *at);
        if first.is_none_or(|at| at > now) {
            // A removed deadline is not waited for again, but it may still be
            // the one the thread wakes at: it then sleeps on until the next.
            pending.sleeping_until = first;
            pending = match first {
                None => CHANGED.wait(pending).unwrap_or_else(PoisonError::into_inner),
                Some(at) => CHANGED.wait_timeout(pending, at - now).unwrap_or_else(PoisonError::into_inner).0,
            };
            pending.sleeping_until = Some(now);
            continue;
        }
        let due = pending.deadlines.pop_first().and_then(|(_, shared)| shared.upgrade());
        // Expiring signals the group and hands the process over: not under the lock.
        drop(pending);
        if let Some(shared) = due {
            // A panic here must not end the thread every later timeout needs.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| expire(&shared)));
        }
        pending = lock(&PENDING);
    }
}

/// The timeout ran out: the kill tells the driver, which lets go of the
/// process (the supervisor keeps a timer of its own).
fn expire(shared: &Shared) {
    shared.kill(KillCause::Timeout);
}

/// Whether a deadline for `shared` is still pending.
#[cfg(all(test, target_os = "linux"))]
pub(super) fn is_pending(shared: &Arc<Shared>) -> bool {
    lock(&PENDING).deadlines.values().any(|pending| std::ptr::eq(pending.as_ptr(), Arc::as_ptr(shared)))
}
