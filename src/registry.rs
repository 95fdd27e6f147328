//! `ShellEnvRegistry`: the JS face of the core registry. Converts contributor
//! declarations and executions, runs resolvers, and returns frozen snapshots.

use std::sync::Arc;
use std::time::Duration;

use dsh_shell_env_core::home::{check_configured, resolve_dsh_home, HomeContext};
use dsh_shell_env_core::registry::{check_config_field, check_profile_field, Declaration, Profile, Registry};
use dsh_shell_env_core::snapshot::{check_inherited_path, collect_timeout, Collection, ResolvedValue, Snapshot};
use dsh_shell_env_core::text::{IllFormedText, ILL_FORMED};
use dsh_shell_env_core::ShellEnvError;
use napi::bindgen_prelude::*;
use napi::ValueType;
use napi_derive::napi;
use tokio::time::Instant;

use crate::abort::{watch_signal, AbortToken};
use crate::errors::{rejected, shell_env_error, Failure};
use crate::js::{self, JsRaw, Raw};
use crate::resolver::{ExecutionRef, JsResolver, Outcome, ResolverReturn};

/// The core registry as the binding stores it.
pub type CoreRegistry = Registry<JsResolver>;

/// The registry of managed `DSH_*` variables for shell calls.
#[napi]
pub struct ShellEnvRegistry {
    core: Arc<CoreRegistry>,
}

