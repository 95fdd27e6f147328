//! `execute()` and `buildEnvironment()`: reads a JS spec into the core's
//! `ExecRequest`, collects from a registry when asked, spawns through the core
//! process layer and hands back a native execution handle.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use dsh_shell_env_core::command::{self, CommandLine, ExecRequest, StdioRequest};
use dsh_shell_env_core::environment::{build_environment_shared, Environment, Inherit, Parent, Platform};
use dsh_shell_env_core::error::{SUPERVISOR_LOST, SUPERVISOR_LOST_MESSAGE};
use dsh_shell_env_core::launch::{Launch, ManagedSource, PendingCollection};
use dsh_shell_env_core::packed;
use dsh_shell_env_core::process::{self, KillReason, OutputSink, Process, RunResult, StreamKind, StreamResult};
use dsh_shell_env_core::ExecError;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, ValueType};
use napi_derive::napi;

use crate::abort::{watch_signal, AbortListener};
use crate::descriptors::{self, hand_over};
use crate::errors::{rejected, Failure};
use crate::js::{self, JsRaw, Raw};
use crate::read::{self, Field, Kind, Read};
use crate::registry::{begin, begin_over, AtOnce, AwaitedAtOnce, ShellEnvRegistry};
use crate::resolver::{self, JsRef, JsResolver};

/// Starts a command; the promise resolves with a native execution once the
/// child runs, or rejects with a coded error and nothing started.
///
/// `packEnvironment`, when given, reads the parent environment in one call
/// (the package passes its own, `environment.js`); without it the binding
/// reads the object key by key, to the same result.
#[napi(
    ts_args_type = "spec: ShellExecSpec, parentEnv?: Record<string, string | undefined>, answerAll?: (resolvers: Array<(execution: ToolExecution) => unknown>, execution: ToolExecution, signal?: AbortSignal) => unknown, packEnvironment?: (env: Record<string, string | undefined>) => string | string[]",
    ts_return_type = "Promise<NativeExecution>"
)]
pub fn execute(
    env: &Env,
    spec: Unknown,
    parent_env: Option<Unknown>,
    answer_all: Option<Unknown>,
    pack_environment: Option<Unknown>,
) -> Result<JsRaw> {
    let answer_all = answer_all.map(|answer_all| answer_all.raw());
    let pack = reader(env, pack_environment);
    let prepared = match prepare(env, spec.raw(), parent_env, pack, false, answer_all) {
        Ok(prepared) => prepared,
        Err(failure) => return rejected(env, failure),
    };
    let Prepared { launch, collect, listener } = prepared;
    // Without a registry to collect from, the child is planned and spawned on
    // the runtime's blocking pool (`spawn_async`), never on the JS thread: a
    // spawn waits for the supervisor and the command's reaper, which a
    // command can stop. The execution is made back on the JS thread.
    let Some(collect) = collect else {
        let task = async move { Ok(launch.start_async(process::spawn_async).await.map_err(Failure::from)) };
        let promise = env.spawn_future_with_callback(task, move |env, started| match started {
            Ok(process) => NativeExecution::new(env, process, listener),
            Err(failure) => {
                listener.detach(env);
                Err(failure.into_js(env))
            }
        })?;
        return Ok(JsRaw(promise.raw()));
    };
    // The reference to the caller's `execution` may only be deleted on this JS
    // thread; dropped last on a runtime thread, it leaked, and with it the
    // execution object itself. This clone is the last one and goes in the callback.
    let execution = Arc::clone(&collect.execution);
    let task = async move {
        let RegistryCollection { mut pending, execution, at_once } = collect;
        let first = match at_once {
            Some(call) => match AwaitedAtOnce::of(call.call_async_catch(()).await).apply(&mut pending.collection) {
                Ok(AtOnce::Answered) => None,
                Ok(AtOnce::Pending(promise)) => Some(promise),
                Err(failure) => return Ok(Err(failure)),
            },
            None => None,
        };
        let answer = resolver::answers(first, execution);
        // Off the runtime's workers: see spawn_async.
        Ok(launch.start_collected::<_, Failure, _, _>(pending, answer, process::spawn_async).await)
    };
    let promise = env.spawn_future_with_callback(task, move |env, started| {
        drop(execution);
        match started {
            Ok(process) => NativeExecution::new(env, process, listener),
            Err(failure) => {
                listener.detach(env);
                Err(failure.into_js(env))
            }
        }
    })?;
    Ok(JsRaw(promise.raw()))
}

