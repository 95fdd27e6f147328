//! The one reader of JS input: a [`Field`] is a JS value together with where
//! it was read from (`scrub.exclude[2]`, `env.FOO`, `profile.name`) and which
//! error a bad value produces ([`Kind`]). Every shape the binding accepts —
//! optional strings, numbers and booleans, string arrays, records of strings,
//! options objects — is read here once, with its messages written once, and a
//! JS throw while reading (a getter, a Proxy trap) becomes the kind's coded
//! error carrying the thrown value as `.cause` in one place too.
//!
//! Paths are kept as a chain of borrowed steps and rendered only when an error
//! names them, so reading a valid spec builds no path strings.

use std::fmt;

use dsh_shell_env_core::environment::{MalformedParent, Parent};
use dsh_shell_env_core::{ExecError, ShellEnvError};
use napi::bindgen_prelude::*;
use napi::ValueType;

use crate::errors::Failure;
use crate::js::{self, Raw};

/// Which error a field's bad value or a throw while reading it produces.
#[derive(Clone, Copy)]
pub enum Kind<'a> {
    /// A field of an `execute()` / `buildEnvironment()` spec:
    /// `ExecError::InvalidSpec { field, reason }`. A throw is reported for the
    /// whole `spec` (unless [`Field::throws_here`]).
    Spec,
    /// The parent environment of a spec: `InvalidSpec` naming `parentEnv`.
    ParentEnv,
    /// A registry or home option: `ShellEnvError::InvalidOption`, named by the
    /// innermost field name (`dshHome`, `timeoutMs`, `env`).
    Option,
    /// `options.profile`: `ShellEnvError::InvalidProfile`, the path leading the reason.
    Profile,
    /// A field of a contributor declaration: `ShellEnvError::InvalidContributor`
    /// of that contributor, the path leading the reason.
    Contributor(&'a str),
    /// `execution.agent`: `ShellEnvError::InvalidAgent`.
    Agent,
    /// A contributor's `name`: `ShellEnvError::InvalidName`, the reason saying what was found.
    Name,
}

/// One step from a value to a property of it.
#[derive(Clone, Copy)]
enum Step<'a> {
    /// A field the binding asks for by name.
    Name(&'static str),
    /// A key of a record (`env.FOO`).
    Key(&'a str),
    /// An array element.
    Index(u32),
    /// A symbol key, as `Symbol(description)`.
    Symbol(&'a str),
}

/// Where a value was read from; rendered only for messages.
#[derive(Clone, Copy)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    step: Step<'a>,
    /// Whether messages about what lies below name this step (`profile.name`)
    /// or start after it (a spec's `command`, an options bag's `dshHome`).
    shown: bool,
}

impl Path<'_> {
    /// The innermost name asked for by the binding: what `InvalidOption` names.
    fn option(&self) -> &'static str {
        let mut path = self;
        loop {
            if let Step::Name(name) = path.step {
                return name;
            }
            match path.parent {
                Some(parent) => path = parent,
                None => return "",
            }
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = self.parent.filter(|parent| parent.shown);
        if let Some(parent) = prefix {
            write!(f, "{parent}")?;
        }
        match self.step {
            Step::Name(name) if prefix.is_some() => write!(f, ".{name}"),
            Step::Key(name) if prefix.is_some() => write!(f, ".{name}"),
            Step::Name(name) => f.write_str(name),
            Step::Key(name) => f.write_str(name),
            Step::Index(index) => write!(f, "[{index}]"),
            Step::Symbol(symbol) => write!(f, "[{symbol}]"),
        }
    }
}

/// What reading a field gives: its value, or the coded error to report.
pub type Read<T> = std::result::Result<T, Failure>;

/// A JS value, where it was read from, and how its errors are reported.
/// Valid only within the Node-API callback its value came from.
#[derive(Clone, Copy)]
pub struct Field<'a> {
    env: &'a Env,
    kind: Kind<'a>,
    value: Raw,
    path: Path<'a>,
    /// Report a throw at this field's own path, even for [`Kind::Spec`].
    throws_here: bool,
}

