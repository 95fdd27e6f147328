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
//! A command on a terminal runs on a pseudo console of its own (ConPTY): it
//! inherits no handle at all, and the host keeps the console's input and
//! output pipes. The console is closed at the leader's exit, its hang-up.
//!
//! One mechanism per file: `spawn.rs` starts a command, `job.rs` keeps its
//! job (limits, the completion port, signals, exits), `pipes.rs` makes its
//! standard streams, `conpty.rs` its pseudo console, `acl.rs` keeps private
//! directories private.

mod acl;
mod conpty;
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
