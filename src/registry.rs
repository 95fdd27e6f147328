//! `ShellEnvRegistry`: the JS face of the core registry. Converts contributor
//! declarations and executions, runs resolvers, and returns frozen snapshots.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use dsh_shell_env_core::home::{check_configured, resolve_dsh_home, HomeContext};
use dsh_shell_env_core::packed::{self, Answers};
use dsh_shell_env_core::registry::{
    check_config_field, check_profile_field, ContributorSet, Declaration, Profile, Registry,
};
use dsh_shell_env_core::snapshot::{
    check_inherited_path, collect_timeout, has_path, Collection, ResolvedValue, SortedValues,
};
use dsh_shell_env_core::text::ILL_FORMED;
use dsh_shell_env_core::ShellEnvError;
use napi::bindgen_prelude::*;
use napi::{sys, ValueType};
use napi_derive::napi;

use crate::abort::watch_signal;
use crate::errors::{rejected, shell_env_error, Failure};
use crate::js::{self, JsRaw, Raw};
use crate::read::{self, Field, Kind, Read};
use crate::resolver::{self, Awaited, JsRef, JsResolver, Outcome, ResolverReturn};

/// The core registry as the binding stores it.
pub type CoreRegistry = Registry<JsResolver>;

/// The registry of managed `DSH_*` variables for shell calls.
#[napi]
pub struct ShellEnvRegistry {
    /// The core registry and what collections keep of it.
    collector: Collector,
}

/// What `collect()` needs of a registry, handed to the JS layer once as an
/// external value: [`collect_packed`] takes it as a plain argument, where a
/// method call would unwrap, type-check and borrow-track `this` (together a
/// tenth of a small collection).
#[derive(Clone)]
pub struct Collector {
    core: Arc<CoreRegistry>,
    /// The contributor set the JS layer's last collection ran, with its
    /// functions as a JS array: kept while the registry is unchanged.
    functions: Rc<RefCell<Option<Functions>>>,
}

/// A contributor set and its resolvers' own functions, in the same order.
struct Functions {
    generation: u64,
    contributors: ContributorSet<JsResolver>,
    array: JsRef,
}

#[napi]
impl ShellEnvRegistry {
    /// `new ShellEnvRegistry({ dshHome?, profile?: { name, dir } })`.
    #[napi(constructor, ts_args_type = "options?: ShellEnvRegistryOptions, parentEnv?: EnvironmentRecord")]
    pub fn new(env: &Env, options: Option<Unknown>, parent_env: Option<Unknown>) -> Result<Self> {
        let built = (|| {
            let options = options_object(env, options)?;
            if let Some(options) = &options {
                // A throw while listing the fields is reported as `config`.
                for field in Field::named(env, Kind::Option, options.raw(), "config").own_field_names()? {
                    check_config_field(&field)?;
                }
            }
            let configured = match &options {
                Some(options) => configured_home(options)?,
                None => None,
            };
            let profile = match &options {
                Some(options) => match options.as_kind(Kind::Profile).get("profile")? {
                    Some(profile) => Some(read_profile(&profile)?),
                    None => None,
                },
                None => None,
            };
            let env_home = parent_env_option(env, parent_env)?.lenient_string("DSH_HOME")?;
            let dsh_home = resolve_dsh_home(configured.as_deref(), &HomeContext::current(env_home));
            let core = Arc::new(Registry::new(dsh_home, profile));
            Ok(Self { collector: Collector { core, functions: Rc::default() } })
        })();
        built.map_err(|failure: Failure| failure.into_js(env))
    }

    /// The absolute Harness home, resolved once at construction.
    #[napi(getter)]
    pub fn dsh_home(&self) -> String {
        self.core().dsh_home().to_string()
    }

