//! Program lookup and the working directory check, done before spawning.
//!
//! The program is resolved here, against the child's own PATH, because a bare
//! program name with a changed PATH makes `std::process::Command` fall back to
//! fork instead of `posix_spawn`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::platform::{self, DENIED, NOT_A_DIRECTORY, NOT_FOUND};
use crate::error::ExecError;

/// What `execvp` searches when PATH is unset (glibc's `_CS_PATH`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// What a bare name is tried with on Windows when the child has no PATHEXT.
pub const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// Where and how a bare program name is looked up: the platform's rules.
#[derive(Debug, Clone, Copy)]
pub struct Search<'a> {
    /// The child's final PATH; `None` when it has none.
    pub path: Option<&'a str>,
    /// Windows' rules, with the child's PATHEXT: a `;`-separated PATH, `\`
    /// as well as `/` in a name that is a path, and a bare name without one
    /// of these extensions tried with each of them in turn. `None`: POSIX
    /// (`:`, `/`, the name as it is).
    pub extensions: Option<&'a str>,
}

impl<'a> Search<'a> {
    /// POSIX rules over `path`.
    pub fn posix(path: Option<&'a str>) -> Self {
        Self { path, extensions: None }
    }

    /// Windows rules over `path`, with `pathext` (the default when `None`).
    pub fn windows(path: Option<&'a str>, pathext: Option<&'a str>) -> Self {
        Self { path, extensions: Some(pathext.unwrap_or(DEFAULT_PATHEXT)) }
    }

    fn delimiter(&self) -> char {
        if self.extensions.is_some() {
            ';'
        } else {
            ':'
        }
    }

    /// Whether `program` names a path rather than a file to search for.
    fn is_path(&self, program: &str) -> bool {
        program.contains('/') || (self.extensions.is_some() && program.contains(['\\', ':']))
    }

    /// The file names tried for `program` in each directory.
    fn names(&self, program: &str) -> Vec<String> {
        let Some(extensions) = self.extensions else { return vec![program.to_owned()] };
        let extensions: Vec<&str> = extensions.split(';').filter(|ext| ext.starts_with('.')).collect();
        let has_one = program
            .rfind('.')
            .is_some_and(|dot| extensions.iter().any(|ext| ext.eq_ignore_ascii_case(&program[dot..])));
        if has_one || extensions.is_empty() {
            return vec![program.to_owned()];
        }
        extensions.iter().map(|ext| format!("{program}{ext}")).collect()
    }
}

/// Resolves `program` to an absolute path the way `execvp` in the child would
/// (on Windows, as `cmd` finds a command: PATH and PATHEXT, see [`Search`]).
///
/// A name that is a path is taken relative to `cwd` and must be an executable
/// file. A bare name is searched in the search path (an empty entry means
/// `cwd`, relative entries are relative to `cwd`). The result is absolute,
/// without `.` components (`..` is kept: it may cross a symlink). Failures
/// are [`ExecError::SpawnFailed`] carrying the OS error for "not found"
/// (ENOENT) or "found but not executable" (EACCES).
pub fn resolve_program(program: &str, search: Search<'_>, cwd: &Path) -> Result<PathBuf, ExecError> {
    let fail =
        |errno| ExecError::SpawnFailed { program: program.to_owned(), source: io::Error::from_raw_os_error(errno) };
    if program.is_empty() {
        return Err(fail(NOT_FOUND));
    }
    if search.is_path(program) {
        let path = std::path::absolute(cwd.join(program)).map_err(|_| fail(NOT_FOUND))?;
        return check_executable(&path).map(|()| path).map_err(fail);
    }
    let names = search.names(program);
    let mut denied = false;
    let path = search.path.unwrap_or(if search.extensions.is_some() { "" } else { DEFAULT_PATH });
    for dir in path.split(search.delimiter()) {
        for name in &names {
            let Ok(candidate) = std::path::absolute(cwd.join(dir).join(name)) else {
                continue;
            };
            match check_executable(&candidate) {
                Ok(()) => return Ok(candidate),
                // Like execvp: remember a permission problem, keep looking.
                Err(DENIED) => denied = true,
                Err(_) => {}
            }
        }
    }
    Err(fail(if denied { DENIED } else { NOT_FOUND }))
}

/// Fails with [`ExecError::InvalidWorkdir`] unless `path` is an existing
/// directory; the error keeps the OS error (`ENOTDIR` for anything else).
pub fn check_workdir(path: &Path) -> Result<(), ExecError> {
    let source = match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => io::Error::from_raw_os_error(NOT_A_DIRECTORY),
        Err(error) => error,
    };
    Err(ExecError::InvalidWorkdir { path: path.display().to_string(), source })
}

/// `Ok` when `path` is a regular file this process may execute, else the errno
/// `execve` would give.
pub(super) fn check_executable(path: &Path) -> Result<(), i32> {
    let meta = fs::metadata(path).map_err(|e| e.raw_os_error().unwrap_or(NOT_FOUND))?;
    // execve refuses directories and other non-regular files with EACCES.
    if !meta.is_file() {
        return Err(DENIED);
    }
    platform::may_execute(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_lookup_tries_the_name_as_it_is() {
        let search = Search::posix(Some("/bin:/usr/bin"));
        assert_eq!(search.names("tool"), ["tool"]);
        assert!(search.is_path("./tool") && !search.is_path(r"dir\tool"));
    }

    #[test]
    fn windows_lookup_tries_each_pathext_extension_unless_the_name_has_one() {
        let search = Search::windows(Some(r"C:\Windows\System32;C:\Tools"), Some(".COM;.EXE;;.BAT;.CMD"));
        assert_eq!(search.names("cmd"), ["cmd.COM", "cmd.EXE", "cmd.BAT", "cmd.CMD"]);
        assert_eq!(search.names("cmd.exe"), ["cmd.exe"]);
        assert_eq!(search.names("build.Cmd"), ["build.Cmd"]);
        // Not an extension of PATHEXT: still tried with each of them.
        assert_eq!(search.names("v1.2"), ["v1.2.COM", "v1.2.EXE", "v1.2.BAT", "v1.2.CMD"]);
        assert_eq!(Search::windows(None, None).names("node"), ["node.COM", "node.EXE", "node.BAT", "node.CMD"]);
        assert_eq!(search.delimiter(), ';');
        for path in [r"bin\tool", "bin/tool", r"C:\tool", "C:tool"] {
            assert!(search.is_path(path), "{path}");
        }
    }
}
