//! Spill files, in one private directory per process under the system temp
//! directory: the directory is 0700, each file 0600 and created exclusively, so
//! other users can neither read the output nor plant a file or symlink in its place.

use std::collections::hash_map::RandomState;
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::hash::BuildHasher;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use super::{lock, StreamKind};

/// The private directory, once made.
static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);
/// Keeps file names unique even when pids are reused.
static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

/// A spill file; deleted when dropped.
#[derive(Debug)]
pub(super) struct SpillFile {
    path: PathBuf,
}

impl SpillFile {
    /// Creates a new, empty spill file for one stream of process `pid`.
    pub(super) fn create(pid: u32, kind: StreamKind) -> io::Result<(Self, File)> {
        let name = format!("{}-{pid}.{}", NEXT_FILE.fetch_add(1, Ordering::Relaxed), kind.as_str());
        let mut attempts = 0;
        loop {
            let dir = private_dir()?;
            let path = dir.join(&name);
            match create_private_file(&path) {
                Ok(file) => return Ok((Self { path }, file)),
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
        // Already gone when remove_spill_dir ran first.
        let _ = fs::remove_file(&self.path);
        // The last file takes the directory with it, so a host that dies
        // without running its exit hook (a signal) leaves nothing behind once
        // its spill files are gone. A later spill makes a new directory.
        if let Some(parent) = self.path.parent() {
            let mut dir = lock(&DIR);
            if dir.as_deref() == Some(parent) && fs::remove_dir(parent).is_ok() {
                *dir = None;
            }
        }
    }
}

/// Deletes the private spill directory with every spill file in it, for process
/// or environment teardown. Results that still name a spill file then name a
/// missing file; a later spill makes a new directory.
pub fn remove_spill_dir() {
    if let Some(dir) = lock(&DIR).take() {
        let _ = fs::remove_dir_all(dir);
    }
}

/// The private directory, made on first use as `dsh-shell-env-<pid>-<random>`.
fn private_dir() -> io::Result<PathBuf> {
    let mut dir = lock(&DIR);
    if let Some(path) = &*dir {
        return Ok(path.clone());
    }
    let base = std::env::temp_dir();
    let random = RandomState::new();
    for attempt in 0..16 {
        let name = format!("dsh-shell-env-{}-{:016x}", std::process::id(), random.hash_one(attempt));
        let path = base.join(name);
        match create_private_dir(&path) {
            Ok(()) => {
                *dir = Some(path.clone());
                return Ok(path);
            }
            // Someone else's, or a leftover: never reuse it.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    Err(io::Error::new(io::ErrorKind::AlreadyExists, "no free spill directory name"))
}

/// Forgets `stale` as the private directory, unless another thread already replaced it.
fn forget_dir(stale: &Path) {
    let mut dir = lock(&DIR);
    if dir.as_deref() == Some(stale) {
        *dir = None;
    }
}

fn create_private_dir(path: &Path) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

fn create_private_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    // create_new is O_CREAT | O_EXCL: it never opens an existing file or follows a symlink.
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}