    /// Registers a contributor; returns an idempotent disposer. `reader` is
    /// the JS layer's `answerOf(resolve, execution)`: when given, calls from
    /// Rust go through it and read the answer packed (see [`packed`]).
    #[napi(
        ts_args_type = "contributor: ShellEnvContributor, reader?: (resolve: Function, execution: unknown) => unknown",
        ts_return_type = "() => void"
    )]
    pub fn register(&self, env: &Env, contributor: Unknown, reader: Option<Unknown>) -> Result<JsRaw> {
        let reader =
            reader.map(|reader| reader.raw()).filter(|&reader| js::type_of(env, reader) == ValueType::Function);
        let declaration = read_declaration(env, contributor.raw(), reader).map_err(|failure| failure.into_js(env))?;
        let registration = self.core().register(declaration).map_err(|error| shell_env_error(env, error))?;
        let core = Arc::downgrade(self.core());
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
        ts_args_type = "execution: ToolExecution, options?: CollectOptions, parentEnv?: EnvironmentRecord",
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
            let contributors = self.core().contributors();
            let inherited_path = inherited_path(env, options.as_ref(), parent_env, has_path(&contributors))?;
            let collection = begin_over(env, self.core(), contributors, execution)?.resolve_each(|contributor| {
                contributor.resolver().call_sync(env, execution).into_values(contributor.name())
            })?;
            Ok(collection.finish_sorted(inherited_path.as_deref()))
        })();
        result.map_err(|failure: Failure| failure.into_js(env)).and_then(|snapshot| frozen(env, &snapshot))
    }

    /// The handle [`collect_packed`] takes: the JS layer asks for it once.
    #[napi(ts_return_type = "ExternalObject<'Collector'>")]
    pub fn collector(&self) -> External<Collector> {
        External::new(self.collector.clone())
    }

    /// Collects the managed environment, awaiting async resolvers. Every
    /// failure, invalid options included, rejects the promise. With
    /// `answerAll` (the JS layer's), the resolvers answer at once first (see
    /// [`AnsweredAtOnce`]); only from the first promise on are they awaited,
    /// and called from Rust.
    #[napi(
        ts_args_type = "execution: ToolExecution, options?: CollectAsyncOptions, parentEnv?: EnvironmentRecord, answerAll?: AnswerAll",
        ts_return_type = "Promise<DshEnvironment>"
    )]
    pub fn collect_async(
        &self,
        env: &Env,
        execution: Unknown,
        options: Option<Unknown>,
        parent_env: Option<Unknown>,
        answer_all: Option<Unknown>,
    ) -> Result<JsRaw> {
        self.collector.collect_async(env, execution, options, parent_env, answer_all, Delivery::Frozen)
    }

    /// Every registered command directory that cannot be trusted now (see
    /// the core's `trust`): what a collection would leave out of PATH.
    #[napi]
    pub fn untrusted_directories(&self) -> Vec<UntrustedDirectory> {
        self.core().untrusted_directories().into_iter().map(UntrustedDirectory::from).collect()
    }

    /// The directories collections left out of PATH since the last call, each
    /// directory and reason once in the registry's life: what the JS layer
    /// warns about.
    #[napi]
    pub fn take_left_out(&self) -> Vec<UntrustedDirectory> {
        self.core().take_left_out().into_iter().map(UntrustedDirectory::from).collect()
    }

    /// Plugin-declared variables, sorted by key; no resolver runs.
    #[napi]
    pub fn list(&self) -> Vec<ShellEnvListEntry> {
        self.core()
            .list()
            .into_iter()
            .map(|entry| ShellEnvListEntry {
                contributor: entry.contributor,
                description: entry.description,
                key: entry.key,
            })
            .collect()
    }

    /// Every variable a shell call can receive, built-ins included, and every
    /// contributor's command directories.
    #[napi]
    pub fn catalog(&self) -> ShellEnvCatalog {
        let catalog = self.core().catalog();
        ShellEnvCatalog {
            variables: catalog
                .variables
                .into_iter()
                .map(|entry| ShellEnvCatalogEntry {
                    key: entry.key,
                    description: entry.description,
                    owner: entry.owner,
                    when: entry.when.as_str().to_string(),
                })
                .collect(),
            command_directories: catalog
                .command_directories
                .into_iter()
                .map(|(contributor, directories)| ShellEnvCommandDirectories { contributor, directories })
                .collect(),
        }
    }
}

impl ShellEnvRegistry {
    /// The core registry, for `execute()` collecting right before a spawn.
    pub fn core(&self) -> &Arc<CoreRegistry> {
        &self.collector.core
    }

    /// See [`Collector::functions`].
    pub fn functions(&self, env: &Env) -> Result<(ContributorSet<JsResolver>, Raw)> {
        self.collector.functions(env)
    }
}

