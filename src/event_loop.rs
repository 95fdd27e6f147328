//! Node's event loop as the driver of this thread's children: the core's
//! `Reactor` (see there why), watched by one libuv poll handle per JS thread,
//! so a child's output and exit are handled on the JS thread as they happen,
//! without waking another thread. Only on Linux (the reactor needs pidfds and
//! epoll); elsewhere the runtime supervises every child.
//!
//! The ABI this relies on, and nothing more: libuv's public API, which Node
//! exports to addons and documents for them (`napi_get_uv_event_loop`), as
//! libuv 1.x keeps it stable: the functions declared below, and the values of
//! `UV_POLL` and `UV_READABLE`. The handle's size comes from libuv itself
//! (`uv_handle_size`), so no libuv struct layout is assumed. Node 20, 22 and
//! 24 all ship libuv 1.x; the suites run on each. Where any step fails (no
//! loop, `uv_poll_init` refused, no epoll), this thread gets no reactor and
//! the runtime's supervisor drives its children, the path every execution
//! with `onOutput` or `stdin` takes anyway.

use dsh_shell_env_core::process::{Process, ProcessSpec, Spawner};
use dsh_shell_env_core::ExecError;
use napi::Env;

/// Starts `spec`, driven by this thread's event loop where the reactor can
/// take it, otherwise by the runtime (the core chooses). Call on the JS
/// thread, inside the runtime.
pub fn spawn(env: &Env, spec: ProcessSpec) -> Result<Process, ExecError> {
    spawner(env).spawn(spec)
}

/// For spawns made later on another thread (after a registry collection):
/// their children are driven by this thread's event loop too.
pub fn spawner(env: &Env) -> Spawner {
    #[cfg(target_os = "linux")]
    return libuv::with_reactor(env, Spawner::new);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = env;
        Spawner::default()
    }
}

/// The reactor of each JS thread and the libuv handle that watches it.
#[cfg(target_os = "linux")]
mod libuv {
    use std::cell::RefCell;
    use std::ffi::{c_int, c_void};
    use std::ptr;

    use dsh_shell_env_core::process::Reactor;
    use napi::{sys, Env};

    extern "C" {
        fn uv_handle_size(handle_type: c_int) -> usize;
        fn uv_poll_init(event_loop: *mut sys::uv_loop_s, handle: *mut c_void, fd: c_int) -> c_int;
        fn uv_poll_start(
            handle: *mut c_void,
            events: c_int,
            callback: unsafe extern "C" fn(*mut c_void, c_int, c_int),
        ) -> c_int;
        fn uv_unref(handle: *mut c_void);
        fn uv_close(handle: *mut c_void, callback: Option<unsafe extern "C" fn(*mut c_void)>);
    }

    /// `UV_POLL` in libuv's `uv_handle_type`, and `UV_READABLE`: stable ABI values.
    const UV_POLL: c_int = 8;
    const UV_READABLE: c_int = 1;

    thread_local! {
        /// This JS thread's reactor and its poll handle, made by the first spawn;
        /// `Unavailable` when that failed, so it is not tried again.
        static DRIVER: RefCell<Driver> = const { RefCell::new(Driver::NotStarted) };
    }

    enum Driver {
        NotStarted,
        Unavailable,
        Running(Watched),
    }

    /// A reactor and the libuv handle watching its descriptor.
    struct Watched {
        reactor: Reactor,
        handle: *mut c_void,
    }

    /// This thread's reactor, started by the first call; `None` where it cannot run.
    pub(super) fn with_reactor<R>(env: &Env, use_it: impl FnOnce(Option<&Reactor>) -> R) -> R {
        DRIVER.with(|driver| {
            if matches!(*driver.borrow(), Driver::NotStarted) {
                let started = Watched::start(env);
                *driver.borrow_mut() = started.map_or(Driver::Unavailable, Driver::Running);
            }
            match &*driver.borrow() {
                Driver::Running(watched) => use_it(Some(&watched.reactor)),
                Driver::NotStarted | Driver::Unavailable => use_it(None),
            }
        })
    }

    impl Watched {
        fn start(env: &Env) -> Option<Self> {
            // Called from the registry path too, outside the runtime's context.
            let runtime =
                napi::bindgen_prelude::within_runtime_if_available(tokio::runtime::Handle::try_current).ok()?;
            let reactor = Reactor::new(runtime).ok()?;
            let mut event_loop = ptr::null_mut();
            // SAFETY: the Node-API contract (js.rs); the out-pointer is an initialised local.
            if unsafe { sys::napi_get_uv_event_loop(env.raw(), &mut event_loop) } != sys::Status::napi_ok {
                return None;
            }
            // SAFETY: sized by libuv itself; freed by `free_handle` once closed.
            let handle = unsafe { libc::malloc(uv_handle_size(UV_POLL)) };
            if handle.is_null() {
                return None;
            }
            // SAFETY: `event_loop` is this thread's live loop and `handle` is memory of the size libuv asked for.
            if unsafe { uv_poll_init(event_loop, handle, reactor.fd()) } != 0 {
                // SAFETY: `handle` came from `malloc` above and libuv never took it.
                unsafe { libc::free(handle) };
                return None;
            }
            let watched = Self { reactor, handle };
            // SAFETY: `handle` was initialised by `uv_poll_init`; `on_readable` has the callback's signature.
            if unsafe { uv_poll_start(handle, UV_READABLE, on_readable) } != 0 {
                return None;
            }
            // The handle alone must not keep Node alive: a pending result does
            // (its promise holds the loop), as with the runtime's supervisor.
            // SAFETY: an initialised, active handle.
            unsafe { uv_unref(handle) };
            // SAFETY: the Node-API contract (js.rs); `stop` is a plain `extern "C" fn`.
            let status = unsafe { sys::napi_add_env_cleanup_hook(env.raw(), Some(stop), ptr::null_mut()) };
            (status == sys::Status::napi_ok).then_some(watched)
        }
    }

    impl Drop for Watched {
        fn drop(&mut self) {
            // Closing stops the polling at once; the memory goes in the callback.
            // SAFETY: an initialised handle, closed once (this drop); libuv frees it through `free_handle` after the close.
            unsafe { uv_close(self.handle, Some(free_handle)) };
        }
    }

    unsafe extern "C" fn on_readable(_handle: *mut c_void, _status: c_int, _events: c_int) {
        DRIVER.with(|driver| {
            if let Driver::Running(watched) = &*driver.borrow() {
                watched.reactor.turn();
            }
        });
    }

    unsafe extern "C" fn free_handle(handle: *mut c_void) {
        // SAFETY: libuv calls this once per closed handle, each allocated with `malloc` in `start`.
        unsafe { libc::free(handle) };
    }

    /// The JS environment is going away (a worker ends, Node exits): its reactor
    /// hands every process it still drives to the runtime, and the handle closes.
    /// The executions' own cleanup hooks, registered later, have run by now and
    /// killed their groups.
    unsafe extern "C" fn stop(_data: *mut c_void) {
        let driver = DRIVER.with(|driver| std::mem::replace(&mut *driver.borrow_mut(), Driver::Unavailable));
        drop(driver);
    }
}
