//! `execute()` and `buildEnvironment()`: reads a JS spec into the core's
//! `ExecRequest`, collects from a registry when asked, spawns through the core
//! process layer and hands back a native execution handle.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;

use dsh_shell_env_core::command::{self, CommandLine, ExecRequest};
use dsh_shell_env_core::environment::{build_environment, Environment, Inherit, Platform};
use dsh_shell_env_core::process::{self, KillReason, OutputSink, Process, RunResult, StreamResult};
use dsh_shell_env_core::snapshot::{Collection, DEFAULT_COLLECT_TIMEOUT};
use dsh_shell_env_core::ExecError;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, ValueType};
use napi_derive::napi;

use crate::abort::{watch_signal, AbortListener, AbortToken};
use crate::errors::{rejected, Failure};
use crate::event_loop;
use crate::js::{self, JsRaw, Raw};
use crate::registry::{begin, caller_env, resolve_all, ShellEnvRegistry};
use crate::resolver::{ExecutionRef, JsResolver};

/// Starts a command; the promise resolves with a native execution once the
/// child runs, or rejects with a coded error and nothing started.
#[napi(
    ts_args_type = "spec: ShellExecSpec, parentEnv?: Record<string, string | undefined>",
    ts_return_type = "Promise<NativeExecution>"
)]
pub fn execute(env: &Env, spec: Unknown, parent_env: Option<Unknown>) -> Result<JsRaw> {
    let prepared = match prepare(env, spec.raw(), parent_env) {
        Ok(prepared) => prepared,
        Err(failure) => return rejected(env, failure),
    };
    let Prepared { request, parent, cwd, collect, sink, token, listener } = prepared;
    // Without a registry to collect from, the child is spawned right here on
    // the JS thread, as `child_process` does (`posix_spawn` returns once the
    // child has exec'd): handing the spawn to another thread and the execution
    // back cost two thread wake-ups per call. On Linux this thread's event
    // loop then also watches the child (see `event_loop`). Registry resolvers
    // may be async, so that path spawns from the runtime once they have
    // answered; the same event loop watches those children.
    let Some(collect) = collect else {
        let started = within_runtime_if_available(|| -> std::result::Result<Process, Failure> {
            let mut spec = command::plan(&request, parent, &Platform::current(), &cwd)?;
            spec.on_output = sink;
            let process = event_loop::spawn(env, spec)?;
            watch_abort(&process, token);
            Ok(process)
        });
        return match started {
            Ok(process) => {
                let execution = NativeExecution::new(env, process, listener)?;
                // SAFETY: the Node-API contract (js.rs); converts a value owned here.
                let execution = unsafe { NativeExecution::to_napi_value(env.raw(), execution) }?;
                Ok(JsRaw(js::settled_promise(env, Ok(execution))?))
            }
            Err(failure) => {
                listener.detach(env);
                rejected(env, failure)
            }
        };
    };
    // The reference to the caller's `execution` may only be deleted on this JS
    // thread; dropped last on a runtime thread, it leaked, and with it the
    // execution object itself. This clone is the last one and goes in the callback.
    let execution = Arc::clone(&collect.execution);
    let spawner = event_loop::spawner(env);
    let task = async move { Ok(start(request, parent, cwd, collect, sink, token, spawner).await) };
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

/// The child environment `execute()` would build, without spawning.
#[napi(
    js_name = "buildEnvironment",
    ts_args_type = "spec: Omit<ShellExecSpec, 'command'> & { command?: string | string[] }, parentEnv?: Record<string, string | undefined>",
    ts_return_type = "BuiltEnvironment"
)]
pub fn build_environment_js(env: &Env, spec: Unknown, parent_env: Option<Unknown>) -> Result<JsRaw> {
    let built = (|| -> std::result::Result<Environment, Failure> {
        let spec = spec.raw();
        if !js::is_options_object(env, spec).map_err(js_failure)? {
            return Err(ExecError::invalid_spec(
                "spec",
                format!("must be an object (got {})", js::describe(env, spec)),
            )
            .into());
        }
        check_spec_fields(env, spec)?;
        for field in ["registry", "execution"] {
            if js::get_defined(env, spec, field).map_err(js_failure)?.is_some() {
                let reason = "is not read by buildEnvironment(), which collects nothing: pass dshEnv (registry.collect(execution))";
                return Err(ExecError::invalid_spec(field, reason).into());
            }
        }
        let mut request = ExecRequest::default();
        read_environment(env, spec, &mut request)?;
        if let Some(dsh_env) = js::get_defined(env, spec, "dshEnv").map_err(js_failure)? {
            request.environment.managed = string_record(env, dsh_env, "dshEnv")?;
        }
        let parent = parent_vars(env, parent_env)?;
        Ok(build_environment(&Platform::current(), parent, &request.environment)?)
    })();
    let environment = built.map_err(|failure| failure.into_js(env))?;
    environment_to_js(env, &environment)
}