/// `collect()` as the JS layer makes it: the resolvers answer at once
/// through `answer_all` (see [`AnsweredAtOnce`]), each answer is checked
/// here in contributor order (the first invalid one fails the collection),
/// and the resolvers after an answer read here are called from here. Returns
/// the snapshot packed (see [`packed`]), whose first character is `1` when
/// `takeLeftOut()` has directories to report. `sessionId` is
/// `execution.agent.session.header.id` when the JS layer could read it as
/// plain data (`null`: no agent); `undefined` has it read here, and anything
/// wrong with it reported from here.
#[napi(
    ts_args_type = "collector: ExternalObject<'Collector'>, execution: ToolExecution, options: CollectOptions | undefined, parentEnv: EnvironmentRecord, answerAll: AnswerAll, sessionId?: string | null",
    ts_return_type = "string"
)]
pub fn collect_packed(
    env: &Env,
    collector: &External<Collector>,
    execution: Unknown,
    options: Option<Unknown>,
    parent_env: Option<Unknown>,
    answer_all: Unknown,
    session_id: Option<Unknown>,
) -> Result<JsRaw> {
    let execution = execution.raw();
    let (contributors, functions) = collector.functions(env)?;
    let undefined = js::undefined(env)?;
    let collected = (|| {
        let options = options_object(env, options)?;
        let inherited_path = inherited_path(env, options.as_ref(), parent_env, has_path(&contributors))?;
        let session_id = agent_session_read(env, execution, session_id.map(|id| id.raw()))?;
        let mut collection = Collection::begin_over(&collector.core, contributors, session_id)?;
        AnsweredAtOnce::call(env, answer_all.raw(), [functions, execution, undefined], false).apply(&mut collection)?;
        let collection = collection.resolve_each(|contributor| {
            contributor.resolver().call_sync(env, execution).into_values(contributor.name())
        })?;
        Ok(collection.finish_sorted(inherited_path.as_deref()))
    })();
    let snapshot = collected.map_err(|failure: Failure| failure.into_js(env))?;
    Delivery::Packed.deliver(env, &collector.core, snapshot)
}

/// `collectAsync()` as the JS layer makes it: `ShellEnvRegistry#collectAsync`
/// with the JS layer's `answerAll`, its promise fulfilled with the snapshot
/// packed as [`collect_packed`] returns it.
#[napi(
    ts_args_type = "collector: ExternalObject<'Collector'>, execution: ToolExecution, options: CollectAsyncOptions | undefined, parentEnv: EnvironmentRecord, answerAll: AnswerAll",
    ts_return_type = "Promise<string>"
)]
pub fn collect_async_packed(
    env: &Env,
    collector: &External<Collector>,
    execution: Unknown,
    options: Option<Unknown>,
    parent_env: Option<Unknown>,
    answer_all: Unknown,
) -> Result<JsRaw> {
    collector.collect_async(env, execution, options, parent_env, Some(answer_all), Delivery::Packed)
}

