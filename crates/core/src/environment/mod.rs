//! The child environment pipeline: from the parent environment and a spec to
//! the exact variables a child receives. `buildEnvironment()` reports its
//! result and `execute()` spawns with it, so what a caller inspects is what a
//! child gets.
//!
//! The steps run in one fixed order:
//! 1. the parent environment, minus entries that could never reach `execve`
//!    (reported as unrepresentable);
//! 2. every inherited name in the managed namespace is dropped, so a stale
//!    `DSH_SESSION_ID` from an outer harness never leaks into a child;
//! 3. `inherit` (all, core or none);
//! 4. credentials, unless the caller turned the default off: names that say
//!    they hold one, then values that carry one, then values with a secret's
//!    shape under a prefix web frameworks serve to browsers
//!    ([`crate::credentials`]);
//! 5. the caller's `exclude` globs;
//! 6. `hardening`, when asked for: a preset for hosts whose environment is not
//!    their user's own (shared CI runners, services);
//! 7. `includeOnly` globs, when given;
//! 8. the terminal defaults;
//! 9. the explicit `env` (a `None` value removes the name);
//! 10. a terminal or explicit name in the managed namespace goes, unless the
//!     snapshot sets that key: only the registry sets managed keys;
//! 11. the managed snapshot, last, so nothing can displace it.
//!
//! Steps 2–7 only look at inherited variables: a filter never drops what the
//! caller asked for explicitly. How names compare is [`Platform`] data, so the
//! Windows rules run (and are tested) on every host.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::convert::identity;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use crate::credentials::{self, Finding};
use crate::error::ExecError;
use crate::keys;

mod parent;
mod remembered;

pub use parent::{MalformedParent, Parent};

/// The variables that keep a non-interactive child from emitting colours,
/// terminal control sequences or waiting in a pager.
pub const DEFAULT_TERMINAL_ENV: [(&str, &str); 4] =
    [("NO_COLOR", "1"), ("TERM", "dumb"), ("PAGER", "cat"), ("GIT_PAGER", "cat")];

/// The names `hardening` drops, as case-insensitive globs: each makes a shell,
/// the dynamic loader, libc, an interpreter or git load or run code chosen by
/// whoever set it. It covers sudo's `env_delete` table (a deny-list; sudo's
/// `env_reset` is an allow-list, which `inherit: 'core'` is closer to).
pub const HARDENING_PATTERNS: &[&str] = &[
    // Shells: start-up files, exported functions, parsing and prompt hooks.
    "BASH_ENV",
    "ENV",
    "BASH_FUNC_*",
    "IFS",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "CDPATH",
    "GLOBIGNORE",
    "PROMPT_COMMAND",
    "ZDOTDIR",
    "FPATH",
    "NULLCMD",
    "READNULLCMD",
    "TMPPREFIX",
    "INPUTRC",
    // Dynamic loaders (glibc, musl, macOS, IRIX's rld in sudo's table).
    "LD_*",
    "DYLD_*",
    "_RLD*",
    // Perl.
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "PERL5DB",
    "PERLIO_DEBUG",
    // Python.
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONINSPECT",
    "PYTHONUSERBASE",
    "PYTHONBREAKPOINT",
    "PYTHONWARNINGS",
    "PYTHONEXECUTABLE",
    // Ruby.
    "RUBYOPT",
    "RUBYLIB",
    // Node.
    "NODE_OPTIONS",
    "NODE_PATH",
    "NODE_REPL_EXTERNAL_MODULE",
    // Java.
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    // .NET: start-up hooks, extra dependencies, profilers.
    "DOTNET_STARTUP_HOOKS",
    "DOTNET_ADDITIONAL_DEPS",
    "DOTNET_SHARED_STORE",
    "CORECLR_PROFILER*",
    "COR_PROFILER*",
    "CORECLR_ENABLE_PROFILING",
    "COR_ENABLE_PROFILING",
    // git: configuration from the environment, and the programs it runs.
    "GIT_CONFIG",
    "GIT_CONFIG_*",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_PROXY_COMMAND",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_DIR",
    "GIT_WORK_TREE",
    // Pagers' input preprocessors run a command for every file.
    "LESSOPEN",
    "LESSCLOSE",
    // libc: character-set converters, locale data, resolver and allocator tuning.
    "GCONV_PATH",
    "LOCPATH",
    "NLSPATH",
    "PATH_LOCALE",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "RES_OPTIONS",
    "RESOLV_HOST_CONF",
    "MALLOC_*",
    "GLIBC_TUNABLES",
    // Terminal descriptions, parsed by curses with a history of overflows.
    "TERMINFO",
    "TERMINFO_DIRS",
    "TERMPATH",
    "TERMCAP",
];

