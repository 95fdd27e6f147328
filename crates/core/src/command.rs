//! From an `execute()` request to what the process layer starts: the shell
//! invocation, the defaults, the checks on every number, the child's
//! environment and the program resolved against that environment's PATH.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::environment::{build_environment_shared, EnvironmentSpec, Parent, Platform};
use crate::error::ExecError;
use crate::keys::PATH_KEY;
pub use crate::limits::LIMIT_FIELDS;
use crate::limits::{Limits, RawLimits};
use crate::process::terminal::TerminalSize;
use crate::process::{
    check_spill_base, check_workdir, resolve_program, Input, Output, OutputLimits, ProcessSpec, Search, SpillPlace,
};
use crate::spec_fields::{spec_fields, FromSpec, SpecReader, TextOrList};

/// Default time before a foreground command is killed.
pub const DEFAULT_TIMEOUT_MS: f64 = 120_000.0;
/// Default time between SIGTERM and SIGKILL.
pub const DEFAULT_GRACE_MS: f64 = 3_000.0;
/// Default bytes of each stream kept in memory.
pub const DEFAULT_MAX_BYTES: f64 = 64_000.0;
/// Default largest spill file.
pub const DEFAULT_SPILL_MAX_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLine {
    /// A script for the shell (`bash -c <script>`, …).
    Script(String),
    /// A program and its arguments, run directly.
    Argv(Vec<String>),
}

/// What happens when the timeout passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Expiry {
    /// Kill the group (SIGTERM, then SIGKILL after the grace).
    #[default]
    Kill,
    /// No timer at all: background jobs.
    None,
}

impl std::str::FromStr for Expiry {
    type Err = ExecError;

    /// Parses `"kill"` or `"none"`; anything else is an invalid `onExpiry`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "kill" => Ok(Self::Kill),
            "none" => Ok(Self::None),
            _ => Err(ExecError::invalid_spec("onExpiry", format!("must be 'kill' or 'none' (got {s:?})"))),
        }
    }
}

spec_fields! {
    /// An `execute()` request as plain data, declared once: each field with
    /// the spec field it is read from, in the order a host reads them (see
    /// [`crate::spec_fields`]). Numbers arrive as JS numbers and are checked
    /// here, so every caller gets the same rules.
    #[derive(Debug, Clone, Default)]
    pub struct ExecRequest in "an object" {
        /// What to run.
        command: Option<CommandLine> = "command",
        /// `bash` (default), `sh`, `pwsh`, any other shell's name (looked up on
        /// the trusted search path only) or an absolute path to a shell; only for
        /// scripts.
        shell: Option<String> = "shell",
        /// The child's working directory; relative paths resolve against `cwd`.
        workdir: Option<String> = "workdir",
        /// Milliseconds before the group is killed (default 120 000).
        timeout_ms: Option<f64> = "timeoutMs",
        /// Milliseconds between SIGTERM and SIGKILL (default 3 000).
        grace_ms: Option<f64> = "graceMs",
        /// Bytes of stdout kept in memory (default 64 000).
        stdout_max_bytes: Option<f64> = "stdoutMaxBytes",
        /// Bytes of stderr kept in memory (default 64 000).
        stderr_max_bytes: Option<f64> = "stderrMaxBytes",
        /// Largest spill file per stream (default 64 MiB).
        spill_max_bytes: Option<f64> = "spillMaxBytes",
        /// The absolute directory spill files go in (default: the system temp directory).
        spill_dir: Option<String> = "spillDir",
        /// Keep spill files when the result is dropped; the caller removes them.
        keep_spill_files: bool = "keepSpillFiles",
        /// Kill on expiry, or run without a timer.
        on_expiry: Expiry = "onExpiry",
        /// Bytes written to the child's stdin, which is then closed.
        stdin: Option<Vec<u8>> = "stdin",
        /// Milliseconds the registry's collection may take before the call fails
        /// (default 5 000); read only with `registry`.
        collect_timeout_ms: Option<f64> = "collectTimeoutMs",
        /// Streams not captured here: `stdio.stdin` `"pipe"`, `stdio.stdout` and
        /// `stdio.stderr` `"capture"` (the default), `"pipe"` or `"inherit"`.
        stdio: StdioRequest = "stdio",
        /// `limits`, as numbers given (checked by [`plan`]).
        limits: RawLimits = "limits",
    }
    also {
        /// The environment layers on top of the parent environment, which a
        /// host reads from `env`, `scrub`, `terminalEnv` and `dshEnv`.
        environment: EnvironmentSpec,
    }
}

spec_fields! {
    /// The `stdio` field of a request, as given (checked by [`plan`]).
    #[derive(Debug, Clone, Default)]
    pub struct StdioRequest in "an object", absent is default {
        /// `"pipe"`: the caller writes stdin (else it is `stdin`'s bytes or empty).
        stdin: Option<String> = "stdin",
        /// `"capture"`, `"pipe"` or `"inherit"`.
        stdout: Option<String> = "stdout",
        /// `"capture"`, `"pipe"` or `"inherit"`.
        stderr: Option<String> = "stderr",
        /// `{ rows, cols }`: run on a new pseudo-terminal (Windows: pseudo
        /// console) of that size instead (the `ctx.subprocess` runtime's
        /// terminals), as numbers given.
        terminal: Option<RawTerminalSize> = "terminal",
    }
}

