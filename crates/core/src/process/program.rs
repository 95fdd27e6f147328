//! Program lookup and the working directory check, done before spawning.
//!
//! The program is resolved here, against the child's own PATH, because a bare
//! program name with a changed PATH makes `std::process::Command` fall back to
//! fork instead of `posix_spawn`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::platform;
use crate::error::ExecError;

/// What `execvp` searches when PATH is unset (glibc's `_CS_PATH`).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Resolves `program` to an absolute path the way `execvp` in the child would.
///
/// A name with a `/` is taken relative to `cwd` and must be an executable file.
/// A bare name is searched in `path_var` (the child's final PATH, `:`-separated;
/// an empty entry means `cwd`, relative entries are relative to `cwd`). The
/// result is absolute, without `.` components (`..` is kept: it may cross a
/// symlink). Failures
/// are [`ExecError::SpawnFailed`] carrying ENOENT (not found) or EACCES (found
/// but not executable) as the raw OS error.
pub fn resolve_program(program: &str, path_var: Option<&str>, cwd: &Path) -> Result<PathBuf, ExecError> {
    let fail =
        |errno| ExecError::SpawnFailed { program: program.to_owned(), source: io::Error::from_raw_os_error(errno) };
    if program.is_empty() {
        return Err(fail(libc::ENOENT));
    }
    if program.contains('/') {
        let path = std::path::absolute(cwd.join(program)).map_err(|_| fail(libc::ENOENT))?;
        return check_executable(&path).map(|()| path).map_err(fail);
    }
    let mut denied = false;
    for dir in path_var.unwrap_or(DEFAULT_PATH).split(':') {
        let Ok(candidate) = std::path::absolute(cwd.join(dir).join(program)) else {
            continue;
        };
        match check_executable(&candidate) {
            Ok(()) => return Ok(candidate),
            // Like execvp: remember a permission problem, keep looking.
            Err(libc::EACCES) => denied = true,
            Err(_) => {}
        }
    }
    Err(fail(if denied { libc::EACCES } else { libc::ENOENT }))
}

/// Fails with [`ExecError::InvalidWorkdir`] unless `path` is an existing
/// directory; the error keeps the OS error (`ENOTDIR` for anything else).
pub fn check_workdir(path: &Path) -> Result<(), ExecError> {
    let source = match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => io::Error::from_raw_os_error(libc::ENOTDIR),
        Err(error) => error,
    };
    Err(ExecError::InvalidWorkdir { path: path.display().to_string(), source })
}

/// `Ok` when `path` is a regular file this process may execute, else the errno
/// `execve` would give.
pub(super) fn check_executable(path: &Path) -> Result<(), i32> {
    let meta = fs::metadata(path).map_err(|e| e.raw_os_error().unwrap_or(libc::ENOENT))?;
    // execve refuses directories and other non-regular files with EACCES.
    if !meta.is_file() {
        return Err(libc::EACCES);
    }
    platform::may_execute(path)
}