/// `hardening` also drops any variable whose value starts with this: the form
/// bash uses to import an exported function, whatever the variable is called.
pub const HARDENING_VALUE_PREFIX: &str = "() ";

/// The names `inherit: core` keeps on POSIX: enough to find programs, the
/// user, the locale, a temporary directory and the time zone.
const POSIX_CORE: &[&str] =
    &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TMPDIR", "TEMP", "TMP", "TZ"];

/// The names `inherit: core` keeps on Windows: the POSIX ones plus what
/// Windows programs need to start at all (`SYSTEMROOT`, `PATHEXT`, …) and to
/// find the user's folders.
const WINDOWS_CORE: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LC_*",
    "TMPDIR",
    "TEMP",
    "TMP",
    "TZ",
    "PATHEXT",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "USERPROFILE",
    "USERNAME",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "COMPUTERNAME",
];

/// Which parent variables survive the `inherit` step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Inherit {
    /// Keep every parent variable.
    #[default]
    All,
    /// Keep only the platform's core list ([`Platform::core`]).
    Core,
    /// Keep nothing from the parent.
    None,
}

impl Inherit {
    /// The spelling a JS caller uses: `"all"`, `"core"` or `"none"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Core => "core",
            Self::None => "none",
        }
    }
}

impl FromStr for Inherit {
    type Err = ExecError;

    /// Parses `"all"`, `"core"` or `"none"`; anything else is an invalid
    /// `scrub.inherit`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "all" => Ok(Self::All),
            "core" => Ok(Self::Core),
            "none" => Ok(Self::None),
            _ => Err(ExecError::invalid_spec(
                "scrub.inherit",
                format!("must be \"all\", \"core\" or \"none\" (got {s:?})"),
            )),
        }
    }
}

/// How the parent environment is filtered before anything is added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScrubPolicy {
    /// Which parent variables to start from.
    pub inherit: Inherit,
    /// Drop credentials, as [`credentials::find`] judges them. Turning it off
    /// is explicit.
    pub default_exclude: bool,
    /// Case-insensitive globs (`*`, `?`) of inherited names to drop, on top of
    /// the credentials.
    pub exclude: Vec<String>,
    /// When given, only inherited names matching one of these
    /// case-insensitive globs are kept.
    pub include_only: Option<Vec<String>>,
    /// Whether to drop the variables in [`HARDENING_PATTERNS`] and values
    /// starting with [`HARDENING_VALUE_PREFIX`]. Off by default: the host's
    /// environment is its user's own, and these are variables developers set
    /// on purpose (`LD_LIBRARY_PATH`, `PYTHONPATH`, `NODE_OPTIONS`). It is for
    /// hosts whose environment someone else may have set: shared CI runners,
    /// services.
    pub hardening: bool,
}

impl Default for ScrubPolicy {
    /// Inherit everything except credentials (and stale `DSH_*`): what the
    /// developer's own non-interactive shell would get, minus what the
    /// model's commands are not trusted with.
    fn default() -> Self {
        Self { inherit: Inherit::All, default_exclude: true, exclude: Vec::new(), include_only: None, hardening: false }
    }
}

/// Which step put a variable into the final environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Kept from the parent environment.
    Inherited,
    /// One of the terminal defaults.
    Terminal,
    /// The spec's explicit `env`.
    Explicit,
    /// The managed `DSH_*` snapshot (or its `PATH`).
    Managed,
}

impl Source {
    /// Every source, in pipeline order.
    pub const ALL: [Self; 4] = [Self::Inherited, Self::Terminal, Self::Explicit, Self::Managed];

    /// The name a JS caller sees: `"inherited"`, `"terminal"`, `"explicit"`
    /// or `"managed"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Inherited => "inherited",
            Self::Terminal => "terminal",
            Self::Explicit => "explicit",
            Self::Managed => "managed",
        }
    }
}

