//! Node binding of `@deepseek-ai/dsh-shell-env`: converts JS values to the
//! core's types and core errors to JS errors with codes. The rules themselves
//! live in `dsh-shell-env-core`.

mod abort;
mod errors;
mod event_loop;
mod execute;
mod home;
mod host_env;
mod js;
mod registry;
mod resolver;

pub use execute::{build_environment_js, end_all_commands, execute, NativeExecution};
pub use home::{reconcile_dsh_home, resolve_dsh_home};
pub use registry::ShellEnvRegistry;

use napi_derive::napi;

/// Every managed variable starts with this prefix.
#[napi]
pub const DSH_ENV_PREFIX: &str = dsh_shell_env_core::keys::DSH_ENV_PREFIX;

/// The built-in keys only the registry sets (frozen by the JS entry point).
#[napi]
pub fn reserved_keys() -> Vec<&'static str> {
    dsh_shell_env_core::keys::RESERVED_KEYS.to_vec()
}

/// The default `scrub.exclude` globs (`*KEY*`, …).
#[napi]
pub fn default_exclude() -> Vec<&'static str> {
    dsh_shell_env_core::environment::DEFAULT_EXCLUDE.to_vec()
}

/// Whether the default `scrub.exclude` globs match `name`, ignoring case: the
/// names whose values the command line masks.
#[napi]
pub fn excluded_by_default(name: String) -> bool {
    dsh_shell_env_core::environment::excluded_by_default(&name)
}

/// Node's own `process`, whose signal listeners hear signals: under Jest a
/// test file's `process` is a copy of its own, and listeners added to it never
/// run. The package listens on this one while commands run (`host-signals.js`).
#[napi(js_name = "hostProcess", ts_return_type = "object")]
pub fn host_process(env: &napi::Env) -> napi::Result<js::JsRaw> {
    js::process(env).map(js::JsRaw)
}
