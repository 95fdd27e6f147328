//! The strongest tier: a cgroup v2 leaf per command.
//!
//! Where the supervisor's own cgroup v2 directory (the host's, which it
//! inherits) is writable and has `cgroup.kill` (Linux 5.14 and later; as root,
//! or in a delegated subtree), the supervisor makes a directory of its own
//! there, `dsh-shell-env.<pid namespace>.<pid>`, and in it one leaf per
//! command. The command's reaper is born in its leaf (`clone3` with
//! `CLONE_INTO_CGROUP`), so the command and everything it ever forks stay
//! there whatever they do with sessions and groups, and one write to
//! `cgroup.kill` ends them all at once, also after the command killed its
//! own reaper. Forks racing the kill die with it.
//!
//! The tier is chosen once per supervisor by [`Cgroups::detect`]: the
//! directory must be made and a probe child must be born into a leaf of it.
//! Anything less, and commands run without one (the reaper's `/proc` sweep
//! still ends them, see `reaper`).

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The prefix of a supervisor's directory; the rest is its pid namespace
/// (the inode of `/proc/self/ns/pid`) and its pid there.
const DIRECTORY_PREFIX: &str = "dsh-shell-env.";

/// The supervisor's cgroup directory, where each command gets a leaf.
pub(crate) struct Cgroups {
    base: PathBuf,
}

/// One command's leaf.
pub(crate) struct Leaf {
    path: PathBuf,
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
        let cgroups = Self { base };
        if cgroups.base.join("cgroup.kill").exists() && cgroups.probe() {
            Some(cgroups)
        } else {
            cgroups.remove();
            None
        }
    }

    /// A new leaf named `name`, or `None` when one cannot be made (the
    /// command then runs without: the reaper still ends it).
    pub(crate) fn leaf(&self, name: u64) -> Option<Leaf> {
        let path = self.base.join(name.to_string());
        fs::create_dir(&path).ok()?;
        Some(Leaf { path })
    }

    /// Kills every leaf and removes what is empty, the directory last: the
    /// supervisor is leaving.
    pub(crate) fn remove(&self) {
        remove_tree(&self.base);
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
        fs::remove_dir(&self.path).is_ok() || !self.path.exists()
    }
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
    }
}