impl Collector {
    /// [`ShellEnvRegistry::collect_async`], the snapshot delivered as `delivery` says.
    fn collect_async(
        &self,
        env: &Env,
        execution: Unknown,
        options: Option<Unknown>,
        parent_env: Option<Unknown>,
        answer_all: Option<Unknown>,
        delivery: Delivery,
    ) -> Result<JsRaw> {
        let execution = execution.raw();
        let answer_all = answer_all.map(|answer_all| answer_all.raw());
        let set = answer_all.map(|_| self.functions(env)).transpose()?;
        let started = (|| {
            let options = options_object(env, options)?;
            let needs_path = match &set {
                Some((contributors, _)) => has_path(contributors),
                None => has_path(&self.core.contributors()),
            };
            let inherited_path = inherited_path(env, options.as_ref(), parent_env, needs_path)?;
            let timeout = read_timeout(options.as_ref())?;
            let signal = match &options {
                Some(options) => options.get("signal")?,
                None => None,
            };
            let signal_field =
                signal.unwrap_or_else(|| Field::named(env, Kind::Option, std::ptr::null_mut(), "signal"));
            let (token, listener) = watch_signal(env, signal.map(|signal| signal.raw()))
                .map_err(|thrown| signal_field.threw(thrown))?
                .ok_or_else(|| signal_field.invalid("must be an AbortSignal"))?;
            let begun = || {
                if token.is_aborted() {
                    return Err(Failure::from(ShellEnvError::Aborted));
                }
                let (mut collection, functions) = match set {
                    Some((contributors, functions)) => {
                        (begin_over(env, &self.core, contributors, execution)?, Some(functions))
                    }
                    None => (begin(env, &self.core, execution)?, None),
                };
                let reference = JsRef::new(env, execution)
                    .map_err(|thrown| Field::named(env, Kind::Option, execution, "execution").threw(thrown))?;
                let at_once = match (answer_all, functions) {
                    (Some(answer_all), Some(functions)) => {
                        let signal = match signal {
                            Some(signal) => signal.raw(),
                            None => js::undefined(env).map_err(|thrown| signal_field.threw(thrown))?,
                        };
                        AnsweredAtOnce::call(env, answer_all, [functions, execution, signal], true)
                            .apply(&mut collection)?
                    }
                    _ => AtOnce::Answered,
                };
                Ok((collection, Arc::new(reference), at_once))
            };
            match begun() {
                Ok((collection, reference, at_once)) => {
                    Ok((collection, reference, at_once, inherited_path, timeout, token, listener))
                }
                Err(failure) => {
                    listener.detach(env);
                    Err(failure)
                }
            }
        })();
        let (collection, execution, at_once, inherited_path, timeout, token, listener) = match started {
            Ok(started) => started,
            Err(failure) => return rejected(env, failure),
        };
        let pending = match at_once {
            // Every resolver answered at once: no thread to visit.
            AtOnce::Answered if collection.next_contributor().is_none() => {
                listener.detach(env);
                let snapshot =
                    delivery.deliver(env, &self.core, collection.finish_sorted(inherited_path.as_deref()))?;
                return Ok(JsRaw(js::settled_promise(env, Ok(snapshot.0))?));
            }
            AtOnce::Answered => None,
            AtOnce::Pending(promise) => Some(promise),
        };
        let answer = resolver::answers(pending, Arc::clone(&execution));
        let task = async move {
            let snapshot = collection.resolve_all(timeout, token, answer).await;
            Ok(snapshot.map(|collection| collection.finish_sorted(inherited_path.as_deref())))
        };
        let core = Arc::clone(&self.core);
        let promise = env.spawn_future_with_callback(task, move |env, result| {
            listener.detach(env);
            drop(execution);
            match result {
                Ok(snapshot) => delivery.deliver(env, &core, snapshot),
                Err(failure) => Err(failure.into_js(env)),
            }
        })?;
        Ok(JsRaw(promise.raw()))
    }

    /// The current contributor set and its resolvers' own functions as a JS
    /// array, made again only when the registry changed.
    pub fn functions(&self, env: &Env) -> Result<(ContributorSet<JsResolver>, Raw)> {
        let generation = self.core.generation();
        let mut cache = self.functions.borrow_mut();
        if let Some(kept) = cache.as_ref().filter(|kept| kept.generation == generation) {
            return Ok((kept.contributors.clone(), kept.array.value(env)?));
        }
        let contributors = self.core.contributors();
        let array = js::array_of(env, contributors.iter().map(|contributor| contributor.resolver().resolve(env)))?;
        *cache = Some(Functions { generation, contributors: contributors.clone(), array: JsRef::new(env, array)? });
        Ok((contributors, array))
    }
}

/// A command directory that cannot be trusted with a place on PATH, and why.
#[napi(object, object_from_js = false)]
pub struct UntrustedDirectory {
    /// The contributor that declared it.
    pub contributor: String,
    /// The directory as declared.
    pub directory: String,
    /// Why, after the directory's name: `is writable by its group or by
    /// others, …`, `is inside /tmp, which is …`.
    pub reason: String,
}

impl From<dsh_shell_env_core::registry::LeftOut> for UntrustedDirectory {
    fn from(entry: dsh_shell_env_core::registry::LeftOut) -> Self {
        Self { contributor: entry.contributor, directory: entry.directory, reason: entry.reason }
    }
}

