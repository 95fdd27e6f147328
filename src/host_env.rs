//! The main thread's own `process.env`, read from the C environment when the
//! caller passes that very object. Walking it through Node-API costs an
//! interceptor call, a lock and a `getenv` per variable (about 40 µs for 35
//! variables, a sixth of a short command's time on the JS thread); the core's
//! `host_env::read` gives the same variables in a few microseconds.
//!
//! Any other object is read property by property as before: a test runner's
//! copy (Jest gives each test file its own), a worker's own `process.env`, a
//! caller's record, or a `process.env` that code replaced with a plain object.

use napi::Env;

use crate::js::Raw;

/// The variables of `object` if it is this process's own `process.env` as the
/// main thread sees it; `None` for anything else, to be read as an object.
pub fn vars(env: &Env, object: Raw) -> Option<Vec<(String, String)>> {
    #[cfg(target_os = "linux")]
    return main_thread::is_process_env(env, object).then(dsh_shell_env_core::host_env::read);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (env, object);
        None
    }
}

#[cfg(target_os = "linux")]
mod main_thread {
    use std::cell::RefCell;
    use std::ptr;

    use napi::{sys, Env};

    use crate::js::{self, Raw};

    thread_local! {
        static KNOWN: RefCell<Known> = const { RefCell::new(Known::Unchecked) };
    }

    /// What the first call on this thread found.
    enum Known {
        Unchecked,
        /// Not the main thread, or its `process.env` is not backed by the C
        /// environment: every object is read as an object.
        None,
        /// The main thread's `process.env`, held for identity checks.
        ProcessEnv { env: sys::napi_env, object: sys::napi_ref },
    }

    /// Whether `object` is the main thread's `process.env`, backed by the C
    /// environment. Only there: a worker's `process.env` is its own copy.
    pub(super) fn is_process_env(env: &Env, object: Raw) -> bool {
        KNOWN.with(|known| {
            if matches!(*known.borrow(), Known::Unchecked) {
                *known.borrow_mut() = find(env).unwrap_or(Known::None);
            }
            match *known.borrow() {
                Known::ProcessEnv { env: owner, object: reference } if owner == env.raw() => {
                    let mut held = ptr::null_mut();
                    let mut same = false;
                    unsafe {
                        sys::napi_get_reference_value(env.raw(), reference, &mut held) == sys::Status::napi_ok
                            && !held.is_null()
                            && sys::napi_strict_equals(env.raw(), held, object, &mut same) == sys::Status::napi_ok
                            && same
                    }
                }
                _ => false,
            }
        })
    }

    fn find(env: &Env) -> Option<Known> {
        // SAFETY: plain system calls without arguments.
        let main_thread = unsafe { libc::syscall(libc::SYS_gettid) } == i64::from(unsafe { libc::getpid() });
        if !main_thread {
            return None;
        }
        // The global of the context the addon was loaded in: Node's own
        // `process`, even for a test file in a `vm` context (Jest loads
        // addons with Node's `require`).
        let candidate = js::process_env(env).ok()?;
        if !backed_by_environ(env, candidate) {
            return None;
        }
        let mut reference = ptr::null_mut();
        let status = unsafe { sys::napi_create_reference(env.raw(), candidate, 1, &mut reference) };
        if status != sys::Status::napi_ok {
            return None;
        }
        let status = unsafe { sys::napi_add_env_cleanup_hook(env.raw(), Some(forget), ptr::null_mut()) };
        (status == sys::Status::napi_ok).then_some(Known::ProcessEnv { env: env.raw(), object: reference })
    }

    /// Whether `candidate` shows a variable set in the C environment and stops
    /// showing it once it is removed, as Node's real `process.env` does; code
    /// may have replaced `process.env` with a plain object before this ran.
    fn backed_by_environ(env: &Env, candidate: Raw) -> bool {
        let name = format!("__DSH_SHELL_ENV_PROBE_{}", std::process::id());
        if std::env::var_os(&name).is_some() {
            return false;
        }
        let value = "process.env";
        std::env::set_var(&name, value);
        let shown = js::get_string(env, candidate, &name);
        std::env::remove_var(&name);
        let gone = js::get_string(env, candidate, &name);
        matches!(shown, Ok(Some(shown)) if shown == value) && matches!(gone, Ok(None))
    }

    /// The environment is going away: its reference goes with it.
    unsafe extern "C" fn forget(_data: *mut std::ffi::c_void) {
        KNOWN.with(|known| *known.borrow_mut() = Known::Unchecked);
    }
}