/// Which step removed a variable, in pipeline order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RemovalReason {
    /// A parent entry no child could be given: an empty name, a name with `=`
    /// after its first character, a NUL in the name or the value, or (read
    /// from a caller's object) a value that is not a string or not
    /// well-formed text.
    Unrepresentable,
    /// An inherited name in the managed `DSH_` namespace (any case).
    ManagedPrefix,
    /// Not kept by `inherit: core` or `inherit: none`.
    Inherit,
    /// A name that says it holds a credential, with a value that could be one
    /// ([`credentials::Finding::Name`]).
    Credential,
    /// A value that carries a credential ([`credentials::Finding::Value`]).
    SecretValue,
    /// A variable a web framework serves to every visitor (`VITE_*`,
    /// `NEXT_PUBLIC_*`, …) whose value still has a secret's own shape
    /// ([`credentials::Finding::PublicPrefixSecret`]).
    PublicPrefixSecret,
    /// Matched one of the caller's `exclude` globs.
    Exclude,
    /// Matched a hardening pattern or carried a function value.
    Hardening,
    /// Matched none of the `includeOnly` globs.
    IncludeOnly,
    /// Removed by an explicit `env` entry without a value.
    ExplicitUnset,
    /// A terminal or explicit entry in the managed namespace that the
    /// snapshot does not set: only the registry sets managed keys.
    Unmanaged,
}

impl RemovalReason {
    /// Every reason, in pipeline order.
    pub const ALL: [Self; 11] = [
        Self::Unrepresentable,
        Self::ManagedPrefix,
        Self::Inherit,
        Self::Credential,
        Self::SecretValue,
        Self::PublicPrefixSecret,
        Self::Exclude,
        Self::Hardening,
        Self::IncludeOnly,
        Self::ExplicitUnset,
        Self::Unmanaged,
    ];

    /// The name a JS caller sees: `"unrepresentable"`, `"managed-prefix"`, `"inherit"`,
    /// `"credential"`, `"secret-value"`, `"public-prefix-secret"`, `"exclude"`, `"hardening"`,
    /// `"include-only"`, `"explicit-unset"` or `"unmanaged"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unrepresentable => "unrepresentable",
            Self::ManagedPrefix => "managed-prefix",
            Self::Inherit => "inherit",
            Self::Credential => "credential",
            Self::SecretValue => "secret-value",
            Self::PublicPrefixSecret => "public-prefix-secret",
            Self::Exclude => "exclude",
            Self::Hardening => "hardening",
            Self::IncludeOnly => "include-only",
            Self::ExplicitUnset => "explicit-unset",
            Self::Unmanaged => "unmanaged",
        }
    }

    /// Why this step removes a variable, in words (what `explain` prints).
    pub fn describe(self) -> &'static str {
        match self {
            Self::Unrepresentable => "holds nothing an environment can carry (a NUL, a lone surrogate, not a string)",
            Self::ManagedPrefix => "inherited DSH_* value; the current one is set fresh",
            Self::Inherit => "not kept by scrub.inherit",
            Self::Credential => "name says it holds a credential (…_PASSWORD, …_TOKEN, …_KEY, DB_PW, apiSecret, …)",
            Self::SecretValue => {
                "value carries a credential (a token, a private key, a URL or connection string with one)"
            }
            Self::PublicPrefixSecret => {
                "served to browsers by its prefix (VITE_, NEXT_PUBLIC_, …), yet its value has a secret's shape (a secret token, a private key)"
            }
            Self::Exclude => "matched scrub.exclude",
            Self::Hardening => "could run code before the command",
            Self::IncludeOnly => "not in scrub.includeOnly",
            Self::ExplicitUnset => "unset by the caller",
            Self::Unmanaged => "a DSH_* entry from env or terminalEnv; only the registry sets managed keys",
        }
    }
}

/// A variable that was present at some step and removed, with the first step
/// that removed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The name as it was spelled when removed.
    pub key: String,
    /// The step that removed it.
    pub reason: RemovalReason,
}

/// Everything an execution says about its child's environment, apart from the
/// parent environment itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentSpec {
    /// How the parent environment is filtered.
    pub scrub: ScrubPolicy,
    /// The terminal defaults; `None` when the caller passed `terminalEnv: false`.
    pub terminal: Option<Vec<(String, String)>>,
    /// The caller's `env`, applied in order; a `None` value removes the name.
    pub explicit: Vec<(String, Option<String>)>,
    /// The managed snapshot: `DSH_*` keys and possibly `PATH`.
    pub managed: Vec<(String, String)>,
}

impl Default for EnvironmentSpec {
    /// The default scrub and the default terminal variables, nothing else.
    fn default() -> Self {
        Self {
            scrub: ScrubPolicy::default(),
            terminal: Some(DEFAULT_TERMINAL_ENV.map(|(k, v)| (k.to_owned(), v.to_owned())).to_vec()),
            explicit: Vec::new(),
            managed: Vec::new(),
        }
    }
}

