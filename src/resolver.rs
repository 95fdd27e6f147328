//! A registered JS resolver and how its answers are read.
//!
//! Each resolver is held twice: a function reference for synchronous
//! `collect()` on the JS thread, and a threadsafe function so Rust can call it
//! from its own threads (`collectAsync()`, and `execute()` collecting right
//! before a spawn). Whatever the resolver does — throw, reject, return a
//! getter that throws — ends up as an [`Outcome`], never as a pending
//! exception or a fatal one.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread::{self, ThreadId};

use dsh_shell_env_core::packed;
use dsh_shell_env_core::registry::Contributor;
use dsh_shell_env_core::snapshot::ResolvedValue;
use dsh_shell_env_core::ShellEnvError;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi::{sys, ValueType};
use tokio::sync::oneshot;

use crate::errors::Failure;
use crate::js::{self, Raw};

/// The resolver handle stored in the core registry.
pub struct JsResolver {
    /// The contributor's own function, for the JS layer to call itself.
    resolve: FunctionRef<Unknown<'static>, Unknown<'static>>,
    /// What a call from Rust calls: `resolve`, or the JS layer's answer
    /// reader bound to it, which hands the answer back packed.
    function: FunctionRef<Unknown<'static>, Unknown<'static>>,
    threadsafe: Threadsafe,
}

/// Weak (does not keep the event loop alive) and callee-unhandled: a throw
/// comes back as an `Err` through `call_async_catch`, never a fatal exception.
type ResolverTsfn<Return> = ThreadsafeFunction<Arc<JsRef>, Return, ExecutionArg, Status, false, true>;

/// The threadsafe function over [`JsResolver::function`], typed by what it returns.
enum Threadsafe {
    /// The resolver itself: its answer as it returned it.
    Raw(ResolverTsfn<ResolverReturn>),
    /// The reader bound to it: an answer packed, or boxed as it was.
    Packed(ResolverTsfn<PackedReturn>),
}

impl JsResolver {
    /// Wraps a JS function for both calling paths. With `reader` (the JS
    /// layer's `answerOf(resolve, execution)`), calls from Rust go through
    /// it and read the packed answer it returns (see the core's `packed`).
    pub fn new(env: &Env, resolve: Raw, reader: Option<Raw>) -> Result<Self> {
        let function = match reader {
            Some(reader) => js::call_method(env, reader, "bind", &[js::undefined(env)?, resolve])?,
            None => resolve,
        };
        let threadsafe = match reader {
            Some(_) => Threadsafe::Packed(threadsafe(env, function)?),
            None => Threadsafe::Raw(threadsafe(env, function)?),
        };
        let reference = |value: Raw| -> Result<FunctionRef<Unknown<'static>, Unknown<'static>>> {
            // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
            unsafe { Function::<Unknown<'static>, Unknown<'static>>::from_napi_value(env.raw(), value)? }.create_ref()
        };
        Ok(Self { resolve: reference(resolve)?, function: reference(function)?, threadsafe })
    }

    /// The contributor's own function (JS thread only).
    pub fn resolve(&self, env: &Env) -> Result<Raw> {
        Ok(self.resolve.borrow_back(env)?.raw())
    }

    /// Calls the resolver on the JS thread (synchronous `collect()`).
    pub fn call_sync(&self, env: &Env, execution: Raw) -> Outcome {
        let call = || -> Result<Raw> {
            let function = self.function.borrow_back(env)?;
            js::call(env, function.raw(), &[execution])
        };
        match call() {
            Ok(value) if matches!(self.threadsafe, Threadsafe::Packed(_)) => read_packed(env, value),
            Ok(value) => read_outcome(env, value),
            Err(thrown) => Outcome::Threw(thrown),
        }
    }

    /// Calls the resolver from any thread; the JS call itself runs on the
    /// resolver's JS thread. A returned promise is awaited by the caller.
    pub async fn call_async(&self, execution: Arc<JsRef>) -> std::result::Result<ResolverReturn, napi::Error> {
        match &self.threadsafe {
            Threadsafe::Raw(function) => function.call_async_catch(execution).await,
            Threadsafe::Packed(function) => function.call_async_catch(execution).await.map(|packed| packed.0),
        }
    }
}

