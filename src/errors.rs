//! The one place core errors become JS errors: an `Error` with the core's
//! stable `.code`, its message, and `.cause` where there is one.

use dsh_shell_env_core::os_error::{node_errno, os_error_name};
use dsh_shell_env_core::{ExecError, ShellEnvError};
use napi::bindgen_prelude::*;

use crate::js::{self, set, settled_promise, JsRaw, Raw};

/// A core error and the JS value that caused it, carried from wherever the
/// failure happened (possibly a Tokio thread) to the JS thread that reports it.
#[derive(Debug)]
pub struct Failure {
    /// What went wrong.
    pub error: ExecError,
    /// The original JS error (a resolver's throw or rejection), kept as `.cause`.
    /// Boxed: failures travel in every `Result` of the binding, mostly empty.
    pub cause: Option<Box<napi::Error>>,
}

impl Failure {
    /// A failure with the JS error that caused it.
    pub fn caused_by(error: impl Into<ExecError>, cause: napi::Error) -> Self {
        Self { error: error.into(), cause: Some(Box::new(cause)) }
    }

    /// Builds the JS error; return the result from a binding function to throw or reject with it.
    pub fn into_js(self, env: &Env) -> napi::Error {
        let cause = match (self.cause, &self.error) {
            // The thrown value itself, whatever it was (an Error, a string, an object).
            // SAFETY: the Node-API contract (js.rs); converts a value owned here.
            (Some(cause), _) => unsafe { napi::Error::to_napi_value(env.raw(), *cause) }.ok(),
            (None, ExecError::SpawnFailed { program, source }) => spawn_error(env, program, source).ok(),
            (None, ExecError::InvalidWorkdir { path, source } | ExecError::InvalidSpillDir { path, source }) => {
                stat_error(env, path, source).ok()
            }
            (None, _) => None,
        };
        coded_error(env, self.error.code(), &self.error.to_string(), cause)
    }
}

impl<E: Into<ExecError>> From<E> for Failure {
    fn from(error: E) -> Self {
        Self { error: error.into(), cause: None }
    }
}

/// Shorthand: the JS error for a registry error without a cause.
pub fn shell_env_error(env: &Env, error: ShellEnvError) -> napi::Error {
    Failure::from(error).into_js(env)
}

/// `new Error(message)` with `code` and, when given, `cause`. Returned as a
/// `napi::Error` that holds this very object, so throwing or rejecting with it
/// delivers it unchanged.
fn coded_error(env: &Env, code: &str, message: &str, cause: Option<Raw>) -> napi::Error {
    let build = || -> Result<Raw> {
        let code = env.create_string(code)?.raw();
        let message = env.create_string(message)?.raw();
        let error = js::error(env, code, message)?;
        if let Some(cause) = cause {
            set(env, error, "cause", cause)?;
        }
        Ok(error)
    };
    match build() {
        // Without coercion: the coercing conversion stringifies `cause`, which
        // throws for a Symbol (or an object whose toString throws) and would
        // leave that TypeError pending in place of this error.
        Ok(error) => {
            // SAFETY: a live value of the current scope, just returned by Node-API.
            napi::Error::from_unknown_without_coercion(unsafe { Unknown::from_raw_unchecked(env.raw(), error) })
        }
        Err(failed) => failed,
    }
}

/// An `Error` shaped like Node's own spawn errors: `code` (`ENOENT`), `errno`, `syscall`, `path`.
fn spawn_error(env: &Env, program: &str, source: &std::io::Error) -> Result<Raw> {
    let name = errno_of(source).1;
    os_error(env, &format!("spawn {program} {name}"), source, "spawn", program)
}

/// An `Error` shaped like Node's own `fs.stat` errors, for a workdir that
/// cannot be used: `ENOENT: no such file or directory, stat '/x'`.
fn stat_error(env: &Env, path: &str, source: &std::io::Error) -> Result<Raw> {
    let name = errno_of(source).1;
    os_error(env, &format!("{name}: {}, stat '{path}'", os_description(source)), source, "stat", path)
}

/// Node's errno for an OS error (negative, as Node's own errors carry it)
/// and its symbolic name (`UNKNOWN` for one without).
fn errno_of(source: &std::io::Error) -> (i32, &'static str) {
    let code = source.raw_os_error().unwrap_or(0);
    (node_errno(code), os_error_name(code).unwrap_or("UNKNOWN"))
}

/// The OS's description of an error, without Rust's ` (os error N)` suffix.
fn os_description(source: &std::io::Error) -> String {
    let text = source.to_string();
    match text.rfind(" (os error") {
        Some(at) => text[..at].to_lowercase(),
        None => text,
    }
}

/// An OS error as Node shapes it: `code`, a negative `errno`, `syscall`, `path`.
fn os_error(env: &Env, message: &str, source: &std::io::Error, syscall: &str, path: &str) -> Result<Raw> {
    let (errno, name) = errno_of(source);
    let message = env.create_string(message)?.raw();
    let code = env.create_string(name)?.raw();
    let error = js::error(env, code, message)?;
    set(env, error, "errno", env.create_int32(errno)?.raw())?;
    set(env, error, "syscall", env.create_string(syscall)?.raw())?;
    set(env, error, "path", env.create_string(path)?.raw())?;
    Ok(error)
}

/// A promise already rejected with `failure`: async entry points report every
/// failure by rejecting, never by throwing.
pub fn rejected(env: &Env, failure: Failure) -> Result<JsRaw> {
    // SAFETY: the Node-API contract (js.rs); converts a value owned here.
    let reason = unsafe { napi::Error::to_napi_value(env.raw(), failure.into_js(env)) }?;
    Ok(JsRaw(settled_promise(env, Err(reason))?))
}