/// The platform rules for environment names, as data, so the Windows rules
/// can be exercised on any host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Platform {
    /// Whether names compare ignoring case, as on Windows: in every filter,
    /// override, removal and lookup.
    pub case_insensitive: bool,
    /// The names `inherit: core` keeps, as upper-case globs; compared
    /// ignoring case only when `case_insensitive`.
    pub core: &'static [&'static str],
    /// Whether replacing `PATH` keeps the spelling already present (`Path`
    /// on Windows stays `Path`); any other replaced name takes the new spelling.
    pub keep_path_spelling: bool,
    /// Whether programs are looked up as on Windows: a `;`-separated PATH,
    /// and a bare name tried with each extension of the child's PATHEXT
    /// (see [`crate::process::Search`]).
    pub pathext: bool,
}

impl Platform {
    /// Linux, macOS and the other Unixes: case-sensitive names.
    pub const fn posix() -> Self {
        Self { case_insensitive: false, core: POSIX_CORE, keep_path_spelling: false, pathext: false }
    }

    /// Windows: case-insensitive names, a longer core list, `Path` kept as
    /// spelt, programs found through PATHEXT.
    pub const fn windows() -> Self {
        Self { case_insensitive: true, core: WINDOWS_CORE, keep_path_spelling: true, pathext: true }
    }

    /// The rules of the platform this was compiled for.
    pub const fn current() -> Self {
        if cfg!(windows) {
            Self::windows()
        } else {
            Self::posix()
        }
    }

    /// Whether two names denote the same variable on this platform.
    pub fn same_name(&self, a: &str, b: &str) -> bool {
        self.fold(a) == self.fold(b)
    }

    /// The form names are compared in: upper case when case-insensitive,
    /// the name itself otherwise.
    fn fold<'a>(&self, name: &'a str) -> Cow<'a, str> {
        if self.case_insensitive {
            Cow::Owned(upper(name))
        } else {
            Cow::Borrowed(name)
        }
    }

    fn is_core(&self, name: &str) -> bool {
        if self.case_insensitive {
            self.core.iter().any(|pattern| glob_matches(pattern, name, upper_char))
        } else {
            self.core.iter().any(|pattern| glob_matches(pattern, name, identity))
        }
    }
}

/// The environment a child gets, with where each variable came from and what
/// was removed on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// The final variables, sorted by name (byte order), one per name.
    pub vars: Vec<(String, String)>,
    /// The step that set each variable in `vars`, by its exact name.
    pub sources: BTreeMap<String, Source>,
    /// Each removed name once, in pipeline order; within a step sorted by the
    /// names' comparison form (the upper-cased name on Windows).
    pub removed: Vec<Removal>,
    /// `PATH` as it was before the managed layer: without the contributors'
    /// command directories, which shells are never looked up in.
    pub unmanaged_path: Option<String>,
    platform: Platform,
}

impl Environment {
    /// The value of `name`, compared the platform's way.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.find(name).map(|(_, value)| value.as_str())
    }

    /// The step that set `name`, compared the platform's way.
    pub fn source(&self, name: &str) -> Option<Source> {
        let (found, _) = self.find(name)?;
        self.sources.get(found).copied()
    }

    fn find(&self, name: &str) -> Option<&(String, String)> {
        self.vars.iter().find(|(found, _)| self.platform.same_name(found, name))
    }
}

/// Runs the pipeline described in the module documentation.
///
/// The parent is trusted but filtered: entries that can never reach `execve`
/// (an empty name, `=` after the first character of the name, a NUL anywhere)
/// are removed as [`RemovalReason::Unrepresentable`], unless another entry of
/// the same variable is kept. A leading `=` is kept, for Windows'
/// per-drive variables such as `=C:`. When two parent names denote the same
/// variable (the same name twice, or two spellings on Windows), the pair that
/// sorts first by name and then value in byte order wins, so `PATH` beats
/// `Path`: the choice Node's `child_process` makes on Windows, and independent
/// of the parent's iteration order. The losing duplicate is not reported.
///
/// Explicit and managed entries apply in the order given; a later entry for
/// the same name replaces an earlier one.
pub fn build_environment(
    platform: &Platform,
    parent: impl IntoIterator<Item = (String, String)>,
    spec: &EnvironmentSpec,
) -> Result<Environment, ExecError> {
    build_environment_from(platform, &Parent::from_pairs(parent), spec)
}

/// [`build_environment`] for a parent already packed (read from a caller's
/// object, some of whose entries may have held no text at all: a value that
/// is not a string, or a JS string with a lone surrogate). Those are named by
/// [`Parent::unrepresentable`] and each is reported as
/// [`RemovalReason::Unrepresentable`] as the entries that cannot reach
/// `execve` are, so every parent entry a child does not get is in `removed`.
pub fn build_environment_from(
    platform: &Platform,
    parent: &Parent,
    spec: &EnvironmentSpec,
) -> Result<Environment, ExecError> {
    Ok(Arc::unwrap_or_clone(build_environment_shared(platform, parent, spec)?))
}

