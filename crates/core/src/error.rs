//! The errors of the core, each with the stable code a JS caller sees as
//! `error.code`. The binding maps them to JS errors in one place.

use std::io;

use crate::os_error::os_error_name;

/// Registration, home resolution and collection errors.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ShellEnvError {
    /// The contributor name is missing, not a string or blank.
    #[error("bash env contributor name must be non-empty: expected a non-blank string{}", found_suffix(.found))]
    InvalidName { found: Option<String> },
    /// The contributor object itself has the wrong shape.
    #[error("bash env contributor {contributor:?}: {reason}")]
    InvalidContributor { contributor: String, reason: String },
    /// A contributor with this name is already registered.
    #[error("bash env contributor {contributor:?} is already registered")]
    DuplicateContributor { contributor: String },
    /// A declared key does not follow `DSH_[A-Z][A-Z0-9_]*`.
    #[error("bash env contributor {contributor:?} declared invalid key {key:?}: keys must match DSH_[A-Z][A-Z0-9_]*")]
    InvalidKey { contributor: String, key: String },
    /// A declared key is one of the registry's built-ins.
    #[error("bash env contributor {contributor:?} cannot own reserved key {key:?}: only the registry sets it")]
    ReservedKey { contributor: String, key: String },
    /// A declared key has no (or a blank) description.
    #[error("bash env contributor {contributor:?} must describe {key:?}: its description must be a non-blank string")]
    MissingDescription { contributor: String, key: String },
    /// Two contributors declare the same key.
    #[error("bash env key {key:?} is already owned by contributor {owner:?}; contributor {contributor:?} cannot also own it")]
    DuplicateKey { key: String, owner: String, contributor: String },
    /// A command directory is relative or cannot appear in a search path.
    #[error("bash env contributor {contributor:?} declared command directory {directory:?}: {reason}")]
    InvalidDirectory { contributor: String, directory: String, reason: String },
    /// The registry's profile is malformed.
    #[error("invalid profile: {reason}")]
    InvalidProfile { reason: String },
    /// Two configured homes resolve to different directories.
    #[error("dshHome {top:?} and skills.local.dshHome {skills_local:?} resolve to different directories")]
    HomeConflict { top: String, skills_local: String },
    /// The execution passed to a collection is not an object.
    #[error("execution must be an object{}", found_suffix(.found))]
    InvalidExecution { found: Option<String> },
    /// `execution.agent` is set, but its `session.header.id` is not a string.
    #[error("invalid execution: execution.agent.session.header.id {reason}")]
    InvalidAgent { reason: String },
    /// A resolver returned a key its contributor did not declare.
    #[error("bash env contributor {contributor:?} returned undeclared key {key:?}")]
    UndeclaredKey { contributor: String, key: String },
    /// A resolver returned a value that is not a string.
    #[error("bash env contributor {contributor:?} returned a non-string value for {key:?} (got {found})")]
    NonStringValue { contributor: String, key: String, found: String },
    /// A resolver returned a string that cannot reach `execve` unchanged: it
    /// contains a NUL byte or is not well-formed Unicode (a lone surrogate).
    #[error("bash env contributor {contributor:?} returned a value for {key:?} that {reason}")]
    InvalidValue { contributor: String, key: String, reason: &'static str },
    /// A resolver returned something other than a plain object.
    #[error("bash env contributor {contributor:?} resolver must return a plain object of strings (got {found})")]
    InvalidResult { contributor: String, found: String },
    /// A resolver threw or its promise rejected; the binding attaches the original error as `cause`.
    #[error("bash env contributor {contributor:?} resolver failed: {message}")]
    ResolverFailed { contributor: String, message: String },
    /// A synchronous collection got a thenable from a resolver.
    #[error(
        "bash env contributor {contributor:?} resolver returned a promise; use collectAsync() for async resolvers"
    )]
    AsyncResolver { contributor: String },
    /// An asynchronous resolver did not settle in time.
    #[error("bash env contributor {contributor:?} resolver did not settle within {timeout_ms} ms")]
    ResolverTimeout { contributor: String, timeout_ms: u64 },
    /// The caller's abort signal fired during an asynchronous collection.
    #[error("collection aborted")]
    Aborted,
    /// An option passed to a registry method is malformed.
    #[error("invalid option {option}: {reason}")]
    InvalidOption { option: &'static str, reason: String },
    /// A config or options object has a field the registry does not know.
    #[error("invalid option {option}: unknown field (the fields are {})", .known.join(", "))]
    UnknownOption { option: String, known: &'static [&'static str] },
}

