//! `resolveDshHome()` and `reconcileDshHome()`.

use dsh_shell_env_core::home::{self, HomeContext};
use dsh_shell_env_core::ShellEnvError;
use napi::bindgen_prelude::*;
use napi::ValueType;
use napi_derive::napi;

use crate::errors::{shell_env_error, Failure};
use crate::js;
use crate::registry::caller_env;

/// The Harness home: `configured` (non-empty), else a non-blank `env.DSH_HOME`,
/// else `~/.dsh`; absolute and normalised.
#[napi(ts_args_type = "configured?: string, env?: Record<string, string | undefined>")]
pub fn resolve_dsh_home(env: &Env, configured: Option<Unknown>, parent_env: Option<Unknown>) -> Result<String> {
    let configured = optional_string(env, configured, "configured")?;
    Ok(home::resolve_dsh_home(configured.as_deref(), &context(env, parent_env)?))
}

/// The home both configurations agree on; `ERR_SHELL_ENV_HOME_CONFLICT` when
/// both are given and resolve differently.
#[napi(ts_args_type = "top?: string, skillsLocal?: string, env?: Record<string, string | undefined>")]
pub fn reconcile_dsh_home(
    env: &Env,
    top: Option<Unknown>,
    skills_local: Option<Unknown>,
    parent_env: Option<Unknown>,
) -> Result<String> {
    let top = optional_string(env, top, "top")?;
    let skills_local = optional_string(env, skills_local, "skillsLocal")?;
    home::reconcile_dsh_home(top.as_deref(), skills_local.as_deref(), &context(env, parent_env)?)
        .map_err(|error| shell_env_error(env, error))
}

/// The caller's `DSH_HOME`, read leniently (see `js::get_string`). A getter
/// or Proxy trap of `env` that throws is an invalid `env` option with the
/// thrown value as `cause`.
fn context(env: &Env, parent_env: Option<Unknown>) -> Result<HomeContext> {
    let threw = |thrown| {
        let reason = "reading it threw".to_string();
        Failure::caused_by(ShellEnvError::InvalidOption { option: "env", reason }, thrown).into_js(env)
    };
    let parent_env = caller_env(env, parent_env).map_err(threw)?.map_err(|found| {
        let reason = format!("must be an object of environment variables (got {found})");
        shell_env_error(env, ShellEnvError::InvalidOption { option: "env", reason })
    })?;
    Ok(HomeContext::current(js::get_string(env, parent_env, "DSH_HOME").map_err(threw)?))
}

/// A configured home: `undefined`/`null` for none, else a well-formed string
/// without NUL bytes (the core's rule).
fn optional_string(env: &Env, value: Option<Unknown>, option: &'static str) -> Result<Option<String>> {
    let Some(value) = value.map(|value| value.raw()) else { return Ok(None) };
    let invalid = |reason: String| shell_env_error(env, ShellEnvError::InvalidOption { option, reason });
    match js::type_of(env, value) {
        ValueType::Undefined | ValueType::Null => Ok(None),
        ValueType::String => {
            let configured = js::string(env, value)?.map_err(|ill| invalid(ill.to_string()))?;
            home::check_configured(option, &configured).map_err(|error| shell_env_error(env, error))?;
            Ok(Some(configured))
        }
        _ => Err(invalid(format!("must be a string (got {})", js::describe(env, value)))),
    }
}
