//! Node binding of `@deepseek-ai/dsh-shell-env`: converts JS values to the
//! core's types and core errors to JS errors with codes. The rules themselves
//! live in `dsh-shell-env-core`.

mod abort;
mod errors;
mod execute;
mod home;
mod js;
mod registry;
mod resolver;

pub use execute::{build_environment_js, execute, NativeExecution};
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