/// Refuses a spec field the package does not know, own or inherited.
fn check_spec_fields(env: &Env, spec: Raw) -> std::result::Result<(), Failure> {
    let fields = js::enumerable_names(env, spec).map_err(js_failure)?;
    Ok(command::check_fields("", fields.iter().map(String::as_str), command::SPEC_FIELDS)?)
}

/// Ends every running command's process group (SIGKILL) and removes the spill
/// directory, as the host's exit does. The package calls it right before the
/// host dies of a signal, which runs no exit hook (`host-signals.js`).
#[napi(js_name = "endAllCommands")]
pub fn end_all_commands() {
    #[cfg(unix)]
    process::end_all();
}

struct Prepared {
    request: ExecRequest,
    parent: Vec<(String, String)>,
    cwd: PathBuf,
    collect: Option<PendingCollection>,
    sink: Option<OutputSink>,
    token: AbortToken,
    listener: AbortListener,
}

/// A registry collection begun on the JS thread, finished right before the spawn.
struct PendingCollection {
    collection: Collection<JsResolver>,
    execution: Arc<ExecutionRef>,
    inherited: Option<String>,
}

/// Everything read on the JS thread: the spec, `process.env`, the caller's
/// directory, the registry's contributor set, the output sink and the signal.
fn prepare(env: &Env, spec: Raw, parent_env: Option<Unknown>) -> std::result::Result<Prepared, Failure> {
    if !js::is_options_object(env, spec).map_err(js_failure)? {
        return Err(
            ExecError::invalid_spec("spec", format!("must be an object (got {})", js::describe(env, spec))).into()
        );
    }
    check_spec_fields(env, spec)?;
    let request = read_request(env, spec)?;
    let parent = parent_vars(env, parent_env)?;
    let cwd = std::env::current_dir().map_err(|source| ExecError::InvalidWorkdir { path: ".".into(), source })?;

    let registry = js::get_defined(env, spec, "registry").map_err(js_failure)?;
    let dsh_env_given = js::get_defined(env, spec, "dshEnv").map_err(js_failure)?.is_some();
    let collect = match registry {
        None if js::get_defined(env, spec, "execution").map_err(js_failure)?.is_some() => {
            return Err(ExecError::invalid_spec(
                "execution",
                "is read only to collect from registry: give registry too, or dshEnv collected for that execution",
            )
            .into())
        }
        None => None,
        Some(_) if dsh_env_given => {
            return Err(ExecError::invalid_spec("registry", "give either dshEnv or registry, not both").into())
        }
        Some(registry) => {
            // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type (a class instance's type tag) and fails otherwise.
            let registry = unsafe { ClassInstance::<ShellEnvRegistry>::from_napi_value(env.raw(), registry) }
                .map_err(|_| ExecError::invalid_spec("registry", "must be a ShellEnvRegistry"))?;
            let execution = match js::get_defined(env, spec, "execution").map_err(js_failure)? {
                Some(execution) => execution,
                None => js::object_of_strings(env, []).map_err(js_failure)?,
            };
            let collection = begin(env, registry.core(), execution)?;
            let inherited = command::path_before_managed(&request, parent.clone(), &Platform::current())?;
            let execution = Arc::new(ExecutionRef::new(env, execution).map_err(js_failure)?);
            Some(PendingCollection { collection, execution, inherited })
        }
    };

    let sink = match js::get_defined(env, spec, "onOutput").map_err(js_failure)? {
        None => None,
        Some(on_output) if js::type_of(env, on_output) == ValueType::Function => {
            Some(output_sink(env, on_output).map_err(js_failure)?)
        }
        Some(_) => return Err(ExecError::invalid_spec("onOutput", "must be a function").into()),
    };
    let signal = js::get_defined(env, spec, "signal").map_err(js_failure)?;
    let (token, listener) = watch_signal(env, signal)
        .map_err(js_failure)?
        .ok_or_else(|| ExecError::invalid_spec("signal", "must be an AbortSignal"))?;
    Ok(Prepared { request, parent, cwd, collect, sink, token, listener })
}

