//! The strongest tier: a cgroup v2 leaf per reaper, which its commands run in.
//!
//! Where the supervisor's own cgroup v2 directory (the host's, which it
//! inherits) is writable and has `cgroup.kill` (Linux 5.14 and later; as root,
//! or in a delegated subtree), the supervisor makes a directory of its own
//! there, `dsh-shell-env.<pid namespace>.<pid>`, and in it one leaf per
//! reaper, reused by the reaper's commands one after another (their limits
//! set before each and lifted after). A reaper is born in its leaf (`clone3` with
//! `CLONE_INTO_CGROUP`), so the command and everything it ever forks stay
//! there whatever they do with sessions and groups, and one write to
//! `cgroup.kill` ends them all at once, also after the command killed its
//! own reaper. Forks racing the kill die with it.
//!
//! The tier is chosen once per supervisor by [`Cgroups::detect`]: the
//! directory must be made and a probe child must be born into a leaf of it.
//! Anything less, and commands run without one (the reaper's `/proc` sweep
//! still ends them, see `reaper`).
//!
//! Limits (`memoryBytes`, `processes`) need the `memory` and `pids`
//! controllers. Where the cgroup v2 directory offers them, the supervisor
//! enables them for its leaves. On the hybrid layout, where they are mounted
//! as cgroup v1 hierarchies beside a v2 tree that has none, the supervisor
//! makes a directory of the same name in each writable one, and a command
//! with limits gets a leaf of the same name there, which its reaper joins
//! before it starts the command. Either way the supervisor removes them.
//!
//! A leaf's files belong to the supervisor's user, which is the command's:
//! in a delegated subtree (a systemd user session, a container's tree) as
//! for root. A command can rewrite its own `memory.max` or `pids.max`, and
//! no mode bit stops the files' owner (it can chmod them back), so the
//! reaper watches them instead ([`Leaf::apply`]): an inotify watch for
//! writes from the moment it set them, the values read back at the end,
//! and the peak use against them; any of those marks the limit tampered
//! with. A process moved into another cgroup its user can write is not
//! seen (see docs/process.md).

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::ffi::CString;
use std::fs;
use std::io;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::limits::{Limit, LimitSet, Limits, Mechanisms, Observed};

/// The prefix of a supervisor's directory; the rest is its pid namespace
/// (the inode of `/proc/self/ns/pid`) and its pid there.
const DIRECTORY_PREFIX: &str = "dsh-shell-env.";

/// The supervisor's cgroup directory, where each command gets a leaf.
pub(crate) struct Cgroups {
    base: PathBuf,
    /// The controllers its leaves have.
    controllers: Mechanisms,
    /// On the hybrid layout, this supervisor's directories in the v1
    /// `memory` and `pids` hierarchies.
    v1_memory: Option<PathBuf>,
    v1_pids: Option<PathBuf>,
}

/// One reaper's leaf: its v2 directory, and where its v1 directories go
/// when its limits need them.
pub(crate) struct Leaf {
    path: PathBuf,
    controllers: Mechanisms,
    v1_memory: Option<PathBuf>,
    v1_pids: Option<PathBuf>,
    /// Its control files, opened ahead (see [`Leaf::open_controls`]).
    controls: Controls,
    /// What watches the limits [`Leaf::apply`] set for the command running
    /// (in the reaper), until [`Leaf::lift`].
    guard: RefCell<Option<Guard>>,
    /// The inotify instance the guards share, made at the first limits and
    /// kept as long as the leaf: closing one waits for the kernel's RCU grace
    /// period (milliseconds), which would fall on the reaper's next command.
    inotify: OnceCell<Option<Rc<OwnedFd>>>,
    /// Each limit file the leaf's commands have had, by path, open for
    /// reading and watched from the first command that had it to the leaf's
    /// end (`None`: the file does not exist): a command then pays one read
    /// per file, not a path walk to watch, open and close it.
    limit_files: RefCell<HashMap<PathBuf, Option<Rc<LimitFile>>>>,
}

/// The files through which a leaf's limits are set and its counters read,
/// each open already, or `None` (then the file is reached by its path). A
/// reaper opens them ahead, before its first command with limits, so that a command pays one
/// write or read per file, not the path walk of an open and a close too.
#[derive(Default)]
struct Controls {
    /// `memory.max`, or v1's `memory.limit_in_bytes`.
    memory_max: Option<fs::File>,
    /// `memory.swap.max`, or v1's `memory.memsw.limit_in_bytes`: absent
    /// without swap accounting.
    swap_max: Option<fs::File>,
    /// `pids.max`.
    pids_max: Option<fs::File>,
    /// `memory.events`, or v1's `memory.oom_control`.
    memory_events: Option<fs::File>,
    /// `pids.events`.
    pids_events: Option<fs::File>,
}

impl Cgroups {
    /// The tier, when this host has it: see the module comment.
    pub(crate) fn detect() -> Option<Self> {
        let own = own_directory()?;
        let namespace = pid_namespace()?;
        sweep_dead_supervisors(&own, namespace);
        // SAFETY: getpid cannot fail.
        let base = own.join(format!("{DIRECTORY_PREFIX}{namespace}.{}", unsafe { libc::getpid() }));
        // A directory left by a dead supervisor of the same pid.
        remove_tree(&base);
        fs::create_dir(&base).ok()?;
        let mut cgroups = Self { base, controllers: Mechanisms::default(), v1_memory: None, v1_pids: None };
        if !(cgroups.base.join("cgroup.kill").exists() && cgroups.probe()) {
            cgroups.remove();
            return None;
        }
        let name = cgroups.base.file_name().map(PathBuf::from)?;
        cgroups.enable_controllers(&name, namespace);
        Some(cgroups)
    }