/// A weak, callee-unhandled threadsafe function over `function`, whose
/// calls are read as `Return`.
fn threadsafe<Return: FromNapiValue + 'static>(env: &Env, function: Raw) -> Result<ResolverTsfn<Return>> {
    // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
    let callable = unsafe { Function::<ExecutionArg, Return>::from_napi_value(env.raw(), function)? };
    callable
        .build_threadsafe_function::<Arc<JsRef>>()
        .callee_handled::<false>()
        .weak::<true>()
        .build_callback(|context| Ok(ExecutionArg(context.value.value(&context.env)?)))
}

/// `contributor`'s answer for `execution`, from any thread: the resolver's
/// values once it returned or its promise settled, or the error naming the
/// contributor. What the core's `Collection::resolve_all` awaits.
pub async fn answer(
    contributor: Arc<Contributor<JsResolver>>,
    execution: Arc<JsRef>,
) -> std::result::Result<Vec<(String, ResolvedValue)>, Failure> {
    let outcome = match contributor.resolver().call_async(execution).await {
        Err(thrown) => Outcome::Threw(thrown),
        Ok(ResolverReturn::Ready(outcome)) => outcome,
        Ok(ResolverReturn::Pending(promise)) => promise.await,
    };
    outcome.into_values(contributor.name())
}

/// One contributor's answer, awaited on any thread.
pub type Answer = Pin<Box<dyn Future<Output = std::result::Result<Vec<(String, ResolvedValue)>, Failure>> + Send>>;

/// The answers of the contributors a collection still waits for, for the
/// core's `Collection::resolve_all`: the first from `pending` when given (the
/// promise the next contributor answered with at once), the others by
/// calling their resolvers from any thread ([`answer`]).
pub fn answers(
    mut pending: Option<Awaited>,
    execution: Arc<JsRef>,
) -> impl FnMut(Arc<Contributor<JsResolver>>) -> Answer {
    move |contributor| {
        let first = pending.take();
        let execution = Arc::clone(&execution);
        Box::pin(async move {
            match first {
                Some(promise) => promise.await.into_values(contributor.name()),
                None => answer(contributor, execution).await,
            }
        })
    }
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
            Outcome::Threw(cause) => Err(failed(&contributor, cause)),
        }
    }
}

/// The error for `contributor`'s resolver having thrown `cause` (or
/// rejected with it), which it keeps as `.cause`.
pub fn failed(contributor: &str, cause: napi::Error) -> Failure {
    let message = if cause.reason.is_empty() { "threw".to_string() } else { cause.reason.clone() };
    Failure::caused_by(ShellEnvError::ResolverFailed { contributor: contributor.to_string(), message }, cause)
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
    Pending(Awaited),
}

impl FromNapiValue for ResolverReturn {
    unsafe fn from_napi_value(raw_env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        let env = Env::from_raw(raw_env);
        Ok(match read_outcome(&env, value) {
            Outcome::Thenable => {
                match js::to_native_promise(&env, value).and_then(|native| Awaited::new(&env, native)) {
                    Ok(promise) => ResolverReturn::Pending(promise),
                    Err(thrown) => ResolverReturn::Ready(Outcome::Threw(thrown)),
                }
            }
            outcome => ResolverReturn::Ready(outcome),
        })
    }
}

/// What the JS layer's answer reader returned: an answer packed as the
/// core's `packed` module reads it, or the resolver's answer boxed in a
/// one-element array, as it was, for [`read_outcome`] (a promise, or an
/// answer it does not pack: those are invalid, but for a rare valid one such
/// as an object with a non-enumerable symbol key).
pub fn read_packed(env: &Env, value: Raw) -> Outcome {
    let read = || -> Result<Outcome> {
        if js::type_of(env, value) == ValueType::String {
            // The reader packs only well-formed text, so the UTF-8 copy is exact.
            let text = js::lossy_string(env, value)?;
            return Ok(match packed::Answers::new(&text).next_answer() {
                Ok(values) => Outcome::Values(
                    values
                        .into_iter()
                        .map(|(key, value)| (key.to_string(), ResolvedValue::String(value.to_string())))
                        .collect(),
                ),
                Err(malformed) => Outcome::Invalid(malformed.to_string()),
            });
        }
        Ok(read_outcome(env, js::element(env, value, 0)?))
    };
    read().unwrap_or_else(Outcome::Threw)
}

