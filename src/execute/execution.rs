//! The native execution handle `execute()` resolves with: the running
//! process, its live output sink, the hook that ends it with its JS
//! environment, and the one-time finish callback.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use dsh_shell_env_core::process::{self, KillReason, OutputSink, Process, RunResult, StreamKind};
use napi::bindgen_prelude::*;
use napi::sys;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use super::results::{run_result, RawPipes, RawTerminal, ShellOutputDelta, ShellOutputRead, ShellRunResult};
use crate::abort::AbortListener;
use crate::descriptors::hand_over;
use crate::js::{self, JsRaw, Raw};

/// A live output sink calling the JS `onOutput` function. A throw inside the
/// callback is captured and ignored: a faulty listener must not kill the host.
pub(super) fn output_sink(env: &Env, on_output: Raw) -> Result<OutputSink> {
    // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
    let function = unsafe { Function::<JsRaw, Ignored>::from_napi_value(env.raw(), on_output)? };
    let threadsafe: ThreadsafeFunction<(process::StreamKind, String), Ignored, JsRaw, napi::Status, false, true> =
        function
            .build_threadsafe_function::<(process::StreamKind, String)>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(|context| {
                let (stream, text) = context.value;
                let chunk =
                    js::object_of_strings(&context.env, [("stream", stream.as_str()), ("text", text.as_str())])?;
                Ok(JsRaw(chunk))
            })?;
    let threadsafe = Arc::new(threadsafe);
    Ok(Arc::new(move |stream, text: &str, receipt| {
        // The receipt rides along until the JS callback has run (or the call is
        // dropped because the environment is going away): only then may the
        // child's output be read further, so a busy JS thread cannot make the
        // unbounded threadsafe-function queue grow.
        threadsafe.call_with_return_value(
            (stream, text.to_string()),
            ThreadsafeFunctionCallMode::NonBlocking,
            move |_ignored, _env| {
                drop(receipt);
                Ok(())
            },
        );
    }))
}

/// A JS return value nobody looks at; converting it never fails.
pub struct Ignored;

impl FromNapiValue for Ignored {
    unsafe fn from_napi_value(_env: sys::napi_env, _value: sys::napi_value) -> Result<Self> {
        Ok(Ignored)
    }
}

/// What must happen on the JS thread once the child is gone.
struct Cleanup {
    listener: Option<AbortListener>,
    hook: Option<TeardownHook>,
}

/// The environment cleanup hook that SIGKILLs one execution's group when its
/// JS environment is torn down (a worker terminated, the process exiting).
///
/// Not napi-rs's `add_env_cleanup_hook`: its `remove_env_cleanup_hook` never
/// frees the data it boxed, so every finished execution leaked its `Process`,
/// and with it the result and its spill files, which were then never removed.
/// Here removal frees the box. The hook itself only signals and leaves the box
/// alone, so a removal after it ran cannot free it twice; a box whose hook ran
/// and that is never removed is left to the dying environment.
struct TeardownHook(*mut Process);

impl TeardownHook {
    fn add(env: &Env, process: Process) -> Result<Self> {
        let data = Box::into_raw(Box::new(process));
        // SAFETY: the Node-API contract (js.rs); `run` is a plain `extern "C" fn` and `data` stays valid until the hook is removed or has run.
        let status = unsafe { sys::napi_add_env_cleanup_hook(env.raw(), Some(Self::run), data.cast()) };
        if status != sys::Status::napi_ok {
            // SAFETY: not registered, so still ours alone.
            drop(unsafe { Box::from_raw(data) });
            return Err(Error::new(napi::Status::from(status), "registering the teardown hook failed"));
        }
        Ok(Self(data))
    }

    /// Unregisters the hook and frees its data (JS thread).
    fn remove(self, env: &Env) {
        // SAFETY: the Node-API contract (js.rs); the same function and data as when the hook was added.
        let status = unsafe { sys::napi_remove_env_cleanup_hook(env.raw(), Some(Self::run), self.0.cast()) };
        if status == sys::Status::napi_ok {
            // SAFETY: made by Box::into_raw in `add`; the hook can no longer run,
            // and it never frees the box itself.
            drop(unsafe { Box::from_raw(self.0) });
        }
    }

