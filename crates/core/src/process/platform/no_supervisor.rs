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
    pub(crate) link: Fd,
    pub(crate) terminal: Option<(Fd, u32)>,
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

/// Fails: there are no links here.
pub(crate) fn read_exit(_link: &Fd, _nonblocking: bool, _reported: &mut Option<Exit>) -> io::Result<Option<Exit>> {
    Err(io::ErrorKind::Unsupported.into())
}
