//! What the host, the supervisor and the reapers say to each other.
//!
//! Two kinds of socket, both `SOCK_SEQPACKET` (one message per send, never
//! merged or split):
//! - **the host's socket**, one per host, to the supervisor: the supervisor's
//!   [`Hello`] first, then the host's [`Request`]s for reapers and the
//!   supervisor's [`Handout`]s, each carrying one reaper's socket with
//!   `SCM_RIGHTS`;
//! - **a reaper's socket**, one per reaper, between the host and that
//!   long-lived reaper, which serves one command at a time: the host sends
//!   an [`Order`]. [`Order::Start`] carries the command's stdio and the start
//!   of its [`LaunchSpec`] (the rest follows in [`CHUNK`]-sized packets), and
//!   the reaper answers with one [`Report`] (`Started` or `Failed`), then,
//!   once nothing of the command is left, `Exited`. The supervisor holds a
//!   copy of the reaper's end: for a reaper that died with a command, it
//!   sends the `Exited` itself once the command's strays are gone, and the
//!   host sees the socket's end only after that.
//!
//! The host's end of either socket closing is how the other side learns that
//! the host is gone (a reaper's socket closing alone: the host retired it).
//! A socket cannot be reopened through `/proc/<pid>/fd`, so no command can
//! hold that news back.

pub use crate::error::ProtocolMismatch;
pub use crate::limits::Observed;
use crate::limits::{Limit, LimitSet, Limits, Mechanisms};

/// The descriptors an [`Order::Start`] carries, in order.
pub const START_FDS: [&str; 3] = ["stdin", "stdout", "stderr"];

/// The largest packet either side sends on a reaper's socket; a
/// [`LaunchSpec`] that does not fit in the [`Order::Start`] goes on in
/// packets of this size.
pub const CHUNK: usize = 32 * 1024;

/// The size of every message but an [`Order::Start`], which is this header
/// followed by the spec.
pub const MESSAGE_LEN: usize = 24;

/// The version of this protocol, which the supervisor's [`Hello`] carries.
/// A host refuses a supervisor of another version (a platform package
/// upgraded in place under a running host can bring one): every message
/// after the hello could mean something else to it. Raise it with any
/// change to a message's layout or meaning. Supervisors from before
/// versions were sent say 0.
pub const PROTOCOL_VERSION: u32 = 3;

/// What the supervisor tells the host once, when it starts: the cgroup
/// controllers its reapers' leaves have, which decides how limits are
/// enforced ([`crate::limits::mechanism`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// The controllers.
    pub controllers: Mechanisms,
}

impl Hello {
    /// The message's bytes.
    pub fn encode(self) -> [u8; MESSAGE_LEN] {
        let version = |controller: Option<bool>| match controller {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        };
        let mut bytes = [0; MESSAGE_LEN];
        bytes[0] = b'h';
        bytes[1] = version(self.controllers.memory);
        bytes[2] = version(self.controllers.pids);
        bytes[4..8].copy_from_slice(&PROTOCOL_VERSION.to_le_bytes());
        bytes
    }

    /// The protocol version a hello in `bytes` carries, whatever the rest
    /// of it says (which only that version defines); `None` for anything
    /// that is not a hello. Hellos before version 3 were 12 bytes long.
    pub fn version_of(bytes: &[u8]) -> Option<u32> {
        if bytes.len() < 8 || bytes[0] != b'h' {
            return None;
        }
        Some(u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]))
    }

    /// The hello in `bytes`, or `None` for anything malformed.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let bytes: &[u8; MESSAGE_LEN] = bytes.try_into().ok()?;
        let version = |byte: u8| match byte {
            0 => Some(None),
            1 => Some(Some(false)),
            2 => Some(Some(true)),
            _ => None,
        };
        (Self::version_of(bytes)? == PROTOCOL_VERSION).then_some(())?;
        Some(Self { controllers: Mechanisms { memory: version(bytes[1])?, pids: version(bytes[2])? } })
    }
}