/// [`build_environment_from`], shared: what the pipeline makes of a parent is
/// remembered (`remembered`), so the same parent under the same scrub policy
/// is judged once, and the same parent and spec give the environment built
/// last time; any change to either is built anew.
pub fn build_environment_shared(
    platform: &Platform,
    parent: &Parent,
    spec: &EnvironmentSpec,
) -> Result<Arc<Environment>, ExecError> {
    validate(spec)?;
    Ok(remembered::REMEMBERED.built(
        platform,
        parent,
        spec,
        || scrub(platform, parent, &spec.scrub),
        |scrubbed| layer(platform, scrubbed, spec),
    ))
}

/// Steps 8–11 on what steps 1–7 left.
fn layer(platform: &Platform, scrubbed: &Scrubbed, spec: &EnvironmentSpec) -> Environment {
    let mut env = Builder::from_scrubbed(platform, scrubbed);
    for (name, value) in spec.terminal.iter().flatten() {
        env.set(name, value, Source::Terminal);
    }
    for (name, value) in &spec.explicit {
        match value {
            Some(value) => env.set(name, value, Source::Explicit),
            None => env.unset(name),
        }
    }
    let managed: BTreeSet<String> = spec.managed.iter().map(|(key, _)| platform.fold(key).into_owned()).collect();
    env.drop_added(RemovalReason::Unmanaged, |var| {
        keys::has_managed_prefix(&upper(&var.name)) && !managed.contains(var.key())
    });
    let unmanaged_path = env.find(&platform.fold(keys::PATH_KEY)).ok().map(|index| env.vars[index].value.clone());
    for (key, value) in &spec.managed {
        env.set(key, value, Source::Managed);
    }
    env.finish(unmanaged_path)
}

/// Steps 1–7: what the parent leaves under `scrub`.
fn scrub(platform: &Platform, parent: &Parent, scrub: &ScrubPolicy) -> Scrubbed {
    let mut env = Builder::from_parent(platform, parent);

    // Compared in the platform's form, so on Windows a spelling that only
    // upper-cases into the namespace (`dſh_session_id` → `DSH_SESSION_ID`) goes too.
    env.drop_inherited(RemovalReason::ManagedPrefix, |var| keys::has_managed_prefix(&platform.fold(&var.name)));
    env.drop_inherited(RemovalReason::Inherit, |var| match scrub.inherit {
        Inherit::All => false,
        Inherit::Core => !platform.is_core(&var.name),
        Inherit::None => true,
    });
    if scrub.default_exclude {
        // In the platform's form: on Windows, where names ignore case, the
        // upper-cased name (`apiSecret` is `APISECRET`, still a credential).
        // Remembered per variable too: when one variable changes, the others
        // are not judged again.
        // One verdict per variable gives the reason of any of the three steps.
        env.drop_inherited_each(|var| {
            credentials::find_remembered(&platform.fold(&var.name), &var.value).map(|finding| match finding {
                Finding::Name => RemovalReason::Credential,
                Finding::Value => RemovalReason::SecretValue,
                Finding::PublicPrefixSecret => RemovalReason::PublicPrefixSecret,
            })
        });
    }
    if !scrub.exclude.is_empty() {
        let exclude = Globs::new(&scrub.exclude);
        env.drop_inherited(RemovalReason::Exclude, |var| exclude.matches(&var.name));
    }
    if scrub.hardening {
        let hardening = hardening_globs();
        env.drop_inherited(RemovalReason::Hardening, |var| {
            hardening.matches(&var.name) || var.value.starts_with(HARDENING_VALUE_PREFIX)
        });
    }
    if let Some(include_only) = &scrub.include_only {
        let include_only = Globs::new(include_only);
        env.drop_inherited(RemovalReason::IncludeOnly, |var| !include_only.matches(&var.name));
    }
    Scrubbed { vars: env.vars, removed: env.removed, reported: env.reported }
}