/// Starts a command as `execute()` does, synchronously: returns the native
/// execution once the child runs, or throws a coded error with nothing
/// started. Without a registry (`dshEnv` only): a collection cannot be
/// awaited here.
#[napi(
    js_name = "spawn",
    ts_args_type = "spec: ShellExecSpec, parentEnv?: Record<string, string | undefined>, packEnvironment?: (env: Record<string, string | undefined>) => string | string[]",
    ts_return_type = "NativeExecution"
)]
pub fn spawn_js(
    env: &Env,
    spec: Unknown,
    parent_env: Option<Unknown>,
    pack_environment: Option<Unknown>,
) -> Result<JsRaw> {
    let pack = reader(env, pack_environment);
    let Prepared { launch, collect, listener } =
        prepare(env, spec.raw(), parent_env, pack, true, None).map_err(|f| f.into_js(env))?;
    if collect.is_some() {
        listener.detach(env);
        let error = ExecError::invalid_spec("registry", "spawn() cannot await a collection: pass dshEnv");
        return Err(Failure::from(error).into_js(env));
    }
    match within_runtime_if_available(|| launch.start(process::spawn)) {
        Ok(process) => {
            let execution = NativeExecution::new(env, process, listener)?;
            // SAFETY: the Node-API contract (js.rs); converts a value owned here.
            Ok(JsRaw(unsafe { NativeExecution::to_napi_value(env.raw(), execution) }?))
        }
        Err(error) => {
            listener.detach(env);
            Err(Failure::from(error).into_js(env))
        }
    }
}

/// The child environment `execute()` would build, without spawning.
#[napi(
    js_name = "buildEnvironment",
    ts_args_type = "spec: Omit<ShellExecSpec, 'command'> & { command?: string | string[] }, parentEnv?: Record<string, string | undefined>",
    ts_return_type = "BuiltEnvironment"
)]
pub fn build_environment_js(env: &Env, spec: Unknown, parent_env: Option<Unknown>) -> Result<JsRaw> {
    let environment = built_environment(env, spec.raw(), parent_env, None).map_err(|failure| failure.into_js(env))?;
    environment_to_js(env, &environment)
}

/// `buildEnvironment()` as the package calls it: the parent environment read
/// by `packEnvironment` in one call, and the result packed in one string
/// (`packed::pack_environment`), which `environment.js` unpacks.
#[napi(
    js_name = "buildEnvironmentPacked",
    ts_args_type = "spec: Omit<ShellExecSpec, 'command'> & { command?: string | string[] }, parentEnv: Record<string, string | undefined> | undefined, packEnvironment: (env: Record<string, string | undefined>) => string | string[]"
)]
pub fn build_environment_packed(
    env: &Env,
    spec: Unknown,
    parent_env: Option<Unknown>,
    pack_environment: Option<Unknown>,
) -> Result<String> {
    let pack = reader(env, pack_environment);
    let environment = built_environment(env, spec.raw(), parent_env, pack).map_err(|failure| failure.into_js(env))?;
    Ok(packed::pack_environment(&environment))
}