#[napi]
impl ShellEnvRegistry {
    /// `new ShellEnvRegistry({ dshHome?, profile?: { name, dir } })`.
    #[napi(
        constructor,
        ts_args_type = "options?: ShellEnvRegistryOptions, parentEnv?: Record<string, string | undefined>"
    )]
    pub fn new(env: &Env, options: Option<Unknown>, parent_env: Option<Unknown>) -> Result<Self> {
        let built = (|| {
            let options = options_object(env, options)?;
            if let Some(options) = options {
                for field in field_names(env, options, threw("config"))? {
                    check_config_field(&field)?;
                }
            }
            let configured = match options {
                Some(options) => configured_home(env, options)?,
                None => None,
            };
            let profile = match options {
                Some(options) => match js::get_defined(env, options, "profile").map_err(profile_threw("profile"))? {
                    Some(profile) => Some(read_profile(env, profile)?),
                    None => None,
                },
                None => None,
            };
            let parent_env = parent_env_option(env, parent_env)?;
            let env_home = js::get_string(env, parent_env, "DSH_HOME").map_err(threw("parentEnv"))?;
            let dsh_home = resolve_dsh_home(configured.as_deref(), &HomeContext::current(env_home));
            Ok(Self { core: Arc::new(Registry::new(dsh_home, profile)) })
        })();
        built.map_err(|failure: Failure| failure.into_js(env))
    }

    /// The absolute Harness home, resolved once at construction.
    #[napi(getter)]
    pub fn dsh_home(&self) -> String {
        self.core.dsh_home().to_string()
    }

    /// Registers a contributor; returns an idempotent disposer.
    #[napi(ts_args_type = "contributor: ShellEnvContributor", ts_return_type = "() => void")]
    pub fn register(&self, env: &Env, contributor: Unknown) -> Result<JsRaw> {
        let declaration = read_declaration(env, contributor.raw()).map_err(|failure| failure.into_js(env))?;
        let registration = self.core.register(declaration).map_err(|error| shell_env_error(env, error))?;
        let core = Arc::downgrade(&self.core);
        let dispose = env.create_function_from_closure::<(), (), _>("dispose", move |_| {
            if let Some(core) = core.upgrade() {
                core.unregister(&registration);
            }
            Ok(())
        })?;
        Ok(JsRaw(dispose.raw()))
    }

    /// Collects the managed environment for one execution, synchronously.
    #[napi(
        ts_args_type = "execution: ToolExecution, options?: CollectOptions, parentEnv?: Record<string, string | undefined>",
        ts_return_type = "DshEnvironment"
    )]
    pub fn collect(
        &self,
        env: &Env,
        execution: Unknown,
        options: Option<Unknown>,
        parent_env: Option<Unknown>,
    ) -> Result<JsRaw> {
        let execution = execution.raw();
        let result = (|| {
            let options = options_object(env, options)?;
            let inherited_path = inherited_path(env, options, parent_env)?;
            let mut collection = begin(env, &self.core, execution)?;
            for contributor in collection.contributors().to_vec() {
                let values = contributor.resolver().call_sync(env, execution).into_values(contributor.name())?;
                collection.accept(&contributor, values)?;
            }
            Ok(collection.finish(inherited_path.as_deref()))
        })();
        result.map_err(|failure: Failure| failure.into_js(env)).and_then(|snapshot| frozen(env, &snapshot))
    }

    /// Collects the managed environment, awaiting async resolvers. Every
    /// failure, invalid options included, rejects the promise.
    #[napi(
        ts_args_type = "execution: ToolExecution, options?: CollectAsyncOptions, parentEnv?: Record<string, string | undefined>",
        ts_return_type = "Promise<DshEnvironment>"
    )]
    pub fn collect_async(
        &self,
        env: &Env,
        execution: Unknown,
        options: Option<Unknown>,
        parent_env: Option<Unknown>,
    ) -> Result<JsRaw> {
        let execution = execution.raw();
        let started = (|| {
            let options = options_object(env, options)?;
            let inherited_path = inherited_path(env, options, parent_env)?;
            let timeout = read_timeout(env, options)?;
            let signal = match options {
                Some(options) => js::get_defined(env, options, "signal").map_err(threw("signal"))?,
                None => None,
            };
            let (token, listener) = watch_signal(env, signal).map_err(threw("signal"))?.ok_or_else(|| {
                Failure::from(ShellEnvError::InvalidOption {
                    option: "signal",
                    reason: "must be an AbortSignal".into(),
                })
            })?;
            let collection = if token.is_aborted() {
                Err(Failure::from(ShellEnvError::Aborted))
            } else {
                begin(env, &self.core, execution)
            };
            match collection.and_then(|collection| {
                let reference = ExecutionRef::new(env, execution).map_err(threw("execution"))?;
                Ok((collection, Arc::new(reference)))
            }) {
                Ok((collection, reference)) => Ok((collection, reference, inherited_path, timeout, token, listener)),
                Err(failure) => {
                    listener.detach(env);
                    Err(failure)
                }
            }
        })();
        let (collection, execution, inherited_path, timeout, token, listener) = match started {
            Ok(started) => started,
            Err(failure) => return rejected(env, failure),
        };
        let task_execution = Arc::clone(&execution);
        let task = async move {
            let snapshot = resolve_all(collection, task_execution, timeout, token).await;
            Ok(snapshot.map(|collection| collection.finish(inherited_path.as_deref())))
        };
        let promise = env.spawn_future_with_callback(task, move |env, result| {
            listener.detach(env);
            drop(execution);
            match result {
                Ok(snapshot) => frozen(env, &snapshot),
                Err(failure) => Err(failure.into_js(env)),
            }
        })?;
        Ok(JsRaw(promise.raw()))
    }

    /// Plugin-declared variables, sorted by key; no resolver runs.
    #[napi]
    pub fn list(&self) -> Vec<ListEntry> {
        self.core
            .list()
            .into_iter()
            .map(|entry| ListEntry { contributor: entry.contributor, description: entry.description, key: entry.key })
            .collect()
    }

    /// Every variable a shell call can receive, built-ins included, and every
    /// contributor's command directories.
    #[napi]
    pub fn catalog(&self) -> Catalog {
        let catalog = self.core.catalog();
        Catalog {
            variables: catalog
                .variables
                .into_iter()
                .map(|entry| CatalogEntry {
                    key: entry.key,
                    description: entry.description,
                    owner: entry.owner,
                    when: entry.when.as_str().to_string(),
                })
                .collect(),
            command_directories: catalog
                .command_directories
                .into_iter()
                .map(|(contributor, directories)| CommandDirectories { contributor, directories })
                .collect(),
        }
    }
}

impl ShellEnvRegistry {
    /// The core registry, for `execute()` collecting right before a spawn.
    pub fn core(&self) -> &Arc<CoreRegistry> {
        &self.core
    }
}

