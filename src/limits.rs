//! `limitMechanisms()`: how this host would enforce each resource limit.

use dsh_shell_env_core::limits::{commands_hold_sys_resource, mechanism, Limit, Limits};
use dsh_shell_env_core::process;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::errors::Failure;
use crate::execute::read_limits;
use crate::read::{Field, Kind};

/// How this host enforces one limit, or why it cannot.
#[napi(object, object_from_js = false)]
pub struct LimitMechanism {
    /// The limit, as a result names it.
    #[napi(ts_type = "ShellLimitName")]
    pub limit: String,
    /// The `limits` field that sets it.
    #[napi(ts_type = "keyof ShellLimits")]
    pub field: String,
    /// The value given to `limitMechanisms()`, or `null`.
    #[napi(ts_type = "number | null")]
    pub value: Either<f64, Null>,
    /// `'cgroup v2 memory.max (whole command)'`, `'RLIMIT_CPU (per process)'`,
    /// `'RLIMIT_DATA (per process, private memory only)'`, …; `null` when refused.
    #[napi(ts_type = "string | null")]
    pub mechanism: Either<String, Null>,
    /// What the mechanism counts, in words (`'private memory only, of each
    /// process on its own: …'`); `null` when refused.
    #[napi(ts_type = "string | null")]
    pub covers: Either<String, Null>,
    /// What a command can do against it: `'held'`, it cannot raise it;
    /// `'reported'`, it can change it and the result's `limitsTampered`
    /// names the limit then; `'unreported'`, it can raise it unseen (an
    /// rlimit where commands hold `CAP_SYS_RESOURCE`); `null` when refused.
    #[napi(ts_type = "'held' | 'reported' | 'unreported' | null")]
    pub tampering: Either<String, Null>,
    /// The same in words: how, and what is not seen; `null` when refused.
    #[napi(ts_type = "string | null")]
    pub tampering_note: Either<String, Null>,
    /// Why this host cannot enforce it (`execute()` refuses it with
    /// `ERR_SHELL_EXEC_UNSUPPORTED`), or `null`.
    #[napi(ts_type = "string | null")]
    pub refused: Either<String, Null>,
}

/// Every limit with the mechanism this host enforces it with (starting the
/// supervisor, which tells which cgroup controllers commands get), and the
/// values of `limits` when given, checked as `execute()` checks them.
#[napi(js_name = "limitMechanisms", ts_args_type = "limits?: ShellLimits")]
pub fn limit_mechanisms(env: &Env, limits: Option<Unknown>) -> Result<Vec<LimitMechanism>> {
    let values = match limits {
        None => Limits::default(),
        Some(limits) => {
            let field = Field::named(env, Kind::Spec, limits.raw(), "limits");
            let raw = read_limits(&field).map_err(|failure| failure.into_js(env))?;
            Limits::try_from(raw).map_err(|error| Failure::from(error).into_js(env))?
        }
    };
    let controllers = process::limit_controllers().unwrap_or_default();
    let privileged = commands_hold_sys_resource();
    let text = |text: &str| Either::A(text.to_string());
    Ok(Limit::ALL
        .into_iter()
        .map(|limit| {
            let enforced = mechanism(limit, controllers);
            let value = values.get(limit).map_or(Either::B(Null), |value| Either::A(value as f64));
            let (limit, field) = (limit.as_str().into(), limit.field().into());
            match enforced {
                Ok(mechanism) => {
                    let (tampering, note) = mechanism.tampering(privileged);
                    LimitMechanism {
                        limit,
                        field,
                        value,
                        mechanism: Either::A(mechanism.describe()),
                        covers: text(mechanism.covers()),
                        tampering: text(tampering.as_str()),
                        tampering_note: text(note),
                        refused: Either::B(Null),
                    }
                }
                Err(reason) => LimitMechanism {
                    limit,
                    field,
                    value,
                    mechanism: Either::B(Null),
                    covers: Either::B(Null),
                    tampering: Either::B(Null),
                    tampering_note: Either::B(Null),
                    refused: text(reason),
                },
            }
        })
        .collect())
}