/// What `buildEnvironment()` reads and builds, in that order.
fn built_environment(env: &Env, spec: Raw, parent_env: Option<Unknown>, pack: Option<Raw>) -> Read<Arc<Environment>> {
    let spec = spec_of(env, spec)?;
    for field in ["registry", "execution"] {
        if spec.has(field)? {
            let reason =
                "is not read by buildEnvironment(), which collects nothing: pass dshEnv (registry.collect(execution))";
            return Err(ExecError::invalid_spec(field, reason).into());
        }
    }
    let mut request = ExecRequest::default();
    read_environment(&spec, &mut request)?;
    read_managed(&spec, &mut request)?;
    let parent = parent_vars(env, parent_env, pack)?;
    Ok(build_environment_shared(&Platform::current(), &parent, &request.environment)?)
}

/// A spec field `execute()` would refuse, and why.
#[napi(object, object_from_js = false)]
pub struct SpecProblem {
    /// The field's path (`graceMs`, `limits.openFiles`).
    pub field: String,
    /// What is wrong with it (`must be a non-negative integer (got 1.5)`).
    pub reason: String,
}

/// The first problem `execute()` would find in the options of `spec` (its
/// timeout and grace, byte counts, spill directory's form and limits), or
/// `null`: the core's rules, without a command, a spawn or a look at the
/// host. The local executors check their config and requests with it.
#[napi(js_name = "specOptionProblem", ts_args_type = "spec: Record<string, unknown>")]
pub fn spec_option_problem(env: &Env, spec: Unknown) -> Result<Option<SpecProblem>> {
    let checked = (|| -> Read<()> {
        let request = read_request(&spec_of(env, spec.raw())?)?;
        Ok(command::check_options(&request)?)
    })();
    match checked {
        Ok(()) => Ok(None),
        Err(Failure { error: ExecError::InvalidSpec { field, reason }, cause: None }) => {
            Ok(Some(SpecProblem { field, reason }))
        }
        Err(failure) => Err(failure.into_js(env)),
    }
}

/// The spec as a field: an options object whose fields, own or inherited,
/// are all ones the package knows.
fn spec_of(env: &Env, spec: Raw) -> Read<Field<'_>> {
    let spec = Field::container(env, Kind::Spec, spec, "spec");
    spec.options_object("an object")?;
    let fields = spec.enumerable_names()?;
    command::check_fields("", fields.iter().map(String::as_str), command::SPEC_FIELDS)?;
    Ok(spec)
}

/// Ends every running command's process group (SIGKILL) and removes the spill
/// directory, as the host's exit does. The package calls it right before the
/// host dies of a signal, which runs no exit hook (`host-signals.js`).
#[napi(js_name = "endAllCommands")]
pub fn end_all_commands() {
    process::end_all();
}

/// What `execute()` read on the JS thread.
struct Prepared {
    launch: Launch,
    collect: Option<RegistryCollection>,
    listener: AbortListener,
}

/// A registry collection begun on the JS thread, finished right before the
/// spawn, and the caller's execution its resolvers receive.
struct RegistryCollection {
    pending: PendingCollection<JsResolver>,
    execution: Arc<JsRef>,
    /// The JS layer's `answer_all`, bound to the collection's functions, the
    /// execution and the signal: called first, from the runtime, so that the
    /// resolvers run after `execute()` returned, right before the spawn.
    at_once: Option<AtOnceCall>,
}

/// A threadsafe call of a bound `answer_all` (see `AnsweredAtOnce`); weak and
/// callee-unhandled like a resolver's.
type AtOnceCall = ThreadsafeFunction<(), AwaitedAtOnce, (), Status, false, true>;

/// `answer_all` bound to `args`, callable from the runtime.
fn at_once_call(env: &Env, answer_all: Raw, [functions, execution, signal]: [Raw; 3]) -> Result<AtOnceCall> {
    let bound = js::call_method(env, answer_all, "bind", &[js::undefined(env)?, functions, execution, signal])?;
    // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
    let function = unsafe { Function::<(), AwaitedAtOnce>::from_napi_value(env.raw(), bound)? };
    function.build_threadsafe_function::<()>().callee_handled::<false>().weak::<true>().build_callback(|_| Ok(()))
}