    /// The controllers this supervisor's leaves have.
    pub(crate) fn controllers(&self) -> Mechanisms {
        self.controllers
    }

    /// Enables `memory` and `pids` for the leaves: in the v2 directory where
    /// it offers them, else in a directory `name` of each writable v1
    /// hierarchy of them (the hybrid layout).
    fn enable_controllers(&mut self, name: &Path, namespace: u64) {
        let offered = fs::read_to_string(self.base.join("cgroup.controllers")).unwrap_or_default();
        for (controller, slot) in [("memory", &mut self.controllers.memory), ("pids", &mut self.controllers.pids)] {
            let listed = offered.split_ascii_whitespace().any(|word| word == controller);
            if listed && fs::write(self.base.join("cgroup.subtree_control"), format!("+{controller}")).is_ok() {
                *slot = Some(true);
            }
        }
        for (controller, slot, place) in [
            ("memory", &mut self.controllers.memory, &mut self.v1_memory),
            ("pids", &mut self.controllers.pids, &mut self.v1_pids),
        ] {
            if slot.is_some() {
                continue;
            }
            let Some(own) = own_v1_directory(controller) else { continue };
            sweep_dead_supervisors(&own, namespace);
            let directory = own.join(name);
            remove_tree(&directory);
            if fs::create_dir(&directory).is_ok() {
                *slot = Some(false);
                *place = Some(directory);
            }
        }
    }

    /// A new leaf named `name`, or `None` when one cannot be made (the
    /// command then runs without: the reaper still ends it).
    pub(crate) fn leaf(&self, name: u64) -> Option<Leaf> {
        let path = self.base.join(name.to_string());
        fs::create_dir(&path).ok()?;
        let v1 = |directory: &Option<PathBuf>| directory.as_ref().map(|directory| directory.join(name.to_string()));
        Some(Leaf {
            path,
            controllers: self.controllers,
            v1_memory: v1(&self.v1_memory),
            v1_pids: v1(&self.v1_pids),
            controls: Controls::default(),
            guard: RefCell::new(None),
            inotify: OnceCell::new(),
            limit_files: RefCell::default(),
        })
    }

    /// Kills every leaf and removes what is empty, the directory last: the
    /// supervisor is leaving.
    pub(crate) fn remove(&self) {
        remove_tree(&self.base);
        for directory in [&self.v1_memory, &self.v1_pids].into_iter().flatten() {
            remove_tree(directory);
        }
    }

    /// Whether a child can be born into a leaf here: `clone3` exists and the
    /// kernel lets this process put one there.
    fn probe(&self) -> bool {
        let Some(leaf) = self.leaf(0) else { return false };
        // SAFETY: in the child only `_exit` runs.
        let born = unsafe { clone_into(Some(&leaf)) };
        let works = match born {
            // SAFETY: the probe child only exits.
            Ok(0) => unsafe { libc::_exit(0) },
            Ok(pid) => {
                let mut status = 0;
                // SAFETY: waits for the probe child only.
                unsafe { libc::waitpid(pid, &mut status, 0) };
                libc::WIFEXITED(status)
            }
            Err(_) => false,
        };
        leaf.remove();
        works
    }
}

impl Leaf {
    /// Kills every process in the leaf.
    pub(crate) fn kill(&self) {
        kill(&self.path);
    }

    /// Removes the leaf; `false` while a process is still in it.
    pub(crate) fn remove(&self) -> bool {
        for directory in [&self.v1_memory, &self.v1_pids].into_iter().flatten() {
            let _ = fs::remove_dir(directory);
        }
        fs::remove_dir(&self.path).is_ok() || !self.path.exists()
    }

    /// Whether this leaf can hold a memory limit.
    pub(crate) fn holds_memory(&self) -> bool {
        self.controllers.memory == Some(true) || self.v1_memory.is_some()
    }

    /// Makes this leaf's v1 directories and moves the calling process (a
    /// reaper, before its first command with limits) into them, with no limit set yet: moving a process
    /// between cgroups is the slow part of a v1 limit (hundreds of
    /// microseconds), and a reaper made ahead has the time. Whether it
    /// worked; if not, [`Leaf::apply`] tries again.
    pub(crate) fn join_ahead(&self) -> bool {
        [&self.v1_memory, &self.v1_pids].into_iter().flatten().all(|directory| join_v1(directory, &[]).is_ok())
    }