/// `execute()` with a registry, off the JS thread: collect, plan, spawn.
async fn start(
    mut request: ExecRequest,
    parent: Vec<(String, String)>,
    cwd: PathBuf,
    collect: PendingCollection,
    sink: Option<OutputSink>,
    token: AbortToken,
    spawner: process::Spawner,
) -> std::result::Result<Process, Failure> {
    let PendingCollection { collection, execution, inherited } = collect;
    let collection = resolve_all(collection, execution, DEFAULT_COLLECT_TIMEOUT, token.clone()).await?;
    request.environment.managed = collection.finish(inherited.as_deref()).into_iter().collect();
    let mut spec = command::plan(&request, parent, &Platform::current(), &cwd)?;
    spec.on_output = sink;
    // Off the runtime's workers: see spawn_async.
    let process = spawner.spawn_async(spec).await?;
    watch_abort(&process, token);
    Ok(process)
}

/// Kills `process` when `token` fires. An abort that came before the spawn
/// still counts: the child is stopped at once. Must run inside the runtime.
fn watch_abort(process: &Process, token: AbortToken) {
    if !token.can_fire() {
        return;
    }
    let watched = process.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = token.aborted() => { watched.kill(KillReason::Aborted); }
            _ = watched.wait() => {}
        }
    });
}

/// Reads every plain-data field of a spec.
fn read_request(env: &Env, spec: Raw) -> std::result::Result<ExecRequest, Failure> {
    // Fields are read in this order, so the first bad one is the one reported.
    let mut request = ExecRequest {
        command: match js::get_defined(env, spec, "command").map_err(js_failure)? {
            None => None,
            Some(command) if js::type_of(env, command) == ValueType::String => {
                Some(CommandLine::Script(text(env, command, || "command".into())?))
            }
            Some(command) => {
                Some(CommandLine::Argv(string_array(env, command, "command", "a string or an array of strings")?))
            }
        },
        shell: optional_string(env, spec, "shell")?,
        workdir: optional_string(env, spec, "workdir")?,
        timeout_ms: optional_number(env, spec, "timeoutMs")?,
        grace_ms: optional_number(env, spec, "graceMs")?,
        stdout_max_bytes: optional_number(env, spec, "stdoutMaxBytes")?,
        stderr_max_bytes: optional_number(env, spec, "stderrMaxBytes")?,
        spill_max_bytes: optional_number(env, spec, "spillMaxBytes")?,
        spill_dir: optional_string(env, spec, "spillDir")?,
        keep_spill_files: optional_bool(env, spec, "keepSpillFiles")?.unwrap_or(false),
        on_expiry: match optional_string(env, spec, "onExpiry")? {
            Some(on_expiry) => on_expiry.parse()?,
            None => Default::default(),
        },
        stdin: match js::get_defined(env, spec, "stdin").map_err(js_failure)? {
            None => None,
            Some(stdin) if js::type_of(env, stdin) == ValueType::String => {
                Some(text(env, stdin, || "stdin".into())?.into_bytes())
            }
            Some(stdin) => Some(
                bytes(env, stdin)
                    .ok_or_else(|| ExecError::invalid_spec("stdin", "must be a string or a Uint8Array"))?,
            ),
        },
        environment: Default::default(),
    };
    read_environment(env, spec, &mut request)?;
    if let Some(dsh_env) = js::get_defined(env, spec, "dshEnv").map_err(js_failure)? {
        request.environment.managed = string_record(env, dsh_env, "dshEnv")?;
    }
    Ok(request)
}