    unsafe extern "C" fn run(data: *mut std::ffi::c_void) {
        // SAFETY: the box from `add`, alive until `remove`, which cannot have run
        // yet: Node drops a hook from its queue before removal returns.
        let process = unsafe { &*data.cast::<Process>() };
        process.terminate_now();
    }
}

/// A running or finished command, as `execute()` resolves it. The package's
/// `ShellExecution` wraps it.
#[napi]
pub struct NativeExecution {
    process: Process,
    cleanup: RefCell<Cleanup>,
    /// Set by `onFinish`.
    finish: RefCell<Option<FinishSlot>>,
}

impl NativeExecution {
    /// Wraps a running process; its teardown hook is registered from now on.
    pub(super) fn new(env: &Env, process: Process, listener: AbortListener) -> Result<Self> {
        let hook = TeardownHook::add(env, process.clone())?;
        let cleanup = Cleanup { listener: Some(listener), hook: Some(hook) };
        Ok(Self { process, cleanup: RefCell::new(cleanup), finish: RefCell::new(None) })
    }
}

#[napi]
impl NativeExecution {
    /// The child's pid (also its process group id).
    #[napi(getter)]
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// `'running'`, `'completed'` or `'killed'`.
    #[napi(getter, ts_return_type = "'running' | 'completed' | 'killed'")]
    pub fn status(&self) -> &'static str {
        self.process.state().status.as_str()
    }

    /// The exit code once the child exited normally.
    #[napi(getter)]
    pub fn exit_code(&self) -> Option<i32> {
        self.process.state().exit_code
    }

    /// The signal name once a signal ended the child.
    #[napi(getter)]
    pub fn signal(&self) -> Option<&'static str> {
        self.process.state().signal
    }

    /// SIGTERM to the group, SIGKILL after the grace; `true` once while running.
    #[napi]
    pub fn kill(&self) -> bool {
        self.process.kill(KillReason::Requested)
    }

    /// Output produced since the previous call.
    #[napi]
    pub fn read_output(&self) -> ShellOutputDelta {
        let delta = self.process.read_output();
        let shown = |path: Option<std::path::PathBuf>| path.map(|path| path.to_string_lossy().into_owned());
        ShellOutputDelta {
            stdout: delta.stdout,
            stderr: delta.stderr,
            lossy: delta.lossy,
            stdout_spill_path: shown(delta.stdout_spill),
            stderr_spill_path: shown(delta.stderr_spill),
        }
    }

    /// One captured stream's text from whole-stream byte `fromByte` on,
    /// consuming nothing; also after the process ended.
    #[napi(ts_args_type = "stream: 'stdout' | 'stderr', fromByte: number")]
    pub fn read_from(&self, stream: String, from_byte: f64) -> Result<ShellOutputRead> {
        let kind = match stream.as_str() {
            "stdout" => StreamKind::Stdout,
            "stderr" => StreamKind::Stderr,
            _ => return Err(Error::new(napi::Status::InvalidArg, "stream must be 'stdout' or 'stderr'")),
        };
        if !(from_byte.is_finite() && from_byte >= 0.0) {
            return Err(Error::new(napi::Status::InvalidArg, "fromByte must be a finite number >= 0"));
        }
        let read = self.process.read_from(kind, from_byte as u64);
        Ok(ShellOutputRead {
            text: read.text,
            next_offset: read.next_offset as f64,
            lossy: read.lossy,
            spill_path: read.spill_path.map(|path| path.to_string_lossy().into_owned()),
        })
    }

    /// The host's ends of the raw pipes (`stdio: 'pipe'`) as descriptors the
    /// caller now owns (to wrap in a stream, which closes them); each once.
    #[napi]
    pub fn take_pipes(&self) -> RawPipes {
        let pipes = self.process.take_pipes();
        let terminal = pipes.terminal.and_then(|terminal| {
            Some(RawTerminal {
                fd: hand_over(Some(terminal.master))?,
                input: hand_over(terminal.input)?,
                pid: terminal.pid,
            })
        });
        RawPipes {
            stdin: hand_over(pipes.stdin),
            stdout: hand_over(pipes.stdout),
            stderr: hand_over(pipes.stderr),
            terminal,
        }
    }

    /// Once the whole group is gone, releases the abort listener and the
    /// teardown hook and calls `callback(result)`. Until then the pending call holds
    /// the event loop open, as a running `child_process` does, unless
    /// `unref()` lets go of it. Called once by the package's `ShellExecution`.
    #[napi(ts_args_type = "callback: (result: ShellRunResult) => void")]
    pub fn on_finish(&self, callback: Function<ShellRunResult, Ignored>) -> Result<()> {
        let cleanup = OnJsThread(self.cleanup.replace(Cleanup { listener: None, hook: None }));
        let callback: FinishCallback =
            callback.build_threadsafe_function::<Finished>().callee_handled::<false>().weak::<false>().build_callback(
                |context| {
                    let Finished { result, cleanup } = context.value;
                    let cleanup = cleanup.into_inner();
                    if let Some(listener) = cleanup.listener {
                        listener.detach(&context.env);
                    }
                    if let Some(hook) = cleanup.hook {
                        hook.remove(&context.env);
                    }
                    Ok(run_result(&result))
                },
            )?;
        let slot = Arc::new(Mutex::new(Some(callback)));
        *self.finish.borrow_mut() = Some(Arc::clone(&slot));
        // Called straight from the thread that publishes the result.
        self.process.on_finish(move |result| {
            let mut callback = lock(&slot);
            if let Some(pending) = callback.take() {
                pending.call(Finished { result, cleanup }, ThreadsafeFunctionCallMode::NonBlocking);
                // Released here, under the lock `set_loop_hold` takes; the queued call still runs.
                drop(pending);
            }
        });
        Ok(())
    }

    /// Makes the pending `onFinish` call hold the event loop open again.
    #[napi(js_name = "ref")]
    pub fn hold_event_loop(&self, env: &Env) {
        self.set_loop_hold(env, true);
    }

    /// Lets the host's event loop end while the command runs; the command then
    /// ends with the host, as every running command does.
    #[napi(js_name = "unref")]
    pub fn release_event_loop(&self, env: &Env) {
        self.set_loop_hold(env, false);
    }
}

