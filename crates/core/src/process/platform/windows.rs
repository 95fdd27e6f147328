//! Systems without POSIX process control (Windows first; Job Objects are the
//! planned way there): every spawn fails with the error process control has
//! always given here, so nothing else is ever called. The stubs only keep the
//! platform API complete.

use std::fs::{DirBuilder, File, Metadata, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use crate::process::exit::{Exit, Signal};

/// An owned handle: no process, so never one of a child's.
pub(crate) type Fd = File;

/// No pipes to a child exist here.
pub(crate) type PipeReader = tokio::io::Empty;

/// No pipes to a child exist here.
pub(crate) type PipeWriter = tokio::io::Sink;

/// Process control is only implemented on Unix.
pub(crate) fn supported() -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "process control is only implemented on Unix"))
}

/// A child that leads its own group (never made here).
pub(crate) struct Leader {
    /// Its pid.
    pub(crate) pid: u32,
    /// The read end of its stdout.
    pub(crate) stdout: Fd,
    /// The read end of its stderr.
    pub(crate) stderr: Fd,
    /// The write end of its stdin.
    pub(crate) stdin: Option<Fd>,
}

/// Fails, as [`supported`] does.
pub(crate) fn spawn_leader(
    _program: &Path,
    _args: &[String],
    _env: &[(String, String)],
    _cwd: &Path,
    _stdin: bool,
) -> io::Result<Leader> {
    supported().and_then(|()| Err(io::ErrorKind::Unsupported.into()))
}

/// No process can exist where spawning is unsupported.
pub(crate) fn signal_group(_pgid: u32, _signal: Signal) {}

/// As [`signal_group`].
pub(crate) fn signal_leader(_pid: u32, _signal: Signal) {}

/// As [`signal_group`].
pub(crate) fn signal_reaper(_pid: u32) {}

/// Waits for one child's exit (there is none).
pub(crate) enum ExitWatch {
    /// The exit was already seen.
    Exited(Exit),
}

impl ExitWatch {
    /// Fails, as [`supported`] does.
    pub(crate) fn new(_pid: u32) -> io::Result<Self> {
        supported().map(|()| Self::Exited(Exit::UNKNOWN))
    }

    /// Fails, as [`supported`] does.
    pub(crate) fn from_pidfd(_pid: u32, _fd: Fd) -> io::Result<Self> {
        Self::new(0)
    }

    /// The exit already seen.
    pub(crate) async fn exited(&mut self) -> Exit {
        match self {
            Self::Exited(exit) => *exit,
        }
    }
}

/// No child to ask about.
pub(crate) fn poll_exit(_pid: u32) -> io::Result<Option<Exit>> {
    supported().map(|()| None)
}

/// No child to wait for.
pub(crate) fn wait_exit(_pid: u32) -> Exit {
    Exit::UNKNOWN
}

/// No child to reap.
pub(crate) fn reap(_pid: u32) {}

/// No pipes here.
pub(crate) fn async_reader(_fd: Fd) -> io::Result<PipeReader> {
    supported().map(|()| tokio::io::empty())
}

/// No pipes here.
pub(crate) fn async_writer(_fd: Fd) -> io::Result<PipeWriter> {
    supported().map(|()| tokio::io::sink())
}

/// No pipes here.
pub(crate) fn set_nonblocking(_fd: &Fd) -> io::Result<()> {
    supported()
}

/// No pipes here.
pub(crate) fn read(_fd: &Fd, _buf: &mut [u8]) -> io::Result<usize> {
    supported().map(|()| 0)
}

/// No child is ever left to end at exit.
pub(crate) fn at_host_exit(_hook: extern "C" fn()) {}

/// Not needed: there is no reaper to find here.
pub(crate) fn loaded_from() -> Option<PathBuf> {
    None
}

/// Nothing to check beyond being a regular file.
pub(crate) fn may_execute(_path: &Path) -> Result<(), i32> {
    Ok(())
}

/// The directory keeps the system's default permissions.
pub(crate) fn owner_only_dir(_builder: &mut DirBuilder) {}

/// The file keeps the system's default permissions.
pub(crate) fn owner_only_file(_options: &mut OpenOptions) {}

/// Unknown here: no spill directory is ever swept.
pub(crate) fn owned_by_this_user(_meta: &Metadata) -> bool {
    false
}

/// Unknown here: taken to exist, so nothing of it is removed.
pub(crate) fn process_exists(_pid: u32) -> bool {
    true
}

/// No groups to end when the host dies.
pub(crate) mod guardian {
    use std::collections::BTreeMap;

    /// Nothing to hear of.
    pub(crate) fn started(_pgid: u32, _reaper: bool, _live: &BTreeMap<u32, bool>) {}

    /// Nothing to hear of.
    pub(crate) fn ending(_pgid: u32, _live: &BTreeMap<u32, bool>) {}

    /// Nothing to dismiss.
    pub(crate) fn dismiss() {}
}