/// Everything read on the JS thread: the spec, `process.env`, the caller's
/// directory, the registry's contributor set, the output sink and the signal.
fn prepare(
    env: &Env,
    spec: Raw,
    parent_env: Option<Unknown>,
    pack: Option<Raw>,
    terminals: bool,
    answer_all: Option<Raw>,
) -> Read<Prepared> {
    let spec = spec_of(env, spec)?;
    let request = read_request(&spec)?;
    if request.stdio.terminal.is_some() && !terminals {
        let reason =
            "is for terminals of the ctx.subprocess runtime (spawnTerminal()); execute() runs commands on pipes";
        return Err(ExecError::invalid_spec("stdio.terminal", reason).into());
    }
    descriptors::check(&request.stdio)?;
    // What cannot be carried reaches no child; only buildEnvironment() reports it.
    let parent = parent_vars(env, parent_env, pack)?;
    let cwd = std::env::current_dir().map_err(|source| ExecError::InvalidWorkdir { path: ".".into(), source })?;

    let registry = spec.get("registry")?;
    let dsh_env = spec.has("dshEnv")?;
    // Read in this order (a getter or the class check may fail first):
    // registry, dshEnv, then execution, and execution only when it is used.
    let collect = match registry {
        None => {
            ManagedSource::of_spec(dsh_env, false, spec.has("execution")?)?;
            if request.collect_timeout_ms.is_some() {
                let reason = "is read only when collecting from registry: give registry too, or drop it";
                return Err(ExecError::invalid_spec("collectTimeoutMs", reason).into());
            }
            None
        }
        Some(_) if dsh_env => {
            ManagedSource::of_spec(true, true, false)?;
            None
        }
        Some(registry) => {
            // Refused now, not after the collection began.
            dsh_shell_env_core::launch::collect_timeout(&request)?;
            // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type (a class instance's type tag) and fails otherwise.
            let registry = unsafe { ClassInstance::<ShellEnvRegistry>::from_napi_value(env.raw(), registry.raw()) }
                .map_err(|_| registry.invalid("must be a ShellEnvRegistry"))?;
            let execution = match spec.get("execution")? {
                Some(execution) => execution.raw(),
                None => js::object_of_strings(env, []).map_err(|thrown| spec.threw(thrown))?,
            };
            let (collection, at_once) = match answer_all {
                Some(answer_all) => {
                    let (contributors, functions) = registry.functions(env).map_err(|thrown| spec.threw(thrown))?;
                    (
                        begin_over(env, registry.core(), contributors, execution)?,
                        Some((answer_all, functions, execution)),
                    )
                }
                None => (begin(env, registry.core(), execution)?, None),
            };
            let inherited_path = command::path_before_managed(&request, &parent, &Platform::current())?;
            let reference = Arc::new(JsRef::new(env, execution).map_err(|thrown| spec.threw(thrown))?);
            let pending = PendingCollection { collection, inherited_path };
            Some((RegistryCollection { pending, execution: reference, at_once: None }, at_once))
        }
    };

    let sink = match spec.get("onOutput")? {
        None => None,
        Some(on_output) if on_output.is_function() => {
            Some(output_sink(env, on_output.raw()).map_err(|thrown| on_output.threw(thrown))?)
        }
        Some(on_output) => return Err(on_output.invalid("must be a function")),
    };
    let signal = spec.get("signal")?.map(|signal| signal.raw());
    let (abort, listener) = watch_signal(env, signal)
        .map_err(|thrown| spec.threw(thrown))?
        .ok_or_else(|| ExecError::invalid_spec("signal", "must be an AbortSignal"))?;
    // With the signal known: the call that has the resolvers answer at once.
    let collect = match collect {
        Some((mut collect, Some((answer_all, functions, execution)))) => {
            let call = js::undefined(env).and_then(|undefined| {
                at_once_call(env, answer_all, [functions, execution, signal.unwrap_or(undefined)])
            });
            match call {
                Ok(call) => collect.at_once = Some(call),
                Err(thrown) => {
                    listener.detach(env);
                    return Err(spec.threw(thrown));
                }
            }
            Some(collect)
        }
        Some((collect, None)) => Some(collect),
        None => None,
    };
    Ok(Prepared { launch: Launch { request, parent, cwd, on_output: sink, abort }, collect, listener })
}