/// What the host asks of the supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// Make `count` more reapers, and hand each over as soon as it is made.
    Reapers {
        /// How many.
        count: u16,
        /// The host runs commands with limits a cgroup holds (memory,
        /// processes): from now on, new reapers get ready for them.
        cgroup_limits: bool,
    },
    /// SIGCONT to reaper `reaper` alone: the host heard nothing from it in
    /// time, and a command may have stopped it.
    Continue {
        /// The reaper's number, from its [`Handout`].
        reaper: u64,
    },
}

impl Request {
    /// The message's bytes.
    pub fn encode(self) -> [u8; MESSAGE_LEN] {
        let mut bytes = [0; MESSAGE_LEN];
        match self {
            Self::Reapers { count, cgroup_limits } => {
                bytes[0] = b'R';
                bytes[1] = u8::from(cgroup_limits);
                bytes[2..4].copy_from_slice(&count.to_le_bytes());
            }
            Self::Continue { reaper } => {
                bytes[0] = b'C';
                bytes[8..16].copy_from_slice(&reaper.to_le_bytes());
            }
        }
        bytes
    }

    /// The request in `bytes`, or `None` for anything malformed.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let bytes: &[u8; MESSAGE_LEN] = bytes.try_into().ok()?;
        let word = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
        if bytes[16..] != [0; 8] {
            return None;
        }
        match (bytes[0], bytes[1]) {
            (b'R', flag @ (0 | 1)) if word == 0 => {
                Some(Self::Reapers { count: u16::from_le_bytes([bytes[2], bytes[3]]), cgroup_limits: flag == 1 })
            }
            (b'C', 0) => Some(Self::Continue { reaper: word }),
            _ => None,
        }
    }
}

/// What the host's lifecycle asks of a running command (the host's side
/// turns it into an [`Order`] for the command's reaper).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// SIGTERM to every descendant.
    Term,
    /// SIGKILL to every descendant, until none is left.
    Kill,
}

/// A reaper made for the host: the supervisor's message that carries its
/// socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handout {
    /// The supervisor's number for the reaper, never reused by one supervisor.
    pub reaper: u64,
    /// Its pid, which is also its commands' process group.
    pub pid: u32,
}

impl Handout {
    /// The message's bytes.
    pub fn encode(self) -> [u8; MESSAGE_LEN] {
        let mut bytes = [0; MESSAGE_LEN];
        bytes[0] = b'r';
        bytes[4..8].copy_from_slice(&self.pid.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.reaper.to_le_bytes());
        bytes
    }

    /// The handout in `bytes`, or `None` for anything malformed.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let bytes: &[u8; MESSAGE_LEN] = bytes.try_into().ok()?;
        let pid = u32::from_le_bytes(bytes[4..8].try_into().ok()?);
        let reaper = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
        (bytes[0] == b'r' && bytes[1..4] == [0; 3] && bytes[16..] == [0; 8] && pid > 0 && i32::try_from(pid).is_ok())
            .then_some(Self { reaper, pid })
    }
}

/// What the host tells a reaper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Start command `id`. The message carries its stdio (in the order of
    /// [`START_FDS`]) and, after these [`MESSAGE_LEN`] bytes, the start of
    /// its encoded [`LaunchSpec`].
    Start {
        /// The host's number for the command, never reused by one host.
        id: u64,
    },
    /// SIGTERM to every descendant of command `id`.
    Term {
        /// The command; an order for another (one that ended) is ignored.
        id: u64,
    },
    /// SIGKILL to every descendant of command `id`, until none is left.
    Kill {
        /// The command; an order for another (one that ended) is ignored.
        id: u64,
    },
}

impl Order {
    /// The message's bytes (for a start, its header).
    pub fn encode(self) -> [u8; MESSAGE_LEN] {
        let (tag, id) = match self {
            Self::Start { id } => (b'S', id),
            Self::Term { id } => (b'T', id),
            Self::Kill { id } => (b'K', id),
        };
        let mut bytes = [0; MESSAGE_LEN];
        bytes[0] = tag;
        bytes[8..16].copy_from_slice(&id.to_le_bytes());
        bytes
    }