spec_fields! {
    /// A spec's `stdio.terminal` as given: JS numbers, not yet checked. Checked
    /// into a [`TerminalSize`] by `try_from`.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct RawTerminalSize in "an object { rows, cols }" {
        /// `rows`.
        rows: f64 = "rows",
        /// `cols`.
        cols: f64 = "cols",
    }
}

/// `onExpiry`: `"kill"` (the default) or `"none"`.
impl FromSpec for Expiry {
    fn from_spec<R: SpecReader>(reader: &R, field: &'static str) -> Result<Self, R::Error> {
        Ok(match reader.string(field)? {
            Some(on_expiry) => on_expiry.parse()?,
            None => Self::default(),
        })
    }
}

/// `command`: a string is a script, an array a program and its arguments.
impl FromSpec for Option<CommandLine> {
    fn from_spec<R: SpecReader>(reader: &R, field: &'static str) -> Result<Self, R::Error> {
        Ok(reader.text_or_list(field)?.map(|command| match command {
            TextOrList::Text(script) => CommandLine::Script(script),
            TextOrList::List(argv) => CommandLine::Argv(argv),
        }))
    }
}

impl TryFrom<RawTerminalSize> for TerminalSize {
    type Error = ExecError;

    /// Whole numbers of rows and columns from 1 to 65535, rows first.
    fn try_from(raw: RawTerminalSize) -> Result<Self, ExecError> {
        let cells = |field: &str, value: f64| {
            let whole = value.fract() == 0.0 && (1.0..=f64::from(u16::MAX)).contains(&value);
            whole.then_some(value as u16).ok_or_else(|| {
                ExecError::invalid_spec(
                    format!("stdio.terminal.{field}"),
                    format!("must be a whole number from 1 to 65535 (got {value})"),
                )
            })
        };
        Ok(Self { rows: cells("rows", raw.rows)?, cols: cells("cols", raw.cols)? })
    }
}

/// The mode that hands a stream's raw pipe to the caller.
const PIPE: &str = "pipe";

impl StdioRequest {
    /// Whether any stream is a raw pipe the caller takes (`"pipe"`), so the
    /// host must be able to hand pipes over.
    pub fn hands_over_pipes(&self) -> bool {
        [&self.stdin, &self.stdout, &self.stderr].into_iter().any(|mode| mode.as_deref() == Some(PIPE))
    }
}

/// Every field of an `execute()` spec (`buildEnvironment()` takes the same
/// spec), in the order the docs list them: those of [`ExecRequest::FIELDS`],
/// and those the binding reads itself (the environment layers `env`,
/// `scrub`, `terminalEnv` and `dshEnv`; `registry`, `execution`, `signal`,
/// `onOutput`).
pub const SPEC_FIELDS: &[&str] = &[
    "command",
    "shell",
    "workdir",
    "timeoutMs",
    "onExpiry",
    "graceMs",
    "signal",
    "stdin",
    "stdoutMaxBytes",
    "stderrMaxBytes",
    "spillMaxBytes",
    "spillDir",
    "keepSpillFiles",
    "env",
    "dshEnv",
    "registry",
    "execution",
    "scrub",
    "terminalEnv",
    "onOutput",
    "stdio",
    "collectTimeoutMs",
    "limits",
];

/// Every field of a spec's `scrub`.
pub const SCRUB_FIELDS: &[&str] = &["inherit", "defaultExclude", "exclude", "includeOnly", "hardening"];

/// Names people reach for from other spawning APIs, and the field meant.
const LIKELY_MEANT: &[(&str, &str)] = &[
    ("cwd", "workdir"),
    ("timeout", "timeoutMs"),
    ("grace", "graceMs"),
    ("input", "stdin"),
    ("maxBuffer", "stdoutMaxBytes"),
    ("killSignal", "graceMs"),
    ("abortSignal", "signal"),
];

/// Refuses a field that is not in `known`: a misspelt or foreign option would
/// otherwise fall back to a default silently (`cwd` for `workdir`, `timeout`
/// for `timeoutMs`). `prefix` is `""` for the spec itself, `"scrub."` for its
/// scrub.
pub fn check_fields<'a>(
    prefix: &str,
    fields: impl IntoIterator<Item = &'a str>,
    known: &[&str],
) -> Result<(), ExecError> {
    for field in fields {
        if known.contains(&field) {
            continue;
        }
        let hint = match LIKELY_MEANT.iter().find(|(name, _)| *name == field) {
            Some((_, meant)) => format!("; did you mean {prefix}{meant}?"),
            None => format!(" (the fields are {})", known.join(", ")),
        };
        return Err(ExecError::invalid_spec(format!("{prefix}{field}"), format!("is not a spec field{hint}")));
    }
    Ok(())
}