impl NativeExecution {
    /// `napi_ref_threadsafe_function` or `napi_unref_threadsafe_function` on
    /// the pending result call, if there still is one. Both are idempotent;
    /// a refusal (only for a function already closing) leaves nothing to undo.
    fn set_loop_hold(&self, env: &Env, hold: bool) {
        let Some(slot) = &*self.finish.borrow() else { return };
        let callback = lock(slot);
        // Taken (the command ended), the call no longer holds the loop anyway.
        let Some(callback) = callback.as_ref().filter(|callback| !callback.aborted()) else { return };
        // SAFETY: the Node-API contract (js.rs), on this JS thread; the function
        // is alive: it is released only after being taken out of `slot`, under
        // the lock held here.
        unsafe {
            if hold {
                sys::napi_ref_threadsafe_function(env.raw(), callback.raw());
            } else {
                sys::napi_unref_threadsafe_function(env.raw(), callback.raw());
            }
        }
    }
}

/// The threadsafe function that delivers an execution's result to JS.
type FinishCallback = ThreadsafeFunction<Finished, Ignored, ShellRunResult, napi::Status, false, false>;

/// What the finishing thread hands to the JS thread.
struct Finished {
    result: Arc<RunResult>,
    cleanup: OnJsThread<Cleanup>,
}

/// The pending result call, shared by the finishing thread (which takes it) and
/// `ref()`/`unref()` on the JS thread.
type FinishSlot = Arc<Mutex<Option<FinishCallback>>>;

/// A lock that a panic elsewhere does not poison for good: the slot holds no
/// invariant a half-finished holder could break.
fn lock(slot: &FinishSlot) -> std::sync::MutexGuard<'_, Option<FinishCallback>> {
    slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A value made on a JS thread that travels through another thread and is
/// opened only in a deferred's resolver, which runs on that same JS thread.
/// Dropped elsewhere (the environment went away before the resolver ran), its
/// contents only leak: `Cleanup` has no `Drop`.
struct OnJsThread<T>(T);

// SAFETY: see the type's documentation: the value is only used on its JS thread.
unsafe impl<T> Send for OnJsThread<T> {}

impl<T> OnJsThread<T> {
    /// The value, on its JS thread. (A method, so closures capture the whole
    /// wrapper rather than its non-`Send` field.)
    fn into_inner(self) -> T {
        self.0
    }
}