/// A plugin-declared variable, as `list()` returns it.
#[napi(object)]
pub struct ListEntry {
    /// The declaring contributor.
    pub contributor: String,
    /// What the variable holds.
    pub description: String,
    /// The variable name.
    pub key: String,
}

/// A variable a shell call can receive.
#[napi(object)]
pub struct CatalogEntry {
    /// The variable name.
    pub key: String,
    /// What it holds.
    pub description: String,
    /// `'built-in'` or the declaring contributor.
    pub owner: String,
    /// When it is present.
    #[napi(ts_type = "'always' | 'agent' | 'profile' | 'resolver'")]
    pub when: String,
}

/// One contributor's command directories.
#[napi(object)]
pub struct CommandDirectories {
    /// The contributor.
    pub contributor: String,
    /// Its directories, in its own order.
    pub directories: Vec<String>,
}

/// What `catalog()` returns.
#[napi(object)]
pub struct Catalog {
    /// Every variable, sorted by key.
    pub variables: Vec<CatalogEntry>,
    /// Command directories in contributor-name order.
    pub command_directories: Vec<CommandDirectories>,
}

/// Starts a collection: validates the execution and reads the built-ins.
pub fn begin(env: &Env, core: &CoreRegistry, execution: Raw) -> std::result::Result<Collection<JsResolver>, Failure> {
    if !js::is_object(env, execution) {
        return Err(ShellEnvError::InvalidExecution { found: Some(js::describe(env, execution)) }.into());
    }
    let session_id = session_id(env, execution).map_err(|thrown| {
        let reason = "could not be read: a getter or Proxy trap threw".to_string();
        Failure::caused_by(ShellEnvError::InvalidAgent { reason }, thrown)
    })?;
    // A malformed agent is the execution's fault, not the registry's own.
    match &session_id {
        Some(ResolvedValue::Other(found)) => {
            return Err(ShellEnvError::InvalidAgent { reason: format!("must be a string (got {found})") }.into())
        }
        Some(ResolvedValue::IllFormed(ill)) => {
            return Err(ShellEnvError::InvalidAgent { reason: ill.to_string() }.into())
        }
        Some(ResolvedValue::String(id)) if id.contains('\0') => {
            return Err(ShellEnvError::InvalidAgent { reason: "must not contain a NUL byte".into() }.into())
        }
        _ => {}
    }
    Ok(Collection::begin(core, session_id)?)
}

/// `execution.agent.session.header.id` when `execution.agent` is set.
fn session_id(env: &Env, execution: Raw) -> Result<Option<ResolvedValue>> {
    let Some(agent) = js::get_defined(env, execution, "agent")? else { return Ok(None) };
    if js::type_of(env, agent) == ValueType::Null {
        return Ok(None);
    }
    let mut value = Some(agent);
    for name in ["session", "header", "id"] {
        value = match value {
            Some(object) => js::get_defined(env, object, name)?,
            None => None,
        };
    }
    Ok(Some(match value {
        Some(id) if js::type_of(env, id) == ValueType::String => match js::string(env, id)? {
            Ok(id) => ResolvedValue::String(id),
            Err(ill_formed) => ResolvedValue::IllFormed(ill_formed),
        },
        Some(other) => ResolvedValue::Other(js::describe(env, other)),
        None => ResolvedValue::Other("undefined".into()),
    }))
}

/// Runs every resolver of `collection` through its threadsafe function, in
/// name order, all within `timeout`, stopping when `abort` fires.
pub async fn resolve_all(
    mut collection: Collection<JsResolver>,
    execution: Arc<ExecutionRef>,
    timeout: Duration,
    abort: AbortToken,
) -> std::result::Result<Collection<JsResolver>, Failure> {
    let deadline = Instant::now() + timeout;
    for contributor in collection.contributors().to_vec() {
        let name = contributor.name();
        let call = async {
            let outcome = match contributor.resolver().call_async(Arc::clone(&execution)).await {
                Err(thrown) => Outcome::Threw(thrown),
                Ok(ResolverReturn::Ready(outcome)) => outcome,
                Ok(ResolverReturn::Pending(promise)) => promise.await.map_or_else(Outcome::Threw, |settled| settled.0),
            };
            outcome.into_values(name)
        };
        let values = tokio::select! {
            values = call => values?,
            () = tokio::time::sleep_until(deadline) => {
                let timeout_ms = timeout.as_millis() as u64;
                return Err(ShellEnvError::ResolverTimeout { contributor: name.into(), timeout_ms }.into());
            }
            () = abort.clone().aborted() => return Err(ShellEnvError::Aborted.into()),
        };
        collection.accept(&contributor, values)?;
    }
    Ok(collection)
}