/// [`read_packed`] as the threadsafe call returns it: a boxed promise is
/// awaited as a raw one would be.
pub struct PackedReturn(ResolverReturn);

impl FromNapiValue for PackedReturn {
    unsafe fn from_napi_value(raw_env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        let env = Env::from_raw(raw_env);
        if js::type_of(&env, value) == ValueType::String {
            return Ok(PackedReturn(ResolverReturn::Ready(read_packed(&env, value))));
        }
        match js::element(&env, value, 0) {
            // SAFETY: forwarded from this function's own contract.
            Ok(answer) => Ok(PackedReturn(unsafe { ResolverReturn::from_napi_value(raw_env, answer)? })),
            Err(thrown) => Ok(PackedReturn(ResolverReturn::Ready(Outcome::Threw(thrown)))),
        }
    }
}

/// A settled promise's value, read on the JS thread.
pub struct Settled(pub Outcome);

/// A resolver's promise, awaited from any thread: what it settled with, read
/// on its JS thread.
///
/// napi-rs's `Promise` fails with "oneshot canceled" when the engine collects
/// a promise before it settles (with it go the callbacks holding the sender).
/// Nothing can settle a promise that nothing reaches, so here such a promise
/// stays pending, as any promise that never settles does, and the
/// collection's timeout or abort ends the wait.
pub struct Awaited(Option<oneshot::Receiver<Outcome>>);

impl Awaited {
    /// Attaches to `promise`, a native promise, on its JS thread.
    pub fn new(env: &Env, promise: Raw) -> Result<Self> {
        let (sender, receiver) = oneshot::channel();
        let fulfilled = Rc::new(Cell::new(Some(sender)));
        let rejected = Rc::clone(&fulfilled);
        // SAFETY: the Node-API contract (js.rs); `promise` is a native promise.
        let promise = unsafe { PromiseRaw::<Settled>::from_napi_value(env.raw(), promise)? };
        promise
            .then(move |settled| {
                if let Some(sender) = fulfilled.take() {
                    // A dropped receiver: the collection no longer waits.
                    let _ = sender.send(settled.value.0);
                }
                Ok(())
            })?
            .catch(move |thrown: CallbackContext<Unknown>| {
                if let Some(sender) = rejected.take() {
                    // As above. A promise may reject with any value, primitives too.
                    let _ = sender.send(Outcome::Threw(napi::Error::from_unknown_without_coercion(thrown.value)));
                }
                Ok(())
            })?;
        Ok(Self(Some(receiver)))
    }
}

impl Future for Awaited {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Outcome> {
        let Some(receiver) = self.0.as_mut() else { return Poll::Pending };
        match Pin::new(receiver).poll(context) {
            Poll::Ready(Ok(outcome)) => Poll::Ready(outcome),
            // Collected unsettled (see the type's documentation); a receiver
            // must not be polled again once it has answered.
            Poll::Ready(Err(_)) => {
                self.0 = None;
                Poll::Pending
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl FromNapiValue for Settled {
    unsafe fn from_napi_value(raw_env: sys::napi_env, value: sys::napi_value) -> Result<Self> {
        Ok(Settled(read_outcome(&Env::from_raw(raw_env), value)))
    }
}

/// A reference to a JS object, made on its JS thread and used only there:
/// the caller's `execution`, so resolvers called from other threads receive
/// the very same object, or the array of functions a registry keeps.
pub struct JsRef {
    reference: sys::napi_ref,
    env: sys::napi_env,
    owner: ThreadId,
}

// SAFETY: the reference is only dereferenced and deleted on its owning JS
// thread (checked against `owner`); other threads merely move the handle.
unsafe impl Send for JsRef {}
// SAFETY: as for `Send` above.
unsafe impl Sync for JsRef {}

impl JsRef {
    /// References `value` from the current JS thread.
    pub fn new(env: &Env, value: Raw) -> Result<Self> {
        let reference = js::reference(env, value)?;
        Ok(Self { reference, env: env.raw(), owner: thread::current().id() })
    }

    /// The referenced object (JS thread only).
    pub fn value(&self, env: &Env) -> Result<Raw> {
        js::dereference(env, self.reference)
    }
}

impl Drop for JsRef {
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
