//! Per-command resource limits: what a caller may ask for, the mechanism
//! this host enforces each one with, and which limit ended a command.
//!
//! A limit is enforced by the strongest mechanism the host has, chosen per
//! limit by [`plan`] from what the host offers ([`Mechanisms`]). A limit no
//! mechanism here can enforce is refused with `ERR_SHELL_EXEC_UNSUPPORTED`,
//! naming the limit and the reason; it is never ignored.

use crate::error::ExecError;

#[cfg(unix)]
pub(crate) mod rlimits;

/// Every field of a spec's `limits`, in the order of [`Limit::ALL`].
pub const LIMIT_FIELDS: &[&str] = RawLimits::FIELDS;

/// One kind of limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    /// Memory the command may use (`memoryBytes`).
    Memory,
    /// Processes the command may have at once (`processes`).
    Processes,
    /// CPU seconds (`cpuSeconds`).
    Cpu,
    /// The largest file the command may write (`fileBytes`).
    FileSize,
    /// Descriptors each process may have open (`openFiles`).
    OpenFiles,
}

impl Limit {
    /// Every limit, in the order of [`LIMIT_FIELDS`].
    pub const ALL: [Self; 5] = [Self::Memory, Self::Processes, Self::Cpu, Self::FileSize, Self::OpenFiles];

    /// The name a result uses (`limit: 'memory'`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Processes => "processes",
            Self::Cpu => "cpu",
            Self::FileSize => "fileSize",
            Self::OpenFiles => "openFiles",
        }
    }

    /// The spec field that sets it.
    pub fn field(self) -> &'static str {
        LIMIT_FIELDS[self as usize]
    }

    /// The limit a wire code names (see [`Limit::code`]).
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code).checked_sub(1)?).copied()
    }

    /// A small number for the wire, from 1 (0 is "none").
    pub fn code(self) -> u8 {
        self as u8 + 1
    }
}

/// A set of limits, as bits by [`Limit::code`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LimitSet(pub u8);

impl LimitSet {
    /// Adds `limit`.
    pub fn insert(&mut self, limit: Limit) {
        self.0 |= 1 << (limit as u8);
    }

    /// Whether `limit` is in the set.
    pub fn contains(self, limit: Limit) -> bool {
        self.0 & (1 << (limit as u8)) != 0
    }

    /// The limits in the set, in [`Limit::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Limit> {
        Limit::ALL.into_iter().filter(move |limit| self.contains(*limit))
    }

    /// The limits in either set.
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl FromIterator<Limit> for LimitSet {
    fn from_iter<I: IntoIterator<Item = Limit>>(limits: I) -> Self {
        let mut set = Self::default();
        for limit in limits {
            set.insert(limit);
        }
        set
    }
}

crate::spec_fields! {
    /// A spec's `limits` as given: JS numbers, not yet checked; `None` is a
    /// field not given. Checked into [`Limits`] by `try_from`. Its fields are
    /// in the order of [`Limit::ALL`].
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct RawLimits in "an object", absent is default {
        /// `memoryBytes`.
        memory_bytes: Option<f64> = "memoryBytes",
        /// `processes`.
        processes: Option<f64> = "processes",
        /// `cpuSeconds`.
        cpu_seconds: Option<f64> = "cpuSeconds",
        /// `fileBytes`.
        file_bytes: Option<f64> = "fileBytes",
        /// `openFiles`.
        open_files: Option<f64> = "openFiles",
    }
}

impl RawLimits {
    /// The values, in the order of [`Limit::ALL`].
    fn values(&self) -> [Option<f64>; 5] {
        [self.memory_bytes, self.processes, self.cpu_seconds, self.file_bytes, self.open_files]
    }
}

impl TryFrom<RawLimits> for Limits {
    type Error = ExecError;

