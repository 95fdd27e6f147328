//! `resolveDshHome()` and `reconcileDshHome()`.

use dsh_shell_env_core::home::{self, HomeContext};
use napi::bindgen_prelude::*;
use napi::ValueType;
use napi_derive::napi;

use crate::read::{self, Field, Kind, Read};

/// The Harness home: `configured` (non-empty), else a non-blank `env.DSH_HOME`,
/// else `~/.dsh`; absolute and normalised.
#[napi(ts_args_type = "configured?: string, env?: EnvironmentRecord")]
pub fn resolve_dsh_home(env: &Env, configured: Option<Unknown>, parent_env: Option<Unknown>) -> Result<String> {
    let read = || -> Read<String> {
        let configured = optional_string(env, configured, "configured")?;
        Ok(home::resolve_dsh_home(configured.as_deref(), &context(env, parent_env)?))
    };
    read().map_err(|failure| failure.into_js(env))
}

/// The home both configurations agree on; `ERR_SHELL_ENV_HOME_CONFLICT` when
/// both are given and resolve differently.
#[napi(ts_args_type = "top?: string, skillsLocal?: string, env?: EnvironmentRecord")]
pub fn reconcile_dsh_home(
    env: &Env,
    top: Option<Unknown>,
    skills_local: Option<Unknown>,
    parent_env: Option<Unknown>,
) -> Result<String> {
    let read = || -> Read<String> {
        let top = optional_string(env, top, "top")?;
        let skills_local = optional_string(env, skills_local, "skillsLocal")?;
        Ok(home::reconcile_dsh_home(top.as_deref(), skills_local.as_deref(), &context(env, parent_env)?)?)
    };
    read().map_err(|failure| failure.into_js(env))
}

/// The caller's `DSH_HOME`, read leniently (see `js::get_string`). A getter
/// or Proxy trap of `env` that throws is an invalid `env` option with the
/// thrown value as `cause`.
fn context(env: &Env, parent_env: Option<Unknown>) -> Read<HomeContext> {
    let parent_env = read::caller_env(env, Kind::Option, "env", parent_env, "an object of environment variables")?;
    Ok(HomeContext::current(parent_env.lenient_string("DSH_HOME")?))
}

/// A configured home: `undefined`/`null` for none, else a well-formed string
/// without NUL bytes (the core's rule).
fn optional_string(env: &Env, value: Option<Unknown>, option: &'static str) -> Read<Option<String>> {
    let Some(value) = value.map(|value| Field::named(env, Kind::Option, value.raw(), option)) else { return Ok(None) };
    if matches!(value.type_of(), ValueType::Undefined | ValueType::Null) {
        return Ok(None);
    }
    let configured = value.string()?;
    home::check_configured(option, &configured)?;
    Ok(Some(configured))
}
