//! Spill files, in one private directory per process and base directory (the
//! system temp directory unless the caller names another): the directory is
//! 0700, each file 0600 and created exclusively, so other users can neither
//! read the output nor plant a file or symlink in its place.
//!
//! A file normally goes with the result that names it. A caller that hands the
//! path on (a model reads it later) asks to keep it ([`SpillPlace::keep`]) and
//! removes it itself with [`remove_spill_file`]; whatever is left goes with the
//! host ([`remove_spill_dir`]). Directories of hosts that died without either
//! (a SIGKILL) are swept when this process first makes its own in that base.
//!
//! A host is judged alive by a lock, not by its pid: each private directory
//! holds a `lock` file the host keeps open with an exclusive `flock` for its
//! whole life. The kernel drops the lock when the host dies however it dies,
//! and it means the same to every host on the machine, whatever pid namespace
//! each runs in (a pid seen from another namespace names someone else, or
//! no one). The directory is made under a temporary name and renamed into
//! place with its lock held, so no sweep ever sees it unlocked.
//!
//! A command runs as the host's user, so it can put anything in a base
//! directory or in a spill directory: a FIFO, a socket or a symlink named
//! like a lock file, or a FUSE mount. The sweep therefore runs on a thread
//! of its own (nothing waits for it), opens a lock file without waiting and
//! without following links, and leaves alone whatever is not a regular file
//! in a directory this user owns (`DEBUG=dsh-shell-env` names it).

use std::collections::hash_map::RandomState;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::hash::BuildHasher;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::platform;
use super::stream::StreamKind;
use super::sync::lock;
use crate::diagnostics;

/// The prefix of every private spill directory: `dsh-shell-env-<pid>-<random>`.
const DIR_PREFIX: &str = "dsh-shell-env-";

/// The private directories made so far, each with the base it is in.
static DIRS: Mutex<Vec<PrivateDir>> = Mutex::new(Vec::new());
/// Keeps file names unique even when pids are reused.
static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

struct PrivateDir {
    base: PathBuf,
    path: PathBuf,
    /// The `lock` file inside, locked while this process lives.
    _lock: File,
}

/// The lock file's name in a private directory.
const LOCK_FILE: &str = "lock";

/// Where a process's spill files go and whether they outlive its result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpillPlace {
    /// The absolute directory to make the private spill directory in; `None`:
    /// the system temp directory.
    pub base: Option<PathBuf>,
    /// Keep each file when its result is dropped, for [`remove_spill_file`] or
    /// the host's exit to remove.
    pub keep: bool,
}

/// A spill file; deleted when dropped unless kept.
#[derive(Debug)]
pub(super) struct SpillFile {
    path: PathBuf,
    keep: bool,
}