/// `scrub`, `terminalEnv` and `env`: the layers shared with `buildEnvironment()`.
fn read_environment(env: &Env, spec: Raw, request: &mut ExecRequest) -> std::result::Result<(), Failure> {
    let layers = &mut request.environment;
    if let Some(scrub) = js::get_defined(env, spec, "scrub").map_err(js_failure)? {
        if !js::is_options_object(env, scrub).map_err(js_failure)? {
            return Err(ExecError::invalid_spec(
                "scrub",
                format!("must be an object (got {})", js::describe(env, scrub)),
            )
            .into());
        }
        let fields = js::enumerable_names(env, scrub).map_err(js_failure)?;
        command::check_fields("scrub.", fields.iter().map(String::as_str), command::SCRUB_FIELDS)?;
        if let Some(inherit) = optional_string(env, scrub, "inherit").map_err(|f| rename(f, "scrub.inherit"))? {
            layers.scrub.inherit = inherit.parse::<Inherit>()?;
        }
        if let Some(exclude) = js::get_defined(env, scrub, "exclude").map_err(js_failure)? {
            layers.scrub.exclude = string_array(env, exclude, "scrub.exclude", "an array of strings")?;
        }
        if let Some(include_only) = js::get_defined(env, scrub, "includeOnly").map_err(js_failure)? {
            layers.scrub.include_only =
                Some(string_array(env, include_only, "scrub.includeOnly", "an array of strings")?);
        }
        if let Some(hardening) = optional_bool(env, scrub, "hardening").map_err(|f| rename(f, "scrub.hardening"))? {
            layers.scrub.hardening = hardening;
        }
        if let Some(default_exclude) =
            optional_bool(env, scrub, "defaultExclude").map_err(|f| rename(f, "scrub.defaultExclude"))?
        {
            layers.scrub.default_exclude = default_exclude;
        }
    }
    if let Some(terminal) = js::get_defined(env, spec, "terminalEnv").map_err(js_failure)? {
        layers.terminal = match js::type_of(env, terminal) {
            // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
            ValueType::Boolean if !unsafe { bool::from_napi_value(env.raw(), terminal) }.map_err(js_failure)? => None,
            _ => Some(string_record(env, terminal, "terminalEnv")?),
        };
    }
    if let Some(explicit) = js::get_defined(env, spec, "env").map_err(js_failure)? {
        if !js::is_options_object(env, explicit).map_err(js_failure)? {
            let reason = format!(
                "must be an object of strings (undefined removes a variable) (got {})",
                js::describe(env, explicit)
            );
            return Err(ExecError::invalid_spec("env", reason).into());
        }
        let mut entries = Vec::new();
        for (raw, key) in record_keys(env, explicit, "env")? {
            let value = js::get_key(env, explicit, raw).map_err(js_failure)?;
            entries.push(match js::type_of(env, value) {
                ValueType::Undefined => (key, None),
                ValueType::String => {
                    let value = text(env, value, || format!("env.{key}"))?;
                    (key, Some(value))
                }
                _ => {
                    let reason = format!("must be a string or undefined (got {})", js::describe(env, value));
                    return Err(ExecError::invalid_spec(format!("env.{key}"), reason).into());
                }
            });
        }
        layers.explicit = entries;
    }
    Ok(())
}