/// Checks `request` and builds its environment and what the process layer
/// needs to spawn it (without a live output sink). `cwd` is the caller's
/// current directory (for a missing or relative `workdir`).
pub fn plan(request: &ExecRequest, parent: &Parent, platform: &Platform, cwd: &Path) -> Result<ProcessSpec, ExecError> {
    let Invocation { program, args, shell_name } = invocation(request, platform)?;
    let Options { timeout, grace, resource_limits, stdout, stderr, spill } = options(request)?;

    // Shared with the last build from the same parent and spec, if any.
    let environment = build_environment_shared(platform, parent, &request.environment)?;
    let workdir = workdir(request.workdir.as_deref(), cwd)?;
    if let Some(base) = &spill.base {
        check_spill_base(base)
            .map_err(|source| ExecError::InvalidSpillDir { path: base.display().to_string(), source })?;
    }
    let search = |path| match platform.pathext {
        true => Search::windows(path, environment.get("PATHEXT")),
        false => Search::posix(path),
    };
    let program = if shell_name || SHELLS.contains(&program.as_str()) {
        // A shell is never taken from the workdir, a relative PATH entry or a
        // contributed command directory, where one command could plant a
        // `bash` for the next.
        let trusted = trusted_search_path(environment.unmanaged_path.as_deref(), platform);
        if trusted.is_empty() {
            // Searched, an empty path would mean the workdir.
            let source = std::io::Error::from(std::io::ErrorKind::NotFound);
            return Err(ExecError::SpawnFailed { program, source });
        }
        resolve_program(&program, search(Some(&trusted)), &workdir)?
    } else {
        resolve_program(&program, search(environment.get(PATH_KEY)), &workdir)?
    };

    let mut spec = ProcessSpec::new(program, workdir);
    spec.args = args;
    spec.env = environment.vars.clone();
    spec.stdin = match (request.stdio.stdin.as_deref(), &request.stdin) {
        (None, data) => data.clone().map_or(Input::Null, Input::Data),
        (Some(PIPE), None) => Input::Pipe,
        (Some(PIPE), Some(_)) => {
            return Err(ExecError::invalid_spec("stdio.stdin", "'pipe' and a stdin value exclude each other"))
        }
        (Some(other), _) => {
            return Err(ExecError::invalid_spec("stdio.stdin", format!("must be 'pipe' (got {other:?})")))
        }
    };
    spec.stdout = output_mode("stdio.stdout", request.stdio.stdout.as_deref(), stdout)?;
    spec.stderr = output_mode("stdio.stderr", request.stdio.stderr.as_deref(), stderr)?;
    spec.terminal = terminal(&request.stdio, request.stdin.is_some())?;
    spec.spill = spill;
    spec.timeout = timeout;
    spec.grace = grace;
    spec.limits = resource_limits;
    Ok(spec)
}

/// Checks the options of `request` that do not depend on this host: the
/// timeout and grace, the byte counts, the spill directory's form and the
/// resource limits' values, by the rules [`plan`] applies. The local
/// executors check their config and requests with it.
pub fn check_options(request: &ExecRequest) -> Result<(), ExecError> {
    options(request).map(drop)
}

/// A request's options, checked ([`check_options`]).
struct Options {
    timeout: Option<Duration>,
    grace: Duration,
    resource_limits: Limits,
    stdout: OutputLimits,
    stderr: OutputLimits,
    spill: SpillPlace,
}

fn options(request: &ExecRequest) -> Result<Options, ExecError> {
    let timeout = duration("timeoutMs", request.timeout_ms, DEFAULT_TIMEOUT_MS, false)?;
    let grace = duration("graceMs", request.grace_ms, DEFAULT_GRACE_MS, true)?;
    let resource_limits = Limits::try_from(request.limits)?;
    let spill_max_bytes = byte_count("spillMaxBytes", request.spill_max_bytes, DEFAULT_SPILL_MAX_BYTES)?;
    let limits = |field, value| -> Result<OutputLimits, ExecError> {
        Ok(OutputLimits { max_bytes: byte_count(field, value, DEFAULT_MAX_BYTES)? as usize, spill_max_bytes })
    };
    Ok(Options {
        timeout: matches!(request.on_expiry, Expiry::Kill).then_some(timeout),
        grace,
        resource_limits,
        stdout: limits("stdoutMaxBytes", request.stdout_max_bytes)?,
        stderr: limits("stderrMaxBytes", request.stderr_max_bytes)?,
        spill: SpillPlace { base: spill_dir(request.spill_dir.as_deref())?, keep: request.keep_spill_files },
    })
}

/// The child's PATH as it would be before the managed layer: what a registry
/// collecting right before the spawn appends its command directories to.
pub fn path_before_managed(
    request: &ExecRequest,
    parent: &Parent,
    platform: &Platform,
) -> Result<Option<String>, ExecError> {
    let unmanaged = EnvironmentSpec { managed: Vec::new(), ..request.environment.clone() };
    Ok(build_environment_shared(platform, parent, &unmanaged)?.get(PATH_KEY).map(String::from))
}

/// What to start: the program to look up and its arguments.
struct Invocation {
    program: String,
    args: Vec<String>,
    /// The program is a shell given by its name (`shell: 'zsh'`), looked up
    /// only on the trusted search path, as the shells of [`SHELLS`] are.
    shell_name: bool,
}

