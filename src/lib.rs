//! Node binding of `@deepseek-ai/dsh-shell-env`: converts JS values to the
//! core's types and core errors to JS errors with codes. The rules themselves
//! live in `dsh-shell-env-core`.

mod abort;
mod descriptors;
mod errors;
mod execute;
mod home;
mod js;
mod limits;
mod read;
mod registry;
mod resolver;

pub use execute::{
    build_environment_js, build_environment_packed, end_all_commands, execute, spawn_js, spec_option_problem,
    NativeExecution,
};
pub use home::{reconcile_dsh_home, resolve_dsh_home};
pub use limits::limit_mechanisms;
pub use registry::{collect_async_packed, collect_packed, ShellEnvRegistry};

use napi_derive::napi;

/// Every managed variable starts with this prefix.
#[napi]
pub const DSH_ENV_PREFIX: &str = dsh_shell_env_core::keys::DSH_ENV_PREFIX;

/// The built-in keys only the registry sets (frozen by the JS entry point).
#[napi]
pub fn reserved_keys() -> Vec<&'static str> {
    dsh_shell_env_core::keys::RESERVED_KEYS.to_vec()
}

/// Whether `name` is a key the registry could set (`DSH_[A-Z][A-Z0-9_]*`).
/// `ctx.subprocess` passes such entries of a caller's `env` on as managed
/// values; any other spelling in the `DSH_` namespace stays in `env`, where
/// the environment pipeline removes it (`unmanaged`).
#[napi(js_name = "isManagedKey")]
pub fn is_managed_key(name: String) -> bool {
    dsh_shell_env_core::keys::is_valid_key(&name)
}

/// A removal reason and what it means, in words.
#[napi(object, object_from_js = false)]
pub struct RemovalReasonText {
    /// The reason as `removed` reports it.
    pub reason: &'static str,
    /// What the step that removes for this reason does.
    pub description: &'static str,
}

/// Every removal reason, in pipeline order, with its meaning (the command
/// line's words for `removed`).
#[napi]
pub fn removal_reasons() -> Vec<RemovalReasonText> {
    use dsh_shell_env_core::environment::RemovalReason;
    RemovalReason::ALL
        .iter()
        .map(|reason| RemovalReasonText { reason: reason.as_str(), description: reason.describe() })
        .collect()
}

/// Every source of a child's variable, in pipeline order (what
/// `buildEnvironment()`'s `sources` say; its packed form gives each by its
/// place here).
#[napi(js_name = "environmentSources", ts_return_type = "Array<'inherited' | 'terminal' | 'explicit' | 'managed'>")]
pub fn environment_sources() -> Vec<&'static str> {
    use dsh_shell_env_core::environment::Source;
    Source::ALL.iter().map(|source| source.as_str()).collect()
}

/// `name=value` as the command line shows it: `null` when it is no
/// credential; the value with its URLs' passwords shown as `****` when they
/// were the whole of the credential; else `<masked>`.
#[napi(js_name = "maskedValue")]
pub fn masked_value(name: String, value: String) -> Option<String> {
    dsh_shell_env_core::credentials::masked(&name, &value)
}

/// The global object of the context the addon was loaded in: Node's own,
/// whose `process` hears signals, also where a test runner gives each test
/// file a global and a `process` of its own (Jest). The package listens there
/// while commands run (`host-signals.js`).
#[napi(js_name = "hostGlobal", ts_return_type = "typeof globalThis")]
pub fn host_global(env: &napi::Env) -> napi::Result<js::JsRaw> {
    Ok(js::JsRaw(napi::JsValue::raw(&env.get_global()?)))
}

/// Removes a spill file kept with `keepSpillFiles` (and its directory once
/// empty). Only this process's own spill files are touched: any other path
/// is left alone and reported as `false`.
#[napi]
pub fn remove_spill_file(path: String) -> bool {
    dsh_shell_env_core::process::remove_spill_file(std::path::Path::new(&path))
}

/// The foreground process group of a terminal (`stdio.terminal`), from its
/// master `fd`, and whether that group is blocked reading its input; `null`
/// when the terminal has no foreground group.
#[napi(js_name = "terminalForeground")]
pub fn terminal_foreground(fd: i32) -> Option<TerminalForeground> {
    use dsh_shell_env_core::process::terminal;
    let pgid = terminal::foreground_group(fd)?;
    Some(TerminalForeground { process_group_id: pgid, input_waiting: terminal::waits_for_input(pgid) })
}

/// A terminal's foreground process group.
#[napi(object, object_from_js = false)]
pub struct TerminalForeground {
    /// Its id.
    pub process_group_id: u32,
    /// Whether one of its processes is blocked reading the terminal.
    pub input_waiting: bool,
}
