//! Whether a command directory can be trusted with a place on every
//! command's PATH: nobody but its user (or root) can put a program there,
//! now or by swapping a directory or a symbolic link on the way to it.
//!
//! Checked at `register()` and again at every collection, since a directory
//! can be created, or its permissions changed, at any time. A directory is
//! trusted when each existing component of its path, from `/` down, and
//! each component of the real path it leads to:
//! - belongs to the user or to root;
//! - is not writable by its group or by others (a sticky `1777` parent such
//!   as `/tmp` is not trusted either: whoever creates a name there first
//!   owns it);
//! - and, for a symbolic link, belongs to the user or to root.
//!
//! A directory that does not exist yet is judged by its existing ancestors:
//! only they decide who may create it. On Windows, where PATH directories
//! are guarded by ACLs this package does not read, every directory passes.

use std::fmt;
use std::path::{Path, PathBuf};

/// What makes a directory untrustworthy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// Writable by its group or by others.
    Writable,
    /// Owned by another user than this process's or root.
    OtherOwner,
    /// Not a directory (a file, a device, …).
    NotDirectory,
    /// Its permissions could not be read.
    Unreadable,
}

/// Why a command directory is not trusted: the path component at fault and
/// what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    /// The directory asked about.
    pub directory: PathBuf,
    /// The component at fault: the directory itself, a parent, or where a
    /// symbolic link on the way leads.
    pub at: PathBuf,
    /// What is wrong with it.
    pub problem: Problem,
}

impl fmt::Display for Untrusted {
    /// The reason, as a sentence fragment after the directory's name: `is
    /// writable by …` or `is inside /tmp, which is writable by …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.problem {
            Problem::Writable => "writable by its group or by others, so anyone could plant a command there",
            Problem::OtherOwner => "owned by another user",
            Problem::NotDirectory => "not a directory",
            Problem::Unreadable => "not readable, so its permissions cannot be checked",
        };
        if self.at == self.directory {
            write!(f, "is {what}")
        } else {
            write!(f, "is inside {}, which is {what}", self.at.display())
        }
    }
}

/// Why `directory` (an absolute path) cannot be trusted, or `None` when it can.
pub fn check(directory: &Path) -> Option<Untrusted> {
    imp::check(directory).map(|(at, problem)| Untrusted { directory: directory.to_path_buf(), at, problem })
}

#[cfg(unix)]
mod imp {
    use std::io;
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    use super::Problem;

    pub(super) fn check(directory: &Path) -> Option<(PathBuf, Problem)> {
        let trusted_owner = |meta: &std::fs::Metadata| crate::process::owned_by_this_user(meta) || meta.uid() == 0;
        let mut components: Vec<&Path> = directory.ancestors().collect();
        components.reverse();
        let mut deepest = None;
        // A sticky directory others can write, trusted as a parent only once
        // the next component exists (and passes the owner check below).
        let mut sticky = None;
        for component in components {
            let meta = match std::fs::symlink_metadata(component) {
                Ok(meta) => meta,
                // Who may create the rest is its existing parent's to say.
                Err(error) if error.kind() == io::ErrorKind::NotFound => break,
                Err(_) => return Some((component.to_path_buf(), Problem::Unreadable)),
            };
            sticky = None;
            deepest = Some(component);
            if !trusted_owner(&meta) {
                return Some((component.to_path_buf(), Problem::OtherOwner));
            }
            // A link's own mode means nothing; where it leads is checked below.
            if meta.file_type().is_symlink() {
                continue;
            }
            if meta.mode() & 0o022 != 0 {
                if meta.is_dir() && meta.mode() & 0o1000 != 0 && component != directory {
                    sticky = Some(component);
                    continue;
                }
                return Some((component.to_path_buf(), Problem::Writable));
            }
            if !meta.is_dir() {
                return Some((component.to_path_buf(), Problem::NotDirectory));
            }
        }
        // The next name in a sticky directory is not made yet: anyone may take it.
        if let Some(parent) = sticky {
            return Some((parent.to_path_buf(), Problem::Writable));
        }
        // Where the links on the way lead: the same rules for the real path.
        let deepest = deepest?;
        let real = match std::fs::canonicalize(deepest) {
            Ok(real) => real,
            Err(_) => return Some((deepest.to_path_buf(), Problem::Unreadable)),
        };
        if real == deepest {
            return None;
        }
        check(&real)
    }
}

#[cfg(not(unix))]
mod imp {
    use std::path::{Path, PathBuf};

    use super::Problem;

