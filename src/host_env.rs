//! The main thread's own `process.env`, read from the C environment when the
//! caller passes that very object. Walking it through Node-API costs an
//! interceptor call, a lock and a `getenv` per variable (about 40 µs for 35
//! variables, a sixth of a short command's time on the JS thread); the core's
//! `host_env::read` gives the same variables in a few microseconds.
//!
//! The read holds the lock Node itself holds around every `process.env` read
//! and write (a worker started with `env: SHARE_ENV` writes the same C
//! environment from its own thread, and `setenv` may move the array). Where
//! that lock cannot be found, or on other systems, nothing changes.
//!
//! Any other object is read property by property as before: a test runner's
//! copy (Jest gives each test file its own), a worker's own `process.env`, a
//! caller's record, or a `process.env` that code replaced with a plain object.

use napi::Env;

use crate::js::Raw;

/// The variables of `object` if it is this process's own `process.env` as the
/// main thread sees it; `None` for anything else, to be read as an object.
pub fn vars(env: &Env, object: Raw) -> Option<Vec<(String, String)>> {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    {
        let lock = node_lock::find()?;
        main_thread::is_process_env(env, object, lock).then(|| lock.hold(dsh_shell_env_core::host_env::read))
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
    {
        let _ = (env, object);
        None
    }
}

/// Node's lock around the process environment.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod node_lock {
    use std::ffi::{c_int, c_void, CStr};
    use std::sync::OnceLock;

    extern "C" {
        fn uv_mutex_lock(mutex: *mut c_void);
        fn uv_mutex_unlock(mutex: *mut c_void);
    }

    /// `node::per_process::env_var_mutex`: a `node::Mutex`, which is one
    /// `uv_mutex_t`, exported by the `node` binary (Node 20 to 24 at least).
    const SYMBOL: &CStr = c"_ZN4node11per_process13env_var_mutexE";
    /// `dladdr1`'s request for the symbol table entry.
    const RTLD_DL_SYMENT: c_int = 1;

    /// An `Elf64_Sym`, the symbol table entry `dladdr1` points to.
    #[repr(C)]
    struct Elf64Sym {
        st_name: u32,
        st_info: u8,
        st_other: u8,
        st_shndx: u16,
        st_value: u64,
        st_size: u64,
    }

    /// The lock, held for the length of a closure.
    pub(super) struct EnvLock(*mut c_void);

    // SAFETY: a process-wide mutex, made to be locked from any thread.
    unsafe impl Send for EnvLock {}
    // SAFETY: as for `Send` above.
    unsafe impl Sync for EnvLock {}

    /// Node's lock, when this process's `node` exports it with the size of a
    /// `uv_mutex_t`; a Node that changed its type, or another runtime, has
    /// none, and `process.env` is read as an object there.
    pub(super) fn find() -> Option<&'static EnvLock> {
        static LOCK: OnceLock<Option<EnvLock>> = OnceLock::new();
        LOCK.get_or_init(|| {
            // SAFETY: looks a name up in the loaded objects; the address is
            // only used once its symbol entry says what it is.
            unsafe {
                let address = libc::dlsym(libc::RTLD_DEFAULT, SYMBOL.as_ptr());
                if address.is_null() {
                    return None;
                }
                let mut info: libc::Dl_info = std::mem::zeroed();
                let mut entry: *mut c_void = std::ptr::null_mut();
                if libc::dladdr1(address, &mut info, &mut entry, RTLD_DL_SYMENT) == 0 || entry.is_null() {
                    return None;
                }
                let entry = &*entry.cast::<Elf64Sym>();
                let is_mutex =
                    info.dli_saddr == address && entry.st_size == std::mem::size_of::<libc::pthread_mutex_t>() as u64;
                is_mutex.then_some(EnvLock(address))
            }
        })
        .as_ref()
    }

    impl EnvLock {
        /// Runs `work` with the lock held. `work` must not reach `process.env`
        /// (Node would take the lock again, and it is not recursive).
        pub(super) fn hold<R>(&self, work: impl FnOnce() -> R) -> R {
            struct Held<'a>(&'a EnvLock);
            impl Drop for Held<'_> {
                fn drop(&mut self) {
                    // SAFETY: locked below by this thread.
                    unsafe { uv_mutex_unlock(self.0 .0) };
                }
            }
            // SAFETY: a live `uv_mutex_t` (see `find`), not held by this thread:
            // nothing in this crate takes it elsewhere, and Node releases it
            // before returning to JavaScript.
            unsafe { uv_mutex_lock(self.0) };
            let _held = Held(self);
            work()
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
mod main_thread {
    use std::cell::RefCell;
    use std::ptr;

