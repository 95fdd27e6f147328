//! The spec reader: a JS spec's fields into the core's `ExecRequest`. Which
//! field is read as what, and in which order (so that the first bad field is
//! the one reported), the core declares (`spec_fields`); this reads JS values
//! for it, and the environment layers the binding reads itself.

use dsh_shell_env_core::command::{self, ExecRequest};
use dsh_shell_env_core::environment::Inherit;
use dsh_shell_env_core::limits::RawLimits;
use dsh_shell_env_core::spec_fields::{SpecReader, TextOrList};
use napi::bindgen_prelude::*;
use napi::ValueType;

use crate::errors::Failure;
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

/// Reads every plain-data field of a spec, as the core declares them
/// (`ExecRequest::read`), then the environment layers.
pub(super) fn read_request(spec: &Field<'_>) -> Read<ExecRequest> {
    let mut request = ExecRequest::read(spec)?;
    read_environment(spec, &mut request)?;
    read_managed(spec, &mut request)?;
    Ok(request)
}

/// A spec's `limits`, given on its own (`limitMechanisms()`): an options
/// object of numbers, as given (the core checks them).
pub(crate) fn read_limits(limits: &Field<'_>) -> Read<RawLimits> {
    options_of(limits, "an object", RawLimits::FIELDS)?;
    RawLimits::read(limits)
}

/// Checks that `field` is an options object of `known` fields only.
fn options_of(field: &Field<'_>, expected: &str, known: &[&str]) -> Read<()> {
    field.options_object(expected)?;
    let fields = field.enumerable_names()?;
    Ok(command::check_fields(&field.prefix(), fields.iter().map(String::as_str), known)?)
}

/// How the core's declared walks (`ExecRequest::read`, …) read JS values.
impl<'a> SpecReader for Field<'a> {
    type Error = Failure;
    type Nested<'b>
        = Field<'b>
    where
        Self: 'b;

    fn string(&self, field: &'static str) -> Read<Option<String>> {
        self.optional_string(field)
    }

    fn number(&self, field: &'static str) -> Read<Option<f64>> {
        self.optional_number(field)
    }

    fn required_number(&self, field: &'static str) -> Read<f64> {
        match self.get(field)? {
            Some(number) => number.number("a number"),
            None => Err(self.field(field).invalid("must be a number (got undefined)")),
        }
    }

    fn boolean(&self, field: &'static str) -> Read<Option<bool>> {
        self.optional_bool(field)
    }

    fn text_or_list(&self, field: &'static str) -> Read<Option<TextOrList>> {
        Ok(match self.get(field)? {
            None => None,
            Some(text) if text.type_of() == ValueType::String => Some(TextOrList::Text(text.text()?)),
            Some(list) => Some(TextOrList::List(list.string_array("a string or an array of strings")?)),
        })
    }

    fn bytes(&self, field: &'static str) -> Read<Option<Vec<u8>>> {
        Ok(match self.get(field)? {
            None => None,
            Some(bytes) if bytes.type_of() == ValueType::String => Some(bytes.text()?.into_bytes()),
            Some(bytes) => Some(bytes.bytes().ok_or_else(|| bytes.invalid("must be a string or a Uint8Array"))?),
        })
    }

    fn object(
        &self,
        field: &'static str,
        expected: &'static str,
        known: &'static [&'static str],
    ) -> Read<Option<Field<'_>>> {
        let Some(object) = self.get(field)? else { return Ok(None) };
        options_of(&object, expected, known)?;
        Ok(Some(object))
    }
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