    /// Opens the control files of the directories that hold this leaf's
    /// limits (its v2 directory, or the v1 ones it joined), for
    /// [`Leaf::apply`] and [`Leaf::observed_for`]; ahead of a
    /// command. A file that cannot be opened is reached by its path then.
    pub(crate) fn open_controls(&mut self, joined: bool) {
        let memory = match self.controllers.memory {
            Some(true) => Some((self.path.clone(), ["memory.max", "memory.swap.max", "memory.events"])),
            Some(false) if joined => self.v1_memory.clone().map(|directory| {
                (directory, ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.oom_control"])
            }),
            _ => None,
        };
        if let Some((directory, [max, swap, events])) = memory {
            self.controls.memory_max = open_for_writing(&directory.join(max));
            self.controls.swap_max = open_for_writing(&directory.join(swap));
            self.controls.memory_events = fs::File::open(directory.join(events)).ok();
        }
        let pids = match self.controllers.pids {
            Some(true) => Some(self.path.clone()),
            Some(false) if joined => self.v1_pids.clone(),
            _ => None,
        };
        if let Some(directory) = pids {
            self.controls.pids_max = open_for_writing(&directory.join("pids.max"));
            self.controls.pids_events = fs::File::open(directory.join("pids.events")).ok();
        }
    }

    /// Sets `limits`' memory and process counts on this leaf, moving the
    /// calling process (the reaper, before it starts its command) into its v1
    /// directories where those hold them, unless it `joined` them ahead. The
    /// reaper is one of the leaf's processes: `pids.max` counts it, so it is
    /// one above the command's `processes`. Memory is held to the limit with
    /// swap included.
    pub(crate) fn apply(&self, limits: &Limits, joined: bool) -> io::Result<()> {
        let controls = &self.controls;
        let set = |directory: &Path, settings: &[(&str, &str, Option<&fs::File>)]| {
            if joined {
                settings
                    .iter()
                    .try_for_each(|(file, value, opened)| write_control(*opened, &directory.join(file), value))
            } else {
                let settings: Vec<_> = settings.iter().map(|(file, value, _)| (*file, *value)).collect();
                join_v1(directory, &settings)
            }
        };
        if let Some(bytes) = limits.memory_bytes {
            let bytes = bytes.to_string();
            match (self.controllers.memory, &self.v1_memory) {
                (Some(true), _) => {
                    write_required(controls.memory_max.as_ref(), &self.path.join("memory.max"), &bytes)?;
                    // Absent without swap accounting: then there is no swap to hold.
                    write_control(controls.swap_max.as_ref(), &self.path.join("memory.swap.max"), "0")?;
                }
                (Some(false), Some(directory)) => set(
                    directory,
                    &[
                        ("memory.limit_in_bytes", &bytes, controls.memory_max.as_ref()),
                        ("memory.memsw.limit_in_bytes", &bytes, controls.swap_max.as_ref()),
                    ],
                )?,
                _ => return Err(io::Error::from_raw_os_error(libc::ENOTSUP)),
            }
        }
        if let Some(processes) = limits.processes {
            let most = processes.saturating_add(1).to_string();
            match (self.controllers.pids, &self.v1_pids) {
                (Some(true), _) => write_required(controls.pids_max.as_ref(), &self.path.join("pids.max"), &most)?,
                (Some(false), Some(directory)) => set(directory, &[("pids.max", &most, controls.pids_max.as_ref())])?,
                _ => return Err(io::Error::from_raw_os_error(libc::ENOTSUP)),
            }
        }
        // From here on, a write to these files is the command's.
        let inotify = self.inotify.get_or_init(|| {
            // SAFETY: makes a new descriptor, owned below.
            let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
            // SAFETY: just made, owned by no one else.
            (fd >= 0).then(|| Rc::new(unsafe { OwnedFd::from_raw_fd(fd) }))
        });
        *self.guard.borrow_mut() = Some(Guard::new(self.limit_files(limits, inotify.as_deref()), inotify.clone()));
        Ok(())
    }

    /// Lifts the limits [`Leaf::apply`] set for `limits`, so that the
    /// reaper's next command starts without them: a reaper serves many
    /// commands in one leaf. Raised in the order v1 requires (the swap
    /// limit before the memory limit, which may not exceed it).
    pub(crate) fn lift(&self, limits: &Limits) -> io::Result<()> {
        // The lifting is the reaper's own write, not the command's.
        self.guard.borrow_mut().take();
        let controls = &self.controls;
        if limits.memory_bytes.is_some() {
            match (self.controllers.memory, &self.v1_memory) {
                (Some(true), _) => {
                    write_control(controls.swap_max.as_ref(), &self.path.join("memory.swap.max"), "max")?;
                    write_required(controls.memory_max.as_ref(), &self.path.join("memory.max"), "max")?;
                }
                (Some(false), Some(directory)) => {
                    write_control(controls.swap_max.as_ref(), &directory.join("memory.memsw.limit_in_bytes"), "-1")?;
                    write_required(controls.memory_max.as_ref(), &directory.join("memory.limit_in_bytes"), "-1")?;
                }
                _ => {}
            }
        }
        if limits.processes.is_some() {
            match (self.controllers.pids, &self.v1_pids) {
                (Some(true), _) => write_required(controls.pids_max.as_ref(), &self.path.join("pids.max"), "max")?,
                (Some(false), Some(directory)) => {
                    write_required(controls.pids_max.as_ref(), &directory.join("pids.max"), "max")?
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The files that hold `limits` here, each with the file of its peak use,
    /// open and (with `inotify`) watched for writes, made so at their first use.
    fn limit_files(&self, limits: &Limits, inotify: Option<&OwnedFd>) -> Vec<Rc<LimitFile>> {
        let mut files = Vec::new();
        let mut known = self.limit_files.borrow_mut();
        let mut add = |limit, directory: &Path, file: &str, peak: &str| {
            let path = directory.join(file);
            let opened =
                known.entry(path).or_insert_with_key(|path| LimitFile::open(limit, path, &directory.join(peak)));
            files.extend(opened.clone());
        };
        if limits.memory_bytes.is_some() {
            match (self.controllers.memory, &self.v1_memory) {
                (Some(true), _) => {
                    add(Limit::Memory, &self.path, "memory.max", "memory.peak");
                    add(Limit::Memory, &self.path, "memory.swap.max", "memory.swap.peak");
                }
                (Some(false), Some(directory)) => {
                    add(Limit::Memory, directory, "memory.limit_in_bytes", "memory.max_usage_in_bytes");
                    add(Limit::Memory, directory, "memory.memsw.limit_in_bytes", "memory.memsw.max_usage_in_bytes");
                }
                _ => {}
            }
        }
        if limits.processes.is_some() {
            match (self.controllers.pids, &self.v1_pids) {
                (Some(true), _) => add(Limit::Processes, &self.path, "pids.max", "pids.peak"),
                (Some(false), Some(directory)) => add(Limit::Processes, directory, "pids.max", "pids.peak"),
                _ => {}
            }
        }
        if let Some(inotify) = inotify {
            for file in &files {
                file.watch(inotify);
            }
        }
        files
    }

    /// The limits this leaf holds, as nothing watched them to the end: its
    /// reaper died before it could report (the supervisor tells the host).
    pub(crate) fn unwatched(&self) -> Observed {
        let mut unwatched = LimitSet::default();
        if self.holds_memory() {
            unwatched.insert(Limit::Memory);
        }
        if self.controllers.pids == Some(true) || self.v1_pids.is_some() {
            unwatched.insert(Limit::Processes);
        }
        Observed { unwatched, ..Observed::NONE }
    }

    /// The kernel's counters of what the leaf's limits did so far: processes
    /// killed for memory, forks refused. Only those of the limits in
    /// `limits` are read (a command without them pays no read); the others
    /// are 0. A command's share is what they rose by while it ran (see
    /// [`Leaf::observed_since`]): a reaper serves many commands in one leaf.
    pub(crate) fn counters(&self, limits: &Limits) -> [u64; 2] {
        self.count(limits.memory_bytes.is_some(), limits.processes.is_some())
    }

    /// What the leaf's limits did since its counters read `baseline`.
    pub(crate) fn observed_since(&self, baseline: [u64; 2]) -> Observed {
        let [oom_kills, forks_refused] = self.count(true, true);
        Observed { oom_kills: oom_kills > baseline[0], forks_refused: forks_refused > baseline[1], ..Observed::NONE }
    }

    /// [`Leaf::observed_since`], reading only the counters of the limits in
    /// `limits`, with the limits the command was seen to tamper with.
    pub(crate) fn observed_for(&self, limits: &Limits, baseline: [u64; 2]) -> Observed {
        let [oom_kills, forks_refused] = self.counters(limits);
        Observed {
            oom_kills: oom_kills > baseline[0],
            forks_refused: forks_refused > baseline[1],
            tampered: self.guard.borrow().as_ref().map(Guard::tampered).unwrap_or_default(),
            ..Observed::NONE
        }
    }

    fn count(&self, memory: bool, pids: bool) -> [u64; 2] {
        let events = |controller: Option<bool>, v1: &Option<PathBuf>, v2_file, v1_file| match controller {
            Some(true) => Some(self.path.join(v2_file)),
            Some(false) => v1.as_ref().map(|directory| directory.join(v1_file)),
            None => None,
        };
        let memory_events = memory
            .then(|| events(self.controllers.memory, &self.v1_memory, "memory.events", "memory.oom_control"))
            .flatten();
        let pids_events =
            pids.then(|| events(self.controllers.pids, &self.v1_pids, "pids.events", "pids.events")).flatten();
        let controls = &self.controls;
        [
            memory_events.map_or(0, |file| counter(controls.memory_events.as_ref(), &file, "oom_kill")),
            pids_events.map_or(0, |file| counter(controls.pids_events.as_ref(), &file, "max")),
        ]
    }
}

/// A file that holds a limit, and the file of the use it capped.
struct LimitFile {
    limit: Limit,
    /// The file, open for reading: a control file reads whole from offset
    /// 0, each time.
    value: fs::File,
    path: PathBuf,
    /// `memory.peak`, `pids.peak`, v1's `memory.max_usage_in_bytes`: absent
    /// on older kernels.
    peak: Option<fs::File>,
    /// Its inotify watch once made (the leaf's instance keeps it), or -1.
    watch: Cell<libc::c_int>,
}

impl LimitFile {
    /// The limit file at `path` with its `peak`, open; `None` when it does not
    /// exist (a swap limit without swap accounting, a kernel without it).
    fn open(limit: Limit, path: &Path, peak: &Path) -> Option<Rc<Self>> {
        let value = fs::File::open(path).ok()?;
        let peak = fs::File::open(peak).ok();
        Some(Rc::new(Self { limit, value, path: path.to_owned(), peak, watch: Cell::new(-1) }))
    }

    /// Watches the file for writes through `inotify`, unless it is already.
    fn watch(&self, inotify: &OwnedFd) {
        if self.watch.get() < 0 {
            self.watch.set(watch_writes(inotify, &self.path));
        }
    }

    /// Its value now.
    fn read(&self) -> Option<u64> {
        read_limit(&self.value)
    }

    /// Its peak use now.
    fn peak(&self) -> Option<u64> {
        self.peak.as_ref().and_then(read_limit)
    }
}

/// A leaf's limit files as the reaper set them, watched for the command
/// changing them: see the module comment.
struct Guard {
    /// The leaf's inotify instance, with a watch for writes on each file,
    /// when one could be made (each user has `fs.inotify.max_user_instances`,
    /// 128 by default): without it, a write undone before the end goes unseen
    /// unless the use went past the limit.
    inotify: Option<Rc<OwnedFd>>,
    /// Each file as it was once set.
    files: Vec<Watched>,
    /// The limits found tampered with so far.
    seen: Cell<LimitSet>,
}

impl Guard {
    /// Watches `files` as they are now, through the leaf's `inotify`: the
    /// events queued so far (the reaper's own writes, lifting the last
    /// command's limits and setting these) are read and dropped first.
    fn new(files: Vec<Rc<LimitFile>>, inotify: Option<Rc<OwnedFd>>) -> Self {
        let files = files
            .into_iter()
            .map(|file| {
                // A file whose watch is read holds, unwritten, what was set
                // to the end: only an unwatched one is read back now.
                let watched = inotify.is_some() && file.watch.get() >= 0;
                let value = (!watched).then(|| file.read());
                let peak = file.peak();
                Watched { file, value, peak }
            })
            .collect();
        if let Some(inotify) = &inotify {
            written_watches(inotify);
        }
        Self { inotify, files, seen: Cell::new(LimitSet::default()) }
    }

    /// The limits whose files were written since they were set, now read
    /// another value, or capped less use than their peak.
    fn tampered(&self) -> LimitSet {
        // Reading the watch consumes its events: what it saw is kept for a
        // later call (the reaper may report more than once).
        let mut tampered = self.seen.get();
        let written = self.inotify.as_deref().map(written_watches).unwrap_or_default();
        let overflowed = written.contains(&-1);
        for Watched { file, value, peak } in &self.files {
            let watch = file.watch.get();
            let read = file.read();
            let (changed, value) = match value {
                Some(set) => (read != *set, set),
                None => (false, &read),
            };
            let past = match (value, file.peak()) {
                (Some(limit), Some(now)) => {
                    // The kernel may charge a dying task's memory a little
                    // past the limit; a lifted limit lets far more through.
                    let slack = if file.limit == Limit::Memory { limit / 8 } else { 0 };
                    // The peak counts from the leaf's start: the reaper's
                    // own use before the limit was set may top it already.
                    now > limit.saturating_add(slack).max(peak.unwrap_or(0))
                }
                _ => false,
            };
            if watch >= 0 && written.contains(&watch) || overflowed || changed || past {
                tampered.insert(file.limit);
            }
        }
        self.seen.set(tampered);
        tampered
    }
}

/// One limit file under watch, as it was once the reaper set it.
struct Watched {
    file: Rc<LimitFile>,
    /// Its value read back, for a file without a watch; `None` for one
    /// whose watch tells whether it was written.
    value: Option<Option<u64>>,
    /// Its peak use then.
    peak: Option<u64>,
}

/// Adds a watch for writes to `path`; its descriptor, or -1.
fn watch_writes(inotify: &OwnedFd, path: &Path) -> libc::c_int {
    let Ok(path) = CString::new(path.as_os_str().as_bytes()) else { return -1 };
    // SAFETY: a valid inotify descriptor and NUL-terminated path.
    unsafe { libc::inotify_add_watch(inotify.as_raw_fd(), path.as_ptr(), libc::IN_MODIFY) }
}

/// The watches that saw a write since the last call (-1 for a queue that
/// overflowed: then any may have).
fn written_watches(inotify: &OwnedFd) -> Vec<libc::c_int> {
    let mut written = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: reads into a buffer of the length given.
        let len = unsafe { libc::read(inotify.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        let Ok(len) = usize::try_from(len) else { break };
        if len == 0 {
            break;
        }
        let mut at = 0;
        // `struct inotify_event`: wd, mask, cookie, len, then `len` bytes of name.
        while at + 16 <= len {
            let field =
                |offset: usize| u32::from_ne_bytes(buf[at + offset..at + offset + 4].try_into().unwrap_or([0; 4]));
            let (watch, mask, name_len) = (field(0) as libc::c_int, field(4), field(12) as usize);
            if mask & libc::IN_Q_OVERFLOW != 0 {
                written.push(-1);
            } else if mask & libc::IN_MODIFY != 0 {
                written.push(watch);
            }
            at += 16 + name_len;
        }
    }
    written
}

/// A limit file's value (`max` for none), or `None` when it cannot be read.
fn read_limit(file: &fs::File) -> Option<u64> {
    let mut buf = [0; 64];
    let len = file.read_at(&mut buf, 0).ok()?;
    match std::str::from_utf8(&buf[..len]).ok()?.trim() {
        "max" => Some(u64::MAX),
        value => value.parse().ok(),
    }
}

/// Makes the v1 leaf `directory`, writes each `(file, value)` in it (a file
/// that does not exist, such as `memory.memsw.limit_in_bytes` without swap
/// accounting, is skipped), and moves this process into it.
fn join_v1(directory: &Path, settings: &[(&str, &str)]) -> io::Result<()> {
    match fs::create_dir(directory) {
        Err(error) if error.kind() != io::ErrorKind::AlreadyExists => return Err(error),
        _ => {}
    }
    for (file, value) in settings {
        write_if_present(&directory.join(file), value)?;
    }
    // SAFETY: getpid cannot fail.
    fs::write(directory.join("cgroup.procs"), unsafe { libc::getpid() }.to_string())
}

/// Writes `value` to a control file: through `opened` when it is open, else
/// by its `path`, skipped when that does not exist.
fn write_control(opened: Option<&fs::File>, path: &Path, value: &str) -> io::Result<()> {
    match opened {
        Some(mut file) => file.write_all(value.as_bytes()),
        None => write_if_present(path, value),
    }
}

/// [`write_control`] to a file that must exist.
fn write_required(opened: Option<&fs::File>, path: &Path, value: &str) -> io::Result<()> {
    match opened {
        Some(mut file) => file.write_all(value.as_bytes()),
        None => fs::write(path, value),
    }
}

/// Opens a control file to write to, `None` when it cannot be.
fn open_for_writing(path: &Path) -> Option<fs::File> {
    fs::OpenOptions::new().write(true).open(path).ok()
}

fn write_if_present(file: &Path, value: &str) -> io::Result<()> {
    match fs::write(file, value) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// The value of `key` in a flat-keyed cgroup file (`oom_kill 2`), read
/// through `opened` when it is open, else by its `path`; 0 when absent.
fn counter(opened: Option<&fs::File>, path: &Path, key: &str) -> u64 {
    let text = match opened {
        Some(file) => {
            let mut buf = [0; 512];
            // A control file reads whole from offset 0, each time.
            let len = file.read_at(&mut buf, 0).unwrap_or(0);
            String::from_utf8_lossy(&buf[..len]).into_owned()
        }
        None => fs::read_to_string(path).unwrap_or_default(),
    };
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .find(|(name, _)| *name == key)
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0)
}

/// Starts a child like `fork`, born into `leaf` when there is one:
/// `clone3(CLONE_INTO_CGROUP)`, with SIGCHLD at its exit. Returns 0 in the
/// child and its pid in the parent.
///
/// # Safety
/// As for `fork`: in a multithreaded process, the child may call only
/// async-signal-safe functions. The supervisor is single-threaded.
pub(crate) unsafe fn clone_into(leaf: Option<&Leaf>) -> io::Result<libc::pid_t> {
    let Some(leaf) = leaf else {
        // SAFETY: the caller's contract.
        let pid = unsafe { libc::fork() };
        return if pid < 0 { Err(io::Error::last_os_error()) } else { Ok(pid) };
    };
    let cgroup = open_directory(&leaf.path)?;
    /// `struct clone_args` up to `cgroup` (`CLONE_ARGS_SIZE_VER2`).
    #[repr(C)]
    #[derive(Default)]
    struct CloneArgs {
        flags: u64,
        pidfd: u64,
        child_tid: u64,
        parent_tid: u64,
        exit_signal: u64,
        stack: u64,
        stack_size: u64,
        tls: u64,
        set_tid: u64,
        set_tid_size: u64,
        cgroup: u64,
    }
    const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
    let args = CloneArgs {
        flags: CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: cgroup.as_raw_fd() as u64,
        ..CloneArgs::default()
    };
    // SAFETY: clone3 with a valid, fully initialised clone_args of the size
    // given, no CLONE_VM and no new stack: a fork, under the caller's contract.
    let pid = unsafe { libc::syscall(libc::SYS_clone3, &args as *const CloneArgs, std::mem::size_of::<CloneArgs>()) };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(pid as libc::pid_t)
}

/// This process's cgroup v2 directory: its path from `/proc/self/cgroup`
/// (`0::/path`) under the cgroup2 mount from `/proc/self/mountinfo`.
fn own_directory() -> Option<PathBuf> {
    let cgroups = fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = cgroups.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mounts.lines().find_map(cgroup2_mount_point)?;
    Some(Path::new(&mount).join(own.trim_start_matches('/')))
}

/// The mount point of a `/proc/self/mountinfo` line when it mounts cgroup2:
/// `id parent dev root point options [tags…] - type source options`.
fn cgroup2_mount_point(line: &str) -> Option<String> {
    let (before, after) = line.split_once(" - ")?;
    if after.split(' ').next()? != "cgroup2" {
        return None;
    }
    let point = before.split(' ').nth(4)?;
    // Spaces and the like are written as octal escapes (`\040`).
    Some(unescape_octal(point))
}

fn unescape_octal(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escape = bytes.get(at..at + 4).filter(|digits| digits[0] == b'\\');
        match escape.and_then(|digits| u8::from_str_radix(std::str::from_utf8(&digits[1..]).ok()?, 8).ok()) {
            Some(byte) => {
                out.push(byte);
                at += 4;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's directory in the writable cgroup v1 hierarchy of
/// `controller`: its path from `/proc/self/cgroup` (`4:memory:/path`) under
/// the mount whose options name the controller.
fn own_v1_directory(controller: &str) -> Option<PathBuf> {
    let cgroups = fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = cgroups.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        controllers.split(',').any(|name| name == controller).then_some(path)
    })?;
    let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mounts.lines().find_map(|line| cgroup1_mount_point(line, controller))?;
    let directory = Path::new(&mount).join(own.trim_start_matches('/'));
    let path = CString::new(directory.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid NUL-terminated path; access only reads permissions.
    (unsafe { libc::access(path.as_ptr(), libc::W_OK) } == 0).then_some(directory)
}

/// The mount point of a `/proc/self/mountinfo` line when it mounts the
/// cgroup v1 hierarchy of `controller`.
fn cgroup1_mount_point(line: &str, controller: &str) -> Option<String> {
    let (before, after) = line.split_once(" - ")?;
    let mut fields = after.split(' ');
    if fields.next()? != "cgroup" {
        return None;
    }
    let options = fields.nth(1)?;
    options
        .split(',')
        .any(|option| option == controller)
        .then(|| unescape_octal(before.split(' ').nth(4).unwrap_or("")))
}

/// This process's pid namespace: the inode of `/proc/self/ns/pid`.
fn pid_namespace() -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self/ns/pid").ok().map(|meta| meta.ino())
}

/// Removes the directories of supervisors that are gone (SIGKILLed, so they
/// could not remove their own): their leaves are killed first.
///
/// Only those of supervisors in this pid `namespace` are looked at: whether
/// another namespace's pid runs cannot be asked from here (its number means
/// another process, or none, in this one), and hosts in different pid
/// namespaces (containers, sandboxes) can share one cgroup. Taken for dead,
/// a live supervisor there would have every command it runs killed.
fn sweep_dead_supervisors(own: &Path, namespace: u64) {
    let Ok(entries) = fs::read_dir(own) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|name| name.strip_prefix(DIRECTORY_PREFIX)) else { continue };
        let Some((their_namespace, pid)) = rest.split_once('.') else { continue };
        if their_namespace.parse::<u64>() != Ok(namespace) {
            continue;
        }
        let Ok(pid) = pid.parse::<libc::pid_t>() else { continue };
        // SAFETY: signal 0 only asks whether the pid exists.
        let alive =
            unsafe { libc::kill(pid, 0) } == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !alive {
            remove_tree(&entry.path());
        }
    }
}

/// Kills every leaf under `directory`, waits briefly for each to empty, and
/// removes the leaves and `directory`.
fn remove_tree(directory: &Path) {
    let Ok(entries) = fs::read_dir(directory) else { return };
    let leaves: Vec<PathBuf> =
        entries.flatten().filter(|entry| entry.path().is_dir()).map(|entry| entry.path()).collect();
    for leaf in &leaves {
        kill(leaf);
    }
    for leaf in &leaves {
        for _ in 0..200 {
            if fs::remove_dir(leaf).is_ok() || !populated(leaf) && fs::remove_dir(leaf).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    let _ = fs::remove_dir(directory);
}

fn kill(leaf: &Path) {
    let _ = fs::write(leaf.join("cgroup.kill"), b"1");
}

fn populated(leaf: &Path) -> bool {
    fs::read_to_string(leaf.join("cgroup.events"))
        .map(|events| events.lines().any(|line| line == "populated 1"))
        .unwrap_or(false)
}

fn open_directory(path: &Path) -> io::Result<OwnedFd> {
    let path = CString::new(path.as_os_str().as_bytes()).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: a valid NUL-terminated path; on success we own the new descriptor.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just opened, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_cgroup2_mount_point_in_a_mountinfo_line() {
        let line = "35 25 0:30 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate";
        assert_eq!(cgroup2_mount_point(line).as_deref(), Some("/sys/fs/cgroup/unified"));
        let spaced = r"35 25 0:30 / /mnt/with\040space rw - cgroup2 none rw";
        assert_eq!(cgroup2_mount_point(spaced).as_deref(), Some("/mnt/with space"));
        let v1 = "34 25 0:29 / /sys/fs/cgroup/pids rw shared:8 - cgroup cgroup rw,pids";
        assert_eq!(cgroup2_mount_point(v1), None);
        assert_eq!(cgroup1_mount_point(v1, "pids").as_deref(), Some("/sys/fs/cgroup/pids"));
        assert_eq!(cgroup1_mount_point(v1, "memory"), None);
        assert_eq!(cgroup1_mount_point(line, "pids"), None);
    }

    /// A leaf over plain files in a directory of its own (a real v2 leaf
    /// needs a cgroup v2 tree with the controllers, which the hybrid layout
    /// does not give): the files and what the kernel would write to them.
    fn leaf_over_files(name: &str, v2: bool, files: &[(&str, &str)]) -> (Leaf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("dsh-leaf-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let (v1_memory, v1_pids) = (dir.join("memory"), dir.join("pids"));
        for directory in [&dir, &v1_memory, &v1_pids] {
            fs::create_dir_all(directory).unwrap();
        }
        for (file, text) in files {
            fs::write(dir.join(file), text).unwrap();
        }
        let controllers = Mechanisms { memory: Some(v2), pids: Some(v2) };
        let leaf = Leaf {
            path: dir.clone(),
            controllers,
            v1_memory: (!v2).then_some(v1_memory),
            v1_pids: (!v2).then_some(v1_pids),
            controls: Controls::default(),
            guard: RefCell::new(None),
            inotify: OnceCell::new(),
            limit_files: RefCell::default(),
        };
        (leaf, dir)
    }

    const V2_FILES: [(&str, &str); 5] = [
        ("memory.max", "max\n"),
        ("memory.swap.max", "max\n"),
        ("memory.peak", "0\n"),
        ("pids.max", "max\n"),
        ("pids.peak", "0\n"),
    ];

    fn limits() -> Limits {
        Limits { memory_bytes: Some(64 << 20), processes: Some(8), ..Limits::default() }
    }

    fn tampered(leaf: &Leaf) -> Vec<Limit> {
        leaf.observed_for(&limits(), [0, 0]).tampered.iter().collect()
    }

    #[test]
    fn a_v2_leaf_whose_limit_files_are_left_alone_reports_nothing_tampered() {
        let (leaf, dir) = leaf_over_files("v2-alone", true, &V2_FILES);
        leaf.apply(&limits(), false).unwrap();
        assert_eq!(fs::read_to_string(dir.join("memory.max")).unwrap(), "67108864");
        assert_eq!(fs::read_to_string(dir.join("pids.max")).unwrap(), "9", "the reaper counts as one");
        // Use up to the limit is the limit holding.
        fs::write(dir.join("memory.peak"), "67108864\n").unwrap();
        fs::write(dir.join("pids.peak"), "9\n").unwrap();
        assert_eq!(tampered(&leaf), []);
        assert!(leaf.guard.borrow().as_ref().unwrap().inotify.is_some());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_v2_leaf_reports_a_limit_whose_file_was_written_even_when_its_value_was_put_back() {
        let (leaf, dir) = leaf_over_files("v2-written", true, &V2_FILES);
        leaf.apply(&limits(), false).unwrap();
        fs::write(dir.join("memory.max"), "max").unwrap();
        fs::write(dir.join("memory.max"), "67108864").unwrap();
        assert_eq!(tampered(&leaf), [Limit::Memory]);
        assert_eq!(tampered(&leaf), [Limit::Memory], "the watch's events are read once; a second report still says so");
        fs::remove_dir_all(dir).unwrap();
        let (leaf, dir) = leaf_over_files("v2-pids", true, &V2_FILES);
        leaf.apply(&limits(), false).unwrap();
        fs::write(dir.join("pids.max"), "max").unwrap();
        assert_eq!(tampered(&leaf), [Limit::Processes]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn without_its_watch_a_leaf_still_reports_a_value_changed_by_the_end_or_use_past_the_limit() {
        let (leaf, dir) = leaf_over_files("v2-unwatched", true, &V2_FILES);
        // As where the user's inotify instances ran out.
        leaf.inotify.set(None).unwrap();
        leaf.apply(&limits(), false).unwrap();
        let guard = leaf.guard.borrow();
        let guard = guard.as_ref().unwrap();
        let tampered = || {
            let unwatched = Guard {
                inotify: None,
                files: guard
                    .files
                    .iter()
                    .map(|watched| Watched { file: Rc::clone(&watched.file), ..*watched })
                    .collect(),
                seen: Cell::new(LimitSet::default()),
            };
            unwatched.tampered().iter().collect::<Vec<_>>()
        };
        fs::write(dir.join("pids.max"), "max").unwrap();
        fs::write(dir.join("memory.peak"), format!("{}", 300 << 20)).unwrap();
        assert_eq!(tampered(), [Limit::Memory, Limit::Processes]);
        // Written and put back, with use within the limit: unseen without the watch.
        fs::write(dir.join("pids.max"), "9").unwrap();
        fs::write(dir.join("memory.peak"), format!("{}", 64 << 20)).unwrap();
        assert_eq!(tampered(), []);
        // The kernel's slack for a dying task's charges is not use past the limit.
        fs::write(dir.join("memory.peak"), format!("{}", (64 << 20) + (4 << 20))).unwrap();
        assert_eq!(tampered(), []);
        fs::write(dir.join("pids.peak"), "10").unwrap();
        assert_eq!(tampered(), [Limit::Processes]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_peak_from_before_the_limit_was_set_is_not_use_past_it() {
        let (leaf, dir) = leaf_over_files("v2-early-peak", true, &V2_FILES);
        // The reaper's own use before the limit was set: a large environment read, say.
        fs::write(dir.join("memory.peak"), format!("{}", 100 << 20)).unwrap();
        leaf.apply(&limits(), false).unwrap();
        assert_eq!(tampered(&leaf), []);
        fs::write(dir.join("memory.peak"), format!("{}", 300 << 20)).unwrap();
        assert_eq!(tampered(&leaf), [Limit::Memory], "past both the limit and the peak before it");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_v1_leaf_watches_its_limit_and_memsw_files_and_only_the_limits_set() {
        let (leaf, dir) = leaf_over_files("v1", false, &[]);
        for (file, text) in [
            ("memory/memory.limit_in_bytes", "9223372036854771712\n"),
            ("memory/memory.memsw.limit_in_bytes", "9223372036854771712\n"),
            ("memory/memory.max_usage_in_bytes", "0\n"),
            ("memory/memory.memsw.max_usage_in_bytes", "0\n"),
            ("pids/pids.max", "max\n"),
            ("pids/pids.peak", "0\n"),
        ] {
            fs::write(dir.join(file), text).unwrap();
        }
        let memory_only = Limits { memory_bytes: Some(64 << 20), ..Limits::default() };
        leaf.apply(&memory_only, true).unwrap();
        fs::write(dir.join("pids/pids.max"), "max").unwrap();
        assert_eq!(
            leaf.observed_for(&memory_only, [0, 0]).tampered.iter().collect::<Vec<_>>(),
            [],
            "processes was not set"
        );
        fs::write(dir.join("memory/memory.memsw.limit_in_bytes"), "-1").unwrap();
        assert_eq!(leaf.observed_for(&memory_only, [0, 0]).tampered.iter().collect::<Vec<_>>(), [Limit::Memory]);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_leaf_whose_reaper_died_untold_names_the_limits_it_holds_as_unwatched() {
        let (leaf, dir) = leaf_over_files("unwatched", false, &[]);
        assert_eq!(leaf.unwatched().unwatched.iter().collect::<Vec<_>>(), [Limit::Memory, Limit::Processes]);
        let bare = Leaf { controllers: Mechanisms::default(), v1_memory: None, v1_pids: None, ..leaf };
        assert!(bare.unwatched().unwatched.is_empty());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn reads_a_counter_of_a_flat_keyed_file() {
        let dir = std::env::temp_dir().join(format!("dsh-counter-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("memory.oom_control");
        fs::write(&file, "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n").unwrap();
        assert_eq!(counter(None, &file, "oom_kill"), 3);
        assert_eq!(counter(None, &file, "max"), 0);
        assert_eq!(counter(None, &dir.join("absent"), "max"), 0);
        let opened = fs::File::open(&file).unwrap();
        assert_eq!(counter(Some(&opened), &dir.join("absent"), "oom_kill"), 3);
        // Read again from the start, as a reaper reads at each command's end what it opened ahead.
        assert_eq!(counter(Some(&opened), &dir.join("absent"), "oom_kill"), 3);
        fs::remove_dir_all(&dir).unwrap();
    }
}
