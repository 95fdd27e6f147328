//! A registered JS resolver and how its answers are read.
//!
//! Each resolver is held twice: a function reference for synchronous
//! `collect()` on the JS thread, and a threadsafe function so Rust can call it
//! from its own threads (`collectAsync()`, and `execute()` collecting right
//! before a spawn). Whatever the resolver does — throw, reject, return a
//! getter that throws — ends up as an [`Outcome`], never as a pending
//! exception or a fatal one.

use std::sync::Arc;
use std::thread::{self, ThreadId};

use dsh_shell_env_core::registry::Contributor;
use dsh_shell_env_core::snapshot::ResolvedValue;
use dsh_shell_env_core::ShellEnvError;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi::{sys, ValueType};

use crate::errors::Failure;
use crate::js::{self, Raw};

/// The resolver handle stored in the core registry.
pub struct JsResolver {
    function: FunctionRef<Unknown<'static>, Unknown<'static>>,
    threadsafe: ResolverTsfn,
}

/// Weak (does not keep the event loop alive) and callee-unhandled: a throw
/// comes back as an `Err` through `call_async_catch`, never a fatal exception.
type ResolverTsfn = ThreadsafeFunction<Arc<ExecutionRef>, ResolverReturn, ExecutionArg, Status, false, true>;

impl JsResolver {
    /// Wraps a JS function for both calling paths.
    pub fn new(env: &Env, function: Raw) -> Result<Self> {
        // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
        let callable = unsafe { Function::<ExecutionArg, ResolverReturn>::from_napi_value(env.raw(), function)? };
        let threadsafe = callable
            .build_threadsafe_function::<Arc<ExecutionRef>>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(|context| Ok(ExecutionArg(context.value.value(&context.env)?)))?;
        // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
        let function = unsafe { Function::<Unknown<'static>, Unknown<'static>>::from_napi_value(env.raw(), function)? };
        Ok(Self { function: function.create_ref()?, threadsafe })
    }

    /// Calls the resolver on the JS thread (synchronous `collect()`).
    pub fn call_sync(&self, env: &Env, execution: Raw) -> Outcome {
        let call = || -> Result<Raw> {
            let function = self.function.borrow_back(env)?;
            js::call(env, function.raw(), &[execution])
        };
        match call() {
            Ok(value) => read_outcome(env, value),
            Err(thrown) => Outcome::Threw(thrown),
        }
    }

    /// Calls the resolver from any thread; the JS call itself runs on the
    /// resolver's JS thread. A returned promise is awaited by the caller.
    pub async fn call_async(&self, execution: Arc<ExecutionRef>) -> std::result::Result<ResolverReturn, napi::Error> {
        self.threadsafe.call_async_catch(execution).await
    }
}

/// `contributor`'s answer for `execution`, from any thread: the resolver's
/// values once it returned or its promise settled, or the error naming the
/// contributor. What the core's `Collection::resolve_all` awaits.
pub async fn answer(
    contributor: Arc<Contributor<JsResolver>>,
    execution: Arc<ExecutionRef>,
) -> std::result::Result<Vec<(String, ResolvedValue)>, Failure> {
    let outcome = match contributor.resolver().call_async(execution).await {
        Err(thrown) => Outcome::Threw(thrown),
        Ok(ResolverReturn::Ready(outcome)) => outcome,
        Ok(ResolverReturn::Pending(promise)) => promise.await.map_or_else(Outcome::Threw, |settled| settled.0),
    };
    outcome.into_values(contributor.name())
}

/// What a resolver produced, read on the JS thread.
pub enum Outcome {
    /// Own enumerable properties of a plain object, in property order.
    Values(Vec<(String, ResolvedValue)>),
    /// A promise or other thenable.
    Thenable,
    /// Anything but a plain object, described for the message.
    Invalid(String),
    /// The resolver threw or rejected, or reading its result threw.
    Threw(napi::Error),
}

impl Outcome {
    /// The values, or the error naming this contributor.
    pub fn into_values(self, contributor: &str) -> std::result::Result<Vec<(String, ResolvedValue)>, Failure> {
        let contributor = contributor.to_string();
        match self {
            Outcome::Values(values) => Ok(values),
            Outcome::Thenable => Err(ShellEnvError::AsyncResolver { contributor }.into()),
            Outcome::Invalid(found) => Err(ShellEnvError::InvalidResult { contributor, found }.into()),
            Outcome::Threw(cause) => {
                let message = if cause.reason.is_empty() { "threw".to_string() } else { cause.reason.clone() };
                Err(Failure::caused_by(ShellEnvError::ResolverFailed { contributor, message }, cause))
            }
        }
    }
}