    /// Each limit given must be a whole number from its minimum up to
    /// 2^53 − 1; checked in the order of [`LIMIT_FIELDS`].
    fn try_from(raw: RawLimits) -> Result<Self, ExecError> {
        let mut whole = [None; 5];
        for (slot, (limit, value)) in whole.iter_mut().zip(Limit::ALL.into_iter().zip(raw.values())) {
            let Some(value) = value else { continue };
            let (least, why) = minimum(limit);
            if !(value.is_finite() && value.fract() == 0.0 && value >= least as f64 && value <= 9_007_199_254_740_991.0)
            {
                return Err(ExecError::invalid_spec(
                    format!("limits.{}", limit.field()),
                    format!("must be a whole number from {least} to 2^53 - 1 (got {value}); {least} because {why}"),
                ));
            }
            *slot = Some(value as u64);
        }
        Ok(Self::from_values(whole))
    }
}

/// The limits asked for; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Bytes of memory.
    pub memory_bytes: Option<u64>,
    /// Processes at once.
    pub processes: Option<u64>,
    /// CPU seconds.
    pub cpu_seconds: Option<u64>,
    /// Bytes of the largest file written.
    pub file_bytes: Option<u64>,
    /// Open descriptors per process.
    pub open_files: Option<u64>,
}

impl Limits {
    /// Whether a cgroup holds some of these limits (memory, processes),
    /// where the host has the cgroup tier.
    pub fn needs_cgroup(&self) -> bool {
        self.memory_bytes.is_some() || self.processes.is_some()
    }

    /// The limits of `values`, in the order of [`Limit::ALL`].
    fn from_values([memory_bytes, processes, cpu_seconds, file_bytes, open_files]: [Option<u64>; 5]) -> Self {
        Self { memory_bytes, processes, cpu_seconds, file_bytes, open_files }
    }

    /// The value set for `limit`.
    pub fn get(&self, limit: Limit) -> Option<u64> {
        match limit {
            Limit::Memory => self.memory_bytes,
            Limit::Processes => self.processes,
            Limit::Cpu => self.cpu_seconds,
            Limit::FileSize => self.file_bytes,
            Limit::OpenFiles => self.open_files,
        }
    }

    /// Whether any limit is set.
    pub fn any(&self) -> bool {
        Limit::ALL.iter().any(|limit| self.get(*limit).is_some())
    }

    /// The values as the wire carries them: 0 for none.
    pub fn to_wire(self) -> [u64; 5] {
        Limit::ALL.map(|limit| self.get(limit).unwrap_or(0))
    }

    /// The limits the wire carries (see [`Limits::to_wire`]).
    pub fn from_wire(values: [u64; 5]) -> Self {
        Self::from_values(values.map(|value| (value != 0).then_some(value)))
    }
}

/// The smallest value each limit takes, below which no command could
/// start, and why, in words that follow "because".
pub fn minimum(limit: Limit) -> (u64, &'static str) {
    match limit {
        Limit::Memory => (1024 * 1024, "the dynamic loader and a shell's start need about that much"),
        // Measured under pids.max and RLIMIT_NPROC: `bash -c true` and
        // `sh -c true` run as one process (a shell execs a lone command),
        // `bash -c 'a | b'` needs 2. Threads count as processes: runtimes
        // need more (docs/process.md has their floors).
        Limit::Processes => (
            1,
            "a command's shell is one process (bash -c and sh -c exec a lone command); each thread counts as one \
             too, and runtimes start several (node 7, see docs/process.md)",
        ),
        Limit::Cpu => (1, "Linux takes an RLIMIT_CPU of 0 for 1 second"),
        Limit::FileSize => (1, "at 0 every write that grows a file fails"),
        Limit::OpenFiles => (3, "stdin, stdout and stderr are open from the start"),
    }
}