/// Reads every plain-data field of a spec.
fn read_request(spec: &Field<'_>) -> Read<ExecRequest> {
    // Fields are read in this order, so the first bad one is the one reported.
    let mut request = ExecRequest {
        command: match spec.get("command")? {
            None => None,
            Some(command) if command.type_of() == ValueType::String => Some(CommandLine::Script(command.text()?)),
            Some(command) => Some(CommandLine::Argv(command.string_array("a string or an array of strings")?)),
        },
        shell: spec.optional_string("shell")?,
        workdir: spec.optional_string("workdir")?,
        timeout_ms: spec.optional_number("timeoutMs")?,
        grace_ms: spec.optional_number("graceMs")?,
        stdout_max_bytes: spec.optional_number("stdoutMaxBytes")?,
        stderr_max_bytes: spec.optional_number("stderrMaxBytes")?,
        spill_max_bytes: spec.optional_number("spillMaxBytes")?,
        spill_dir: spec.optional_string("spillDir")?,
        keep_spill_files: spec.optional_bool("keepSpillFiles")?.unwrap_or(false),
        on_expiry: match spec.optional_string("onExpiry")? {
            Some(on_expiry) => on_expiry.parse()?,
            None => Default::default(),
        },
        stdin: match spec.get("stdin")? {
            None => None,
            Some(stdin) if stdin.type_of() == ValueType::String => Some(stdin.text()?.into_bytes()),
            Some(stdin) => Some(stdin.bytes().ok_or_else(|| stdin.invalid("must be a string or a Uint8Array"))?),
        },
        collect_timeout_ms: spec.optional_number("collectTimeoutMs")?,
        stdio: match spec.get("stdio")? {
            None => Default::default(),
            Some(stdio) => {
                stdio.options_object("an object")?;
                let fields = stdio.enumerable_names()?;
                command::check_fields("stdio.", fields.iter().map(String::as_str), command::STDIO_FIELDS)?;
                StdioRequest {
                    stdin: stdio.optional_string("stdin")?,
                    stdout: stdio.optional_string("stdout")?,
                    stderr: stdio.optional_string("stderr")?,
                    terminal: match stdio.get("terminal")? {
                        None => None,
                        Some(terminal) => {
                            terminal.options_object("an object { rows, cols }")?;
                            let fields = terminal.enumerable_names()?;
                            command::check_fields(
                                "stdio.terminal.",
                                fields.iter().map(String::as_str),
                                command::TERMINAL_FIELDS,
                            )?;
                            let cells = |name| match terminal.get(name)? {
                                Some(cells) => cells.number("a number"),
                                None => Err(terminal.field(name).invalid("must be a number (got undefined)")),
                            };
                            Some((cells("rows")?, cells("cols")?))
                        }
                    },
                }
            }
        },
        environment: Default::default(),
        limits: match spec.get("limits")? {
            None => Default::default(),
            Some(limits) => read_limits(&limits)?,
        },
    };
    read_environment(spec, &mut request)?;
    read_managed(spec, &mut request)?;
    Ok(request)
}

/// A spec's `limits`: an options object of numbers, as given (the core checks them).
pub(crate) fn read_limits(limits: &Field<'_>) -> Read<[Option<f64>; 5]> {
    limits.options_object("an object")?;
    let fields = limits.enumerable_names()?;
    command::check_fields("limits.", fields.iter().map(String::as_str), command::LIMIT_FIELDS)?;
    let mut values = [None; 5];
    for (value, name) in values.iter_mut().zip(command::LIMIT_FIELDS) {
        *value = limits.optional_number(name)?;
    }
    Ok(values)
}

