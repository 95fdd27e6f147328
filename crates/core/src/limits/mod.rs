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

/// Every field of a spec's `limits`.
pub const LIMIT_FIELDS: &[&str] = &["memoryBytes", "processes", "cpuSeconds", "fileBytes", "openFiles"];

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

    /// The limits from a spec's `limits` as JS numbers, in the order of
    /// [`LIMIT_FIELDS`]: each a whole number from its minimum up to 2^53 − 1.
    pub fn from_numbers(values: [Option<f64>; 5]) -> Result<Self, ExecError> {
        let mut whole = [None; 5];
        for (slot, (limit, value)) in whole.iter_mut().zip(Limit::ALL.into_iter().zip(values)) {
            let Some(value) = value else { continue };
            let least = minimum(limit);
            if !(value.is_finite() && value.fract() == 0.0 && value >= least as f64 && value <= 9_007_199_254_740_991.0)
            {
                return Err(ExecError::invalid_spec(
                    format!("limits.{}", limit.field()),
                    format!("must be a whole number from {least} to 2^53 - 1 (got {value})"),
                ));
            }
            *slot = Some(value as u64);
        }
        let [memory_bytes, processes, cpu_seconds, file_bytes, open_files] = whole;
        Ok(Self { memory_bytes, processes, cpu_seconds, file_bytes, open_files })
    }

    /// The values as the wire carries them: 0 for none.
    pub fn to_wire(self) -> [u64; 5] {
        Limit::ALL.map(|limit| self.get(limit).unwrap_or(0))
    }

    /// The limits the wire carries (see [`Limits::to_wire`]).
    pub fn from_wire(values: [u64; 5]) -> Self {
        let some = |value: u64| (value != 0).then_some(value);
        let [memory_bytes, processes, cpu_seconds, file_bytes, open_files] = values.map(some);
        Self { memory_bytes, processes, cpu_seconds, file_bytes, open_files }
    }
}

/// The smallest value each limit takes: below it no command could start.
fn minimum(limit: Limit) -> u64 {
    match limit {
        // The dynamic loader and a shell's start need about this much.
        Limit::Memory => 1024 * 1024,
        // stdin, stdout and stderr.
        Limit::OpenFiles => 3,
        Limit::Processes | Limit::Cpu | Limit::FileSize => 1,
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
            Self::Rlimit(name) => format!("{name} (per process)"),
            Self::JobObject(name) => format!("Job Object {name} (whole command)"),
        }
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
/// - forks refused at the process limit: `processes` reached.
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
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(memory: f64, processes: f64) -> [Option<f64>; 5] {
        [Some(memory), Some(processes), None, None, None]
    }

    #[test]
    fn limits_are_whole_numbers_from_their_minimum_and_name_their_field() {
        let limits = Limits::from_numbers(numbers(512.0 * 1024.0 * 1024.0, 64.0)).unwrap();
        assert_eq!(limits.memory_bytes, Some(512 * 1024 * 1024));
        assert_eq!(limits.processes, Some(64));
        assert!(!Limits::default().any() && limits.any());
        for (values, field) in [
            (numbers(1024.0, 64.0), "limits.memoryBytes"),
            (numbers(1e9, 0.0), "limits.processes"),
            (numbers(1e9, 1.5), "limits.processes"),
            (numbers(f64::NAN, 1.0), "limits.memoryBytes"),
            ([None, None, Some(-1.0), None, None], "limits.cpuSeconds"),
            ([None, None, None, Some(1e300), None], "limits.fileBytes"),
            ([None, None, None, None, Some(2.0)], "limits.openFiles"),
        ] {
            let error = Limits::from_numbers(values).unwrap_err();
            assert_eq!(error.code(), "ERR_SHELL_EXEC_INVALID_SPEC");
            assert!(error.to_string().contains(field), "{error}");
        }
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
