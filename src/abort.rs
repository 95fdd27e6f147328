//! Bridges a JS `AbortSignal` to the core's [`AbortToken`]: the signal's
//! listener fires it, and is removed again once the operation is over.

use dsh_shell_env_core::abort::{self, AbortToken};
use napi::bindgen_prelude::*;
use napi::{sys, ValueType};

use crate::js::{self, Raw};

/// A listener attached to a caller's signal. Call [`AbortListener::detach`]
/// on the JS thread when the operation ends, so the signal does not keep the
/// operation's state alive.
pub struct AbortListener {
    attached: Option<(sys::napi_ref, sys::napi_ref)>,
}

/// Watches `signal` (`None` or `undefined`: no signal, a token that never
/// fires). An already-aborted signal yields an aborted token. `Ok(None)` means
/// the value is not an `AbortSignal`; the caller reports that in its own terms.
pub fn watch_signal(env: &Env, signal: Option<Raw>) -> Result<Option<(AbortToken, AbortListener)>> {
    let mut listener = AbortListener { attached: None };
    let Some(signal) = signal.filter(|signal| js::type_of(env, *signal) != ValueType::Undefined) else {
        return Ok(Some((AbortToken::never(), listener)));
    };
    let aborted = js::get_defined(env, signal, "aborted")?;
    let add = js::get_defined(env, signal, "addEventListener")?;
    let (Some(aborted), Some(add)) = (aborted, add) else { return Ok(None) };
    if js::type_of(env, aborted) != ValueType::Boolean || js::type_of(env, add) != ValueType::Function {
        return Ok(None);
    }
    // SAFETY: the Node-API contract (js.rs); napi-rs checks the value's type and fails otherwise.
    if unsafe { bool::from_napi_value(env.raw(), aborted)? } {
        return Ok(Some((AbortToken::fired(), listener)));
    }
    let (abort, token) = abort::pair();
    let on_abort = env.create_function_from_closure::<(), (), _>("onAbort", move |_| {
        abort.abort();
        Ok(())
    })?;
    let on_abort = on_abort.raw();
    let options = js::object_of_strings(env, [])?;
    // SAFETY: the Node-API contract (js.rs); converts a value owned here.
    js::set(env, options, "once", unsafe { bool::to_napi_value(env.raw(), true)? })?;
    js::call_method(env, signal, "addEventListener", &[env.create_string("abort")?.raw(), on_abort, options])?;
    listener.attached = Some((js::reference(env, signal)?, js::reference(env, on_abort)?));
    Ok(Some((token, listener)))
}

impl AbortListener {
    /// Removes the listener (JS thread).
    pub fn detach(mut self, env: &Env) {
        let Some((signal, on_abort)) = self.attached.take() else { return };
        let values = js::dereference(env, signal).and_then(|signal| Ok((signal, js::dereference(env, on_abort)?)));
        if let (Ok((signal_value, listener_value)), Ok(abort)) = (values, env.create_string("abort")) {
            // A signal whose removeEventListener throws has nothing left to detach.
            let _ = js::call_method(env, signal_value, "removeEventListener", &[abort.raw(), listener_value]);
        }
        // Refused deletions leave nothing to do: the values go with the `env`.
        let _ = (js::unreference(env, signal), js::unreference(env, on_abort));
    }
}