/// How one limit is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    /// A cgroup v2 controller file of the command's leaf (`memory.max`, `pids.max`).
    CgroupV2(&'static str),
    /// A cgroup v1 controller file of the command's leaf, on the hybrid layout.
    CgroupV1(&'static str),
    /// A resource limit of each of the command's processes (`RLIMIT_CPU`, …).
    Rlimit(&'static str),
    /// A limit of the command's Windows Job Object.
    JobObject(&'static str),
}

impl Mechanism {
    /// What `limitMechanisms()` and `dsh-shell-env limits` call it.
    pub fn describe(self) -> String {
        match self {
            Self::CgroupV2(file) => format!("cgroup v2 {file} (whole command)"),
            Self::CgroupV1(file) => format!("cgroup v1 {file} (whole command)"),
            // Measured: a MAP_SHARED mapping, a memfd and a /dev/shm file
            // past the limit are all allowed (`__test__/limits-coverage.spec.cjs`).
            Self::Rlimit("RLIMIT_DATA") => "RLIMIT_DATA (per process, private memory only)".into(),
            Self::Rlimit(name) => format!("{name} (per process)"),
            Self::JobObject(name) => format!("Job Object {name} (whole command)"),
        }
    }

    /// What the mechanism counts, in words (`limitMechanisms()`'s `covers`).
    pub fn covers(self) -> &'static str {
        match self {
            Self::CgroupV2(_) | Self::CgroupV1(_) if self.is_pids() => {
                "the command's tasks at once, all together: each process and each thread counts as one \
                 (the reaper is counted apart)"
            }
            Self::CgroupV2(_) => {
                "all memory of the command's processes together: private and shared anonymous memory, memfds, \
                 files written to /dev/shm or another tmpfs, page cache and kernel memory; swap held at 0"
            }
            Self::CgroupV1(_) => {
                "all memory of the command's processes together, swap included where the kernel accounts it \
                 (memory.memsw.limit_in_bytes): private and shared anonymous memory, memfds, files written to \
                 /dev/shm or another tmpfs, page cache"
            }
            Self::Rlimit("RLIMIT_DATA") => {
                "private memory only, of each process on its own: its heap and private writable mappings; not \
                 MAP_SHARED anonymous memory, memfds mapped shared or only written, files in /dev/shm or another \
                 tmpfs, nor the page cache"
            }
            Self::Rlimit("RLIMIT_CPU") => {
                "CPU time (user and system) of each process on its own, its threads together; a process's \
                 children have their own"
            }
            Self::Rlimit("RLIMIT_FSIZE") => "the size each process may make a file it writes (past it: SIGXFSZ)",
            Self::Rlimit("RLIMIT_NOFILE") => "the descriptors each process may have open",
            Self::Rlimit(_) => "each process on its own",
            Self::JobObject("JobMemoryLimit") => "memory committed by all the job's processes together",
            Self::JobObject("ActiveProcessLimit") => "the job's processes at once (threads are not counted)",
            Self::JobObject("PerJobUserTimeLimit") => "user-mode CPU time of all the job's processes together",
            Self::JobObject(_) => "the job's processes together",
        }
    }

    /// What a command can do against the mechanism, and what then tells:
    /// `privileged` is whether commands here run with `CAP_SYS_RESOURCE`
    /// (see [`commands_hold_sys_resource`]).
    pub fn tampering(self, privileged: bool) -> (Tampering, &'static str) {
        match self {
            // The leaf's files belong to the command's own user (a delegated
            // subtree, or root's): no write bit keeps their owner out, since
            // the owner can chmod them back. So a change is watched for.
            Self::CgroupV2(_) | Self::CgroupV1(_) => (
                Tampering::Reported,
                "the command's user owns its leaf's files and can rewrite them: a write to them, a value changed \
                 by the end, use past the limit, or the command killing its reaper (which watches them) is \
                 reported in limitsTampered; a process moved into another cgroup its user can write leaves the \
                 limit unreported",
            ),
            Self::Rlimit(_) if privileged => (
                Tampering::Unreported,
                "commands here hold CAP_SYS_RESOURCE (the host runs as root), so one can raise it again, and \
                 nothing reports that",
            ),
            Self::Rlimit("RLIMIT_CPU") => (
                Tampering::Held,
                "set soft and hard (the hard one second higher, for SIGKILL after SIGXCPU): a process may lower \
                 it, never raise it past that (it would need CAP_SYS_RESOURCE)",
            ),
            Self::Rlimit(_) => (
                Tampering::Held,
                "set soft and hard: a process may lower it, never raise it (it would need CAP_SYS_RESOURCE)",
            ),
            Self::JobObject(_) => {
                (Tampering::Held, "a process in the job has no handle to it, so it cannot change the job's limits")
            }
        }
    }

    fn is_pids(self) -> bool {
        matches!(self, Self::CgroupV2("pids.max") | Self::CgroupV1("pids.max"))
    }
}

/// What a command can do against a limit's mechanism (`limitMechanisms()`'s
/// `tampering`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tampering {
    /// It cannot raise the limit.
    Held,
    /// It can change the limit, and the result says so (`limitsTampered`).
    Reported,
    /// It can raise the limit, and nothing says so.
    Unreported,
}

impl Tampering {
    /// The name `limitMechanisms()` gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Held => "held",
            Self::Reported => "reported",
            Self::Unreported => "unreported",
        }
    }
}