/// A string read for `field`. One with a lone surrogate is an invalid spec
/// naming the field: it could not reach the child unchanged.
fn text(env: &Env, value: Raw, field: impl FnOnce() -> String) -> std::result::Result<String, Failure> {
    js::string(env, value).map_err(js_failure)?.map_err(|ill| ExecError::invalid_spec(field(), ill.to_string()).into())
}

/// The own enumerable string keys of a record of variables (`env`, `dshEnv`,
/// `terminalEnv`). A symbol key or a key with a lone surrogate names no
/// variable a child could get: an invalid spec naming it.
fn record_keys(env: &Env, record: Raw, field: &str) -> std::result::Result<Vec<(Raw, String)>, Failure> {
    let mut names = Vec::new();
    for (raw, key) in js::own_keys(env, record, true).map_err(js_failure)? {
        match key {
            js::Key::Name(name) => names.push((raw, name)),
            js::Key::IllFormed(lossy, ill) => {
                return Err(ExecError::invalid_spec(format!("{field}.{lossy}"), format!("name {ill}")).into())
            }
            js::Key::Symbol(symbol) => {
                return Err(
                    ExecError::invalid_spec(format!("{field}[{symbol}]"), "name must be a string (got symbol)").into()
                )
            }
        }
    }
    Ok(names)
}

/// The parent environment's variables: those of `parentEnv`, or with none
/// (`undefined` or `null`) those of the calling thread's `process.env`.
fn parent_vars(env: &Env, parent_env: Option<Unknown>) -> std::result::Result<Vec<(String, String)>, Failure> {
    string_record_lenient(env, parent_env_of(env, parent_env)?)
}

/// `parentEnv` as an object of variables. Read leniently (see
/// `string_record_lenient`), but it must be an object of variables, and a
/// throwing getter or Proxy trap is reported, not skipped.
fn parent_env_of(env: &Env, parent_env: Option<Unknown>) -> std::result::Result<Raw, Failure> {
    let parent_threw = |thrown| {
        Failure::caused_by(ExecError::invalid_spec("parentEnv", "reading the parent environment threw"), thrown)
    };
    caller_env(env, parent_env).map_err(parent_threw)?.map_err(|found| {
        ExecError::invalid_spec("parentEnv", format!("must be an object of environment variables (got {found})")).into()
    })
}

/// A JS error met while reading the spec (a throwing getter, a Proxy trap).
fn js_failure(thrown: napi::Error) -> Failure {
    let reason = "reading the spec threw".to_string();
    Failure::caused_by(ExecError::invalid_spec("spec", reason), thrown)
}

/// The same failure reported for `field`; a thrown `cause` is kept.
fn rename(failure: Failure, field: &str) -> Failure {
    match failure.error {
        ExecError::InvalidSpec { reason, .. } => {
            Failure { error: ExecError::invalid_spec(field, reason), cause: failure.cause }
        }
        _ => failure,
    }
}

fn optional_string(env: &Env, object: Raw, field: &str) -> std::result::Result<Option<String>, Failure> {
    match js::get_defined(env, object, field).map_err(js_failure)? {
        None => Ok(None),
        Some(value) if js::type_of(env, value) == ValueType::String => Ok(Some(text(env, value, || field.into())?)),
        Some(value) => {
            Err(ExecError::invalid_spec(field, format!("must be a string (got {})", js::describe(env, value))).into())
        }
    }
}

fn optional_bool(env: &Env, object: Raw, field: &str) -> std::result::Result<Option<bool>, Failure> {
    match js::get_defined(env, object, field).map_err(js_failure)? {
        None => Ok(None),
        Some(value) if js::type_of(env, value) == ValueType::Boolean => {
            // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
            Ok(Some(unsafe { bool::from_napi_value(env.raw(), value) }.map_err(js_failure)?))
        }
        Some(value) => {
            Err(ExecError::invalid_spec(field, format!("must be a boolean (got {})", js::describe(env, value))).into())
        }
    }
}

