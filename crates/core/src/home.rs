//! Where the Harness home is: configured, then `$DSH_HOME`, then `~/.dsh`.

use std::path::{Component, Path, PathBuf};

use crate::error::ShellEnvError;

/// The name of the default home directory under the user's home.
const DEFAULT_HOME_DIR: &str = ".dsh";

/// What home resolution reads from the outside world, passed in so the rules
/// can be tested without touching the real process.
#[derive(Debug, Clone)]
pub struct HomeContext {
    /// The `DSH_HOME` value of the environment the caller passed.
    pub env_home: Option<String>,
    /// The user's home directory, for `~` and the default.
    pub user_home: Option<PathBuf>,
    /// The directory relative paths resolve against.
    pub cwd: PathBuf,
}

impl HomeContext {
    /// The context of this process: `dirs::home_dir()` and the current directory,
    /// with `env_home` taken from the caller's environment.
    pub fn current(env_home: Option<String>) -> Self {
        Self {
            env_home,
            user_home: dirs::home_dir(),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        }
    }
}

/// Checks a configured home (`option` names it in the error): the home ends
/// up in every child's `DSH_HOME`, so it must not contain a NUL byte. Call it
/// before [`resolve_dsh_home`] or [`reconcile_dsh_home`] for caller input.
pub fn check_configured(option: &'static str, configured: &str) -> Result<(), ShellEnvError> {
    if configured.contains('\0') {
        return Err(ShellEnvError::InvalidOption { option, reason: "must not contain NUL bytes".into() });
    }
    Ok(())
}

/// Resolves the Harness home. A non-empty `configured` value wins, then a
/// non-blank `DSH_HOME`, then `<user home>/.dsh`. `~` and `~/…` expand; the
/// result is absolute and lexically normalised (no trailing separator, `.` and
/// `..` resolved), like Node's `path.resolve`. Never fails. A `DSH_HOME` with
/// a NUL byte (possible only in an environment object, never in a real
/// environment) counts as unset.
pub fn resolve_dsh_home(configured: Option<&str>, context: &HomeContext) -> String {
    let chosen = configured
        .filter(|value| !value.is_empty())
        .or_else(|| context.env_home.as_deref().filter(|value| !value.trim().is_empty() && !value.contains('\0')));
    // A relative user home (`HOME=rel`) resolves against `cwd` like everything else.
    let user_home =
        || context.user_home.as_ref().map_or_else(|| context.cwd.clone(), |home| absolute_against(&context.cwd, home));
    let path = match chosen {
        None => user_home().join(DEFAULT_HOME_DIR),
        Some(value) => match expand_tilde(value) {
            Some(rest) => absolute_against(&user_home(), Path::new(rest)),
            None => absolute_against(&context.cwd, Path::new(value)),
        },
    };
    normalize(&path).to_string_lossy().into_owned()
}

/// Reconciles the top-level `dshHome` with `skills.local.dshHome`: when both are
/// given and resolve to different directories, composition must fail rather
/// than expose two homes. Otherwise returns the resolved home.
pub fn reconcile_dsh_home(
    top: Option<&str>,
    skills_local: Option<&str>,
    context: &HomeContext,
) -> Result<String, ShellEnvError> {
    let top = top.filter(|value| !value.is_empty());
    let skills_local = skills_local.filter(|value| !value.is_empty());
    let resolved = resolve_dsh_home(top.or(skills_local), context);
    if let (Some(top), Some(skills_local)) = (top, skills_local) {
        if resolve_dsh_home(Some(skills_local), context) != resolved {
            return Err(ShellEnvError::HomeConflict { top: top.into(), skills_local: skills_local.into() });
        }
    }
    Ok(resolved)
}

/// `path` made absolute against the absolute `base`, as Node's `path.resolve`
/// does. A Windows drive-relative path (`D:dsh`) is taken against `base` when
/// it names `base`'s drive, else against that drive's root: the working
/// directory of another drive is a shell's state, which this never sees.
/// (`Path::join` would return it unchanged, still relative.)
fn absolute_against(base: &Path, path: &Path) -> PathBuf {
    let mut components = path.components();
    match components.next() {
        Some(Component::Prefix(drive)) if !path.has_root() => {
            let base_drive = match base.components().next() {
                Some(Component::Prefix(prefix)) => Some(prefix.as_os_str()),
                _ => None,
            };
            let rest = components.as_path();
            if base_drive.is_some_and(|prefix| prefix.eq_ignore_ascii_case(drive.as_os_str())) {
                base.join(rest)
            } else {
                let mut root = PathBuf::from(drive.as_os_str());
                root.push(Component::RootDir);
                root.join(rest)
            }
        }
        _ => base.join(path),
    }
}

/// `~` → `Some("")`, `~/x` → `Some("x")`; anything else (including `~user`) → `None`.
fn expand_tilde(value: &str) -> Option<&str> {
    let rest = value.strip_prefix('~')?;
    if rest.is_empty() {
        return Some("");
    }
    rest.strip_prefix('/').or_else(|| if cfg!(windows) { rest.strip_prefix('\\') } else { None })
}

