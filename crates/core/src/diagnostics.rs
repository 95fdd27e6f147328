//! Notes for a developer who asked for them: `DEBUG` naming the package's
//! command (`dsh-shell-env`, or `*`), as the JS layer and the command line
//! read it. They go to the host's stderr, one line each, and say what the
//! package skipped or worked around where nothing else would tell: a
//! planted file the spill sweep would not open, say.

use std::sync::OnceLock;

/// The name `DEBUG` must list (comma or space separated) to turn notes on.
const NAME: &str = "dsh-shell-env";

/// Whether notes are on: read once, from the host's `DEBUG`.
pub fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| {
        std::env::var("DEBUG").is_ok_and(|debug| debug.split([',', ' ', '\t']).any(|name| name == "*" || name == NAME))
    })
}

/// Writes `note` to stderr as `dsh-shell-env: <note>` when notes are on.
/// Takes a closure, so that a note nobody reads costs no formatting.
pub fn note(note: impl FnOnce() -> String) {
    if enabled() {
        eprintln!("{NAME}: {}", note());
    }
}