/// The options object: `None` for `undefined` or `null`; anything but an
/// object (an array, a function, a primitive) is an invalid option.
fn options_object(env: &Env, options: Option<Unknown>) -> std::result::Result<Option<Raw>, Failure> {
    let Some(options) = options.map(|options| options.raw()) else { return Ok(None) };
    match js::type_of(env, options) {
        ValueType::Undefined | ValueType::Null => Ok(None),
        _ if js::is_options_object(env, options).map_err(threw("options"))? => Ok(Some(options)),
        _ => {
            let reason = format!("must be an object (got {})", js::describe(env, options));
            Err(ShellEnvError::InvalidOption { option: "options", reason }.into())
        }
    }
}

/// `options.dshHome`: a string (checked by the core), or `undefined`/`null` for the default.
fn configured_home(env: &Env, options: Raw) -> std::result::Result<Option<String>, Failure> {
    let Some(value) = js::get_defined(env, options, "dshHome").map_err(threw("dshHome"))? else { return Ok(None) };
    let invalid = |reason: String| Failure::from(ShellEnvError::InvalidOption { option: "dshHome", reason });
    match js::type_of(env, value) {
        ValueType::Null => Ok(None),
        ValueType::String => {
            let home = js::string(env, value).map_err(threw("dshHome"))?.map_err(|ill| invalid(ill.to_string()))?;
            check_configured("dshHome", &home)?;
            Ok(Some(home))
        }
        _ => Err(invalid(format!("must be a string (got {})", js::describe(env, value)))),
    }
}

/// Maps a JS throw while reading an option (a getter, a Proxy trap) to an
/// option error that keeps the thrown value as `cause`.
fn threw(option: &'static str) -> impl Fn(napi::Error) -> Failure {
    move |thrown| {
        let reason = "reading it threw".to_string();
        Failure::caused_by(ShellEnvError::InvalidOption { option, reason }, thrown)
    }
}

/// The `inheritedPath` option, else `PATH` of the caller's environment
/// (`parentEnv`, which the package passes as the caller's `process.env`).
fn inherited_path(
    env: &Env,
    options: Option<Raw>,
    parent_env: Option<Unknown>,
) -> std::result::Result<Option<String>, Failure> {
    if let Some(options) = options {
        if let Some(path) = js::get_defined(env, options, "inheritedPath").map_err(threw("inheritedPath"))? {
            if js::type_of(env, path) != ValueType::String {
                let reason = format!("must be a string (got {})", js::describe(env, path));
                return Err(ShellEnvError::InvalidOption { option: "inheritedPath", reason }.into());
            }
            let invalid =
                |ill: IllFormedText| ShellEnvError::InvalidOption { option: "inheritedPath", reason: ill.to_string() };
            let path = js::string(env, path).map_err(threw("inheritedPath"))?.map_err(invalid)?;
            check_inherited_path(&path)?;
            return Ok(Some(path));
        }
    }
    let parent_env = parent_env_option(env, parent_env)?;
    js::get_string(env, parent_env, "PATH").map_err(threw("parentEnv"))
}

/// The caller's environment object: `parentEnv` when given, else (for
/// `undefined` or `null`) `process.env`. Anything that is not an object of
/// variables (a primitive, an array, a `Map`, …) is `Ok(Err(description))`,
/// for the caller to report in its own terms; the outer `Err` holds what a
/// Proxy trap or `Symbol.toStringTag` getter threw.
pub fn caller_env(env: &Env, parent_env: Option<Unknown>) -> Result<std::result::Result<Raw, String>> {
    let Some(parent_env) = parent_env.map(|value| value.raw()) else { return js::process_env(env).map(Ok) };
    match js::type_of(env, parent_env) {
        ValueType::Undefined | ValueType::Null => js::process_env(env).map(Ok),
        _ if js::is_options_object(env, parent_env)? => Ok(Ok(parent_env)),
        _ => Ok(Err(js::describe(env, parent_env))),
    }
}