    pub(super) fn check(_directory: &Path) -> Option<(PathBuf, Problem)> {
        None
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        crate::test_paths::trusted_scratch(&format!("trust-{name}"))
    }

    fn set_mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_private_directory_and_one_not_made_yet_are_trusted() {
        let dir = scratch("private");
        assert_eq!(check(&dir), None);
        assert_eq!(check(&dir.join("bin")), None);
        assert_eq!(check(&dir.join("later/bin")), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_writable_directory_is_not_trusted_sticky_or_not() {
        let dir = scratch("writable");
        let bin = dir.join("bin");
        std::fs::create_dir(&bin).unwrap();
        for mode in [0o775, 0o757, 0o1777, 0o1775] {
            set_mode(&bin, mode);
            let untrusted = check(&bin).expect("writable");
            assert_eq!((untrusted.at.as_path(), untrusted.problem), (bin.as_path(), Problem::Writable));
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_writable_parent_is_not_trusted_unless_it_is_sticky_and_the_next_component_exists() {
        let dir = scratch("writable-parent");
        let shared = dir.join("shared");
        let inner = shared.join("tools");
        std::fs::create_dir_all(&inner).unwrap();
        set_mode(&inner, 0o755);
        for mode in [0o777, 0o775, 0o757] {
            set_mode(&shared, mode);
            let untrusted = check(&inner).expect("a writable parent");
            assert_eq!((untrusted.at.as_path(), untrusted.problem), (shared.as_path(), Problem::Writable));
            assert!(untrusted.to_string().starts_with(&format!("is inside {}, which is writable", shared.display())));
        }
        // Sticky: nobody else can rename or remove `tools`, which is ours.
        for mode in [0o1777, 0o1775] {
            set_mode(&shared, mode);
            assert_eq!(check(&inner), None);
            assert_eq!(check(&inner.join("bin")), None);
        }
        // A name not made yet in it is whoever's creates it first.
        let later = shared.join("later").join("bin");
        let untrusted = check(&later).expect("a name not made yet in a sticky directory");
        assert_eq!((untrusted.at.as_path(), untrusted.problem), (shared.as_path(), Problem::Writable));
        set_mode(&shared, 0o755);
        assert_eq!(check(&later), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_directory_made_in_the_system_temporary_directory_is_trusted_when_that_is_sticky() {
        let temp = std::env::temp_dir();
        let sticky = std::fs::metadata(&temp).is_ok_and(|meta| {
            use std::os::unix::fs::MetadataExt;
            meta.mode() & 0o1000 != 0
        });
        if !sticky {
            return;
        }
        let dir = temp.join(format!(".dsh-core-test-trust-temp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        set_mode(&dir, 0o700);
        assert_eq!(check(&dir), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn another_user_s_directory_in_a_sticky_parent_is_not_trusted() {
        // Making a directory another user's takes root.
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let dir = scratch("sticky-other");
        let shared = dir.join("shared");
        let theirs = shared.join("bin");
        std::fs::create_dir_all(&theirs).unwrap();
        set_mode(&shared, 0o1777);
        set_mode(&theirs, 0o755);
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let untrusted = check(&theirs).expect("another user's directory");
        assert_eq!((untrusted.at.as_path(), untrusted.problem), (theirs.as_path(), Problem::OtherOwner));
        // A sticky directory of another user's is not trusted as a parent either.
        std::os::unix::fs::chown(&theirs, Some(0), Some(0)).unwrap();
        std::os::unix::fs::chown(&shared, Some(65534), Some(65534)).unwrap();
        let untrusted = check(&theirs).expect("another user's sticky parent");
        assert_eq!((untrusted.at.as_path(), untrusted.problem), (shared.as_path(), Problem::OtherOwner));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_symlink_is_judged_by_where_it_leads() {
        let dir = scratch("links");
        let shared = dir.join("shared");
        std::fs::create_dir(&shared).unwrap();
        set_mode(&shared, 0o777);
        let link = dir.join("bin");
        std::os::unix::fs::symlink(&shared, &link).unwrap();
        let untrusted = check(&link).expect("leads to a writable directory");
        assert_eq!((untrusted.at, untrusted.problem), (shared.clone(), Problem::Writable));
        set_mode(&shared, 0o755);
        assert_eq!(check(&link), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_file_is_not_a_directory() {
        let dir = scratch("file");
        let file = dir.join("bin");
        std::fs::write(&file, "").unwrap();
        set_mode(&file, 0o755);
        assert_eq!(check(&file).map(|untrusted| untrusted.problem), Some(Problem::NotDirectory));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