    /// The order in the first [`MESSAGE_LEN`] bytes of `bytes`, or `None`
    /// for anything malformed; only a start may be longer.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let header: &[u8; MESSAGE_LEN] = bytes.get(..MESSAGE_LEN)?.try_into().ok()?;
        let id = u64::from_le_bytes(header[8..16].try_into().ok()?);
        if header[1..8] != [0; 7] || header[16..] != [0; 8] {
            return None;
        }
        match (header[0], bytes.len() == MESSAGE_LEN) {
            (b'S', _) => Some(Self::Start { id }),
            (b'T', true) => Some(Self::Term { id }),
            (b'K', true) => Some(Self::Kill { id }),
            _ => None,
        }
    }
}

/// What a reaper (and, for a reaper that died with its command, the
/// supervisor) tells the host about the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// The command runs.
    Started {
        /// The host's number for the command.
        id: u64,
        /// The command's own pid (in a terminal, its session's leader).
        command: u32,
    },
    /// The command could not be started: the OS error. The reaper is ready
    /// for the next.
    Failed {
        /// The host's number for the command.
        id: u64,
        /// The errno.
        errno: i32,
    },
    /// The command and every descendant are gone. A reaper killed right
    /// after it reported can have the supervisor report the same command
    /// again: the host reads only the first report for a command.
    Exited {
        /// The host's number for the command.
        id: u64,
        /// The command's wait status, as `waitpid` gives it.
        status: i32,
        /// The supervisor died while the command ran, so the reaper ended it.
        lost: bool,
        /// The reaper takes no further command (it is exiting, or dead and
        /// this report is the supervisor's); otherwise it is ready for the next.
        retired: bool,
        /// What its limits did to it, as far as the reaper saw.
        observed: Observed,
    },
}

impl Report {
    /// The message's bytes.
    pub fn encode(self) -> [u8; MESSAGE_LEN] {
        let (tag, id, value, flags) = match self {
            Self::Started { id, command } => (b's', id, command as i32, 0),
            Self::Failed { id, errno } => (b'f', id, errno, 0),
            Self::Exited { id, status, lost, retired, .. } => {
                (b'x', id, status, u8::from(lost) | u8::from(retired) << 1)
            }
        };
        let mut bytes = [0; MESSAGE_LEN];
        bytes[0] = tag;
        bytes[1] = flags;
        bytes[4..8].copy_from_slice(&value.to_le_bytes());
        bytes[16..24].copy_from_slice(&id.to_le_bytes());
        if let Self::Exited { observed, .. } = self {
            bytes[2] = u8::from(observed.oom_kills)
                | u8::from(observed.forks_refused) << 1
                | cgroup_limits(observed.tampered) << 2
                | cgroup_limits(observed.unwatched) << 4;
            bytes[3] = u8::try_from(observed.ended_after_exit).unwrap_or(u8::MAX);
            // Milliseconds of CPU, plus one so that 0 says "not known".
            let cpu = observed.cpu_ms.map_or(0, |ms| u32::try_from(ms).unwrap_or(u32::MAX - 1) + 1);
            bytes[8..12].copy_from_slice(&cpu.to_le_bytes());
        }
        bytes
    }

    /// The report in `bytes`, or `None` for anything malformed.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let bytes: &[u8; MESSAGE_LEN] = bytes.try_into().ok()?;
        let value = i32::from_le_bytes(bytes[4..8].try_into().ok()?);
        let extra = u32::from_le_bytes(bytes[8..12].try_into().ok()?);
        let id = u64::from_le_bytes(bytes[16..24].try_into().ok()?);
        if bytes[12..16] != [0; 4] {
            return None;
        }
        match (bytes[0], bytes[1]) {
            (b's', 0) if extra == 0 && bytes[2..4] == [0, 0] => {
                Some(Self::Started { id, command: u32::try_from(value).ok().filter(|&pid| pid > 0)? })
            }
            (b'f', 0) if extra == 0 && bytes[2..4] == [0, 0] => Some(Self::Failed { id, errno: value }),
            (b'x', flags @ 0..=3) if bytes[2] < 64 => Some(Self::Exited {
                id,
                status: value,
                lost: flags & 1 != 0,
                retired: flags & 2 != 0,
                observed: Observed {
                    oom_kills: bytes[2] & 1 != 0,
                    forks_refused: bytes[2] & 2 != 0,
                    cpu_ms: extra.checked_sub(1).map(u64::from),
                    ended_after_exit: u32::from(bytes[3]),
                    tampered: cgroup_limit_set(bytes[2] >> 2),
                    unwatched: cgroup_limit_set(bytes[2] >> 4),
                    ..Observed::NONE
                },
            }),
            _ => None,
        }
    }
}