/// `dshEnv`: the managed variables, already collected.
fn read_managed(spec: &Field<'_>, request: &mut ExecRequest) -> Read<()> {
    if let Some(dsh_env) = spec.get("dshEnv")? {
        request.environment.managed = dsh_env.string_record()?;
    }
    Ok(())
}

/// `scrub`, `terminalEnv` and `env`: the layers shared with `buildEnvironment()`.
fn read_environment(spec: &Field<'_>, request: &mut ExecRequest) -> Read<()> {
    let layers = &mut request.environment;
    if let Some(scrub) = spec.get("scrub")? {
        scrub.options_object("an object")?;
        let fields = scrub.enumerable_names()?;
        command::check_fields("scrub.", fields.iter().map(String::as_str), command::SCRUB_FIELDS)?;
        // These three have always reported a throw under their own name.
        if let Some(inherit) = scrub.throws_here().optional_string("inherit")? {
            layers.scrub.inherit = inherit.parse::<Inherit>()?;
        }
        if let Some(exclude) = scrub.get("exclude")? {
            layers.scrub.exclude = exclude.string_array("an array of strings")?;
        }
        if let Some(include_only) = scrub.get("includeOnly")? {
            layers.scrub.include_only = Some(include_only.string_array("an array of strings")?);
        }
        if let Some(hardening) = scrub.throws_here().optional_bool("hardening")? {
            layers.scrub.hardening = hardening;
        }
        if let Some(default_exclude) = scrub.throws_here().optional_bool("defaultExclude")? {
            layers.scrub.default_exclude = default_exclude;
        }
    }
    if let Some(terminal) = spec.get("terminalEnv")? {
        layers.terminal = match terminal.type_of() {
            ValueType::Boolean if !terminal.bool()? => None,
            _ => Some(terminal.string_record()?),
        };
    }
    if let Some(explicit) = spec.get("env")? {
        explicit.options_object("an object of strings (undefined removes a variable)")?;
        let mut entries = Vec::new();
        for (raw, key) in explicit.record_keys()? {
            let value = explicit.entry(raw, &key)?;
            let value = match value.type_of() {
                ValueType::Undefined => None,
                ValueType::String => Some(value.text()?),
                _ => return Err(value.invalid(format!("must be a string or undefined (got {})", value.describe()))),
            };
            entries.push((key, value));
        }
        layers.explicit = entries;
    }
    Ok(())
}

/// The parent environment's variables: those of `parentEnv`, or with none
/// (`undefined` or `null`) those of the calling thread's `process.env`, read
/// leniently (see `Field::lenient_string_record`), with the names of the
/// entries that hold no text; a throwing getter or Proxy trap is reported,
/// not skipped. With `pack` (the JS layer's `packEnvironment`), the object
/// is read by it, in one call (`Field::packed_environment`).
fn parent_vars(env: &Env, parent_env: Option<Unknown>, pack: Option<Raw>) -> Read<Parent> {
    let parent = read::caller_env(env, Kind::ParentEnv, "parentEnv", parent_env, "an object of environment variables")?;
    match pack {
        Some(pack) => parent.packed_environment(pack),
        None => {
            let read::LenientRecord { entries, unrepresentable } = parent.lenient_string_record()?;
            Ok(Parent::from_read(entries, unrepresentable))
        }
    }
}

/// The JS layer's `packEnvironment`, when given: anything but a function is
/// no reader, and the binding reads the object itself.
fn reader(env: &Env, pack: Option<Unknown>) -> Option<Raw> {
    pack.map(|pack| pack.raw()).filter(|&pack| js::type_of(env, pack) == ValueType::Function)
}