/// Whether this host's commands would hold `CAP_SYS_RESOURCE`, with which a
/// process raises its own hard rlimits: a root host's commands keep its
/// bounding set's capabilities across `execve`, another's only ambient ones.
pub fn commands_hold_sys_resource() -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return false };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|value| u64::from_str_radix(value.trim(), 16).ok())
                .unwrap_or(0)
        };
        const CAP_SYS_RESOURCE: u32 = 24;
        // SAFETY: geteuid cannot fail.
        let set = if unsafe { libc::geteuid() } == 0 { field("CapBnd:") } else { field("CapAmb:") };
        set & (1 << CAP_SYS_RESOURCE) != 0
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        // SAFETY: geteuid cannot fail.
        unsafe { libc::geteuid() == 0 }
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// What a host can enforce with: the controllers its command leaves have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mechanisms {
    /// Each command has a cgroup leaf with the memory controller: v2 (`true`)
    /// or v1 (`false`).
    pub memory: Option<bool>,
    /// Each command has a cgroup leaf with the pids controller: v2 (`true`)
    /// or v1 (`false`).
    pub pids: Option<bool>,
}

/// Why a limit cannot be enforced here, when it cannot: words that follow
/// "it" (`limits.processes is not supported here: it needs a cgroup …`).
type Refusal = &'static str;

/// The mechanism for `limit` on this platform, given the host's cgroup
/// `controllers`; the reason when there is none.
pub fn mechanism(limit: Limit, controllers: Mechanisms) -> Result<Mechanism, Refusal> {
    if cfg!(windows) {
        return match limit {
            Limit::Memory => Ok(Mechanism::JobObject("JobMemoryLimit")),
            Limit::Processes => Ok(Mechanism::JobObject("ActiveProcessLimit")),
            Limit::Cpu => Ok(Mechanism::JobObject("PerJobUserTimeLimit")),
            Limit::FileSize => Err("has no counterpart on Windows, which limits no file's size"),
            Limit::OpenFiles => Err("has no counterpart on Windows, which limits no process's handles"),
        };
    }
    let cgroup =
        |v2: bool, v2_file, v1_file| if v2 { Mechanism::CgroupV2(v2_file) } else { Mechanism::CgroupV1(v1_file) };
    match limit {
        Limit::Memory => match controllers.memory {
            Some(v2) => Ok(cgroup(v2, "memory.max", "memory.limit_in_bytes")),
            None if cfg!(target_os = "macos") => {
                Err("is not enforced by macOS, which honours neither RLIMIT_DATA nor RLIMIT_AS for mapped memory")
            }
            None => Ok(Mechanism::Rlimit("RLIMIT_DATA")),
        },
        Limit::Processes => match controllers.pids {
            Some(v2) => Ok(cgroup(v2, "pids.max", "pids.max")),
            None => Err("needs a cgroup with the pids controller, which this host does not give its commands \
                         (RLIMIT_NPROC would count every process of the user, not the command's)"),
        },
        Limit::Cpu => Ok(Mechanism::Rlimit("RLIMIT_CPU")),
        Limit::FileSize => Ok(Mechanism::Rlimit("RLIMIT_FSIZE")),
        Limit::OpenFiles => Ok(Mechanism::Rlimit("RLIMIT_NOFILE")),
    }
}

/// The mechanism of every limit set in `limits`, or the refusal of the
/// first one this host cannot enforce.
pub fn plan(limits: &Limits, controllers: Mechanisms) -> Result<Vec<(Limit, Mechanism)>, ExecError> {
    Limit::ALL
        .into_iter()
        .filter(|limit| limits.get(*limit).is_some())
        .map(|limit| {
            mechanism(limit, controllers).map(|mechanism| (limit, mechanism)).map_err(|reason| ExecError::Unsupported {
                feature: format!("limits.{}", limit.field()),
                reason: reason.into(),
            })
        })
        .collect()
}