/// Reads a resolver's return value. Never leaves an exception pending.
pub fn read_outcome(env: &Env, value: Raw) -> Outcome {
    let read = || -> Result<Outcome> {
        if js::is_thenable(env, value)? {
            return Ok(Outcome::Thenable);
        }
        if !js::is_plain_object(env, value)? {
            return Ok(Outcome::Invalid(js::describe(env, value)));
        }
        let mut values = Vec::new();
        for (raw, key) in js::own_keys(env, value, true)? {
            let js::Key::Name(key) = key else {
                // A symbol or ill-formed key is never a declared one: the core
                // reports it as undeclared, without its value being read.
                values.push((key.display().to_string(), ResolvedValue::Other("unread".into())));
                continue;
            };
            let property = js::get_key(env, value, raw)?;
            let value = match js::type_of(env, property) {
                ValueType::String => match js::string(env, property)? {
                    Ok(text) => ResolvedValue::String(text),
                    Err(ill_formed) => ResolvedValue::IllFormed(ill_formed),
                },
                _ => ResolvedValue::Other(js::describe(env, property)),
            };
            values.push((key, value));
        }
        Ok(Outcome::Values(values))
    };
    read().unwrap_or_else(Outcome::Threw)
}

/// What the threadsafe call returns: an answer, or a promise of one.
pub enum ResolverReturn {
    /// The resolver answered synchronously.
    Ready(Outcome),
    /// The resolver returned a thenable; await it.
    Pending(Promise<Settled>),
}

impl FromNapiValue for ResolverReturn {
    unsafe fn from_napi_value(raw_env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        let env = Env::from_raw(raw_env);
        Ok(match read_outcome(&env, value) {
            Outcome::Thenable => {
                let promise = js::to_native_promise(&env, value)
                    // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
                    .and_then(|native| unsafe { Promise::<Settled>::from_napi_value(raw_env, native) });
                match promise {
                    Ok(promise) => ResolverReturn::Pending(promise),
                    Err(thrown) => ResolverReturn::Ready(Outcome::Threw(thrown)),
                }
            }
            outcome => ResolverReturn::Ready(outcome),
        })
    }
}

/// A settled promise's value, read on the JS thread.
pub struct Settled(pub Outcome);

impl FromNapiValue for Settled {
    unsafe fn from_napi_value(raw_env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        Ok(Settled(read_outcome(&Env::from_raw(raw_env), value)))
    }
}

/// A reference to the caller's `execution` object, so resolvers called from
/// other threads receive the very same object.
pub struct ExecutionRef {
    reference: sys::napi_ref,
    env: sys::napi_env,
    owner: ThreadId,
}

// SAFETY: the reference is only dereferenced and deleted on its owning JS
// thread (checked against `owner`); other threads merely move the handle.
unsafe impl Send for ExecutionRef {}
// SAFETY: as for `Send` above.
unsafe impl Sync for ExecutionRef {}

impl ExecutionRef {
    /// References `execution` from the current JS thread.
    pub fn new(env: &Env, execution: Raw) -> Result<Self> {
        let reference = js::reference(env, execution)?;
        Ok(Self { reference, env: env.raw(), owner: thread::current().id() })
    }

    /// The referenced object (JS thread only).
    pub fn value(&self, env: &Env) -> Result<Raw> {
        js::dereference(env, self.reference)
    }
}

impl Drop for ExecutionRef {
    fn drop(&mut self) {
        // Only the owning JS thread may touch the reference. A last drop
        // elsewhere (a timed-out call still queued when its environment was
        // torn down) leaks it rather than corrupt the engine's handles.
        if thread::current().id() == self.owner {
            // On the owning JS thread (checked above), whose `env` made the
            // reference; deleted once (this drop). A refused deletion leaves
            // nothing to do.
            let _ = js::unreference(&Env::from_raw(self.env), self.reference);
        }
    }
}

/// The argument passed to the resolver: the referenced execution.
pub struct ExecutionArg(Raw);

impl ToNapiValue for ExecutionArg {
    unsafe fn to_napi_value(_env: sys::napi_env, value: Self) -> Result<sys::napi_value> {
        Ok(value.0)
    }
}