/// `caller_env` for the entry points whose `parentEnv` only the package's own
/// wrapper passes: a wrong one is an invalid `parentEnv` option.
fn parent_env_option(env: &Env, parent_env: Option<Unknown>) -> std::result::Result<Raw, Failure> {
    caller_env(env, parent_env).map_err(threw("parentEnv"))?.map_err(|found| {
        let reason = format!("must be an object (got {found})");
        ShellEnvError::InvalidOption { option: "parentEnv", reason }.into()
    })
}

/// The `timeoutMs` option, read as a number; the core checks it.
fn read_timeout(env: &Env, options: Option<Raw>) -> std::result::Result<Duration, Failure> {
    let value = match options {
        Some(options) => js::get_defined(env, options, "timeoutMs").map_err(threw("timeoutMs"))?,
        None => None,
    };
    let millis = match value {
        None => None,
        Some(value) if js::type_of(env, value) == ValueType::Number => {
            // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
            Some(unsafe { f64::from_napi_value(env.raw(), value) }.map_err(threw("timeoutMs"))?)
        }
        Some(value) => {
            let reason = format!("must be a positive finite number of milliseconds (got {})", js::describe(env, value));
            return Err(ShellEnvError::InvalidOption { option: "timeoutMs", reason }.into());
        }
    };
    Ok(collect_timeout(millis)?)
}

/// Maps a JS throw while reading the profile to a profile error keeping the
/// thrown value as `cause`.
fn profile_threw(field: &'static str) -> impl Fn(napi::Error) -> Failure {
    move |thrown| Failure::caused_by(ShellEnvError::InvalidProfile { reason: format!("reading {field} threw") }, thrown)
}

fn read_profile(env: &Env, profile: Raw) -> std::result::Result<Profile, Failure> {
    let invalid = |reason: String| Failure::from(ShellEnvError::InvalidProfile { reason });
    if !js::is_options_object(env, profile).map_err(profile_threw("profile"))? {
        return Err(invalid(format!("profile must be an object {{ name, dir }} (got {})", js::describe(env, profile))));
    }
    for field in field_names(env, profile, profile_threw("profile"))? {
        check_profile_field(&field)?;
    }
    let field = |name: &'static str, field: &'static str| -> std::result::Result<String, Failure> {
        match js::get_defined(env, profile, name).map_err(profile_threw(field))? {
            Some(value) if js::type_of(env, value) == ValueType::String => {
                js::string(env, value).map_err(profile_threw(field))?.map_err(|ill| invalid(format!("{field} {ill}")))
            }
            _ => Err(invalid(format!("{field} must be a string"))),
        }
    };
    let name = field("name", "profile.name")?;
    let dir = field("dir", "profile.dir")?;
    Ok(Profile::new(name, dir)?)
}

/// The own enumerable field names of a config object, symbols shown as
/// `Symbol(description)` so that the core refuses them by name.
fn field_names(
    env: &Env,
    object: Raw,
    threw: impl Fn(napi::Error) -> Failure,
) -> std::result::Result<Vec<String>, Failure> {
    let keys = js::own_keys(env, object, true).map_err(threw)?;
    Ok(keys.into_iter().map(|(_, key)| key.display().to_string()).collect())
}