/// Everything a reaper needs to start its command. Strings are bytes: paths
/// and arguments need not be UTF-8, and none may hold a NUL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    /// The absolute program path.
    pub program: Vec<u8>,
    /// `argv`, from `argv[0]` on.
    pub argv: Vec<Vec<u8>>,
    /// `KEY=VALUE` entries: the command's whole environment.
    pub env: Vec<Vec<u8>>,
    /// The working directory.
    pub cwd: Vec<u8>,
    /// Milliseconds between the SIGTERM and the SIGKILL to what the command
    /// leaves behind.
    pub grace_ms: u64,
    /// The path of a pseudo-terminal's slave: the command starts a session
    /// of its own with it as its controlling terminal on 0–2.
    pub terminal: Option<Vec<u8>>,
    /// The command's resource limits.
    pub limits: Limits,
}

impl LaunchSpec {
    /// The spec's bytes: the whole length (u32), then each field.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0; 4];
        out.extend_from_slice(&self.grace_ms.to_le_bytes());
        for value in self.limits.to_wire() {
            out.extend_from_slice(&value.to_le_bytes());
        }
        put(&mut out, &self.program);
        put(&mut out, &self.cwd);
        let terminal: Vec<Vec<u8>> = self.terminal.iter().cloned().collect();
        for list in [&self.argv, &self.env, &terminal] {
            out.extend_from_slice(&(list.len() as u32).to_le_bytes());
            for item in list {
                put(&mut out, item);
            }
        }
        let len = out.len() as u32;
        out[..4].copy_from_slice(&len.to_le_bytes());
        out
    }

    /// The whole length an encoded spec announces in its first bytes.
    pub fn announced_len(first: &[u8]) -> Option<usize> {
        Some(u32::from_le_bytes(first.get(..4)?.try_into().ok()?) as usize)
    }

    /// The spec in `bytes` (as [`LaunchSpec::encode`] wrote it), or `None`
    /// for anything malformed: a wrong length, a NUL, an empty program.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if Self::announced_len(bytes)? != bytes.len() {
            return None;
        }
        let mut reader = Reader { bytes, at: 4 };
        let grace_ms = u64::from_le_bytes(reader.take(8)?.try_into().ok()?);
        let mut limits = [0; 5];
        for value in &mut limits {
            *value = u64::from_le_bytes(reader.take(8)?.try_into().ok()?);
        }
        let limits = Limits::from_wire(limits);
        let program = reader.item()?;
        let cwd = reader.item()?;
        let argv = reader.list()?;
        let env = reader.list()?;
        let mut terminals = reader.list()?;
        let terminal = terminals.pop();
        let whole = reader.at == bytes.len() && terminals.is_empty();
        let no_nul =
            [&program, &cwd].into_iter().chain(&argv).chain(&env).chain(&terminal).all(|item| !item.contains(&0));
        let terminal_named = terminal.as_ref().is_none_or(|path| !path.is_empty());
        (whole && no_nul && terminal_named && !program.is_empty() && !argv.is_empty()).then_some(Self {
            program,
            argv,
            env,
            cwd,
            grace_ms,
            terminal,
            limits,
        })
    }
}

/// The limits a cgroup holds in `set` (memory, processes) as two bits.
fn cgroup_limits(set: LimitSet) -> u8 {
    u8::from(set.contains(Limit::Memory)) | u8::from(set.contains(Limit::Processes)) << 1
}

/// The set two bits of [`cgroup_limits`] stand for.
fn cgroup_limit_set(bits: u8) -> LimitSet {
    [(1, Limit::Memory), (2, Limit::Processes)]
        .into_iter()
        .filter(|(bit, _)| bits & bit != 0)
        .map(|(_, limit)| limit)
        .collect()
}