/// A plugin-declared variable, as `list()` returns it.
#[napi(object)]
pub struct ShellEnvListEntry {
    /// The declaring contributor.
    pub contributor: String,
    /// What the variable holds.
    pub description: String,
    /// The variable name.
    #[napi(ts_type = "DshEnvironmentKey")]
    pub key: String,
}

/// A variable a shell call can receive, built-ins included.
#[napi(object)]
pub struct ShellEnvCatalogEntry {
    /// The variable name.
    #[napi(ts_type = "DshEnvironmentKey")]
    pub key: String,
    /// What it holds.
    pub description: String,
    /// `'built-in'` or the declaring contributor.
    pub owner: String,
    /// When it is present.
    #[napi(ts_type = "VariableAvailability")]
    pub when: String,
}

/// One contributor's command directories.
#[napi(object)]
pub struct ShellEnvCommandDirectories {
    /// The contributor.
    pub contributor: String,
    /// Its directories, in its own order.
    pub directories: Vec<String>,
}

/// Everything a shell call can receive: what `catalog()` returns.
#[napi(object)]
pub struct ShellEnvCatalog {
    /// Every variable, sorted by key.
    pub variables: Vec<ShellEnvCatalogEntry>,
    /// Command directories in contributor-name order.
    pub command_directories: Vec<ShellEnvCommandDirectories>,
}

/// What answering at once left of a collection.
pub enum AtOnce {
    /// Nothing to await: every contributor answered, or the next is to be called.
    Answered,
    /// The next contributor answered with this promise; await it, then go on.
    Pending(Awaited),
}

/// What the JS layer's `answer_all(functions, execution, signal)` returned,
/// read on the JS thread: it calls the resolvers of a collection none of
/// whose contributors has answered yet, in order, and returns their answers
/// packed (see [`packed`]); `[packed, index]` when `signal` fired before
/// `index` (a resolver aborted it: nothing else runs meanwhile); `[packed,
/// index, value, threw]` at the first throw or answer that does not pack.
/// Applied to the collection on any thread ([`AnsweredAtOnce::apply`]).
pub struct AnsweredAtOnce {
    packed: String,
    /// How many answers `packed` holds; `None`: every contributor's.
    answered: Option<usize>,
    ending: Ending,
}

/// Where `answer_all` stopped.
enum Ending {
    /// It did not: every resolver answered packed.
    Nowhere,
    /// Before the next resolver: the signal fired.
    Aborted,
    /// At the next resolver, which threw this (or `answer_all` itself did:
    /// out of stack or memory, put down to the resolver that was to run).
    Threw(napi::Error),
    /// At the next resolver, whose answer does not pack: read as any
    /// answer of a resolver called from Rust is.
    Unpacked(ResolverReturn),
}

impl AnsweredAtOnce {
    /// Calls `answer_all` now, on this JS thread. With `awaits`, a promise
    /// is left to await; without, it fails the collection (as `collect()`
    /// refuses one) and is never asked for its `then`'s result.
    pub fn call(env: &Env, answer_all: Raw, args: [Raw; 3], awaits: bool) -> Self {
        match js::call(env, answer_all, &args) {
            Ok(returned) => Self::read(env, returned, awaits),
            Err(thrown) => Self::threw(thrown),
        }
    }

    fn threw(thrown: napi::Error) -> Self {
        Self { packed: String::new(), answered: Some(0), ending: Ending::Threw(thrown) }
    }

    /// Reads what `answer_all` returned (see the type's documentation).
    fn read(env: &Env, returned: Raw, awaits: bool) -> Self {
        let read = || -> Result<Self> {
            if js::type_of(env, returned) == ValueType::String {
                return Ok(Self { packed: js::lossy_string(env, returned)?, answered: None, ending: Ending::Nowhere });
            }
            let field = |index| js::element(env, returned, index);
            let packed = js::lossy_string(env, field(0)?)?;
            let answered = Some(js::number(env, field(1)?)? as usize);
            let ending = if js::array_length(env, returned)? == 2 {
                Ending::Aborted
            } else if js::boolean(env, field(3)?)? {
                // SAFETY: a live value of the current scope, just read from the array.
                let thrown = unsafe { Unknown::from_raw_unchecked(env.raw(), field(2)?) };
                Ending::Threw(napi::Error::from_unknown_without_coercion(thrown))
            } else {
                let answer = js::element(env, field(2)?, 0)?;
                Ending::Unpacked(if awaits {
                    // SAFETY: a live value of the current scope, read on this thread.
                    unsafe { ResolverReturn::from_napi_value(env.raw(), answer)? }
                } else {
                    ResolverReturn::Ready(resolver::read_outcome(env, answer))
                })
            };
            Ok(Self { packed, answered, ending })
        };
        read().unwrap_or_else(Self::threw)
    }