impl<'a> Field<'a> {
    /// A value named `name` in messages, its fields as `name.field`.
    pub fn named(env: &'a Env, kind: Kind<'a>, value: Raw, name: &'static str) -> Self {
        Self { env, kind, value, path: Path { parent: None, step: Step::Name(name), shown: true }, throws_here: false }
    }

    /// A value named `name` in messages about itself, whose fields are named
    /// on their own (a spec's `command`, not `spec.command`).
    pub fn container(env: &'a Env, kind: Kind<'a>, value: Raw, name: &'static str) -> Self {
        Self { env, kind, value, path: Path { parent: None, step: Step::Name(name), shown: false }, throws_here: false }
    }

    /// The same value, reported as `kind`.
    pub fn as_kind(self, kind: Kind<'a>) -> Self {
        Self { kind, ..self }
    }

    /// The same value, a throw while reading it or its fields reported at
    /// their own path rather than for the whole spec.
    pub fn throws_here(self) -> Self {
        Self { throws_here: true, ..self }
    }

    /// The JS value itself.
    pub fn raw(&self) -> Raw {
        self.value
    }

    /// `typeof`, with `null` told apart.
    pub fn type_of(&self) -> ValueType {
        js::type_of(self.env, self.value)
    }

    /// The value's type as messages name it (`"null"`, `"array"`, …).
    pub fn describe(&self) -> String {
        js::describe(self.env, self.value)
    }

    /// The error for a bad value of this field.
    pub fn invalid(&self, reason: impl Into<String>) -> Failure {
        let reason = reason.into();
        let path = &self.path;
        match self.kind {
            Kind::Spec => ExecError::invalid_spec(path.to_string(), reason).into(),
            Kind::ParentEnv => ExecError::invalid_spec("parentEnv", reason).into(),
            Kind::Option => ShellEnvError::InvalidOption { option: path.option(), reason }.into(),
            Kind::Profile => ShellEnvError::InvalidProfile { reason: format!("{path} {reason}") }.into(),
            Kind::Contributor(contributor) => ShellEnvError::InvalidContributor {
                contributor: contributor.into(),
                reason: format!("{path} {reason}"),
            }
            .into(),
            Kind::Agent => ShellEnvError::InvalidAgent { reason }.into(),
            Kind::Name => ShellEnvError::InvalidName { found: Some(reason) }.into(),
        }
    }

    /// The error for a JS throw while reading this field, keeping the thrown
    /// value as `.cause`.
    pub fn threw(&self, thrown: napi::Error) -> Failure {
        let path = &self.path;
        let error: Failure = match self.kind {
            Kind::Spec if self.throws_here => {
                ExecError::invalid_spec(path.to_string(), "reading the spec threw").into()
            }
            Kind::Spec => ExecError::invalid_spec("spec", "reading the spec threw").into(),
            Kind::ParentEnv => ExecError::invalid_spec("parentEnv", "reading the parent environment threw").into(),
            Kind::Option => {
                ShellEnvError::InvalidOption { option: path.option(), reason: "reading it threw".into() }.into()
            }
            Kind::Profile => ShellEnvError::InvalidProfile { reason: format!("reading {path} threw") }.into(),
            Kind::Contributor(contributor) => ShellEnvError::InvalidContributor {
                contributor: contributor.into(),
                reason: format!("reading {path} threw"),
            }
            .into(),
            Kind::Agent => {
                ShellEnvError::InvalidAgent { reason: "could not be read: a getter or Proxy trap threw".into() }.into()
            }
            Kind::Name => {
                ShellEnvError::InvalidName { found: Some("a name property that threw when read".into()) }.into()
            }
        };
        Failure { cause: Some(Box::new(thrown)), ..error }
    }

    /// A value below this one, reached by `step`.
    fn child<'b>(&'b self, value: Raw, step: Step<'b>) -> Field<'b> {
        Field {
            env: self.env,
            kind: self.kind,
            value,
            path: Path { parent: Some(&self.path), step, shown: true },
            throws_here: self.throws_here,
        }
    }

    /// How messages name the fields below this value: `stdio.` for `stdio`.
    pub fn prefix(&self) -> String {
        format!("{}.", self.path)
    }

