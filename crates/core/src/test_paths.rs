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