/// A live output sink calling the JS `onOutput` function. A throw inside the
/// callback is captured and ignored: a faulty listener must not kill the host.
fn output_sink(env: &Env, on_output: Raw) -> Result<OutputSink> {
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
    fn new(env: &Env, process: Process, listener: AbortListener) -> Result<Self> {
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

/// Output produced since the previous `readOutput()`, and each stream's
/// spill file once it started spilling.
#[napi(object)]
pub struct ShellOutputDelta {
    /// New standard output text.
    pub stdout: String,
    /// New standard error text.
    pub stderr: String,
    /// Something was dropped or replaced since the previous read.
    pub lossy: bool,
    /// The file holding the whole of stdout, once it started spilling.
    pub stdout_spill_path: Option<String>,
    /// The file holding the whole of stderr, once it started spilling.
    pub stderr_spill_path: Option<String>,
}

/// One captured stream of a finished command.
#[napi(object)]
pub struct ShellStreamResult {
    /// The last `*MaxBytes` bytes, starting at a character boundary.
    pub text: String,
    /// The stream was longer than `text`.
    pub truncated: bool,
    /// The whole stream (mode 0600, private directory), when it overflowed
    /// and stayed under `spillMaxBytes`. Removed when the execution is
    /// garbage-collected (unless `keepSpillFiles`) or the process exits.
    pub spill_path: Option<String>,
    /// Why the spill file could not be made or written (a full disk, a
    /// quota, its directory removed): the output past `text` is lost.
    /// Absent when nothing failed (passing `spillMaxBytes` is no failure).
    pub spill_error: Option<SpillFailure>,
}

/// A spill file that could not be made or written.
#[napi(object)]
pub struct SpillFailure {
    /// The OS error's name (`'ENOSPC'`, `'EDQUOT'`, `'EIO'`, `'ENOENT'`).
    pub code: String,
    /// What failed, in words.
    pub message: String,
}

/// How a command ended.
#[napi(object)]
pub struct ShellRunResult {
    /// The exit code, or `null` when a signal ended the child.
    #[napi(ts_type = "number | null")]
    pub exit_code: Either<i32, Null>,
    /// The signal that ended the child (`'SIGTERM'`, …), or `null`.
    #[napi(ts_type = "string | null")]
    pub signal: Either<String, Null>,
    /// The timeout killed it.
    pub timed_out: bool,
    /// The abort signal killed it (never together with `timedOut`).
    pub aborted: bool,
    /// Set when the package ended the command for a reason of its own;
    /// `null` otherwise.
    #[napi(ts_type = "Interruption | null")]
    pub interrupted: Either<Interruption, Null>,
    /// The limit whose enforcement ended the command (its process got
    /// SIGXCPU or SIGXFSZ, or the cgroup killed for memory), else `null`.
    #[napi(ts_type = "ShellLimitName | null")]
    pub limit: Either<String, Null>,
    /// Limits the command reached without being ended by them (forks
    /// refused at `processes`, …).
    #[napi(ts_type = "ShellLimitName[]")]
    pub limits_hit: Vec<String>,
    /// Limits the command tampered with, which may not have held (a cgroup
    /// limit whose files a process of the command wrote, that read another
    /// value by the end or capped less than the use seen, or whose watching
    /// reaper the command killed); see `limitMechanisms()`' `tampering`.
    #[napi(ts_type = "ShellLimitName[]")]
    pub limits_tampered: Vec<String>,
    /// Processes of the command still running when it exited, which the
    /// package then ended (a `cmd &` left behind): counted under the
    /// supervisor (Linux), 0 elsewhere; 255 stands for 255 or more.
    pub ended_after_exit: u32,
    /// The timeout in force, or `null` for `onExpiry: 'none'`.
    #[napi(ts_type = "number | null")]
    pub timeout_ms: Either<f64, Null>,
    /// From spawn until the group was gone.
    pub duration_ms: f64,
    /// Standard output.
    pub stdout: ShellStreamResult,
    /// Standard error.
    pub stderr: ShellStreamResult,
}

/// A captured stream's text from a whole-stream byte offset on
/// (`readFrom()`).
#[napi(object, object_from_js = false)]
pub struct ShellOutputRead {
    /// The text from the offset; the whole tail kept in memory when `lossy`.
    pub text: String,
    /// Where the next read starts.
    pub next_offset: f64,
    /// The offset slid out of the tail kept in memory.
    pub lossy: bool,
    /// The file holding the whole stream, once it spilled and while it is whole.
    pub spill_path: Option<String>,
}

/// The host's ends of a command's raw pipes, as descriptor numbers.
#[napi(object, object_from_js = false)]
pub struct RawPipes {
    /// Write end of the command's stdin.
    pub stdin: Option<i64>,
    /// Read end of its stdout.
    pub stdout: Option<i64>,
    /// Read end of its stderr.
    pub stderr: Option<i64>,
    /// The terminal it runs on, with `stdio.terminal`.
    pub terminal: Option<RawTerminal>,
}

/// The host's side of a command on a pseudo-terminal.
#[napi(object, object_from_js = false)]
pub struct RawTerminal {
    /// The master, read by the caller, who closes it.
    pub fd: i64,
    /// The write end of a pipe whose bytes reach the terminal as its input
    /// (never blocking the caller's thread), closed by the caller.
    pub input: i64,
    /// The command's own pid: its session's and first process group's id.
    pub pid: u32,
}

/// Why the package ended a command for a reason of its own.
#[napi(object)]
pub struct Interruption {
    /// `'ERR_SHELL_EXEC_SUPERVISOR_LOST'`: the package's supervisor died
    /// while the command ran (a command can signal any process of its user),
    /// so the command was killed; the next command starts a new supervisor.
    #[napi(ts_type = "'ERR_SHELL_EXEC_SUPERVISOR_LOST'")]
    pub code: String,
    /// What happened, in words.
    pub message: String,
}

fn run_result(result: &RunResult) -> ShellRunResult {
    let stream = |output: &StreamResult| ShellStreamResult {
        text: output.text.clone(),
        truncated: output.truncated,
        spill_path: output.spill_path.as_ref().map(|path| path.to_string_lossy().into_owned()),
        spill_error: output
            .spill_error
            .as_ref()
            .map(|failure| SpillFailure { code: failure.code.into(), message: failure.message.clone() }),
    };
    ShellRunResult {
        exit_code: result.exit_code.map_or(Either::B(Null), Either::A),
        signal: result.signal.map_or(Either::B(Null), |signal| Either::A(signal.to_string())),
        timed_out: result.timed_out,
        aborted: result.aborted,
        interrupted: if result.supervisor_lost {
            Either::A(Interruption { code: SUPERVISOR_LOST.into(), message: SUPERVISOR_LOST_MESSAGE.into() })
        } else {
            Either::B(Null)
        },
        limit: result.limit.map_or(Either::B(Null), |limit| Either::A(limit.as_str().into())),
        limits_hit: result.limits_hit.iter().map(|limit| limit.as_str().into()).collect(),
        limits_tampered: result.limits_tampered.iter().map(|limit| limit.as_str().into()).collect(),
        ended_after_exit: result.ended_after_exit,
        timeout_ms: result.timeout_ms.map_or(Either::B(Null), |ms| Either::A(ms as f64)),
        duration_ms: result.duration.as_secs_f64() * 1000.0,
        stdout: stream(&result.stdout),
        stderr: stream(&result.stderr),
    }
}

fn environment_to_js(env: &Env, environment: &Environment) -> Result<JsRaw> {
    let vars = js::object_of_strings(env, environment.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    let sources = js::object_of_strings(env, environment.sources.iter().map(|(k, s)| (k.as_str(), s.as_str())))?;
    let removed = js::array_of(
        env,
        environment.removed.iter().map(|removal| {
            js::object_of_strings(env, [("key", removal.key.as_str()), ("reason", removal.reason.as_str())])
        }),
    )?;
    let result = js::object_of_strings(env, [])?;
    js::set(env, result, "env", vars)?;
    js::set(env, result, "sources", sources)?;
    js::set(env, result, "removed", removed)?;
    Ok(JsRaw(result))
}