fn optional_number(env: &Env, object: Raw, field: &str) -> std::result::Result<Option<f64>, Failure> {
    match js::get_defined(env, object, field).map_err(js_failure)? {
        None => Ok(None),
        Some(value) if js::type_of(env, value) == ValueType::Number => {
            // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
            Ok(Some(unsafe { f64::from_napi_value(env.raw(), value) }.map_err(js_failure)?))
        }
        Some(value) => {
            Err(ExecError::invalid_spec(field, format!("must be a number (got {})", js::describe(env, value))).into())
        }
    }
}

/// An array of strings; `expected` is what the message says the field takes.
fn string_array(env: &Env, value: Raw, field: &str, expected: &str) -> std::result::Result<Vec<String>, Failure> {
    if !js::is_array(env, value) {
        let reason = format!("must be {expected} (got {})", js::describe(env, value));
        return Err(ExecError::invalid_spec(field, reason).into());
    }
    let length = js::array_length(env, value).map_err(js_failure)?;
    let mut items = Vec::with_capacity(length as usize);
    for index in 0..length {
        let item = js::element(env, value, index).map_err(js_failure)?;
        if js::type_of(env, item) != ValueType::String {
            let reason = format!("must be a string (got {})", js::describe(env, item));
            return Err(ExecError::invalid_spec(format!("{field}[{index}]"), reason).into());
        }
        items.push(text(env, item, || format!("{field}[{index}]"))?);
    }
    Ok(items)
}

/// An object whose values must all be strings (`dshEnv`, `terminalEnv`).
fn string_record(env: &Env, value: Raw, field: &str) -> std::result::Result<Vec<(String, String)>, Failure> {
    if !js::is_options_object(env, value).map_err(js_failure)? {
        let reason = format!("must be an object of strings (got {})", js::describe(env, value));
        return Err(ExecError::invalid_spec(field, reason).into());
    }
    let mut entries = Vec::new();
    for (raw, key) in record_keys(env, value, field)? {
        let item = js::get_key(env, value, raw).map_err(js_failure)?;
        if js::type_of(env, item) != ValueType::String {
            let reason = format!("must be a string (got {})", js::describe(env, item));
            return Err(ExecError::invalid_spec(format!("{field}.{key}"), reason).into());
        }
        let item = text(env, item, || format!("{field}.{key}"))?;
        entries.push((key, item));
    }
    Ok(entries)
}

/// A parent environment: string values kept, anything else skipped, like
/// entries that could never reach `execve` (see the core's pipeline): a name
/// or value with a lone surrogate could not have come from a real environment.
fn string_record_lenient(env: &Env, value: Raw) -> std::result::Result<Vec<(String, String)>, Failure> {
    let threw = |thrown| {
        Failure::caused_by(ExecError::invalid_spec("parentEnv", "reading the parent environment threw"), thrown)
    };
    let mut entries = Vec::new();
    for (raw, key) in js::own_keys(env, value, false).map_err(threw)? {
        let js::Key::Name(key) = key else { continue };
        let item = js::get_key(env, value, raw).map_err(threw)?;
        if js::type_of(env, item) == ValueType::String {
            if let Ok(item) = js::string(env, item).map_err(threw)? {
                entries.push((key, item));
            }
        }
    }
    Ok(entries)
}

fn bytes(env: &Env, value: Raw) -> Option<Vec<u8>> {
    if !js::is_typed_array(env, value) {
        return None;
    }
    // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
    let array = unsafe { Uint8Array::from_napi_value(env.raw(), value) }.ok()?;
    Some(array.to_vec())
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
struct Ignored;

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
}

