//! The spec reader: a JS spec's plain-data fields into the core's
//! `ExecRequest`, in a fixed order, so that the first bad field is the one
//! reported.

use dsh_shell_env_core::command::{self, CommandLine, ExecRequest, RawTerminalSize, StdioRequest};
use dsh_shell_env_core::environment::Inherit;
use dsh_shell_env_core::limits::RawLimits;
use napi::bindgen_prelude::*;
use napi::ValueType;

use crate::js::Raw;
use crate::read::{Field, Kind, Read};

/// The spec as a field: an options object whose fields, own or inherited,
/// are all ones the package knows.
pub(super) fn spec_of(env: &Env, spec: Raw) -> Read<Field<'_>> {
    let spec = Field::container(env, Kind::Spec, spec, "spec");
    spec.options_object("an object")?;
    let fields = spec.enumerable_names()?;
    command::check_fields("", fields.iter().map(String::as_str), command::SPEC_FIELDS)?;
    Ok(spec)
}

/// Reads every plain-data field of a spec.
pub(super) fn read_request(spec: &Field<'_>) -> Read<ExecRequest> {
    // Fields are read in this order, so the first bad one is the one reported.
    let mut request = ExecRequest {
        command: match spec.get("command")? {
            None => None,
            Some(command) if command.type_of() == ValueType::String => Some(CommandLine::Script(command.text()?)),
            Some(command) => Some(CommandLine::Argv(command.string_array("a string or an array of strings")?)),
        },
        shell: spec.optional_string("shell")?,
        workdir: spec.optional_string("workdir")?,
        timeout_ms: spec.optional_number("timeoutMs")?,
        grace_ms: spec.optional_number("graceMs")?,
        stdout_max_bytes: spec.optional_number("stdoutMaxBytes")?,
        stderr_max_bytes: spec.optional_number("stderrMaxBytes")?,
        spill_max_bytes: spec.optional_number("spillMaxBytes")?,
        spill_dir: spec.optional_string("spillDir")?,
        keep_spill_files: spec.optional_bool("keepSpillFiles")?.unwrap_or(false),
        on_expiry: match spec.optional_string("onExpiry")? {
            Some(on_expiry) => on_expiry.parse()?,
            None => Default::default(),
        },
        stdin: match spec.get("stdin")? {
            None => None,
            Some(stdin) if stdin.type_of() == ValueType::String => Some(stdin.text()?.into_bytes()),
            Some(stdin) => Some(stdin.bytes().ok_or_else(|| stdin.invalid("must be a string or a Uint8Array"))?),
        },
        collect_timeout_ms: spec.optional_number("collectTimeoutMs")?,
        stdio: match spec.get("stdio")? {
            None => Default::default(),
            Some(stdio) => {
                stdio.options_object("an object")?;
                let fields = stdio.enumerable_names()?;
                command::check_fields("stdio.", fields.iter().map(String::as_str), command::STDIO_FIELDS)?;
                StdioRequest {
                    stdin: stdio.optional_string("stdin")?,
                    stdout: stdio.optional_string("stdout")?,
                    stderr: stdio.optional_string("stderr")?,
                    terminal: match stdio.get("terminal")? {
                        None => None,
                        Some(terminal) => {
                            terminal.options_object("an object { rows, cols }")?;
                            let fields = terminal.enumerable_names()?;
                            command::check_fields(
                                "stdio.terminal.",
                                fields.iter().map(String::as_str),
                                command::TERMINAL_FIELDS,
                            )?;
                            let cells = |name| match terminal.get(name)? {
                                Some(cells) => cells.number("a number"),
                                None => Err(terminal.field(name).invalid("must be a number (got undefined)")),
                            };
                            Some(RawTerminalSize { rows: cells("rows")?, cols: cells("cols")? })
                        }
                    },
                }
            }
        },
        environment: Default::default(),
        limits: match spec.get("limits")? {
            None => Default::default(),
            Some(limits) => read_limits(&limits)?,
        },
    };
    read_environment(spec, &mut request)?;
    read_managed(spec, &mut request)?;
    Ok(request)
}

/// A spec's `limits`: an options object of numbers, as given (the core checks them).
pub(crate) fn read_limits(limits: &Field<'_>) -> Read<RawLimits> {
    limits.options_object("an object")?;
    let fields = limits.enumerable_names()?;
    command::check_fields("limits.", fields.iter().map(String::as_str), command::LIMIT_FIELDS)?;
    RawLimits::read(|name| limits.optional_number(name))
}

/// `dshEnv`: the managed variables, already collected.
pub(super) fn read_managed(spec: &Field<'_>, request: &mut ExecRequest) -> Read<()> {
    if let Some(dsh_env) = spec.get("dshEnv")? {
        request.environment.managed = dsh_env.string_record()?;
    }
    Ok(())
}

/// `scrub`, `terminalEnv` and `env`: the layers shared with `buildEnvironment()`.
pub(super) fn read_environment(spec: &Field<'_>, request: &mut ExecRequest) -> Read<()> {
    let layers = &mut request.environment;
    if let Some(scrub) = spec.get("scrub")? {
        scrub.options_object("an object")?;
        let fields = scrub.enumerable_names()?;
        command::check_fields("scrub.", fields.iter().map(String::as_str), command::SCRUB_FIELDS)?;
        // These three have always reported a throw under their own name.
        if let Some(inherit) = scrub.throws_here().optional_string("inherit")? {
            layers.scrub.inherit = inherit.parse::<Inherit>()?;
        }
        if let Some(exclude) = scrub.get("exclude")? {
            layers.scrub.exclude = exclude.string_array("an array of strings")?;
        }
        if let Some(include_only) = scrub.get("includeOnly")? {
            layers.scrub.include_only = Some(include_only.string_array("an array of strings")?);
        }
        if let Some(hardening) = scrub.throws_here().optional_bool("hardening")? {
            layers.scrub.hardening = hardening;
        }
        if let Some(default_exclude) = scrub.throws_here().optional_bool("defaultExclude")? {
            layers.scrub.default_exclude = default_exclude;
        }
    }
    if let Some(terminal) = spec.get("terminalEnv")? {
        layers.terminal = match terminal.type_of() {
            ValueType::Boolean if !terminal.bool()? => None,
            _ => Some(terminal.string_record()?),
        };
    }
    if let Some(explicit) = spec.get("env")? {
        explicit.options_object("an object of strings (undefined removes a variable)")?;
        let mut entries = Vec::new();
        for (raw, key) in explicit.record_keys()? {
            let value = explicit.entry(raw, &key)?;
            let value = match value.type_of() {
                ValueType::Undefined => None,
                ValueType::String => Some(value.text()?),
                _ => return Err(value.invalid(format!("must be a string or undefined (got {})", value.describe()))),
            };
            entries.push((key, value));
        }
        layers.explicit = entries;
    }
    Ok(())
}