/// The program to look up and its arguments.
fn invocation(request: &ExecRequest, platform: &Platform) -> Result<Invocation, ExecError> {
    let no_nul = |field: String, value: &str| {
        if value.contains('\0') {
            Err(ExecError::invalid_spec(field, "must not contain NUL bytes"))
        } else {
            Ok(())
        }
    };
    match &request.command {
        None => Err(ExecError::invalid_spec("command", "is required: a script string or an argv array")),
        Some(CommandLine::Argv(argv)) => {
            if request.shell.is_some() {
                return Err(ExecError::invalid_spec("shell", "only applies to a string command"));
            }
            let Some((program, args)) = argv.split_first() else {
                return Err(ExecError::invalid_spec("command", "argv must not be empty"));
            };
            if program.is_empty() {
                return Err(ExecError::invalid_spec("command[0]", "must be a non-empty program name"));
            }
            for (index, arg) in argv.iter().enumerate() {
                no_nul(format!("command[{index}]"), arg)?;
            }
            Ok(Invocation { program: program.clone(), args: args.to_vec(), shell_name: false })
        }
        Some(CommandLine::Script(script)) => {
            no_nul("command".into(), script)?;
            let shell = request.shell.as_deref().unwrap_or("bash");
            no_nul("shell".into(), shell)?;
            let args = match ShellKind::of(shell, platform) {
                ShellKind::PowerShell => {
                    vec!["-NoProfile".into(), "-NonInteractive".into(), "-Command".into(), script.clone()]
                }
                // `/s` keeps the quotes around the script as written (see the Windows command line).
                ShellKind::Cmd => vec!["/d".into(), "/s".into(), "/c".into(), script.clone()],
                ShellKind::Posix => vec!["-c".into(), script.clone()],
            };
            // Any name (`zsh`, `fish`), as `child_process` takes one, but looked
            // up as bash is; a relative path would be resolved against the workdir.
            let name = !shell.is_empty() && !shell.contains(['/', '\\']) && shell != "." && shell != "..";
            if Path::new(shell).is_absolute() {
                Ok(Invocation { program: shell.into(), args, shell_name: false })
            } else if name {
                Ok(Invocation { program: shell.into(), args, shell_name: true })
            } else {
                Err(ExecError::invalid_spec(
                    "shell",
                    format!(
                        "must be a shell's name, looked up on the trusted PATH, or an absolute path (got {shell:?})"
                    ),
                ))
            }
        }
    }
}

fn workdir(workdir: Option<&str>, cwd: &Path) -> Result<PathBuf, ExecError> {
    let path = match workdir {
        None => cwd.to_path_buf(),
        Some(dir) if dir.is_empty() || dir.contains('\0') => {
            return Err(ExecError::invalid_spec("workdir", "must be a non-empty path without NUL bytes"))
        }
        Some(dir) => cwd.join(dir),
    };
    check_workdir(&path)?;
    Ok(path)
}

/// The program names resolved as shells, against a trusted search path only.
pub const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "pwsh", "powershell", "cmd"];

/// How a shell takes its script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShellKind {
    /// `-c script`: bash, sh and any other shell.
    Posix,
    /// `-NoProfile -NonInteractive -Command script`: pwsh, powershell.
    PowerShell,
    /// `/d /s /c script`: cmd.
    Cmd,
}

impl ShellKind {
    /// The kind of `shell`, a name or a path (either separator, any case of
    /// a Windows name).
    /// Elsewhere only `pwsh` (or `pwsh.exe`) is PowerShell; on Windows (as
    /// `platform` says) names compare ignoring case, and `powershell` and
    /// `cmd` are known too.
    fn of(shell: &str, platform: &Platform) -> Self {
        if !platform.pathext {
            let file = Path::new(shell).file_name().and_then(|f| f.to_str()).unwrap_or("");
            let pwsh = file == "pwsh" || file.eq_ignore_ascii_case("pwsh.exe");
            return if pwsh { Self::PowerShell } else { Self::Posix };
        }
        let file = shell.rsplit(['/', '\\']).next().unwrap_or(shell);
        let stem = match file.len().checked_sub(4) {
            Some(at) if file.is_char_boundary(at) && file[at..].eq_ignore_ascii_case(".exe") => &file[..at],
            _ => file,
        };
        if ["pwsh", "powershell"].iter().any(|name| stem.eq_ignore_ascii_case(name)) {
            Self::PowerShell
        } else if stem.eq_ignore_ascii_case("cmd") {
            Self::Cmd
        } else {
            Self::Posix
        }
    }
}

/// The absolute entries of `path` (without contributed command directories,
/// see [`crate::environment::Environment::unmanaged_path`]); empty and
/// relative entries, which name the workdir, are left out. No `PATH` at all
/// searches what `execvp` would (on Windows: nothing).
fn trusted_search_path(path: Option<&str>, platform: &Platform) -> String {
    let delimiter = if platform.pathext { ';' } else { ':' };
    let Some(path) = path else {
        return if platform.pathext { String::new() } else { "/bin:/usr/bin".into() };
    };
    let absolute = |entry: &&str| {
        if platform.pathext {
            // `C:\…` or `\\server\…`; a drive-relative `C:bin` names a workdir.
            let bytes = entry.as_bytes();
            (bytes.len() > 2 && bytes[1] == b':' && matches!(bytes[2], b'\\' | b'/')) || entry.starts_with("\\\\")
        } else {
            entry.starts_with('/')
        }
    };
    path.split(delimiter).filter(absolute).collect::<Vec<_>>().join(&delimiter.to_string())
}