impl NativeExecution {
    /// Wraps a running process; its teardown hook is registered from now on.
    fn new(env: &Env, process: Process, listener: AbortListener) -> Result<Self> {
        let hook = TeardownHook::add(env, process.clone())?;
        let cleanup = Cleanup { listener: Some(listener), hook: Some(hook) };
        Ok(Self { process, cleanup: RefCell::new(cleanup) })
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
    pub fn read_output(&self) -> OutputChunk {
        let delta = self.process.read_output();
        let shown = |path: Option<std::path::PathBuf>| path.map(|path| path.to_string_lossy().into_owned());
        OutputChunk {
            stdout: delta.stdout,
            stderr: delta.stderr,
            lossy: delta.lossy,
            stdout_spill_path: shown(delta.stdout_spill),
            stderr_spill_path: shown(delta.stderr_spill),
        }
    }

    /// Waits for the end of the whole group; the first settlement also releases
    /// the abort listener and the teardown hook.
    #[napi(ts_return_type = "Promise<ShellRunResult>")]
    pub fn wait(&self, env: &Env) -> Result<JsRaw> {
        let cleanup = OnJsThread(self.cleanup.replace(Cleanup { listener: None, hook: None }));
        let (deferred, promise) = env.create_deferred()?;
        // Settled straight from the thread that publishes the result.
        self.process.on_finish(move |result| {
            deferred.resolve(move |env| {
                let cleanup = cleanup.into_inner();
                if let Some(listener) = cleanup.listener {
                    listener.detach(&env);
                }
                if let Some(hook) = cleanup.hook {
                    hook.remove(&env);
                }
                Ok(run_result(&result))
            });
        });
        Ok(JsRaw(promise.raw()))
    }
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

/// Output since the previous `readOutput()`.
#[napi(object)]
pub struct OutputChunk {
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

/// One stream of a finished command.
#[napi(object)]
pub struct StreamOutput {
    /// The tail that was kept in memory.
    pub text: String,
    /// The stream was longer than `text`.
    pub truncated: bool,
    /// The whole stream, when it overflowed and stayed under `spillMaxBytes`.
    pub spill_path: Option<String>,
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
    /// The timeout in force, or `null` for `onExpiry: 'none'`.
    #[napi(ts_type = "number | null")]
    pub timeout_ms: Either<f64, Null>,
    /// From spawn until the group was gone.
    pub duration_ms: f64,
    /// Standard output.
    pub stdout: StreamOutput,
    /// Standard error.
    pub stderr: StreamOutput,
}

fn run_result(result: &RunResult) -> ShellRunResult {
    let stream = |output: &StreamResult| StreamOutput {
        text: output.text.clone(),
        truncated: output.truncated,
        spill_path: output.spill_path.as_ref().map(|path| path.to_string_lossy().into_owned()),
    };
    ShellRunResult {
        exit_code: result.exit_code.map_or(Either::B(Null), Either::A),
        signal: result.signal.map_or(Either::B(Null), |signal| Either::A(signal.to_string())),
        timed_out: result.timed_out,
        aborted: result.aborted,
        timeout_ms: result.timeout_ms.map_or(Either::B(Null), |ms| Either::A(ms as f64)),
        duration_ms: result.duration.as_secs_f64() * 1000.0,
        stdout: stream(&result.stdout),
        stderr: stream(&result.stderr),
    }
}

fn environment_to_js(env: &Env, environment: &Environment) -> Result<JsRaw> {
    let vars = js::object_of_strings(env, environment.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
    let sources = js::object_of_strings(env, environment.sources.iter().map(|(k, s)| (k.as_str(), s.as_str())))?;
    let mut removed = std::ptr::null_mut();
    // SAFETY: the Node-API contract (js.rs).
    check_status!(unsafe { sys::napi_create_array_with_length(env.raw(), environment.removed.len(), &mut removed) })?;
    for (index, removal) in environment.removed.iter().enumerate() {
        let entry = js::object_of_strings(env, [("key", removal.key.as_str()), ("reason", removal.reason.as_str())])?;
        // SAFETY: the Node-API contract (js.rs).
        check_status!(unsafe { sys::napi_set_element(env.raw(), removed, index as u32, entry) })?;
    }
    let result = js::object_of_strings(env, [])?;
    js::set(env, result, "env", vars)?;
    js::set(env, result, "sources", sources)?;
    js::set(env, result, "removed", removed)?;
    Ok(JsRaw(result))
}