fn found_suffix(found: &Option<String>) -> String {
    found.as_ref().map(|f| format!(" (got {f})")).unwrap_or_default()
}

impl ShellEnvError {
    /// The stable `error.code` of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidName { .. } => "ERR_SHELL_ENV_INVALID_NAME",
            Self::InvalidContributor { .. } => "ERR_SHELL_ENV_INVALID_CONTRIBUTOR",
            Self::DuplicateContributor { .. } => "ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR",
            Self::InvalidKey { .. } => "ERR_SHELL_ENV_INVALID_KEY",
            Self::ReservedKey { .. } => "ERR_SHELL_ENV_RESERVED_KEY",
            Self::MissingDescription { .. } => "ERR_SHELL_ENV_MISSING_DESCRIPTION",
            Self::DuplicateKey { .. } => "ERR_SHELL_ENV_DUPLICATE_KEY",
            Self::InvalidDirectory { .. } => "ERR_SHELL_ENV_INVALID_DIRECTORY",
            Self::InvalidProfile { .. } => "ERR_SHELL_ENV_INVALID_PROFILE",
            Self::HomeConflict { .. } => "ERR_SHELL_ENV_HOME_CONFLICT",
            Self::InvalidExecution { .. } | Self::InvalidAgent { .. } => "ERR_SHELL_ENV_INVALID_EXECUTION",
            Self::UndeclaredKey { .. } => "ERR_SHELL_ENV_UNDECLARED_KEY",
            Self::NonStringValue { .. } => "ERR_SHELL_ENV_NON_STRING_VALUE",
            Self::InvalidValue { .. } => "ERR_SHELL_ENV_INVALID_VALUE",
            Self::InvalidResult { .. } => "ERR_SHELL_ENV_INVALID_RESULT",
            Self::ResolverFailed { .. } => "ERR_SHELL_ENV_RESOLVER_FAILED",
            Self::AsyncResolver { .. } => "ERR_SHELL_ENV_ASYNC_RESOLVER",
            Self::ResolverTimeout { .. } => "ERR_SHELL_ENV_RESOLVER_TIMEOUT",
            Self::Aborted => "ERR_SHELL_ENV_ABORTED",
            Self::InvalidOption { .. } | Self::UnknownOption { .. } => "ERR_SHELL_ENV_INVALID_OPTION",
        }
    }
}

/// A supervisor that speaks another version of its protocol than this host
/// (`supervisor::protocol::PROTOCOL_VERSION`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the supervisor program speaks protocol version {found}, this addon version {expected}: \
     the two come from different builds (reinstall the package, then restart the host)"
)]
pub struct ProtocolMismatch {
    /// This host's version, `PROTOCOL_VERSION` (`supervisor::protocol`).
    pub expected: u32,
    /// The supervisor's.
    pub found: u32,
}

/// Errors of `execute()` and `buildEnvironment()`.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A field of the spec is malformed; `field` names it (`env.FOO`, `timeoutMs`, …).
    #[error("invalid spec field {field}: {reason}")]
    InvalidSpec { field: String, reason: String },
    /// The working directory does not exist, is not a directory or cannot be
    /// entered; the OS error (`ENOENT`, `ENOTDIR`, `EACCES`, …) is kept.
    // Quoted as Node quotes paths: `{:?}` would double a Windows path's backslashes.
    #[error("workdir '{path}' {} ({})", workdir_reason(.source), os_error_code(.source))]
    InvalidWorkdir {
        path: String,
        #[source]
        source: io::Error,
    },
    /// The `spillDir` cannot hold spill files: it does not exist, is not a
    /// directory, or this user cannot make its private directory in it; the
    /// OS error is kept.
    #[error("spillDir '{path}' {} ({})", spill_dir_reason(path, .source), os_error_code(.source))]
    InvalidSpillDir {
        path: String,
        #[source]
        source: io::Error,
    },
    /// The program could not be found or started; the OS error is kept.
    #[error("cannot start '{program}': {source}")]
    SpawnFailed {
        program: String,
        #[source]
        source: io::Error,
    },
    /// Collecting the managed environment failed before anything was spawned.
    #[error(transparent)]
    Collect(#[from] ShellEnvError),
    /// What the spec asks for cannot be done on this host.
    #[error("{feature} is not supported here: it {reason}")]
    Unsupported { feature: String, reason: String },
    /// The supervisor program beside the addon is of another build: nothing
    /// was started.
    #[error(transparent)]
    SupervisorMismatch(#[from] ProtocolMismatch),
}

/// The code of a result whose command was killed because the supervisor
/// died while it ran (a command can signal any process of its user): the
/// command's reaper ended it, and the next spawn starts a new supervisor.
pub const SUPERVISOR_LOST: &str = "ERR_SHELL_EXEC_SUPERVISOR_LOST";

/// What [`SUPERVISOR_LOST`] says, in words.
pub const SUPERVISOR_LOST_MESSAGE: &str =
    "the supervisor ended while the command ran, so the command was killed; the next command starts a new supervisor";

/// What an OS error means for a working or spill directory, in words.
fn workdir_reason(error: &io::Error) -> String {
    match os_error_code(error) {
        "ENOENT" => "does not exist".into(),
        "ENOTDIR" => "is not a directory".into(),
        _ => format!("cannot be used: {error}"),
    }
}

/// What an OS error means for a spill directory: as for a working directory,
/// except that `ENOENT` for a directory that exists means nothing can be
/// made in it (procfs answers so for `/proc`).
fn spill_dir_reason(path: &str, error: &io::Error) -> String {
    if os_error_code(error) == "ENOENT" && std::path::Path::new(path).is_dir() {
        return "cannot hold spill files: no directory can be made in it".into();
    }
    workdir_reason(error)
}

/// The name Node would give `error` in `error.code`, `UNKNOWN` for one without.
pub fn os_error_code(error: &io::Error) -> &'static str {
    error.raw_os_error().and_then(os_error_name).unwrap_or("UNKNOWN")
}

