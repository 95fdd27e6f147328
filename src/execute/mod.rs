//! `execute()`, `spawn()` and `buildEnvironment()`: the entry points. Each
//! reads a JS spec into the core's `ExecRequest` (`spec`), collects from a
//! registry when asked, spawns through the core process layer and hands back
//! a native execution handle (`execution`), whose results take the shapes of
//! `results`.

mod execution;
mod results;
mod spec;

use std::sync::Arc;

use dsh_shell_env_core::command::{self, ExecRequest};
use dsh_shell_env_core::environment::{build_environment_shared, Environment, Parent, Platform};
use dsh_shell_env_core::launch::{Launch, ManagedSource, PendingCollection};
use dsh_shell_env_core::packed;
use dsh_shell_env_core::process::{self, Process};
use dsh_shell_env_core::ExecError;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi::ValueType;
use napi_derive::napi;

use crate::abort::{watch_signal, AbortListener};
use crate::descriptors;
use crate::errors::{rejected, Failure};
use crate::js::{self, JsRaw, Raw};
use crate::read::{self, Kind, Read};
use crate::registry::{begin, begin_over, AtOnce, AwaitedAtOnce, ShellEnvRegistry};
use crate::resolver::{self, JsRef, JsResolver};
use execution::output_sink;
pub use execution::NativeExecution;
pub(crate) use spec::read_limits;
use spec::{read_environment, read_managed, read_request, spec_of};

/// Starts a command; the promise resolves with a native execution once the
/// child runs, or rejects with a coded error and nothing started.
///
/// `packEnvironment`, when given, reads the parent environment in one call
/// (the package passes its own, `environment.js`); without it the binding
/// reads the object key by key, to the same result.
#[napi(
    ts_args_type = "spec: ShellExecSpec, parentEnv?: EnvironmentRecord, answerAll?: AnswerAll, packEnvironment?: PackEnvironment",
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
        let promise = env.spawn_future_with_callback(task, move |env, started| execution_of(env, started, listener))?;
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
        execution_of(env, started, listener)
    })?;
    Ok(JsRaw(promise.raw()))
}

/// What a start becomes back on the JS thread: the native execution, or the
/// error it failed with, the abort listener detached.
fn execution_of(
    env: &Env,
    started: std::result::Result<Process, Failure>,
    listener: AbortListener,
) -> Result<NativeExecution> {
    match started {
        Ok(process) => NativeExecution::new(env, process, listener),
        Err(failure) => {
            listener.detach(env);
            Err(failure.into_js(env))
        }
    }
}

/// Starts a command as `execute()` does, synchronously: returns the native
/// execution once the child runs, or throws a coded error with nothing
/// started. Without a registry (`dshEnv` only): a collection cannot be
/// awaited here.
#[napi(
    js_name = "spawn",
    ts_args_type = "spec: ShellExecSpec, parentEnv?: EnvironmentRecord, packEnvironment?: PackEnvironment",
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
    let started = within_runtime_if_available(|| launch.start(process::spawn)).map_err(Failure::from);
    let execution = execution_of(env, started, listener)?;
    // SAFETY: the Node-API contract (js.rs); converts a value owned here.
    Ok(JsRaw(unsafe { NativeExecution::to_napi_value(env.raw(), execution) }?))
}

/// The child environment `execute()` would build, without spawning.
#[napi(
    js_name = "buildEnvironment",
    ts_args_type = "spec: BuildEnvironmentSpec, parentEnv?: EnvironmentRecord",
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
    ts_args_type = "spec: BuildEnvironmentSpec, parentEnv: EnvironmentRecord | undefined, packEnvironment: PackEnvironment"
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
