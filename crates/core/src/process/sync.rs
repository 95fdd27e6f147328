//! Locking that survives a panic elsewhere.

use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

/// Locks a mutex, ignoring poisoning: every critical section here leaves the
/// data consistent, so a panic elsewhere must not take output or kills with it.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Locks a mutex if no one holds it, ignoring poisoning as [`lock`] does:
/// `None` when it is held.
pub(super) fn try_lock<T>(mutex: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match mutex.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}
