//! Where there is no supervisor (`SUPERVISOR` is false): its calls exist so
//! that the lifecycle compiles everywhere, and are never reached, since no
//! command is ever [`Control::Supervised`](crate::process::exit::Control) here.

use std::io;
use std::path::Path;

use super::{Fd, SpawnRequest};
use crate::limits::Mechanisms;
use crate::process::exit::Exit;
use crate::supervisor::protocol::Ask;

/// Never made: see the module comment.
pub(crate) struct Supervised {
    pub(crate) pid: u32,
    pub(crate) stdout: Option<Fd>,
    pub(crate) stderr: Option<Fd>,
    pub(crate) stdin: Option<Fd>,
    pub(crate) id: u64,
    pub(crate) link: Link,
    pub(crate) terminal: Option<(Fd, u32)>,
}

/// Never made: see the module comment.
#[derive(Clone)]
pub(crate) struct Link(std::convert::Infallible);

#[cfg(unix)]
impl std::os::fd::AsRawFd for Link {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        match self.0 {}
    }
}

/// Fails: there is no supervisor here.
pub(crate) fn spawn(_helper: &Path, _request: &SpawnRequest) -> io::Result<Supervised> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Fails: there is no supervisor here.
pub(crate) fn controllers(_helper: &Path) -> io::Result<Mechanisms> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Nothing to ask: no command runs under a supervisor here.
pub(crate) fn ask(_id: u64, _ask: Ask) {}

/// Never called: there are no links here.
pub(crate) fn read_exit(link: &Link, _nonblocking: bool) -> io::Result<Option<Exit>> {
    match link.0 {}
}

/// Never made: see the module comment.
pub(crate) struct Ordered(std::convert::Infallible);

/// Nothing to order: the caller starts the command itself.
pub(crate) fn order(_request: &SpawnRequest) -> io::Result<Option<Ordered>> {
    Ok(None)
}

impl Ordered {
    /// Never called: nothing is ever ordered here.
    pub(crate) async fn started(self) -> io::Result<Option<Supervised>> {
        match self.0 {}
    }
}

/// None: there is no supervisor here.
pub(crate) fn try_controllers() -> Option<Mechanisms> {
    None
}