    /// This value seen at the path of its field `name`: to report that field
    /// missing or mistyped, or a throw while getting it, without its value.
    pub fn field(&self, name: &'static str) -> Field<'_> {
        self.child(self.value, Step::Name(name))
    }

    /// `value[name]`, `None` when it is `undefined` (or `value` is no object).
    pub fn get(&self, name: &'static str) -> Read<Option<Field<'_>>> {
        match js::get_defined(self.env, self.value, name) {
            Ok(value) => Ok(value.map(|value| self.child(value, Step::Name(name)))),
            Err(thrown) => Err(self.field(name).threw(thrown)),
        }
    }

    /// Whether `value[name]` is set (not `undefined`).
    pub fn has(&self, name: &'static str) -> Read<bool> {
        Ok(self.get(name)?.is_some())
    }

    /// `value[name]`: a string, or `undefined` for none.
    pub fn optional_string(&self, name: &'static str) -> Read<Option<String>> {
        self.get(name)?.map(|field| field.string()).transpose()
    }

    /// `value[name]`: a number, or `undefined` for none.
    pub fn optional_number(&self, name: &'static str) -> Read<Option<f64>> {
        self.get(name)?.map(|field| field.number("a number")).transpose()
    }

    /// `value[name]`: a boolean, or `undefined` for none.
    pub fn optional_bool(&self, name: &'static str) -> Read<Option<bool>> {
        self.get(name)?.map(|field| field.bool()).transpose()
    }

    /// The value as a string: it must be one, and well-formed.
    pub fn string(&self) -> Read<String> {
        if self.type_of() != ValueType::String {
            return Err(self.invalid(format!("must be a string (got {})", self.describe())));
        }
        self.text()
    }

    /// The text of a value already known to be a string. One with a lone
    /// surrogate is invalid: it could not reach its use unchanged.
    pub fn text(&self) -> Read<String> {
        js::string(self.env, self.value)
            .map_err(|thrown| self.threw(thrown))?
            .map_err(|ill| self.invalid(ill.to_string()))
    }

    /// The text of a string value, or what makes it ill-formed, for callers
    /// whose message for that differs.
    pub fn text_or_ill_formed(&self) -> Read<std::result::Result<String, dsh_shell_env_core::text::IllFormedText>> {
        js::string(self.env, self.value).map_err(|thrown| self.threw(thrown))
    }

    /// A string value's text with lone surrogates replaced by U+FFFD: for
    /// messages only.
    pub fn lossy_text(&self) -> String {
        js::lossy_string(self.env, self.value).unwrap_or_default()
    }

    /// The value as a number; `expected` is what the message says it takes.
    pub fn number(&self, expected: &str) -> Read<f64> {
        if self.type_of() != ValueType::Number {
            return Err(self.invalid(format!("must be {expected} (got {})", self.describe())));
        }
        js::number(self.env, self.value).map_err(|thrown| self.threw(thrown))
    }

    /// The value as a boolean.
    pub fn bool(&self) -> Read<bool> {
        if self.type_of() != ValueType::Boolean {
            return Err(self.invalid(format!("must be a boolean (got {})", self.describe())));
        }
        js::boolean(self.env, self.value).map_err(|thrown| self.threw(thrown))
    }

    /// Whether the value is a function.
    pub fn is_function(&self) -> bool {
        self.type_of() == ValueType::Function
    }

    /// The bytes of a `Uint8Array` (or `Buffer`); `None` for anything else.
    pub fn bytes(&self) -> Option<Vec<u8>> {
        js::bytes(self.env, self.value)
    }

    /// An array of strings; `expected` is what the message says the field takes.
    pub fn string_array(&self, expected: &str) -> Read<Vec<String>> {
        if !js::is_array(self.env, self.value) {
            return Err(self.invalid(format!("must be {expected} (got {})", self.describe())));
        }
        self.elements(|item| item.string())
    }

    /// Every element of an array, each read by `read`, up to its `length`.
    pub fn elements<T>(&self, mut read: impl FnMut(Field<'_>) -> Read<T>) -> Read<Vec<T>> {
        let length = js::array_length(self.env, self.value).map_err(|thrown| self.threw(thrown))?;
        let mut items = Vec::with_capacity(length as usize);
        for index in 0..length {
            let item = js::element(self.env, self.value, index)
                .map_err(|thrown| self.child(self.value, Step::Index(index)).threw(thrown))?;
            items.push(read(self.child(item, Step::Index(index)))?);
        }
        Ok(items)
    }

    /// Whether the value is an array.
    pub fn is_array(&self) -> bool {
        js::is_array(self.env, self.value)
    }

    /// Whether the value can be read as an options bag or a record (see
    /// `js::is_options_object`).
    pub fn is_options_object(&self) -> Read<bool> {
        js::is_options_object(self.env, self.value).map_err(|thrown| self.threw(thrown))
    }

    /// The value as an options bag or record: `must be {expected} (got …)` otherwise.
    pub fn options_object(&self, expected: &str) -> Read<()> {
        if self.is_options_object()? {
            return Ok(());
        }
        Err(self.invalid(format!("must be {expected} (got {})", self.describe())))
    }

    /// The enumerable string keys of the value and its prototypes (`for…in`).
    pub fn enumerable_names(&self) -> Read<Vec<String>> {
        js::enumerable_names(self.env, self.value).map_err(|thrown| self.threw(thrown))
    }

    /// Own enumerable keys, symbols shown as `Symbol(description)`: the field
    /// names of a config object, for the core to refuse unknown ones by name.
    pub fn own_field_names(&self) -> Read<Vec<String>> {
        let keys = js::own_keys(self.env, self.value, true).map_err(|thrown| self.threw(thrown))?;
        Ok(keys.into_iter().map(|(_, key)| key.display().to_string()).collect())
    }

    /// Own enumerable keys with the key values, symbols included, unchecked.
    pub fn own_keys(&self) -> Read<Vec<(Raw, js::Key)>> {
        js::own_keys(self.env, self.value, true).map_err(|thrown| self.threw(thrown))
    }

    /// The entry of a record under `key` (one from [`Field::own_keys`]).
    pub fn entry<'b>(&'b self, raw: Raw, key: &'b str) -> Read<Field<'b>> {
        match js::get_key(self.env, self.value, raw) {
            Ok(value) => Ok(self.child(value, Step::Key(key))),
            Err(thrown) => Err(self.child(self.value, Step::Key(key)).threw(thrown)),
        }
    }

    /// The keys of a record of variables (`env`, `dshEnv`, `terminalEnv`),
    /// all checked before any value is read: a symbol key or one with a lone
    /// surrogate names no variable a child could get.
    pub fn record_keys(&self) -> Read<Vec<(Raw, String)>> {
        let mut names = Vec::new();
        for (raw, key) in self.own_keys()? {
            match key {
                js::Key::Name(name) => names.push((raw, name)),
                js::Key::IllFormed(lossy, ill) => {
                    return Err(self.child(self.value, Step::Key(&lossy)).invalid(format!("name {ill}")))
                }
                js::Key::Symbol(symbol) => {
                    return Err(self
                        .child(self.value, Step::Symbol(&symbol))
                        .invalid("name must be a string (got symbol)"))
                }
            }
        }
        Ok(names)
    }

    /// A record whose values must all be strings: `must be an object of
    /// strings (got …)` otherwise.
    pub fn string_record(&self) -> Read<Vec<(String, String)>> {
        self.options_object("an object of strings")?;
        let mut entries = Vec::new();
        for (raw, key) in self.record_keys()? {
            let value = self.entry(raw, &key)?.string()?;
            entries.push((key, value));
        }
        Ok(entries)
    }

    /// The string entries of an environment-like object, read leniently,
    /// and the names of the entries no child could be given, as an entry that
    /// could never come from a real environment: a value that is not a
    /// string (`undefined` is no entry at all), a string with a lone
    /// surrogate, or a key with one (named with U+FFFD in its place). Symbol
    /// keys name no variable and are left out.
    pub fn lenient_string_record(&self) -> Read<LenientRecord> {
        let threw = |thrown| self.threw(thrown);
        let mut entries = Vec::new();
        let mut unrepresentable = Vec::new();
        for (raw, key) in js::own_keys(self.env, self.value, false).map_err(threw)? {
            let key = match key {
                js::Key::Name(key) => key,
                js::Key::IllFormed(lossy, _) => {
                    unrepresentable.push(lossy);
                    continue;
                }
                js::Key::Symbol(_) => continue,
            };
            let item = js::get_key(self.env, self.value, raw).map_err(threw)?;
            match js::type_of(self.env, item) {
                ValueType::String => match js::string(self.env, item).map_err(threw)? {
                    Ok(item) => entries.push((key, item)),
                    Err(_) => unrepresentable.push(key),
                },
                ValueType::Undefined => {}
                _ => unrepresentable.push(key),
            }
        }
        Ok(LenientRecord { entries, unrepresentable })
    }

    /// The entries of an environment-like object as
    /// [`Field::lenient_string_record`] reads them, read instead by the
    /// package's JS layer in one call of `pack` (`packEnvironment` in
    /// `environment.js`, which reads the object the same way) and handed over
    /// packed: the text of the entries (the core's `environment::Parent`),
    /// and after it, when there are any, the names of the entries no child
    /// could be given. A throw while `pack` reads is reported as a throw while
    /// reading this value; what `pack` returns is checked.
    pub fn packed_environment(&self, pack: Raw) -> Read<Parent> {
        let packed = js::call(self.env, pack, &[self.value]).map_err(|thrown| self.threw(thrown))?;
        let malformed = || self.invalid(MalformedParent.to_string());
        let text_of = |value| match js::type_of(self.env, value) {
            ValueType::String => js::string(self.env, value).map_err(|thrown| self.threw(thrown)),
            _ => Err(malformed()),
        };
        let (text, unrepresentable) = if js::is_array(self.env, packed) {
            let length = js::array_length(self.env, packed).map_err(|thrown| self.threw(thrown))?;
            let mut items = (0..length).map(|index| {
                let item = js::element(self.env, packed, index).map_err(|thrown| self.threw(thrown))?;
                text_of(item)?.map_err(|_| malformed())
            });
            let text = items.next().unwrap_or_else(|| Err(malformed()))?;
            (text, items.collect::<Read<Vec<String>>>()?)
        } else {
            (text_of(packed)?.map_err(|_| malformed())?, Vec::new())
        };
        Parent::from_packed(text, unrepresentable).map_err(|_| malformed())
    }

    /// `value[name]` read leniently (see `js::get_string`); a throw is
    /// reported for this value, not for `name`.
    pub fn lenient_string(&self, name: &'static str) -> Read<Option<String>> {
        js::get_string(self.env, self.value, name).map_err(|thrown| self.threw(thrown))
    }
}

/// An environment-like object read leniently (see
/// [`Field::lenient_string_record`]).
pub struct LenientRecord {
    /// Its entries that are well-formed strings under well-formed names.
    pub entries: Vec<(String, String)>,
    /// The names of its entries that hold no text a child could be given.
    pub unrepresentable: Vec<String>,
}

/// The caller's environment object, `name` in messages: `parent` when given,
/// else (for `undefined` or `null`) the calling thread's `process.env`.
/// Anything that is not an object of variables (a primitive, an array, a
/// `Map`, …) is invalid: `must be {expected} (got …)`.
pub fn caller_env<'a>(
    env: &'a Env,
    kind: Kind<'a>,
    name: &'static str,
    parent: Option<Unknown>,
    expected: &str,
) -> Read<Field<'a>> {
    let field = |value| Field::named(env, kind, value, name);
    let given = parent
        .map(|value| value.raw())
        .filter(|value| !matches!(js::type_of(env, *value), ValueType::Undefined | ValueType::Null));
    match given {
        None => {
            let probe = field(std::ptr::null_mut());
            js::process_env(env).map(field).map_err(|thrown| probe.threw(thrown))
        }
        Some(value) => {
            let parent = field(value);
            // The calling thread's own `process.env`, which the package's JS
            // layer passes on every call, is one by definition: asking its
            // interceptor for a type tag would cost more than the rest of a
            // collection's setup.
            if js::process_env(env).is_ok_and(|own| js::strict_equals(env, own, value)) {
                return Ok(parent);
            }
            parent.options_object(expected)?;
            Ok(parent)
        }
    }
}