/// `stdio.terminal`: whole numbers of rows and columns from 1 to 65535, and
/// no other stdio setting beside it (the terminal is all three streams).
fn terminal(stdio: &StdioRequest, stdin_data: bool) -> Result<Option<TerminalSize>, ExecError> {
    let Some(raw) = stdio.terminal else { return Ok(None) };
    let size = TerminalSize::try_from(raw)?;
    let others = [
        ("stdio.stdin", stdio.stdin.is_some() || stdin_data),
        ("stdio.stdout", stdio.stdout.is_some()),
        ("stdio.stderr", stdio.stderr.is_some()),
    ];
    if let Some((field, _)) = others.into_iter().find(|(_, given)| *given) {
        return Err(ExecError::invalid_spec(field, "cannot be given with stdio.terminal, which is all three streams"));
    }
    Ok(Some(size))
}

/// Where an output stream goes: captured within `limits` unless `mode` says
/// `"pipe"` or `"inherit"`.
fn output_mode(field: &str, mode: Option<&str>, limits: OutputLimits) -> Result<Output, ExecError> {
    match mode {
        None | Some("capture") => Ok(Output::Capture(limits)),
        Some(PIPE) => Ok(Output::Pipe),
        Some("inherit") => Ok(Output::Inherit),
        Some(other) => {
            Err(ExecError::invalid_spec(field, format!("must be 'capture', 'pipe' or 'inherit' (got {other:?})")))
        }
    }
}

/// The `spillDir` option: an absolute path without NUL bytes. Whether spill
/// files can be made there is checked when the call is planned
/// ([`check_spill_base`]), like the workdir.
fn spill_dir(dir: Option<&str>) -> Result<Option<PathBuf>, ExecError> {
    let Some(dir) = dir else { return Ok(None) };
    if dir.contains('\0') || !Path::new(dir).is_absolute() {
        return Err(ExecError::invalid_spec(
            "spillDir",
            format!("must be an absolute path without NUL bytes (got {dir:?})"),
        ));
    }
    Ok(Some(PathBuf::from(dir)))
}

fn duration(field: &str, value: Option<f64>, default: f64, zero_ok: bool) -> Result<Duration, ExecError> {
    let millis = value.unwrap_or(default);
    duration_from_millis(millis, zero_ok).ok_or_else(|| {
        let wanted = if zero_ok { "a finite number ≥ 0" } else { "a positive finite number" };
        ExecError::invalid_spec(field, format!("must be {wanted} of milliseconds (got {millis})"))
    })
}

/// The rule for every millisecond option: finite and positive (or zero, when
/// `zero_ok`). `None` when `millis` breaks it.
pub fn duration_from_millis(millis: f64, zero_ok: bool) -> Option<Duration> {
    let valid = millis.is_finite() && (millis > 0.0 || (zero_ok && millis == 0.0));
    // Far beyond any real timeout; keeps Duration arithmetic from overflowing.
    valid.then(|| Duration::from_secs_f64(millis.min(1e12) / 1000.0))
}