    use napi::{sys, Env, JsValue};

    use super::node_lock::EnvLock;
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
        ProcessEnv {
            env: sys::napi_env,
            object: sys::napi_ref,
        },
    }

    /// Whether `object` is the main thread's `process.env`, backed by the C
    /// environment. Only there: a worker's `process.env` is its own copy.
    pub(super) fn is_process_env(env: &Env, object: Raw, lock: &EnvLock) -> bool {
        KNOWN.with(|known| {
            if matches!(*known.borrow(), Known::Unchecked) {
                *known.borrow_mut() = find(env, lock).unwrap_or(Known::None);
            }
            match *known.borrow() {
                Known::ProcessEnv { env: owner, object: reference } if owner == env.raw() => {
                    let Ok(held) = js::dereference(env, reference) else { return false };
                    let mut same = false;
                    // SAFETY: the Node-API contract (js.rs).
                    let status = unsafe { sys::napi_strict_equals(env.raw(), held, object, &mut same) };
                    !held.is_null() && status == sys::Status::napi_ok && same
                }
                _ => false,
            }
        })
    }

    fn find(env: &Env, lock: &EnvLock) -> Option<Known> {
        // SAFETY: plain system calls without arguments.
        let main_thread = unsafe { libc::syscall(libc::SYS_gettid) } == i64::from(unsafe { libc::getpid() });
        if !main_thread {
            return None;
        }
        // The global of the context the addon was loaded in: Node's own
        // `process`, even for a test file in a `vm` context (Jest loads
        // addons with Node's `require`).
        let candidate = js::process_env(env).ok()?;
        if is_proxy(env, candidate) != Some(false) || !backed_by_environ(env, candidate, lock) {
            return None;
        }
        let reference = js::reference(env, candidate).ok()?;
        // SAFETY: the Node-API contract (js.rs); `forget` is a plain `extern "C" fn`.
        if unsafe { sys::napi_add_env_cleanup_hook(env.raw(), Some(forget), ptr::null_mut()) } != sys::Status::napi_ok {
            // A refused deletion leaves nothing to do: the value goes with the `env`.
            let _ = js::unreference(env, reference);
            return None;
        }
        Some(Known::ProcessEnv { env: env.raw(), object: reference })
    }

    /// `util.types.isProxy(value)`; `None` where it cannot be asked (a Node
    /// before 20.16 has no `process.getBuiltinModule`). A Proxy over the real
    /// `process.env` passes the check below while its traps change what it shows.
    fn is_proxy(env: &Env, value: Raw) -> Option<bool> {
        let process = js::process(env).ok()?;
        let name = env.create_string("node:util").ok()?;
        let util = js::call_method(env, process, "getBuiltinModule", &[name.raw()]).ok()?;
        let answer = js::call_method(env, js::get(env, util, "types").ok()?, "isProxy", &[value]).ok()?;
        let mut proxy = false;
        // SAFETY: the Node-API contract (js.rs).
        let status = unsafe { sys::napi_get_value_bool(env.raw(), answer, &mut proxy) };
        (status == sys::Status::napi_ok).then_some(proxy)
    }

    /// Whether `candidate` has a variable set in the C environment as its own
    /// property, and stops showing it once it is removed, as Node's real
    /// `process.env` does; code may have replaced `process.env` with a plain
    /// object (or one inheriting from the real one) before this ran. The C
    /// environment changes under Node's lock; `candidate` is read without it,
    /// as Node takes it itself.
    fn backed_by_environ(env: &Env, candidate: Raw, lock: &EnvLock) -> bool {
        let name = format!("__DSH_SHELL_ENV_PROBE_{}", std::process::id());
        let value = "process.env";
        if !lock.hold(|| std::env::var_os(&name).is_none()) {
            return false;
        }
        lock.hold(|| std::env::set_var(&name, value));
        let own = js::has_own(env, candidate, &name);
        let shown = js::get_string(env, candidate, &name);
        lock.hold(|| std::env::remove_var(&name));
        let gone = js::get_string(env, candidate, &name);
        matches!(own, Ok(true)) && matches!(shown, Ok(Some(shown)) if shown == value) && matches!(gone, Ok(None))
    }

    /// The environment is going away: its reference goes with it.
    unsafe extern "C" fn forget(_data: *mut std::ffi::c_void) {
        KNOWN.with(|known| *known.borrow_mut() = Known::Unchecked);
    }
}
