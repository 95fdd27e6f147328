//! What the host, the supervisor and a command's reaper say to each other.
//!
//! Two kinds of socket, both `SOCK_SEQPACKET` (one message per send, never
//! merged or split):
//! - **the host's socket**, one per host, to the supervisor: [`Request`]s,
//!   each a few bytes. A [`Request::Spawn`] carries four descriptors with
//!   `SCM_RIGHTS`, in the order of [`SPAWN_FDS`];
//! - **a command's link**, one per command, between the host and that
//!   command's reaper: the host sends the [`LaunchSpec`] (in [`CHUNK`]-sized
//!   packets, the first starting with the whole length), and the reaper
//!   answers with [`Report`]s: `Started` or `Failed`, then `Exited`.
//!
//! The supervisor's first message on the host's socket is its [`Hello`].
//!
//! The host's end of either socket closing is how the other side learns that
//! the host is gone. A socket cannot be reopened through `/proc/<pid>/fd`, so
//! no command can hold that news back.

pub use crate::error::ProtocolMismatch;
pub use crate::limits::Observed;
use crate::limits::{Limit, LimitSet, Limits, Mechanisms};

/// The descriptors a [`Request::Spawn`] carries, in order.
pub const SPAWN_FDS: [&str; 4] = ["link", "stdin", "stdout", "stderr"];

/// The largest packet either side sends on a link; a [`LaunchSpec`] larger
/// than that goes in several.
pub const CHUNK: usize = 32 * 1024;

/// The size of every [`Request`] and [`Report`] on the wire.
pub const MESSAGE_LEN: usize = 12;

/// The version of this protocol, which the supervisor's [`Hello`] carries.
/// A host refuses a supervisor of another version (a platform package
/// upgraded in place under a running host can bring one): every message
/// after the hello could mean something else to it. Raise it with any
/// change to a message's layout or meaning. Supervisors from before
/// versions were sent say 0.
pub const PROTOCOL_VERSION: u32 = 3;

/// What the supervisor tells the host once, when it starts: the cgroup
/// controllers its command leaves have, which decides how limits are
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
    /// that is not a hello.
    pub fn version_of(bytes: &[u8]) -> Option<u32> {
        let bytes: &[u8; MESSAGE_LEN] = bytes.try_into().ok()?;
        (bytes[0] == b'h').then(|| u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]))
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
    /// Fork a reaper for command `id`; its link and stdio come with the message.
    Spawn {
        /// The host's number for the command, never reused by one host.
        id: u64,
        /// The command has limits a cgroup holds (memory, processes): from
        /// now on, reapers get ready for them on standby.
        cgroup_limits: bool,
    },
    /// Signal command `id`'s reaper, which passes it on.
    Signal {
        /// The command.
        id: u64,
        /// What to ask.
        ask: Ask,
    },
}

/// What the host asks of a running command's reaper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// SIGTERM to every descendant (the reaper passes it on).
    Term,
    /// SIGKILL to every descendant, until none is left.
    Kill,
    /// SIGCONT to the reaper alone: the host heard nothing from it in time,
    /// and a command may have stopped it.
    Continue,
}

impl Request {
    /// The message's bytes.
    pub fn encode(self) -> [u8; MESSAGE_LEN] {
        let (tag, id, flag) = match self {
            Self::Spawn { id, cgroup_limits } => (b'S', id, u8::from(cgroup_limits)),
            Self::Signal { id, ask: Ask::Term } => (b'T', id, 0),
            Self::Signal { id, ask: Ask::Kill } => (b'K', id, 0),
            Self::Signal { id, ask: Ask::Continue } => (b'C', id, 0),
        };
        let mut bytes = [0; MESSAGE_LEN];
        bytes[0] = tag;
        bytes[1] = flag;
        bytes[4..].copy_from_slice(&id.to_le_bytes());
        bytes
    }

    /// The request in `bytes`, or `None` for anything malformed.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let bytes: &[u8; MESSAGE_LEN] = bytes.try_into().ok()?;
        let id = u64::from_le_bytes(bytes[4..].try_into().ok()?);
        match (bytes[0], bytes[1]) {
            (b'S', flag @ (0 | 1)) => Some(Self::Spawn { id, cgroup_limits: flag == 1 }),
            (b'T', 0) => Some(Self::Signal { id, ask: Ask::Term }),
            (b'K', 0) => Some(Self::Signal { id, ask: Ask::Kill }),
            (b'C', 0) => Some(Self::Signal { id, ask: Ask::Continue }),
            _ => None,
        }
    }
}

/// What a reaper (and, for `Assigned`, the supervisor) tells the host about
/// its command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// From the reaper, once it has taken the command and before it starts
    /// it. A command can kill its reaper before that reports the start; the
    /// host then still knows whose exit it is, and an exit before this
    /// report means the command never started.
    Assigned {
        /// The reaper's pid, the group id.
        pid: u32,
    },
    /// The command runs; `pid` is the reaper's, which leads the command's group.
    Started {
        /// The reaper's pid, the group id.
        pid: u32,
        /// The command's own pid (in a terminal, its session's leader).
        command: u32,
    },
    /// The command could not be started: the OS error.
    Failed {
        /// The errno.
        errno: i32,
    },
    /// The command and every descendant are gone.
    Exited {
        /// The command's wait status, as `waitpid` gives it.
        status: i32,
        /// The supervisor died while the command ran, so the reaper ended it.
        lost: bool,
        /// What its limits did to it, as far as the reaper saw.
        observed: Observed,
    },
}