/// Rejects a spec that names something a child environment cannot hold,
/// naming the exact field.
fn validate(spec: &EnvironmentSpec) -> Result<(), ExecError> {
    check_globs("scrub.exclude", &spec.scrub.exclude)?;
    if let Some(include_only) = &spec.scrub.include_only {
        check_globs("scrub.includeOnly", include_only)?;
    }
    // Fields are named only once one is wrong: this runs for every spawn.
    let field = |layer: &str, name: &str| format!("{layer}.{name}");
    for (name, value) in spec.terminal.iter().flatten() {
        check_name(name)
            .and_then(|()| check_value(value))
            .map_err(|reason| ExecError::invalid_spec(field("terminalEnv", name), reason))?;
    }
    for (name, value) in &spec.explicit {
        check_name(name)
            .and_then(|()| value.as_deref().map_or(Ok(()), check_value))
            .map_err(|reason| ExecError::invalid_spec(field("env", name), reason))?;
    }
    for (key, value) in &spec.managed {
        if !keys::is_valid_key(key) && key != keys::PATH_KEY {
            return Err(ExecError::invalid_spec(
                field("dshEnv", key),
                "managed keys must match DSH_[A-Z][A-Z0-9_]* or be exactly PATH",
            ));
        }
        check_value(value).map_err(|reason| ExecError::invalid_spec(field("dshEnv", key), reason))?;
    }
    Ok(())
}

fn check_globs(field: &str, globs: &[String]) -> Result<(), ExecError> {
    for (index, glob) in globs.iter().enumerate() {
        let reason = if glob.is_empty() {
            "glob must not be empty"
        } else if glob.contains('\0') {
            // No name can hold one, so such a glob is always a mistake.
            "glob must not contain a NUL byte"
        } else {
            continue;
        };
        return Err(ExecError::invalid_spec(format!("{field}[{index}]"), reason));
    }
    Ok(())
}

/// A caller's name may not contain `=` at all: the leading `=` Windows uses
/// for per-drive variables is only accepted from the parent. The error is
/// what is wrong with it.
fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        Err("name must not be empty")
    } else if name.contains('=') {
        Err("name must not contain '='")
    } else if name.contains('\0') {
        Err("name must not contain a NUL byte")
    } else {
        Ok(())
    }
}

fn check_value(value: &str) -> Result<(), &'static str> {
    match value.contains('\0') {
        true => Err("value must not contain a NUL byte"),
        false => Ok(()),
    }
}

/// Whether a parent entry can be written into an `execve` environment block
/// and read back under the same name.
fn can_reach_execve(name: &str, value: &str) -> bool {
    !name.is_empty() && !name.chars().skip(1).any(|c| c == '=') && !name.contains('\0') && !value.contains('\0')
}

/// What steps 1–7 leave of a parent (see `remembered`).
struct Scrubbed {
    /// The inherited variables kept, as [`Builder::vars`].
    vars: Vec<Var>,
    /// What the steps removed, as [`Builder::removed`].
    removed: Vec<Removal>,
    /// As [`Builder::reported`].
    reported: BTreeSet<String>,
}

/// One variable while the pipeline runs.
#[derive(Clone)]
struct Var {
    name: String,
    value: String,
    source: Source,
    /// The platform's comparison form of `name`, when it differs from `name`
    /// (only on case-insensitive platforms), so POSIX names are never copied.
    folded: Option<String>,
}

impl Var {
    fn new(platform: &Platform, name: String, value: String, source: Source) -> Self {
        let folded = match platform.fold(&name) {
            Cow::Owned(folded) if folded != name => Some(folded),
            _ => None,
        };
        Self { name, value, source, folded }
    }

    /// What one variable is known by, however it is spelt.
    fn key(&self) -> &str {
        self.folded.as_deref().unwrap_or(&self.name)
    }
}

/// The environment under construction.
struct Builder<'a> {
    platform: &'a Platform,
    /// Sorted by [`Var::key`], one entry per key.
    vars: Vec<Var>,
    removed: Vec<Removal>,
    /// Comparison forms already in `removed`, so each name is reported once.
    reported: BTreeSet<String>,
}

impl<'a> Builder<'a> {
    fn from_parent(platform: &'a Platform, parent: &Parent) -> Self {
        let mut unrepresentable = parent.unrepresentable().to_vec();
        let mut vars: Vec<Var> = Vec::new();
        for (name, value) in parent.entries() {
            if can_reach_execve(name, value) {
                vars.push(Var::new(platform, name.to_owned(), value.to_owned(), Source::Inherited));
            } else {
                unrepresentable.push(name.to_owned());
            }
        }
        // Sorting by name and value within a key makes the surviving duplicate
        // (the first) independent of parent order.
        vars.sort_unstable_by(|a, b| (a.key(), &a.name, &a.value).cmp(&(b.key(), &b.name, &b.value)));
        vars.dedup_by(|later, first| later.key() == first.key());
        let mut builder = Self { platform, vars, removed: Vec::new(), reported: BTreeSet::new() };
        builder.report_unrepresentable(unrepresentable);
        builder
    }