/// Reads `{ name, variables, commandDirectories?, resolve }` into a core
/// declaration. Only types and text are checked here; the core validates the
/// rest. A getter or Proxy trap that throws becomes a coded error whose
/// `cause` is the thrown value.
fn read_declaration(env: &Env, contributor: Raw) -> std::result::Result<Declaration<JsResolver>, Failure> {
    if !js::is_object(env, contributor) {
        return Err(ShellEnvError::InvalidName { found: Some(js::describe(env, contributor)) }.into());
    }
    let invalid_name = |found: &str| ShellEnvError::InvalidName { found: Some(found.into()) };
    let name_threw = |thrown| Failure::caused_by(invalid_name("a name property that threw when read"), thrown);
    let name = js::get_defined(env, contributor, "name").map_err(name_threw)?;
    let name = match name.filter(|name| js::type_of(env, *name) == ValueType::String) {
        Some(name) => {
            js::string(env, name).map_err(name_threw)?.map_err(|_| invalid_name("a string with a lone surrogate"))?
        }
        None => {
            return Err(invalid_name(&name.map_or_else(|| "undefined".into(), |name| js::describe(env, name))).into())
        }
    };
    let invalid =
        |reason: String| Failure::from(ShellEnvError::InvalidContributor { contributor: name.clone(), reason });
    let threw = |field: String| {
        let contributor = name.clone();
        move |thrown| {
            let reason = format!("reading {field} threw");
            Failure::caused_by(ShellEnvError::InvalidContributor { contributor, reason }, thrown)
        }
    };

    let variables_value = js::get_defined(env, contributor, "variables").map_err(threw("variables".into()))?;
    let variables_value = match variables_value {
        Some(value) if js::is_options_object(env, value).map_err(threw("variables".into()))? => value,
        _ => return Err(invalid("variables must be an object of { [DSH_KEY]: { description } }".into())),
    };
    let mut variables = Vec::new();
    for (raw, key) in js::own_keys(env, variables_value, true).map_err(threw("variables".into()))? {
        let js::Key::Name(key) = key else {
            // An ill-formed or symbol key is no DSH_ key: the core says so.
            variables.push((key.display().to_string(), None));
            continue;
        };
        let declaration = js::get_key(env, variables_value, raw).map_err(threw(format!("variables.{key}")))?;
        let description = match js::get_defined(env, declaration, "description")
            .map_err(threw(format!("variables.{key}.description")))?
        {
            Some(description) if js::type_of(env, description) == ValueType::String => Some(
                js::string(env, description)
                    .map_err(threw(format!("variables.{key}.description")))?
                    .map_err(|ill| invalid(format!("the description of {key} {ill}")))?,
            ),
            _ => None,
        };
        variables.push((key, description));
    }

    let mut command_directories = Vec::new();
    if let Some(directories) =
        js::get_defined(env, contributor, "commandDirectories").map_err(threw("commandDirectories".into()))?
    {
        if !js::is_array(env, directories) {
            return Err(invalid("commandDirectories must be an array of absolute paths".into()));
        }
        let invalid_directory = |directory: String, reason: &'static str| {
            Failure::from(ShellEnvError::InvalidDirectory { contributor: name.clone(), directory, reason })
        };
        let length = js::array_length(env, directories).map_err(threw("commandDirectories".into()))?;
        // Every index up to `length`: a hole is an invalid directory, and
        // extra named properties on the array are not directories.
        for index in 0..length {
            let field = format!("commandDirectories[{index}]");
            let directory = js::element(env, directories, index).map_err(threw(field.clone()))?;
            if js::type_of(env, directory) != ValueType::String {
                return Err(invalid_directory(format!("<{}>", js::describe(env, directory)), "must be a string"));
            }
            match js::string(env, directory).map_err(threw(field))? {
                Ok(directory) => command_directories.push(directory),
                Err(_) => {
                    let lossy = js::lossy_string(env, directory).unwrap_or_default();
                    return Err(invalid_directory(lossy, ILL_FORMED));
                }
            }
        }
    }

    let resolve = js::get_defined(env, contributor, "resolve")
        .map_err(threw("resolve".into()))?
        .filter(|resolve| js::type_of(env, *resolve) == ValueType::Function)
        .ok_or_else(|| invalid("resolve must be a function (execution) => values".into()))?;
    let resolver = JsResolver::new(env, resolve).map_err(threw("resolve".into()))?;
    Ok(Declaration { name, variables, command_directories, resolver })
}

/// The snapshot as a frozen plain object, keys sorted.
fn frozen(env: &Env, snapshot: &Snapshot) -> Result<JsRaw> {
    let object = js::object_of_strings(env, snapshot.iter().map(|(key, value)| (key.as_str(), value.as_str())))?;
    js::freeze(env, object)?;
    Ok(JsRaw(object))
}