    /// Checks and adds each answer to `collection`, in order; what is left
    /// to await, if anything.
    pub fn apply(self, collection: &mut Collection<JsResolver>) -> Read<AtOnce> {
        let next = |collection: &Collection<JsResolver>| {
            collection.next_contributor().map(|next| next.name().to_string()).unwrap_or_default()
        };
        let mut answers = Answers::new(&self.packed);
        for _ in 0..self.answered.unwrap_or(usize::MAX) {
            if collection.next_contributor().is_none() {
                break;
            }
            let values = answers.next_answer().map_err(|malformed| {
                Failure::from(ShellEnvError::InvalidResult {
                    contributor: next(collection),
                    found: malformed.to_string(),
                })
            })?;
            collection.accept_next_text(values)?;
        }
        let outcome = match self.ending {
            Ending::Nowhere => return Ok(AtOnce::Answered),
            Ending::Aborted => return Err(ShellEnvError::Aborted.into()),
            Ending::Threw(thrown) => Outcome::Threw(thrown),
            Ending::Unpacked(ResolverReturn::Pending(promise)) => return Ok(AtOnce::Pending(promise)),
            Ending::Unpacked(ResolverReturn::Ready(outcome)) => outcome,
        };
        let values = outcome.into_values(&next(collection))?;
        collection.accept_next(values)?;
        Ok(AtOnce::Answered)
    }
}

/// A JS value as the read result of a threadsafe call of `answer_all`
/// (bound to its arguments), which awaits a promise it stopped at.
pub struct AwaitedAtOnce(pub AnsweredAtOnce);

impl FromNapiValue for AwaitedAtOnce {
    unsafe fn from_napi_value(env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        Ok(Self(AnsweredAtOnce::read(&Env::from_raw(env), value, true)))
    }
}

impl AwaitedAtOnce {
    /// What a threadsafe call of `answer_all` came to: its answers, or its
    /// own throw.
    pub fn of(called: std::result::Result<Self, napi::Error>) -> AnsweredAtOnce {
        called.map_or_else(AnsweredAtOnce::threw, |awaited| awaited.0)
    }
}

/// Starts a collection: validates the execution and reads the built-ins.
pub fn begin(env: &Env, core: &CoreRegistry, execution: Raw) -> Read<Collection<JsResolver>> {
    Ok(Collection::begin(core, agent_session(env, execution)?)?)
}

/// [`begin`] over `contributors`, a set [`ShellEnvRegistry::functions`] gave.
pub fn begin_over(
    env: &Env,
    core: &CoreRegistry,
    contributors: ContributorSet<JsResolver>,
    execution: Raw,
) -> Read<Collection<JsResolver>> {
    Ok(Collection::begin_over(core, contributors, agent_session(env, execution)?)?)
}

/// The calling agent's session id, checked: `None` for no agent.
fn agent_session(env: &Env, execution: Raw) -> Read<Option<ResolvedValue>> {
    agent_session_read(env, execution, None)
}

/// [`agent_session`], taking the id from `read` when the JS layer read it
/// (see [`ShellEnvRegistry::collect_packed`]): a string is the id, `null`
/// means no agent, anything else is read here.
fn agent_session_read(env: &Env, execution: Raw, read: Option<Raw>) -> Read<Option<ResolvedValue>> {
    if !js::is_object(env, execution) {
        return Err(ShellEnvError::InvalidExecution { found: Some(js::describe(env, execution)) }.into());
    }
    let read = read.map(|read| Field::named(env, Kind::Agent, read, "execution.agent.session.header.id"));
    let session_id = match read.as_ref().map(|read| (read, read.type_of())) {
        Some((_, ValueType::Null)) => None,
        Some((id, ValueType::String)) => Some(match id.text_or_ill_formed()? {
            Ok(text) => ResolvedValue::String(text),
            Err(ill_formed) => ResolvedValue::IllFormed(ill_formed),
        }),
        _ => session_id(&Field::named(env, Kind::Agent, execution, "execution"))?,
    };
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
    Ok(session_id)
}

