//! Path fixtures in the spelling of the platform the tests run on, for the
//! rules that differ between Unix and Windows: what is absolute, the
//! separator, and the `PATH` delimiter.

use crate::registry::PATH_DELIMITER;

/// The user's home in the fixtures.
pub(crate) const USER_HOME: &str = if cfg!(windows) { r"C:\Users\ada" } else { "/home/ada" };

/// The caller's working directory in the fixtures.
pub(crate) const CWD: &str = if cfg!(windows) { r"C:\work\project" } else { "/work/project" };

/// An absolute path from `/`-separated parts below the root: `abs("opt/dsh")`
/// is `/opt/dsh` on Unix and `C:\opt\dsh` on Windows; `abs("")` is the root.
pub(crate) fn abs(rest: &str) -> String {
    if cfg!(windows) {
        format!(r"C:\{}", native(rest))
    } else {
        format!("/{rest}")
    }
}

/// `base` joined with the `/`-separated `rest`, in the platform's spelling.
pub(crate) fn under(base: &str, rest: &str) -> String {
    if cfg!(windows) {
        format!(r"{base}\{}", native(rest))
    } else {
        format!("{base}/{rest}")
    }
}

/// `dirs` as one search path, joined with the platform's delimiter.
pub(crate) fn search_path(dirs: &[&str]) -> String {
    dirs.join(&PATH_DELIMITER.to_string())
}

fn native(rest: &str) -> String {
    rest.replace('/', r"\")
}

/// A fresh, empty scratch directory (mode 0755) whose ancestors are trusted
/// with command directories ([`crate::trust`]): under the workspace's target
/// directory, else the home directory; never `/tmp`, which others can write.
#[cfg(unix)]
pub(crate) fn trusted_scratch(name: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};

    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let bases = [Some(target), std::env::var_os("HOME").map(PathBuf::from)];
    let base = bases
        .into_iter()
        .flatten()
        .filter_map(|base| std::fs::canonicalize(base).ok())
        .find(|base| crate::trust::check(base).is_none())
        .expect("the target directory or the home directory is trusted (not inside a directory others can write)");
    let dir = base.join(format!(".dsh-core-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}
