//! Windows: each command is started suspended through `CreateProcessW`, put
//! into a Job Object of its own, and only then resumed, so nothing it starts
//! can be outside the job. The job is what "the process group" means here:
//!
//! - a hard kill is `TerminateJobObject`: every process in the job at once;
//! - the graceful first step is `CTRL_BREAK_EVENT` to the command's console
//!   process group (it is started with `CREATE_NEW_PROCESS_GROUP`), which only
//!   reaches it when the host has a console the command shares; elsewhere the
//!   grace just runs out and the job is terminated;
//! - the job is made with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: when the host
//!   dies in any way, Windows closes its handles and so ends every job, which
//!   is what the guardian does on Unix;
//! - one completion port, shared by every job, reports each leader's exit and
//!   each job's last process, read by one thread: no polling.
//!
//! Only the three standard handles are inherited (an explicit handle list),
//! and they are inheritable only for the moment of the spawn, so no other
//! command holds a command's pipe open. The pipes are named pipes, overlapped
//! on the host's end, as the runtime reads them.
//!
//! One mechanism per file: `spawn.rs` starts a command, `job.rs` keeps its
//! job (limits, the completion port, signals, exits), `pipes.rs` makes its
//! standard streams, `acl.rs` keeps private directories private.

mod acl;
mod job;
mod pipes;
mod spawn;

pub(crate) use acl::*;
pub(crate) use job::*;
pub(crate) use pipes::*;
pub(crate) use spawn::*;

use std::ffi::OsStr;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::OwnedHandle;
use std::path::{Path, PathBuf};

use tokio::net::windows::named_pipe::NamedPipeServer;

/// An owned handle: a pipe end.
pub(crate) type Fd = OwnedHandle;

/// The host's end of a child's output pipe, registered with the runtime.
pub(crate) type PipeReader = NamedPipeServer;

/// The host's end of a child's input pipe, registered with the runtime.
pub(crate) type PipeWriter = NamedPipeServer;

/// The OS errors program lookup and the workdir check report:
/// `ERROR_FILE_NOT_FOUND`.
pub(crate) const NOT_FOUND: i32 = 2;

/// A file found but not executable: `ERROR_ACCESS_DENIED`.
pub(crate) const DENIED: i32 = 5;

/// A workdir that is not a directory: `ERROR_DIRECTORY`.
pub(crate) const NOT_A_DIRECTORY: i32 = 267;

/// The Windows errors a spawn or a workdir check can meet, as libuv
/// translates them: the name Node gives them in `error.code` and libuv's
/// number, Node's `errno` (not the Windows code: `ENOENT` is -4058).
const TRANSLATED: &[(&[i32], &str, i32)] = &[
    // ERROR_FILE_NOT_FOUND, ERROR_PATH_NOT_FOUND, ERROR_INVALID_DRIVE,
    // ERROR_INVALID_NAME, ERROR_BAD_PATHNAME, ERROR_MOD_NOT_FOUND
    (&[2, 3, 15, 123, 161, 126], "ENOENT", -4058),
    // ERROR_TOO_MANY_OPEN_FILES
    (&[4], "EMFILE", -4066),
    // ERROR_ACCESS_DENIED
    (&[5], "EPERM", -4048),
    // ERROR_NOT_ENOUGH_MEMORY, ERROR_OUTOFMEMORY
    (&[8, 14], "ENOMEM", -4057),
    // ERROR_INVALID_PARAMETER, ERROR_INVALID_DATA
    (&[87, 13], "EINVAL", -4071),
    // ERROR_DISK_FULL
    (&[112], "ENOSPC", -4055),
    // ERROR_BAD_EXE_FORMAT
    (&[193], "EFTYPE", -4028),
    // ERROR_FILENAME_EXCED_RANGE
    (&[206], "ENAMETOOLONG", -4064),
    // ERROR_DIRECTORY: "the directory name is invalid", a file named as a directory
    (&[267], "ENOTDIR", -4052),
    // ERROR_ELEVATION_REQUIRED, ERROR_NOACCESS
    (&[740, 998], "EACCES", -4092),
];

/// libuv's `UV_UNKNOWN` on Windows: Node's `errno` for an error it has no name for.
const UNKNOWN_ERRNO: i32 = -4094;

/// The row of [`TRANSLATED`] that holds `code`.
fn translated(code: i32) -> Option<&'static (&'static [i32], &'static str, i32)> {
    TRANSLATED.iter().find(|(codes, _, _)| codes.contains(&code))
}

/// The name Node gives an OS error in `error.code` (`ENOENT`, `EPERM`, …),
/// for the errors a spawn or a workdir check can meet: a Windows error code
/// named as libuv translates it, so the same failure has the same code from
/// this package as from `child_process` (an unknown code has none).
pub fn os_error_name(code: i32) -> Option<&'static str> {
    translated(code).map(|(_, name, _)| *name)
}

/// The `errno` Node gives an OS error: libuv's number for it (`UV_UNKNOWN`
/// for a code it has no name for), as `child_process` reports it; 0 for
/// none (an error the package made, not the OS).
pub fn node_errno(code: i32) -> i32 {
    match code {
        0 => 0,
        _ => translated(code).map_or(UNKNOWN_ERRNO, |(_, _, errno)| *errno),
    }
}

/// Process control works here.
pub(crate) fn supported() -> io::Result<()> {
    Ok(())
}

/// Runs `hook` when the host exits in order (the C runtime's `atexit`).
pub(crate) fn at_host_exit(hook: extern "C" fn()) {
    extern "C" {
        fn atexit(hook: extern "C" fn()) -> i32;
    }
    // SAFETY: registers a plain `extern "C" fn`; failure only means no hook
    // (the jobs still end when the host's handles close).
    unsafe { atexit(hook) };
}

/// Not needed: there is no reaper here.
pub(crate) fn loaded_from() -> Option<PathBuf> {
    None
}

/// Windows has no execute permission to check beyond being a regular file.
pub(crate) fn may_execute(_path: &Path) -> Result<(), i32> {
    Ok(())
}

/// Nothing to do at the host's death: each job is made kill-on-close.
pub(crate) mod guardian {
    /// Nothing to hear of: the job ends with the host's handles.
    pub(crate) fn started(_pgid: u32, _live: &[u32]) {}

    /// Nothing to hear of.
    pub(crate) fn ending(_pgid: u32, _live: &[u32]) {}

    /// Nothing to dismiss.
    pub(crate) fn dismiss() {}
}

/// `text` as a NUL-terminated UTF-16 string.
fn wide(text: &OsStr) -> Vec<u16> {
    text.encode_wide().chain(Some(0)).collect()
}