/// `execution.agent.session.header.id` when `execution.agent` is set.
fn session_id(execution: &Field<'_>) -> Read<Option<ResolvedValue>> {
    let Some(agent) = execution.get("agent")? else { return Ok(None) };
    if agent.type_of() == ValueType::Null {
        return Ok(None);
    }
    let Some(session) = agent.get("session")? else { return Ok(Some(ResolvedValue::Other("undefined".into()))) };
    let Some(header) = session.get("header")? else { return Ok(Some(ResolvedValue::Other("undefined".into()))) };
    Ok(Some(match header.get("id")? {
        Some(id) if id.type_of() == ValueType::String => match id.text_or_ill_formed()? {
            Ok(id) => ResolvedValue::String(id),
            Err(ill_formed) => ResolvedValue::IllFormed(ill_formed),
        },
        Some(other) => ResolvedValue::Other(other.describe()),
        None => ResolvedValue::Other("undefined".into()),
    }))
}

/// The options object: `None` for `undefined` or `null`; anything but an
/// object (an array, a function, a primitive) is an invalid option.
fn options_object<'a>(env: &'a Env, options: Option<Unknown>) -> Read<Option<Field<'a>>> {
    let Some(options) = options.map(|options| options.raw()) else { return Ok(None) };
    let options = Field::container(env, Kind::Option, options, "options");
    match options.type_of() {
        ValueType::Undefined | ValueType::Null => Ok(None),
        _ => {
            options.options_object("an object")?;
            Ok(Some(options))
        }
    }
}

/// `options.dshHome`: a string (checked by the core), or `undefined`/`null` for the default.
fn configured_home(options: &Field<'_>) -> Read<Option<String>> {
    match options.get("dshHome")? {
        Some(home) if home.type_of() != ValueType::Null => {
            let home = home.string()?;
            check_configured("dshHome", &home)?;
            Ok(Some(home))
        }
        _ => Ok(None),
    }
}

/// The `inheritedPath` option, else `PATH` of the caller's environment
/// (`parentEnv`, which the package passes as the caller's `process.env`).
/// The option is always checked; the caller's environment is read only when
/// the snapshot will hold a PATH (`needed`), since reading `process.env`
/// costs more than the rest of a small collection.
fn inherited_path(
    env: &Env,
    options: Option<&Field<'_>>,
    parent_env: Option<Unknown>,
    needed: bool,
) -> Read<Option<String>> {
    if let Some(path) = options.map(|options| options.get("inheritedPath")).transpose()?.flatten() {
        let path = path.string()?;
        check_inherited_path(&path)?;
        return Ok(Some(path));
    }
    if !needed {
        return Ok(None);
    }
    parent_env_option(env, parent_env)?.lenient_string("PATH")
}

/// The caller's environment for the entry points whose `parentEnv` only the
/// package's own wrapper passes: a wrong one is an invalid `parentEnv` option.
fn parent_env_option<'a>(env: &'a Env, parent_env: Option<Unknown>) -> Read<Field<'a>> {
    read::caller_env(env, Kind::Option, "parentEnv", parent_env, "an object")
}

/// The `timeoutMs` option, read as a number; the core checks it.
fn read_timeout(options: Option<&Field<'_>>) -> Read<Duration> {
    let millis = match options.map(|options| options.get("timeoutMs")).transpose()?.flatten() {
        Some(value) => Some(value.number("a positive finite number of milliseconds")?),
        None => None,
    };
    Ok(collect_timeout(millis)?)
}

/// `options.profile`: `{ name, dir }`, both strings; the core checks them.
fn read_profile(profile: &Field<'_>) -> Read<Profile> {
    profile.options_object("an object { name, dir }")?;
    for field in profile.own_field_names()? {
        check_profile_field(&field)?;
    }
    let field = |name: &'static str| -> Read<String> {
        match profile.get(name)? {
            Some(value) if value.type_of() == ValueType::String => value.text(),
            _ => Err(profile.field(name).invalid("must be a string")),
        }
    };
    let name = field("name")?;
    let dir = field("dir")?;
    Ok(Profile::new(name, dir)?)
}