/// Which limits acted on a command, as its result tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LimitOutcome {
    /// The limit whose enforcement ended the command.
    pub ended_by: Option<Limit>,
    /// Limits reached without ending it.
    pub hit: LimitSet,
    /// Limits the command tampered with (`limitsTampered`): it changed what
    /// enforces them, so they may not have held.
    pub tampered: LimitSet,
}

/// What was seen of a command's limits as it ended: its cgroup leaf's
/// counters and the CPU its own process used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Observed {
    /// Processes of the command were killed for its memory limit.
    pub oom_kills: bool,
    /// Forks were refused at its process limit.
    pub forks_refused: bool,
    /// Milliseconds of CPU the command's process (with the children it
    /// waited for) used, where known.
    pub cpu_ms: Option<u64>,
    /// The system ended the whole command at its CPU time limit (a Windows
    /// job's time limit).
    pub cpu_ended: bool,
    /// Memory was refused to the command at its limit (a Windows job's
    /// memory limit: an allocation fails, nothing is killed).
    pub memory_refused: bool,
    /// Processes of the command still running when it exited, which were
    /// then ended (its reaper counts them; 255 stands for 255 or more).
    pub ended_after_exit: u32,
    /// Limits whose cgroup files a process of the command changed while it
    /// ran, as its reaper saw: a write to them, a value other than the one
    /// set by the end, or use past it (see `supervisor::cgroup`).
    pub tampered: LimitSet,
    /// Limits of the command's cgroup leaf that nothing watched to the end:
    /// its reaper died before it could report (its command can kill it).
    /// [`attribute`] counts them as tampered with unless the package ended
    /// the command or the leaf's memory limit acted.
    pub unwatched: LimitSet,
}

impl Observed {
    /// Nothing seen.
    pub const NONE: Self = Self {
        oom_kills: false,
        forks_refused: false,
        cpu_ms: None,
        cpu_ended: false,
        memory_refused: false,
        ended_after_exit: 0,
        tampered: LimitSet(0),
        unwatched: LimitSet(0),
    };
}

/// How a command's own process ended, for [`attribute`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    /// The name of the signal that ended it (`"SIGXCPU"`), if one did.
    pub signal: Option<&'static str>,
    /// Its exit code, if it exited.
    pub code: Option<i32>,
    /// This package killed it (timeout, `kill()`, abort, host or supervisor gone).
    pub killed_here: bool,
}