    /// Where steps 1–7 left a parent, for the steps that follow.
    fn from_scrubbed(platform: &'a Platform, scrubbed: &Scrubbed) -> Self {
        let Scrubbed { vars, removed, reported } = scrubbed;
        // Room for the terminal defaults and a few explicit variables.
        let mut kept = Vec::with_capacity(vars.len() + 8);
        kept.extend_from_slice(vars);
        Self { platform, vars: kept, removed: removed.clone(), reported: reported.clone() }
    }

    /// Reports the parent entries no child could be given, each variable once
    /// and in comparison order, unless another entry of it is kept (a Windows
    /// spelling that differs only in case).
    fn report_unrepresentable(&mut self, names: Vec<String>) {
        if names.is_empty() {
            return;
        }
        let mut gone: Vec<(String, String)> = names
            .into_iter()
            .map(|name| (self.platform.fold(&name).into_owned(), name))
            .filter(|(key, _)| self.find(key).is_err())
            .collect();
        gone.sort_unstable();
        for (key, name) in gone {
            self.report(key, name, RemovalReason::Unrepresentable);
        }
    }

    /// Removes the inherited variables `drop` selects, reporting them with `reason`.
    fn drop_inherited(&mut self, reason: RemovalReason, drop: impl Fn(&Var) -> bool) {
        self.drop_where(reason, |var| var.source == Source::Inherited && drop(var));
    }

    /// Removes the terminal and explicit variables `drop` selects, reporting them with `reason`.
    fn drop_added(&mut self, reason: RemovalReason, drop: impl Fn(&Var) -> bool) {
        self.drop_where(reason, |var| matches!(var.source, Source::Terminal | Source::Explicit) && drop(var));
    }

    fn drop_where(&mut self, reason: RemovalReason, drop: impl Fn(&Var) -> bool) {
        self.drop_each(|var| drop(var).then_some(reason));
    }

    /// Removes the inherited variables `reason_of` gives a reason for, in
    /// one pass: several consecutive steps that one judgement decides.
    fn drop_inherited_each(&mut self, reason_of: impl Fn(&Var) -> Option<RemovalReason>) {
        self.drop_each(|var| if var.source == Source::Inherited { reason_of(var) } else { None });
    }

    fn drop_each(&mut self, reason_of: impl Fn(&Var) -> Option<RemovalReason>) {
        let mut dropped = Vec::new();
        self.vars.retain_mut(|var| match reason_of(var) {
            Some(reason) => {
                dropped.push((reason, var.key().to_owned(), std::mem::take(&mut var.name)));
                false
            }
            None => true,
        });
        // In pipeline order; stable, so in comparison order within a step.
        dropped.sort_by_key(|(reason, _, _)| *reason);
        for (reason, key, name) in dropped {
            self.report(key, name, reason);
        }
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.vars.binary_search_by(|var| var.key().cmp(key))
    }

    fn set(&mut self, name: &str, value: &str, source: Source) {
        let var = Var::new(self.platform, name.to_owned(), value.to_owned(), source);
        match self.find(var.key()) {
            Ok(index) if self.platform.keep_path_spelling && var.key() == keys::PATH_KEY => {
                let old = &mut self.vars[index];
                (old.value, old.source) = (var.value, var.source);
            }
            Ok(index) => self.vars[index] = var,
            Err(index) => self.vars.insert(index, var),
        }
    }

    fn unset(&mut self, name: &str) {
        let key = self.platform.fold(name);
        if let Ok(index) = self.find(&key) {
            let old = self.vars.remove(index);
            self.report(key.into_owned(), old.name, RemovalReason::ExplicitUnset);
        }
    }

    fn report(&mut self, key: String, name: String, reason: RemovalReason) {
        if self.reported.insert(key) {
            self.removed.push(Removal { key: name, reason });
        }
    }

    fn finish(self, unmanaged_path: Option<String>) -> Environment {
        let mut vars = self.vars;
        // Already in order where names are their own keys (POSIX).
        vars.sort_by(|a, b| a.name.cmp(&b.name));
        Environment {
            sources: vars.iter().map(|var| (var.name.clone(), var.source)).collect(),
            vars: vars.into_iter().map(|var| (var.name, var.value)).collect(),
            removed: self.removed,
            unmanaged_path,
            platform: *self.platform,
        }
    }
}

/// Case-insensitive name globs, upper-cased once. Whole names (most of the
/// hardening list) are looked up in a set, and `*TEXT*` globs (most of the
/// credential list) are found in one pass over the name, by their first
/// byte; the rest are tried in turn. This runs for every inherited name of
/// every spawn.
struct Globs {
    exact: HashSet<String>,
    /// The `*TEXT*` texts, by their first byte.
    substrings: Vec<Vec<Box<[u8]>>>,
    others: Vec<Glob>,
}