impl Report {
    /// The message's bytes.
    pub fn encode(self) -> [u8; MESSAGE_LEN] {
        let (tag, value, flag) = match self {
            Self::Assigned { pid } => (b'a', pid as i32, 0),
            Self::Started { pid, .. } => (b's', pid as i32, 0),
            Self::Failed { errno } => (b'f', errno, 0),
            Self::Exited { status, lost, .. } => (b'x', status, u8::from(lost)),
        };
        let mut bytes = [0; MESSAGE_LEN];
        bytes[0] = tag;
        bytes[1] = flag;
        bytes[4..8].copy_from_slice(&value.to_le_bytes());
        match self {
            Self::Started { command, .. } => bytes[8..12].copy_from_slice(&command.to_le_bytes()),
            Self::Exited { observed, .. } => {
                bytes[2] = u8::from(observed.oom_kills)
                    | u8::from(observed.forks_refused) << 1
                    | cgroup_limits(observed.tampered) << 2
                    | cgroup_limits(observed.unwatched) << 4;
                bytes[3] = u8::try_from(observed.ended_after_exit).unwrap_or(u8::MAX);
                // Milliseconds of CPU, plus one so that 0 says "not known".
                let cpu = observed.cpu_ms.map_or(0, |ms| u32::try_from(ms).unwrap_or(u32::MAX - 1) + 1);
                bytes[8..12].copy_from_slice(&cpu.to_le_bytes());
            }
            Self::Assigned { .. } | Self::Failed { .. } => {}
        }
        bytes
    }

    /// The report in `bytes`, or `None` for anything malformed.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        let bytes: &[u8; MESSAGE_LEN] = bytes.try_into().ok()?;
        let value = i32::from_le_bytes(bytes[4..8].try_into().ok()?);
        let extra = u32::from_le_bytes(bytes[8..12].try_into().ok()?);
        match (bytes[0], bytes[1]) {
            (b'a', 0) => Some(Self::Assigned { pid: u32::try_from(value).ok().filter(|&pid| pid > 0)? }),
            (b's', 0) => Some(Self::Started {
                pid: u32::try_from(value).ok().filter(|&pid| pid > 0)?,
                command: Some(extra).filter(|&pid| pid > 0 && i32::try_from(pid).is_ok())?,
            }),
            (b'f', 0) => Some(Self::Failed { errno: value }),
            (b'x', flag @ (0 | 1)) if bytes[2] < 64 => Some(Self::Exited {
                status: value,
                lost: flag == 1,
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
    fn every_request_and_report_reads_back_as_written() {
        for request in [
            Request::Spawn { id: 7, cgroup_limits: false },
            Request::Spawn { id: 8, cgroup_limits: true },
            Request::Signal { id: u64::MAX, ask: Ask::Term },
            Request::Signal { id: 0, ask: Ask::Kill },
            Request::Signal { id: 9, ask: Ask::Continue },
        ] {
            assert_eq!(Request::decode(&request.encode()), Some(request));
        }
        for report in [
            Report::Started { pid: 4_194_304, command: 4_194_305 },
            Report::Assigned { pid: 7 },
            Report::Failed { errno: 2 },
            Report::Exited { status: 0x0f00, lost: false, observed: Observed::default() },
            Report::Exited {
                status: 9,
                lost: true,
                observed: Observed { oom_kills: true, cpu_ms: Some(0), ..Observed::NONE },
            },
            Report::Exited {
                status: 9,
                lost: false,
                observed: Observed { forks_refused: true, cpu_ms: Some(86_400_000), ..Observed::NONE },
            },
            Report::Exited {
                status: 0,
                lost: false,
                observed: Observed {
                    tampered: [Limit::Memory].into_iter().collect(),
                    unwatched: [Limit::Memory, Limit::Processes].into_iter().collect(),
                    ..Observed::NONE
                },
            },
            Report::Exited {
                status: 0,
                lost: false,
                observed: Observed { tampered: [Limit::Processes].into_iter().collect(), ..Observed::NONE },
            },
        ] {
            assert_eq!(Report::decode(&report.encode()), Some(report));
        }
    }

    #[test]
    fn malformed_messages_are_refused() {
        assert_eq!(Request::decode(b"S"), None);
        assert_eq!(Request::decode(&[b'Z'; MESSAGE_LEN]), None);
        let mut started = Report::Started { pid: 1, command: 2 }.encode();
        started[4..8].copy_from_slice(&0i32.to_le_bytes());
        assert_eq!(Report::decode(&started), None, "pid 0 is no process");
        let mut started = Report::Started { pid: 1, command: 2 }.encode();
        started[8..12].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(Report::decode(&started), None, "a command pid 0 is no process");
        let mut exited = Report::Exited { status: 0, lost: false, observed: Observed::default() }.encode();
        exited[1] = 2;
        assert_eq!(Report::decode(&exited), None);
        let long = Observed { cpu_ms: Some(1 << 40), ..Observed::default() };
        let Some(Report::Exited { observed, .. }) =
            Report::decode(&Report::Exited { status: 0, lost: false, observed: long }.encode())
        else {
            panic!()
        };
        assert_eq!(observed.cpu_ms, Some(u64::from(u32::MAX - 1)), "CPU time beyond 49 days is held at the most");
        for (left, read) in [(0, 0), (3, 3), (255, 255), (100_000, 255)] {
            let observed = Observed { ended_after_exit: left, ..Observed::default() };
            let Some(Report::Exited { observed, .. }) =
                Report::decode(&Report::Exited { status: 0, lost: false, observed }.encode())
            else {
                panic!()
            };
            assert_eq!(observed.ended_after_exit, read, "{left} processes left, 255 standing for more");
        }
        let mut observed = Report::Exited { status: 0, lost: false, observed: Observed::default() }.encode();
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
        assert_eq!(Hello::version_of(&Request::Spawn { id: 1, cgroup_limits: false }.encode()), None);
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