fn byte_count(field: &str, value: Option<f64>, default: f64) -> Result<u64, ExecError> {
    let bytes = value.unwrap_or(default);
    if !(bytes.is_finite() && bytes >= 0.0 && bytes.fract() == 0.0 && bytes <= 9_007_199_254_740_991.0) {
        return Err(ExecError::invalid_spec(field, format!("must be a non-negative integer (got {bytes})")));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_paths::{abs, search_path};

    /// A program every system has, looked up by its bare name.
    const PROGRAM: &str = if cfg!(windows) { "cmd" } else { "true" };

    /// The system's own search path.
    fn system_path() -> String {
        if cfg!(windows) {
            search_path(&[r"C:\Windows\System32", r"C:\Windows"])
        } else {
            search_path(&["/usr/bin", "/bin"])
        }
    }

    fn request(command: CommandLine) -> ExecRequest {
        ExecRequest { command: Some(command), ..ExecRequest::default() }
    }

    #[test]
    fn a_request_hands_over_pipes_when_any_stream_is_a_pipe() {
        let stdio = |stdin: Option<&str>, stdout: Option<&str>, stderr: Option<&str>| StdioRequest {
            stdin: stdin.map(String::from),
            stdout: stdout.map(String::from),
            stderr: stderr.map(String::from),
            terminal: None,
        };
        assert!(!stdio(None, None, None).hands_over_pipes());
        assert!(!stdio(None, Some("capture"), Some("inherit")).hands_over_pipes());
        for piped in [stdio(Some("pipe"), None, None), stdio(None, Some("pipe"), None), stdio(None, None, Some("pipe"))]
        {
            assert!(piped.hands_over_pipes());
        }
    }

    fn parent() -> Parent {
        Parent::from_pairs([("PATH".into(), system_path()), ("DSH_SESSION_ID".into(), "stale".into())])
    }

    fn plan_of(request: &ExecRequest) -> Result<ProcessSpec, ExecError> {
        plan(request, &parent(), &Platform::current(), Path::new(&abs("")))
    }

    fn field_error(request: &ExecRequest) -> String {
        let error = plan_of(request).err().expect("invalid spec");
        assert_eq!(error.code(), "ERR_SHELL_EXEC_INVALID_SPEC", "{error}");
        error.to_string()
    }

    #[test]
    fn a_terminal_is_whole_cells_from_1_to_65535_and_all_three_streams() {
        let on_terminal = |rows, cols| {
            let mut request = request(CommandLine::Argv(vec![PROGRAM.into()]));
            request.stdio.terminal = Some(RawTerminalSize { rows, cols });
            request
        };
        assert_eq!(
            plan_of(&on_terminal(24.0, 65535.0)).unwrap().terminal,
            Some(TerminalSize { rows: 24, cols: 65535 })
        );
        assert_eq!(plan_of(&request(CommandLine::Argv(vec![PROGRAM.into()]))).unwrap().terminal, None);
        for (rows, cols, field) in
            [(0.0, 80.0, "rows"), (24.5, 80.0, "rows"), (24.0, 65536.0, "cols"), (24.0, f64::NAN, "cols")]
        {
            let message = field_error(&on_terminal(rows, cols));
            assert!(message.contains(&format!("stdio.terminal.{field}")), "{message}");
        }
        let mut piped = on_terminal(24.0, 80.0);
        piped.stdio.stdout = Some("pipe".into());
        assert!(field_error(&piped).contains("stdio.stdout: cannot be given with stdio.terminal"));
        let mut with_data = on_terminal(24.0, 80.0);
        with_data.stdin = Some(b"input".to_vec());
        assert!(field_error(&with_data).contains("stdio.stdin: cannot be given with stdio.terminal"));
    }

    // The Windows shells and how they are invoked come with Windows process control.
    #[cfg(unix)]
    #[test]
    fn scripts_run_through_the_chosen_shell() {
        let plan = plan_of(&request(CommandLine::Script("echo hi".into()))).unwrap();
        assert!(plan.program.ends_with("bash"), "{:?}", plan.program);
        assert_eq!(plan.args, ["-c", "echo hi"]);

        let mut sh = request(CommandLine::Script("echo hi".into()));
        sh.shell = Some("/bin/sh".into());
        let plan = plan_of(&sh).unwrap();
        assert_eq!(plan.program, Path::new("/bin/sh"));
        assert_eq!(plan.args, ["-c", "echo hi"]);
    }

    #[cfg(unix)]
    #[test]
    fn shells_come_only_from_absolute_entries_of_the_unmanaged_path() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("dsh-core-shell-lookup-{}", std::process::id()));
        let planted = dir.join("planted");
        std::fs::create_dir_all(&planted).unwrap();
        for at in [dir.join("bash"), planted.join("bash")] {
            std::fs::write(&at, "#!/bin/sh\necho planted\n").unwrap();
            std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let real = resolve_program("bash", Search::posix(Some("/usr/bin:/bin")), Path::new("/")).unwrap();
        let mut request = request(CommandLine::Script("echo hi".into()));
        // An empty and a `.` entry name the workdir; a contributed directory comes first in the managed PATH.
        request.environment.explicit = vec![("PATH".into(), Some("::.:/usr/bin:/bin".into()))];
        request.environment.managed = vec![("PATH".into(), format!("{}:/usr/bin:/bin", planted.display()))];
        request.workdir = Some(dir.display().to_string());
        let shell = plan(&request, &parent(), &Platform::posix(), Path::new("/")).unwrap();
        assert_eq!(shell.program, real, "the shell is the system's, not a planted one");
        // Any other program is still looked up the usual way, contributed directories first.
        request.command = Some(CommandLine::Argv(vec!["bash-not-a-shell".into()]));
        std::fs::rename(planted.join("bash"), planted.join("bash-not-a-shell")).unwrap();
        let other = plan(&request, &parent(), &Platform::posix(), Path::new("/")).unwrap();
        assert_eq!(other.program, planted.join("bash-not-a-shell"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_shell_given_by_any_name_is_looked_up_on_the_trusted_path_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("dsh-core-shell-name-{}", std::process::id()));
        let planted = dir.join("planted");
        std::fs::create_dir_all(&planted).unwrap();
        for at in [dir.join("dsh-spec-shell"), planted.join("dsh-spec-shell")] {
            std::fs::write(&at, "#!/bin/sh\necho planted\n").unwrap();
            std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut request = request(CommandLine::Script("echo hi".into()));
        request.shell = Some("dsh-spec-shell".into());
        request.environment.explicit = vec![("PATH".into(), Some("::.:/usr/bin:/bin".into()))];
        request.environment.managed = vec![("PATH".into(), format!("{}:/usr/bin:/bin", planted.display()))];
        request.workdir = Some(dir.display().to_string());
        // Neither the workdir nor a contributed directory holds a shell.
        let missing = plan(&request, &parent(), &Platform::posix(), Path::new("/"));
        assert!(matches!(missing, Err(ExecError::SpawnFailed { .. })), "the planted shells are not taken");
        // On the trusted path it is found, and takes `-c` as any shell but pwsh.
        request.environment.explicit = vec![("PATH".into(), Some(format!("{}:/usr/bin:/bin", dir.display())))];
        let found = plan(&request, &parent(), &Platform::posix(), Path::new("/")).unwrap();
        assert_eq!(found.program, dir.join("dsh-spec-shell"));
        assert_eq!(found.args, ["-c", "echo hi"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn pwsh_gets_its_non_interactive_flags() {
        let mut pwsh = request(CommandLine::Script("Get-Date".into()));
        pwsh.shell = Some("pwsh".into());
        assert_eq!(
            invocation(&pwsh, &Platform::posix()).unwrap().args,
            ["-NoProfile", "-NonInteractive", "-Command", "Get-Date"]
        );
    }

    #[test]
    fn argv_runs_directly_and_resolves_against_the_child_path() {
        let plan = plan_of(&request(CommandLine::Argv(vec![PROGRAM.into()]))).unwrap();
        assert!(plan.program.is_absolute());
        assert!(plan.args.is_empty());
        assert_eq!(plan.timeout, Some(Duration::from_secs(120)));
        assert_eq!(plan.grace, Duration::from_secs(3));
        assert!(plan.env.iter().all(|(name, _)| name != "DSH_SESSION_ID"), "stale managed value scrubbed");
    }

    #[test]
    fn background_jobs_have_no_timer() {
        let mut background = request(CommandLine::Argv(vec![PROGRAM.into()]));
        background.on_expiry = Expiry::None;
        assert_eq!(plan_of(&background).unwrap().timeout, None);
    }

    #[test]
    fn invalid_fields_are_named() {
        let base = request(CommandLine::Argv(vec![PROGRAM.into()]));
        let spill_with_nul = abs("tmp/a\0b");
        let cases: Vec<(ExecRequest, &str)> = vec![
            (ExecRequest::default(), "command"),
            (request(CommandLine::Argv(vec![])), "command"),
            (request(CommandLine::Argv(vec!["".into()])), "command[0]"),
            (request(CommandLine::Argv(vec![PROGRAM.into(), "a\0".into()])), "command[1]"),
            (request(CommandLine::Script("a\0".into())), "command"),
            (ExecRequest { shell: Some("bin/zsh".into()), ..request(CommandLine::Script("x".into())) }, "shell"),
            (ExecRequest { shell: Some(String::new()), ..request(CommandLine::Script("x".into())) }, "shell"),
            (ExecRequest { shell: Some("bash".into()), ..base.clone() }, "shell"),
            (ExecRequest { timeout_ms: Some(0.0), ..base.clone() }, "timeoutMs"),
            (ExecRequest { timeout_ms: Some(f64::INFINITY), ..base.clone() }, "timeoutMs"),
            (ExecRequest { timeout_ms: Some(-5.0), ..base.clone() }, "timeoutMs"),
            (ExecRequest { grace_ms: Some(f64::NAN), ..base.clone() }, "graceMs"),
            (ExecRequest { stdout_max_bytes: Some(1.5), ..base.clone() }, "stdoutMaxBytes"),
            (ExecRequest { spill_dir: Some("relative/spill".into()), ..base.clone() }, "spillDir"),
            (ExecRequest { spill_dir: Some(spill_with_nul), ..base.clone() }, "spillDir"),
            (ExecRequest { stderr_max_bytes: Some(-1.0), ..base.clone() }, "stderrMaxBytes"),
            (ExecRequest { spill_max_bytes: Some(f64::NAN), ..base.clone() }, "spillMaxBytes"),
            (ExecRequest { workdir: Some(String::new()), ..base.clone() }, "workdir"),
        ];
        for (request, field) in cases {
            let message = field_error(&request);
            assert!(message.contains(&format!("field {field}:")), "{message}");
        }
    }

    #[test]
    fn on_expiry_parses_kill_and_none_only() {
        assert_eq!("kill".parse::<Expiry>().unwrap(), Expiry::Kill);
        assert_eq!("none".parse::<Expiry>().unwrap(), Expiry::None);
        let error = "never".parse::<Expiry>().unwrap_err();
        assert_eq!(error.code(), "ERR_SHELL_EXEC_INVALID_SPEC");
        assert!(error.to_string().contains("field onExpiry:"), "{error}");
    }

    #[test]
    fn millisecond_rule() {
        assert_eq!(duration_from_millis(1500.0, false), Some(Duration::from_millis(1500)));
        assert_eq!(duration_from_millis(0.0, true), Some(Duration::ZERO));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(duration_from_millis(bad, false), None, "{bad}");
        }
    }

    #[test]
    fn the_option_checks_refuse_what_plan_refuses_without_a_command() {
        let options = |request: ExecRequest| check_options(&request).map_err(|error| error.to_string());
        assert_eq!(options(ExecRequest::default()), Ok(()));
        assert_eq!(options(ExecRequest { grace_ms: Some(0.0), ..Default::default() }), Ok(()));
        assert_eq!(options(ExecRequest { grace_ms: Some(2f64.powi(31)), ..Default::default() }), Ok(()));
        assert_eq!(options(ExecRequest { stdout_max_bytes: Some(0.0), ..Default::default() }), Ok(()));
        let refused = [
            (ExecRequest { timeout_ms: Some(0.0), ..Default::default() }, "timeoutMs"),
            (ExecRequest { grace_ms: Some(-1.0), ..Default::default() }, "graceMs"),
            (ExecRequest { stdout_max_bytes: Some(1.5), ..Default::default() }, "stdoutMaxBytes"),
            (ExecRequest { spill_max_bytes: Some(f64::INFINITY), ..Default::default() }, "spillMaxBytes"),
            (ExecRequest { spill_dir: Some("spill".into()), ..Default::default() }, "spillDir"),
            (
                ExecRequest {
                    limits: RawLimits { open_files: Some(2.0), ..RawLimits::default() },
                    ..Default::default()
                },
                "limits.openFiles",
            ),
        ];
        for (request, field) in refused {
            let message = options(request.clone()).unwrap_err();
            assert!(message.starts_with(&format!("invalid spec field {field}: ")), "{message}");
            let planned = ExecRequest { command: Some(CommandLine::Argv(vec![PROGRAM.into()])), ..request };
            assert_eq!(plan_of(&planned).err().map(|error| error.to_string()), Some(message));
        }
    }

    #[test]
    fn zero_grace_is_allowed() {
        let request = ExecRequest { grace_ms: Some(0.0), ..request(CommandLine::Argv(vec![PROGRAM.into()])) };
        assert_eq!(plan_of(&request).unwrap().grace, Duration::ZERO);
    }

    #[test]
    fn unknown_fields_are_refused_with_what_was_likely_meant() {
        assert!(check_fields("", ["command", "workdir", "onOutput"], SPEC_FIELDS).is_ok());
        let cwd = check_fields("", ["command", "cwd"], SPEC_FIELDS).unwrap_err();
        assert_eq!(cwd.code(), "ERR_SHELL_EXEC_INVALID_SPEC");
        assert_eq!(cwd.to_string(), "invalid spec field cwd: is not a spec field; did you mean workdir?");
        let other = check_fields("scrub.", ["hardenning"], SCRUB_FIELDS).unwrap_err().to_string();
        assert!(
            other.starts_with("invalid spec field scrub.hardenning: is not a spec field (the fields are inherit,"),
            "{other}"
        );
    }

    #[test]
    fn workdir_must_exist() {
        let request = ExecRequest {
            workdir: Some(abs("definitely/not/here")),
            ..request(CommandLine::Argv(vec![PROGRAM.into()]))
        };
        assert_eq!(plan_of(&request).err().unwrap().code(), "ERR_SHELL_EXEC_INVALID_WORKDIR");
    }

    #[test]
    fn missing_programs_fail_to_spawn_with_enoent() {
        let error = plan_of(&request(CommandLine::Argv(vec!["no-such-program-here".into()]))).err().unwrap();
        assert_eq!(error.code(), "ERR_SHELL_EXEC_SPAWN_FAILED");
        let ExecError::SpawnFailed { source, .. } = error else { unreachable!() };
        assert_eq!(source.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn path_before_managed_ignores_the_managed_layer() {
        let mut request = request(CommandLine::Argv(vec![PROGRAM.into()]));
        request.environment.managed = vec![("PATH".into(), abs("managed"))];
        let path = path_before_managed(&request, &parent(), &Platform::current()).unwrap();
        assert_eq!(path, Some(system_path()));
    }

    #[test]
    fn each_shell_takes_its_script_its_own_way() {
        let script = |shell: &str| {
            let request = ExecRequest {
                command: Some(CommandLine::Script("echo hi".into())),
                shell: Some(shell.into()),
                ..ExecRequest::default()
            };
            invocation(&request, &Platform::windows()).map(|invocation| invocation.args)
        };
        assert_eq!(script("bash").unwrap(), ["-c", "echo hi"]);
        assert_eq!(script("pwsh").unwrap(), ["-NoProfile", "-NonInteractive", "-Command", "echo hi"]);
        assert_eq!(script("powershell").unwrap(), ["-NoProfile", "-NonInteractive", "-Command", "echo hi"]);
        assert_eq!(script("cmd").unwrap(), ["/d", "/s", "/c", "echo hi"]);
        let windows = Platform::windows();
        assert_eq!(ShellKind::of(r"C:\Program Files\PowerShell\7\pwsh.exe", &windows), ShellKind::PowerShell);
        assert_eq!(ShellKind::of(r"C:\Windows\System32\Cmd.Exe", &windows), ShellKind::Cmd);
        assert_eq!(ShellKind::of("/usr/bin/zsh", &windows), ShellKind::Posix);
        // Elsewhere only pwsh is special, spelt as it is.
        let posix = Platform::posix();
        assert_eq!(ShellKind::of("/opt/microsoft/powershell/7/pwsh", &posix), ShellKind::PowerShell);
        for other in ["/usr/local/bin/cmd", "/usr/bin/powershell", "/usr/bin/PWSH"] {
            assert_eq!(ShellKind::of(other, &posix), ShellKind::Posix, "{other}");
        }
        // Any other name is a POSIX shell's; a relative path is no name.
        assert_eq!(script("fish").unwrap(), ["-c", "echo hi"]);
        assert_eq!(script(r"bin\fish").unwrap_err().code(), "ERR_SHELL_EXEC_INVALID_SPEC");
    }

    #[test]
    fn shells_are_searched_only_in_absolute_entries_by_each_platforms_rules() {
        let posix = Platform::posix();
        assert_eq!(trusted_search_path(Some("/usr/bin::bin:./x:/bin"), &posix), "/usr/bin:/bin");
        assert_eq!(trusted_search_path(None, &posix), "/bin:/usr/bin");
        let windows = Platform::windows();
        let path = r"C:\Windows\System32;;bin;C:relative;.\x;\\server\share\bin;D:/tools";
        assert_eq!(trusted_search_path(Some(path), &windows), r"C:\Windows\System32;\\server\share\bin;D:/tools");
        assert_eq!(trusted_search_path(None, &windows), "");
    }
}