/// The hardening globs, made once.
fn hardening_globs() -> &'static Globs {
    static GLOBS: OnceLock<Globs> = OnceLock::new();
    GLOBS.get_or_init(|| Globs::new(HARDENING_PATTERNS))
}

/// One upper-cased glob. The usual shapes (`*KEY*`, `LC_*`, `PATH`) are a
/// literal with or without a `*` at either end, matched as a substring, prefix,
/// suffix or whole name; only the rest need [`glob_matches`]. This runs for
/// every inherited variable and pattern of every spawn.
enum Glob {
    Literal { text: String, at_start: bool, at_end: bool },
    General(String),
}

impl Glob {
    fn new(pattern: &str) -> Self {
        let pattern = upper(pattern);
        let text = pattern.trim_matches('*');
        if text.contains(['*', '?']) {
            return Self::General(pattern);
        }
        let (at_start, at_end) = (!pattern.starts_with('*'), !pattern.ends_with('*'));
        Self::Literal { text: text.to_owned(), at_start, at_end }
    }

    /// Whether the upper-cased `name` matches.
    fn matches(&self, name: &str) -> bool {
        match self {
            Self::Literal { text, at_start: true, at_end: true } => name == text,
            Self::Literal { text, at_start: true, at_end: false } => name.starts_with(text.as_str()),
            Self::Literal { text, at_start: false, at_end: true } => name.ends_with(text.as_str()),
            Self::Literal { text, at_start: false, at_end: false } => name.contains(text.as_str()),
            Self::General(pattern) => glob_matches(pattern, name, identity),
        }
    }
}

impl Globs {
    fn new(patterns: &[impl AsRef<str>]) -> Self {
        let mut globs = Self { exact: HashSet::new(), substrings: vec![Vec::new(); 256], others: Vec::new() };
        for pattern in patterns {
            match Glob::new(pattern.as_ref()) {
                Glob::Literal { text, at_start: true, at_end: true } => {
                    globs.exact.insert(text);
                }
                Glob::Literal { text, at_start: false, at_end: false } if !text.is_empty() => {
                    globs.substrings[usize::from(text.as_bytes()[0])].push(text.into_bytes().into_boxed_slice());
                }
                other => globs.others.push(other),
            }
        }
        globs
    }

    fn matches(&self, name: &str) -> bool {
        let name = if name.bytes().any(|b| !b.is_ascii() || b.is_ascii_lowercase()) {
            Cow::Owned(upper(name))
        } else {
            Cow::Borrowed(name)
        };
        self.exact.contains(name.as_ref())
            || self.has_substring(name.as_bytes())
            || self.others.iter().any(|glob| glob.matches(&name))
    }

    /// Whether one of the `*TEXT*` texts occurs in the upper-cased `name`.
    fn has_substring(&self, name: &[u8]) -> bool {
        (0..name.len()).any(|at| self.substrings[usize::from(name[at])].iter().any(|text| name[at..].starts_with(text)))
    }
}

/// Whether `name` matches `pattern` exactly, where `*` matches any run of
/// characters and `?` exactly one; each character of `name` is compared as
/// `fold` maps it. Works on byte offsets, without allocating.
fn glob_matches(pattern: &str, name: &str, fold: impl Fn(char) -> char) -> bool {
    let next = |s: &str, at: usize| s[at..].chars().next();
    let (mut p, mut n) = (0, 0);
    // After a mismatch, retry from the last `*` with it swallowing one more character.
    let mut last_star: Option<(usize, usize)> = None;
    while let Some(c) = next(name, n) {
        match next(pattern, p) {
            Some('*') => {
                last_star = Some((p, n));
                p += 1;
            }
            Some(wanted) if wanted == '?' || wanted == fold(c) => {
                p += wanted.len_utf8();
                n += c.len_utf8();
            }
            _ => match last_star {
                Some((star, swallowed)) => {
                    let swallowed = swallowed + next(name, swallowed).map_or(1, char::len_utf8);
                    last_star = Some((star, swallowed));
                    p = star + 1;
                    n = swallowed;
                }
                None => return false,
            },
        }
    }
    pattern[p..].chars().all(|c| c == '*')
}

/// Upper-cases one character, keeping any character whose upper case is not a
/// single character (`ß` stays `ß`): one-to-one like the upper-case table
/// Windows compares names with.
#[inline]
fn upper_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_uppercase();
    }
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// [`upper_char`] over a whole name.
fn upper(s: &str) -> String {
    s.chars().map(upper_char).collect()
}

#[cfg(test)]
mod tests;