/// Reads `{ name, variables, commandDirectories?, resolve }` into a core
/// declaration. Only types and text are checked here; the core validates the
/// rest. A getter or Proxy trap that throws becomes a coded error whose
/// `cause` is the thrown value.
fn read_declaration(env: &Env, contributor: Raw, reader: Option<Raw>) -> Read<Declaration<JsResolver>> {
    if !js::is_object(env, contributor) {
        return Err(ShellEnvError::InvalidName { found: Some(js::describe(env, contributor)) }.into());
    }
    let name = match Field::container(env, Kind::Name, contributor, "contributor").get("name")? {
        Some(name) if name.type_of() == ValueType::String => {
            name.text_or_ill_formed()?.map_err(|_| name.invalid("a string with a lone surrogate"))?
        }
        Some(name) => return Err(name.invalid(name.describe())),
        None => return Err(ShellEnvError::InvalidName { found: Some("undefined".into()) }.into()),
    };
    let fields = Field::container(env, Kind::Contributor(&name), contributor, "contributor");
    let invalid =
        |reason: String| Failure::from(ShellEnvError::InvalidContributor { contributor: name.clone(), reason });

    let variables_value = match fields.get("variables")? {
        Some(value) if value.is_options_object()? => value,
        _ => return Err(fields.field("variables").invalid("must be an object of { [DSH_KEY]: { description } }")),
    };
    let mut variables = Vec::new();
    for (raw, key) in variables_value.own_keys()? {
        let js::Key::Name(key) = key else {
            // An ill-formed or symbol key is no DSH_ key: the core says so.
            variables.push((key.display().to_string(), None));
            continue;
        };
        let description = match variables_value.entry(raw, &key)?.get("description")? {
            Some(description) if description.type_of() == ValueType::String => Some(
                description.text_or_ill_formed()?.map_err(|ill| invalid(format!("the description of {key} {ill}")))?,
            ),
            _ => None,
        };
        variables.push((key, description));
    }

    let mut command_directories = Vec::new();
    if let Some(directories) = fields.get("commandDirectories")? {
        if !directories.is_array() {
            return Err(directories.invalid("must be an array of absolute paths"));
        }
        let invalid_directory = |directory: String, reason: &'static str| {
            Failure::from(ShellEnvError::InvalidDirectory {
                contributor: name.clone(),
                directory,
                reason: reason.into(),
            })
        };
        // Every index up to `length`: a hole is an invalid directory, and
        // extra named properties on the array are not directories.
        command_directories = directories.elements(|directory| {
            if directory.type_of() != ValueType::String {
                return Err(invalid_directory(format!("<{}>", directory.describe()), "must be a string"));
            }
            directory.text_or_ill_formed()?.map_err(|_| invalid_directory(directory.lossy_text(), ILL_FORMED))
        })?;
    }

    let resolve = fields
        .get("resolve")?
        .filter(Field::is_function)
        .ok_or_else(|| fields.field("resolve").invalid("must be a function (execution) => values"))?;
    let resolver = JsResolver::new(env, resolve.raw(), reader).map_err(|thrown| resolve.threw(thrown))?;
    Ok(Declaration { name, variables, command_directories, resolver })
}

/// The snapshot as a frozen plain object, keys sorted.
fn frozen(env: &Env, snapshot: &SortedValues) -> Result<JsRaw> {
    let object = js::object_of_strings(env, snapshot.iter())?;
    js::freeze(env, object)?;
    Ok(JsRaw(object))
}

/// How a collection hands its snapshot to JS.
#[derive(Debug, Clone, Copy)]
enum Delivery {
    /// As the frozen object itself, built here.
    Frozen,
    /// Packed (see [`packed`]), for the JS layer to build the object from.
    Packed,
}

impl Delivery {
    fn deliver(self, env: &Env, core: &CoreRegistry, snapshot: SortedValues) -> Result<JsRaw> {
        match self {
            Delivery::Frozen => frozen(env, &snapshot),
            Delivery::Packed => {
                Ok(JsRaw(env.create_string(packed::pack_snapshot(&snapshot, core.has_left_out()))?.raw()))
            }
        }
    }
}