/// Lexical normalisation of an absolute path: drops `.`, applies `..` (never
/// above the root) and any trailing separator.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_paths::{abs, under, CWD, USER_HOME};

    fn context(env_home: Option<&str>) -> HomeContext {
        HomeContext {
            env_home: env_home.map(String::from),
            user_home: Some(PathBuf::from(USER_HOME)),
            cwd: PathBuf::from(CWD),
        }
    }

    fn resolve(configured: Option<&str>, context: &HomeContext) -> String {
        resolve_dsh_home(configured, context)
    }

    #[test]
    fn configured_wins_over_environment() {
        assert_eq!(resolve(Some(&abs("opt/dsh")), &context(Some(&abs("env/dsh")))), abs("opt/dsh"));
    }

    #[test]
    fn empty_configured_falls_back_to_environment_then_default() {
        assert_eq!(resolve(Some(""), &context(Some(&abs("env/dsh")))), abs("env/dsh"));
        assert_eq!(resolve(None, &context(Some("  "))), under(USER_HOME, ".dsh"));
        assert_eq!(resolve(None, &context(None)), under(USER_HOME, ".dsh"));
    }

    #[test]
    fn tilde_expands_and_paths_normalise() {
        let ctx = context(None);
        assert_eq!(resolve(Some("~"), &ctx), USER_HOME);
        assert_eq!(resolve(Some("~/x/../dsh/"), &ctx), under(USER_HOME, "dsh"));
        assert_eq!(resolve(Some("rel/./dir/"), &ctx), under(CWD, "rel/dir"));
        assert_eq!(resolve(Some(&abs("a/b/../../../c")), &ctx), abs("c"));
        assert_eq!(resolve(Some("~user/x"), &ctx), under(CWD, "~user/x"));
        assert_eq!(resolve(None, &context(Some("~/from-env"))), under(USER_HOME, "from-env"));
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_a_backslash_after_the_tilde_expands_too() {
        assert_eq!(resolve(Some(r"~\x\..\dsh"), &context(None)), under(USER_HOME, "dsh"));
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_a_rooted_home_without_a_drive_takes_the_working_directorys_drive() {
        assert_eq!(resolve(Some("/opt/dsh"), &context(None)), abs("opt/dsh"));
        assert_eq!(resolve(Some(r"D:\dsh\"), &context(None)), r"D:\dsh");
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_a_drive_relative_home_is_taken_against_that_drive() {
        // The working directory's drive: below the working directory.
        let here = &CWD[..2];
        assert_eq!(resolve(Some(&format!("{here}dsh")), &context(None)), under(CWD, "dsh"));
        assert_eq!(resolve(Some(&here.to_lowercase()), &context(None)), CWD);
        // Another drive: below its root.
        assert_eq!(resolve(Some("Q:dsh"), &context(None)), r"Q:\dsh");
        assert_eq!(resolve(Some("q:"), &context(None)), r"q:\");
        assert_eq!(resolve(Some("~/Q:dsh"), &context(None)), r"Q:\dsh");
    }

    #[cfg(unix)]
    #[test]
    fn on_unix_a_backslash_after_the_tilde_is_part_of_a_relative_name() {
        assert_eq!(resolve(Some(r"~\x"), &context(None)), under(CWD, r"~\x"));
    }

    #[test]
    fn a_relative_user_home_still_gives_an_absolute_home() {
        let ctx = HomeContext { user_home: Some(PathBuf::from("rel/home")), ..context(None) };
        assert_eq!(resolve(None, &ctx), under(CWD, "rel/home/.dsh"));
        assert_eq!(resolve(Some("~/x"), &ctx), under(CWD, "rel/home/x"));
        let ctx = HomeContext { user_home: Some(PathBuf::new()), ..context(None) };
        assert_eq!(resolve(Some("~"), &ctx), CWD);
    }

    #[test]
    fn reconcile_accepts_one_or_equal_homes() {
        let ctx = context(None);
        assert_eq!(reconcile_dsh_home(None, None, &ctx).unwrap(), under(USER_HOME, ".dsh"));
        assert_eq!(reconcile_dsh_home(Some(&abs("a")), None, &ctx).unwrap(), abs("a"));
        assert_eq!(reconcile_dsh_home(None, Some(&abs("b")), &ctx).unwrap(), abs("b"));
        let (top, skills_local) = (format!("{}/", abs("a")), abs("a/x/.."));
        assert_eq!(reconcile_dsh_home(Some(&top), Some(&skills_local), &ctx).unwrap(), abs("a"));
    }

    #[test]
    fn a_configured_home_with_nul_is_refused_and_an_environment_one_ignored() {
        let err = check_configured("dshHome", "/opt/a\0b").unwrap_err();
        assert_eq!(err.code(), "ERR_SHELL_ENV_INVALID_OPTION");
        assert!(err.to_string().contains("dshHome") && err.to_string().contains("NUL"), "{err}");
        assert!(check_configured("dshHome", "~/dsh").is_ok());
        assert_eq!(resolve(None, &context(Some(&abs("env\0/dsh")))), under(USER_HOME, ".dsh"));
    }

    #[test]
    fn reconcile_rejects_different_homes() {
        let (a, b) = (abs("a"), abs("b"));
        let err = reconcile_dsh_home(Some(&a), Some(&b), &context(None)).unwrap_err();
        assert_eq!(err.code(), "ERR_SHELL_ENV_HOME_CONFLICT");
        let message = err.to_string();
        assert!(message.contains(&format!("{a:?}")) && message.contains(&format!("{b:?}")), "{message}");
    }
}