impl SpillFile {
    /// Creates a new, empty spill file for one stream of process `pid`.
    pub(super) fn create(pid: u32, kind: StreamKind, place: &SpillPlace) -> io::Result<(Self, File)> {
        let name = format!("{}-{pid}.{}", NEXT_FILE.fetch_add(1, Ordering::Relaxed), kind.as_str());
        let base = place.base.clone().unwrap_or_else(std::env::temp_dir);
        let mut attempts = 0;
        loop {
            let dir = private_dir(&base)?;
            let path = dir.join(&name);
            match create_private_file(&path) {
                Ok(file) => return Ok((Self { path, keep: place.keep }, file)),
                // The directory was removed under us (its last file dropped on
                // another thread, remove_spill_dir, a temp cleaner): make a new one.
                Err(error) if error.kind() == io::ErrorKind::NotFound && attempts < 3 => {
                    forget_dir(&dir);
                    attempts += 1;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Where the file is.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        // The directory stays, locked, for the host's next spill files; one
        // whose host died without its exit hook goes at the next sweep.
        if !self.keep {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Removes a kept spill file this process made. Anything else (a path outside
/// its private directories, one already gone) is left alone and reported as
/// `false`.
pub fn remove_spill_file(path: &Path) -> bool {
    let ours = path.parent().is_some_and(|parent| lock(&DIRS).iter().any(|dir| dir.path == parent));
    // Already gone when remove_spill_dir ran first.
    ours && fs::remove_file(path).is_ok()
}

/// Deletes every private spill directory with every spill file in it, for
/// process or environment teardown. Results that still name a spill file then
/// name a missing file; a later spill makes a new directory.
pub fn remove_spill_dir() {
    for dir in std::mem::take(&mut *lock(&DIRS)) {
        let _ = fs::remove_dir_all(dir.path);
    }
}

/// Makes sure spill files can be made in `base`: this process's private
/// directory there exists (made now, on first use). The error is the OS's
/// (`ENOENT`, `ENOTDIR`, `EACCES`, …), for the caller to refuse the spec with.
pub fn check_spill_base(base: &Path) -> io::Result<()> {
    private_dir(base).map(drop)
}

/// This process's private directory in `base`, made on first use (sweeping
/// the directories of dead hosts there first).
fn private_dir(base: &Path) -> io::Result<PathBuf> {
    let mut dirs = lock(&DIRS);
    if let Some(dir) = dirs.iter().find(|dir| dir.base == base) {
        return Ok(dir.path.clone());
    }
    sweep_in_background(base);
    let random = RandomState::new();
    for attempt in 0..16 {
        let name = format!("{DIR_PREFIX}{}-{:016x}", std::process::id(), random.hash_one(attempt));
        let path = base.join(&name);
        // Made and locked under a name no sweep looks at, then moved into place.
        let making = base.join(format!(".{name}.new"));
        match create_private_dir(&making) {
            Ok(()) => {}
            // Someone else's, or a leftover: never reuse it.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
        // Never waits: a command could open the new lock file and hold a
        // lock on it; that name is then given up like a taken one.
        let locked = create_private_file(&making.join(LOCK_FILE)).and_then(|file| match file.try_lock() {
            Ok(()) => Ok(file),
            Err(_) => Err(io::Error::from(io::ErrorKind::AlreadyExists)),
        });
        let placed = locked.and_then(|file| rename_no_replace(&making, &path).map(|()| file));
        match placed {
            Ok(lock_file) => {
                dirs.push(PrivateDir { base: base.to_path_buf(), path: path.clone(), _lock: lock_file });
                return Ok(path);
            }
            Err(error) => {
                let _ = fs::remove_dir_all(&making);
                if error.kind() != io::ErrorKind::AlreadyExists {
                    return Err(error);
                }
            }
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free spill directory name"))
}

/// Renames directory `from` to `to`, failing with `AlreadyExists` where `to`
/// exists instead of replacing it (a rename over an empty directory would).
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    if fs::symlink_metadata(to).is_ok() {
        return Err(io::Error::from(io::ErrorKind::AlreadyExists));
    }
    fs::rename(from, to)
}

/// Forgets `stale` as a private directory.
fn forget_dir(stale: &Path) {
    lock(&DIRS).retain(|dir| dir.path != stale);
}

/// Sweeps `base` for the directories of dead hosts on a thread of its own
/// (see [`sweep_dead_hosts`]): no caller waits for it, so a base a command
/// made slow or blocking (a FUSE mount) holds up no spill and no exit.
fn sweep_in_background(base: &Path) {
    let base = base.to_path_buf();
    let spawned = std::thread::Builder::new().name("dsh-spill-sweep".into()).spawn(move || sweep_dead_hosts(&base));
    if let Err(error) = spawned {
        diagnostics::note(|| format!("spill sweep not started: {error}"));
    }
}

/// Removes the spill directories in `base` of hosts that no longer run: named
/// `dsh-shell-env-<pid>-<random>`, owned by this user, with a `lock` file
/// nobody holds (its host is dead; the lock is taken for the removal). A
/// directory without a lock file (made by an older version) is left alone,
/// as is everything where the platform cannot tell who owns a directory, and
/// a directory whose `lock` is anything but a regular file. The removal
/// unlinks what is inside without opening it and follows no link.
fn sweep_dead_hosts(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        if host_pid(&entry.file_name().to_string_lossy()).is_none() {
            continue;
        }
        let path = entry.path();
        // Not followed: a symlink by that name is not a spill directory.
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() && super::owned_by_this_user(&meta) => {}
            Ok(meta) => {
                let what = if meta.is_dir() { "another user's directory" } else { "not a directory" };
                diagnostics::note(|| format!("spill sweep skipped {}: {what}", path.display()));
                continue;
            }
            Err(_) => continue,
        }
        let Some(lock_file) = open_lock(&path.join(LOCK_FILE)) else { continue };
        if lock_file.try_lock().is_ok() {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

/// Opens the lock file at `path` for a sweep: without waiting and without
/// following a link, and only a regular file. `None` for anything else,
/// which a note names.
fn open_lock(path: &Path) -> Option<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    platform::never_blocking_open(&mut options);
    let skipped = |why: String| diagnostics::note(|| format!("spill sweep skipped {}: {why}", path.display()));
    match options.open(path) {
        Ok(file) => match file.metadata() {
            Ok(meta) if meta.is_file() => Some(file),
            Ok(meta) => {
                skipped(format!("not a regular file ({})", file_kind(&meta)));
                None
            }
            Err(error) => {
                skipped(error.to_string());
                None
            }
        },
        // No lock file: an older version's directory, or a host's still being made.
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => {
            skipped(format!("cannot be opened ({error})"));
            None
        }
    }
}

/// What kind of file `meta` describes, in a word, for notes.
fn file_kind(meta: &fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symlink"
    } else {
        platform::special_file_kind(&kind)
    }
}

/// The host pid in a spill directory's name.
fn host_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(DIR_PREFIX)?;
    let (pid, random) = rest.split_once('-')?;
    let plausible = random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit());
    plausible.then(|| pid.parse().ok()).flatten().filter(|&pid| pid > 0)
}

/// The private directory: only this user may list it or add to it.
fn create_private_dir(path: &Path) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    platform::owner_only_dir(&mut builder);
    builder.create(path)?;
    platform::restrict_to_owner(path).inspect_err(|_| {
        let _ = fs::remove_dir(path);
    })
}

fn create_private_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    // create_new is O_CREAT | O_EXCL: it never opens an existing file or follows a symlink.
    options.write(true).create_new(true);
    platform::owner_only_file(&mut options);
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_pids_come_from_spill_directory_names_only() {
        assert_eq!(host_pid("dsh-shell-env-4242-00112233445566ff"), Some(4242));
        for other in [
            "dsh-shell-env-4242-xyz",
            "dsh-shell-env-0-00112233445566ff",
            "dsh-shell-env--00112233445566ff",
            "dsh-shell-env-4242",
            "dsh-subprocess-4242-00112233445566ff",
        ] {
            assert_eq!(host_pid(other), None, "{other}");
        }
    }
}