impl ExecError {
    /// Shorthand for [`ExecError::InvalidSpec`].
    pub fn invalid_spec(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidSpec { field: field.into(), reason: reason.into() }
    }

    /// The stable `error.code` of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidSpec { .. } => "ERR_SHELL_EXEC_INVALID_SPEC",
            Self::InvalidWorkdir { .. } => "ERR_SHELL_EXEC_INVALID_WORKDIR",
            Self::InvalidSpillDir { .. } => "ERR_SHELL_EXEC_INVALID_SPILL_DIR",
            Self::SpawnFailed { .. } => "ERR_SHELL_EXEC_SPAWN_FAILED",
            Self::Unsupported { .. } => "ERR_SHELL_EXEC_UNSUPPORTED",
            Self::SupervisorMismatch(_) => "ERR_SHELL_EXEC_SUPERVISOR_MISMATCH",
            Self::Collect(inner) => inner.code(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable() {
        assert_eq!(ShellEnvError::Aborted.code(), "ERR_SHELL_ENV_ABORTED");
        assert_eq!(ExecError::invalid_spec("timeoutMs", "must be positive").code(), "ERR_SHELL_EXEC_INVALID_SPEC");
        assert_eq!(ExecError::from(ShellEnvError::Aborted).code(), "ERR_SHELL_ENV_ABORTED");
    }

    #[test]
    fn a_workdir_error_names_the_path_as_given_and_the_os_error_as_node_does() {
        let dir = tempfile_dir();
        let file = dir.join("a-file");
        std::fs::write(&file, "").unwrap();
        for (path, code, reason) in
            [(dir.join("missing").join("deeper"), "ENOENT", "does not exist"), (file, "ENOTDIR", "is not a directory")]
        {
            let error = crate::process::check_workdir(&path).unwrap_err();
            let ExecError::InvalidWorkdir { source, .. } = &error else { panic!("{error:?}") };
            assert_eq!(os_error_code(source), code);
            assert_eq!(error.to_string(), format!("workdir '{}' {reason} ({code})", path.display()));
        }
        assert_eq!(os_error_code(&io::Error::other("no OS error")), "UNKNOWN");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_spill_dir_that_exists_but_takes_no_directory_is_not_called_missing() {
        let error = crate::process::check_spill_base(std::path::Path::new("/proc")).unwrap_err();
        let error = ExecError::InvalidSpillDir { path: "/proc".into(), source: error };
        assert_eq!(
            error.to_string(),
            "spillDir '/proc' cannot hold spill files: no directory can be made in it (ENOENT)"
        );
        let missing = ExecError::InvalidSpillDir {
            path: "/no/such/spill/dir".into(),
            source: io::Error::from_raw_os_error(libc::ENOENT),
        };
        assert_eq!(missing.to_string(), "spillDir '/no/such/spill/dir' does not exist (ENOENT)");
    }

    /// A fresh directory under the system temp directory.
    fn tempfile_dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("dsh-error-names-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