/// Which limit ended a command and which it reached, from how its process
/// ended and what was observed (one rule for every path that runs commands):
/// - SIGXCPU, or a SIGKILL this package did not send after the command used
///   its CPU seconds, or the system ending the command at its CPU time: `cpu`;
/// - SIGXFSZ: `fileSize`;
/// - processes killed for memory, and the command did not succeed: `memory`
///   (it succeeded: memory was only reached); memory refused: reached;
/// - forks refused at the process limit: `processes` reached;
/// - a limit file of its leaf changed, or the reaper watching them killed
///   (not by this package, and not in the leaf's own out-of-memory kill):
///   tampered with.
///
/// A shell tells that its last command died of signal N by exiting with
/// 128 + N, so such an exit counts as that signal (`bash -c 'cmd > file'`
/// does not exec `cmd`). Only limits that were set are named.
pub fn attribute(limits: &Limits, ending: Ending, observed: Observed) -> LimitOutcome {
    let set = |limit| limits.get(limit).is_some();
    let mut outcome = LimitOutcome::default();
    let cpu_used = match (observed.cpu_ms, limits.cpu_seconds) {
        (Some(used), Some(limit)) => used >= limit.saturating_mul(1000),
        _ => false,
    };
    // The numbers are Linux's and macOS's alike.
    let signal = ending.signal.or(match ending.code {
        Some(137) => Some("SIGKILL"),
        Some(152) => Some("SIGXCPU"),
        Some(153) => Some("SIGXFSZ"),
        _ => None,
    });
    outcome.ended_by = match signal {
        Some("SIGXCPU") if set(Limit::Cpu) => Some(Limit::Cpu),
        Some("SIGKILL") if set(Limit::Cpu) && cpu_used && !ending.killed_here => Some(Limit::Cpu),
        Some("SIGXFSZ") if set(Limit::FileSize) => Some(Limit::FileSize),
        _ if observed.cpu_ended && set(Limit::Cpu) && !ending.killed_here => Some(Limit::Cpu),
        _ => None,
    };
    if observed.memory_refused && set(Limit::Memory) {
        outcome.hit.insert(Limit::Memory);
    }
    if observed.oom_kills && set(Limit::Memory) {
        if outcome.ended_by.is_none() && ending.code != Some(0) && !ending.killed_here {
            outcome.ended_by = Some(Limit::Memory);
        } else {
            outcome.hit.insert(Limit::Memory);
        }
    }
    if observed.forks_refused && set(Limit::Processes) {
        outcome.hit.insert(Limit::Processes);
    }
    // A reaper dies unreported when its command kills it, or in the package's
    // own kill; the out-of-memory killer may pick it too (it is in the leaf).
    let unwatched = if ending.killed_here || observed.oom_kills { LimitSet(0) } else { observed.unwatched };
    for limit in observed.tampered.union(unwatched).iter().filter(|limit| set(*limit)) {
        outcome.tampered.insert(limit);
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(memory: f64, processes: f64) -> RawLimits {
        RawLimits { memory_bytes: Some(memory), processes: Some(processes), ..RawLimits::default() }
    }

    #[test]
    fn limits_are_whole_numbers_from_their_minimum_and_name_their_field() {
        let limits = Limits::try_from(numbers(512.0 * 1024.0 * 1024.0, 64.0)).unwrap();
        assert_eq!(limits.memory_bytes, Some(512 * 1024 * 1024));
        assert_eq!(limits.processes, Some(64));
        assert!(!Limits::default().any() && limits.any());
        for (raw, field) in [
            (numbers(1024.0, 64.0), "limits.memoryBytes"),
            (numbers(1e9, 0.0), "limits.processes"),
            (numbers(1e9, 1.5), "limits.processes"),
            (numbers(f64::NAN, 1.0), "limits.memoryBytes"),
            (RawLimits { cpu_seconds: Some(-1.0), ..RawLimits::default() }, "limits.cpuSeconds"),
            (RawLimits { file_bytes: Some(1e300), ..RawLimits::default() }, "limits.fileBytes"),
            (RawLimits { open_files: Some(2.0), ..RawLimits::default() }, "limits.openFiles"),
        ] {
            let error = Limits::try_from(raw).unwrap_err();
            assert_eq!(error.code(), "ERR_SHELL_EXEC_INVALID_SPEC");
            assert!(error.to_string().contains(field), "{error}");
        }
    }

    #[test]
    fn limits_cross_the_wire_by_name() {
        let limits = Limits { processes: Some(3), open_files: Some(9), ..Limits::default() };
        assert_eq!(Limits::from_wire(limits.to_wire()), limits);
    }

    #[test]
    fn a_refused_value_says_the_minimum_and_why() {
        for (raw, words) in [
            (
                RawLimits { processes: Some(0.0), ..RawLimits::default() },
                "from 1 to 2^53 - 1 (got 0); 1 because a command's shell is one process",
            ),
            (RawLimits { memory_bytes: Some(4096.0), ..RawLimits::default() }, "1048576 because the dynamic loader"),
            (RawLimits { open_files: Some(2.0), ..RawLimits::default() }, "3 because stdin, stdout and stderr"),
        ] {
            let error = Limits::try_from(raw).unwrap_err();
            assert!(error.to_string().contains(words), "{error}");
        }
        assert!(minimum(Limit::Processes).1.contains("each thread counts"));
    }

    #[test]
    fn a_limit_is_tampered_with_when_its_files_changed_or_the_reaper_watching_them_was_killed() {
        let limits = Limits { memory_bytes: Some(1 << 26), processes: Some(8), ..Limits::default() };
        let both: LimitSet = [Limit::Memory, Limit::Processes].into_iter().collect();
        let exited = Ending { signal: None, code: Some(0), killed_here: false };
        let tampered = |observed, ending| attribute(&limits, ending, observed).tampered.iter().collect::<Vec<_>>();
        let written = Observed { tampered: [Limit::Memory].into_iter().collect(), ..Observed::NONE };
        assert_eq!(tampered(written, exited), [Limit::Memory]);
        let memory_only = Limits { memory_bytes: Some(1 << 26), ..Limits::default() };
        let either = Observed { tampered: both, ..Observed::NONE };
        assert_eq!(attribute(&memory_only, exited, either).tampered.iter().collect::<Vec<_>>(), [Limit::Memory]);
        let killed_reaper = Ending { signal: Some("SIGKILL"), code: None, killed_here: false };
        let unwatched = Observed { unwatched: both, ..Observed::NONE };
        assert_eq!(tampered(unwatched, killed_reaper), [Limit::Memory, Limit::Processes]);
        let timed_out = Ending { killed_here: true, ..killed_reaper };
        assert_eq!(tampered(unwatched, timed_out), [], "the package's own kill");
        let out_of_memory = Observed { oom_kills: true, ..unwatched };
        assert_eq!(tampered(out_of_memory, killed_reaper), [], "the out-of-memory killer may pick the reaper");
        assert_eq!(attribute(&limits, killed_reaper, out_of_memory).ended_by, Some(Limit::Memory));
        assert_eq!(tampered(Observed::NONE, exited), []);
    }

    #[test]
    fn each_mechanism_says_what_it_covers_and_what_a_command_can_do_against_it() {
        let data = Mechanism::Rlimit("RLIMIT_DATA");
        assert_eq!(data.describe(), "RLIMIT_DATA (per process, private memory only)");
        assert!(data.covers().starts_with("private memory only") && data.covers().contains("MAP_SHARED"));
        assert_eq!(data.tampering(false).0, Tampering::Held);
        assert_eq!(data.tampering(true).0, Tampering::Unreported, "CAP_SYS_RESOURCE raises a hard limit");
        for cgroup in [Mechanism::CgroupV1("pids.max"), Mechanism::CgroupV2("memory.max")] {
            assert_eq!(cgroup.tampering(false).0, Tampering::Reported);
            assert!(cgroup.tampering(true).1.contains("limitsTampered"));
        }
        assert!(Mechanism::CgroupV2("pids.max").covers().contains("each thread counts as one"));
        assert!(Mechanism::CgroupV1("memory.limit_in_bytes").covers().contains("shared anonymous memory"));
        assert_eq!(Mechanism::JobObject("ActiveProcessLimit").tampering(true).0, Tampering::Held);
        assert_eq!(
            [Tampering::Held, Tampering::Reported, Tampering::Unreported].map(Tampering::as_str),
            ["held", "reported", "unreported"]
        );
    }

    #[test]
    fn limits_read_back_from_the_wire() {
        let limits = Limits { cpu_seconds: Some(30), open_files: Some(64), ..Limits::default() };
        assert_eq!(Limits::from_wire(limits.to_wire()), limits);
        for limit in Limit::ALL {
            assert_eq!(Limit::from_code(limit.code()), Some(limit));
        }
        assert_eq!(Limit::from_code(0), None);
        assert_eq!(Limit::from_code(6), None);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn processes_need_a_pids_controller_and_memory_falls_back_to_a_per_process_rlimit() {
        let none = Mechanisms::default();
        let processes = Limits { processes: Some(64), ..Limits::default() };
        let error = plan(&processes, none).unwrap_err();
        assert_eq!(error.code(), "ERR_SHELL_EXEC_UNSUPPORTED");
        assert!(error.to_string().starts_with("limits.processes is not supported here"), "{error}");
        let hybrid = Mechanisms { memory: Some(false), pids: Some(false) };
        assert_eq!(plan(&processes, hybrid).unwrap(), vec![(Limit::Processes, Mechanism::CgroupV1("pids.max"))]);
        let memory = Limits { memory_bytes: Some(1 << 30), ..Limits::default() };
        assert_eq!(plan(&memory, none).unwrap(), vec![(Limit::Memory, Mechanism::Rlimit("RLIMIT_DATA"))]);
        let v2 = Mechanisms { memory: Some(true), pids: Some(true) };
        assert_eq!(plan(&memory, v2).unwrap(), vec![(Limit::Memory, Mechanism::CgroupV2("memory.max"))]);
    }

    #[test]
    #[cfg(windows)]
    fn a_job_object_holds_memory_processes_and_cpu_and_nothing_else() {
        let all = Limits {
            memory_bytes: Some(1 << 30),
            processes: Some(8),
            cpu_seconds: Some(30),
            file_bytes: None,
            open_files: None,
        };
        let mechanisms = plan(&all, Mechanisms::default()).unwrap();
        assert!(mechanisms.iter().all(|(_, mechanism)| matches!(mechanism, Mechanism::JobObject(_))));
        let files = Limits { file_bytes: Some(1), ..Limits::default() };
        assert_eq!(plan(&files, Mechanisms::default()).unwrap_err().code(), "ERR_SHELL_EXEC_UNSUPPORTED");
    }

    #[test]
    fn a_limit_is_named_only_when_it_was_set_and_its_action_ended_the_command() {
        let cpu = Limits { cpu_seconds: Some(1), ..Limits::default() };
        let ended = |signal, killed_here| Ending { signal, code: None, killed_here };
        let used = |ms| Observed { cpu_ms: Some(ms), ..Observed::default() };
        let quiet = Observed::default();
        assert_eq!(attribute(&cpu, ended(Some("SIGXCPU"), false), quiet).ended_by, Some(Limit::Cpu));
        assert_eq!(attribute(&cpu, ended(Some("SIGKILL"), false), used(2000)).ended_by, Some(Limit::Cpu));
        assert_eq!(attribute(&cpu, ended(Some("SIGKILL"), true), used(2000)).ended_by, None, "a timeout's kill");
        assert_eq!(attribute(&cpu, ended(Some("SIGKILL"), false), used(500)).ended_by, None);
        assert_eq!(attribute(&Limits::default(), ended(Some("SIGXCPU"), false), quiet).ended_by, None);
        let file = Limits { file_bytes: Some(1), ..Limits::default() };
        assert_eq!(attribute(&file, ended(Some("SIGXFSZ"), false), quiet).ended_by, Some(Limit::FileSize));
        let shell = |code| Ending { signal: None, code: Some(code), killed_here: false };
        assert_eq!(attribute(&file, shell(153), quiet).ended_by, Some(Limit::FileSize), "a shell's last command");
        assert_eq!(attribute(&cpu, shell(152), quiet).ended_by, Some(Limit::Cpu));
        assert_eq!(attribute(&file, shell(1), quiet).ended_by, None);

        let memory = Limits { memory_bytes: Some(1 << 28), processes: Some(8), ..Limits::default() };
        let oom = Observed { oom_kills: true, forks_refused: true, ..Observed::NONE };
        let by_memory = attribute(&memory, ended(None, false), oom);
        assert_eq!(by_memory.ended_by, Some(Limit::Memory));
        assert_eq!(by_memory.hit.iter().collect::<Vec<_>>(), vec![Limit::Processes]);
        let survived = attribute(&memory, Ending { signal: None, code: Some(0), killed_here: false }, oom);
        assert_eq!(survived.ended_by, None);
        assert_eq!(survived.hit.iter().collect::<Vec<_>>(), vec![Limit::Memory, Limit::Processes]);

        let job_time = Observed { cpu_ended: true, ..Observed::NONE };
        assert_eq!(attribute(&cpu, shell(1816), job_time).ended_by, Some(Limit::Cpu), "a Windows job's time");
        assert_eq!(attribute(&cpu, ended(Some("SIGKILL"), true), job_time).ended_by, None);
        let refused = Observed { memory_refused: true, ..Observed::NONE };
        let failed = attribute(&memory, shell(3), refused);
        assert_eq!((failed.ended_by, failed.hit.iter().collect::<Vec<_>>()), (None, vec![Limit::Memory]));
    }
}