fn put(out: &mut Vec<u8>, item: &[u8]) {
    out.extend_from_slice(&(item.len() as u32).to_le_bytes());
    out.extend_from_slice(item);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, len: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(len)?;
        let taken = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(taken)
    }

    fn len(&mut self) -> Option<usize> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize)
    }

    fn item(&mut self) -> Option<Vec<u8>> {
        let len = self.len()?;
        self.take(len).map(<[u8]>::to_vec)
    }

    fn list(&mut self) -> Option<Vec<Vec<u8>>> {
        let count = self.len()?;
        // Every item takes at least its length: a count past that is a lie.
        if count > (self.bytes.len() - self.at) / 4 {
            return None;
        }
        (0..count).map(|_| self.item()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_reads_back_as_written() {
        for request in [
            Request::Reapers { count: 3, cgroup_limits: false },
            Request::Reapers { count: u16::MAX, cgroup_limits: true },
            Request::Continue { reaper: u64::MAX },
        ] {
            assert_eq!(Request::decode(&request.encode()), Some(request));
        }
        let handout = Handout { reaper: 1 << 40, pid: 4_194_304 };
        assert_eq!(Handout::decode(&handout.encode()), Some(handout));
        for order in [Order::Start { id: 7 }, Order::Term { id: u64::MAX }, Order::Kill { id: 0 }] {
            assert_eq!(Order::decode(&order.encode()), Some(order));
        }
        let mut start = Order::Start { id: 9 }.encode().to_vec();
        start.extend_from_slice(b"spec");
        assert_eq!(Order::decode(&start), Some(Order::Start { id: 9 }), "a start carries its spec after the header");
        for report in [
            Report::Started { id: 3, command: 4_194_305 },
            Report::Failed { id: u64::MAX, errno: 2 },
            Report::Exited { id: 1, status: 0x0f00, lost: false, retired: false, observed: Observed::default() },
            Report::Exited {
                id: 2,
                status: 9,
                lost: true,
                retired: true,
                observed: Observed { oom_kills: true, cpu_ms: Some(0), ..Observed::NONE },
            },
            Report::Exited {
                id: 3,
                status: 9,
                lost: false,
                retired: true,
                observed: Observed { forks_refused: true, cpu_ms: Some(86_400_000), ..Observed::NONE },
            },
            Report::Exited {
                id: 4,
                status: 0,
                lost: false,
                retired: false,
                observed: Observed {
                    tampered: [Limit::Memory].into_iter().collect(),
                    unwatched: [Limit::Memory, Limit::Processes].into_iter().collect(),
                    ..Observed::NONE
                },
            },
            Report::Exited {
                id: 5,
                status: 0,
                lost: false,
                retired: false,
                observed: Observed { tampered: [Limit::Processes].into_iter().collect(), ..Observed::NONE },
            },
        ] {
            assert_eq!(Report::decode(&report.encode()), Some(report));
        }
    }

    #[test]
    fn malformed_messages_are_refused() {
        assert_eq!(Request::decode(b"R"), None);
        assert_eq!(Request::decode(&[b'Z'; MESSAGE_LEN]), None);
        let mut term = Order::Term { id: 1 }.encode().to_vec();
        term.push(0);
        assert_eq!(Order::decode(&term), None, "only a start carries more than its header");
        assert_eq!(Order::decode(&Order::Kill { id: 1 }.encode()[..8]), None);
        let mut handout = Handout { reaper: 1, pid: 2 }.encode();
        handout[4..8].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(Handout::decode(&handout), None, "pid 0 is no process");
        let mut started = Report::Started { id: 1, command: 2 }.encode();
        started[4..8].copy_from_slice(&0i32.to_le_bytes());
        assert_eq!(Report::decode(&started), None, "a command pid 0 is no process");
        let exited = || Report::Exited { id: 1, status: 0, lost: false, retired: false, observed: Observed::default() };
        let mut flags = exited().encode();
        flags[1] = 4;
        assert_eq!(Report::decode(&flags), None);
        let long = Observed { cpu_ms: Some(1 << 40), ..Observed::default() };
        let Some(Report::Exited { observed, .. }) =
            Report::decode(&Report::Exited { id: 1, status: 0, lost: false, retired: false, observed: long }.encode())
        else {
            panic!()
        };
        assert_eq!(observed.cpu_ms, Some(u64::from(u32::MAX - 1)), "CPU time beyond 49 days is held at the most");
        for (left, read) in [(0, 0), (3, 3), (255, 255), (100_000, 255)] {
            let observed = Observed { ended_after_exit: left, ..Observed::default() };
            let Some(Report::Exited { observed, .. }) =
                Report::decode(&Report::Exited { id: 1, status: 0, lost: false, retired: false, observed }.encode())
            else {
                panic!()
            };
            assert_eq!(observed.ended_after_exit, read, "{left} processes left, 255 standing for more");
        }
        let mut observed = exited().encode();
        observed[2] = 64;
        assert_eq!(Report::decode(&observed), None, "an unknown observation");
        let hybrid = Hello { controllers: Mechanisms { memory: Some(false), pids: None } };
        assert_eq!(Hello::decode(&hybrid.encode()), Some(hybrid));
        let mut hello = hybrid.encode();
        hello[2] = 3;
        assert_eq!(Hello::decode(&hello), None);
    }

    #[test]
    fn a_hello_carries_the_protocol_version_and_one_of_another_version_is_not_read() {
        let hello = Hello { controllers: Mechanisms { memory: Some(true), pids: Some(true) } }.encode();
        assert_eq!(Hello::version_of(&hello), Some(PROTOCOL_VERSION));
        let mut newer = hello;
        newer[4..8].copy_from_slice(&(PROTOCOL_VERSION + 1).to_le_bytes());
        assert_eq!(Hello::version_of(&newer), Some(PROTOCOL_VERSION + 1));
        assert_eq!(Hello::decode(&newer), None, "its controllers mean what its own version says");
        let mut unversioned = hello;
        unversioned[4..8].fill(0);
        assert_eq!(Hello::version_of(&unversioned), Some(0));
        assert_eq!(Hello::version_of(&Request::Reapers { count: 1, cgroup_limits: false }.encode()), None);
        let mut older = [0; 12];
        older[0] = b'h';
        older[4..8].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(Hello::version_of(&older), Some(2), "a version 2 hello was 12 bytes long");
        let mismatch = ProtocolMismatch { expected: PROTOCOL_VERSION, found: 7 };
        assert!(mismatch
            .to_string()
            .contains(&format!("speaks protocol version 7, this addon version {PROTOCOL_VERSION}")));
    }

    #[test]
    fn a_launch_spec_reads_back_and_a_damaged_one_is_refused() {
        let spec = LaunchSpec {
            program: b"/bin/sh".to_vec(),
            argv: vec![b"/bin/sh".to_vec(), b"-c".to_vec(), b"echo \xff".to_vec()],
            env: vec![b"A=1".to_vec(), b"EMPTY=".to_vec()],
            cwd: b"/tmp".to_vec(),
            grace_ms: 3000,
            terminal: None,
            limits: Limits { memory_bytes: Some(1 << 30), open_files: Some(64), ..Limits::default() },
        };
        let bytes = spec.encode();
        assert_eq!(LaunchSpec::announced_len(&bytes), Some(bytes.len()));
        assert_eq!(LaunchSpec::decode(&bytes), Some(spec.clone()));
        assert_eq!(LaunchSpec::decode(&bytes[..bytes.len() - 1]), None);
        let mut nul = spec.clone();
        nul.env.push(b"B=\0".to_vec());
        assert_eq!(LaunchSpec::decode(&nul.encode()), None);
        let in_terminal = LaunchSpec { terminal: Some(b"/dev/pts/7".to_vec()), ..spec.clone() };
        assert_eq!(LaunchSpec::decode(&in_terminal.encode()), Some(in_terminal.clone()));
        let unnamed = LaunchSpec { terminal: Some(Vec::new()), ..spec.clone() };
        assert_eq!(LaunchSpec::decode(&unnamed.encode()), None);
        let no_argv = LaunchSpec { argv: Vec::new(), ..spec };
        assert_eq!(LaunchSpec::decode(&no_argv.encode()), None);
    }
}
