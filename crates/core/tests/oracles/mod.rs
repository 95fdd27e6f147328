//! The rules stated plainly, and the checks of each invariant against them,
//! for the property tests (`tests/properties/`) and the fuzz targets
//! (`fuzz/src/lib.rs` includes this file by path), so both check the code
//! against one statement of each rule.
//!
//! A check is a plain function that panics with the offending input when its
//! invariant fails: proptest counts the panic as a failure (and still shrinks),
//! libFuzzer as a crash. Only `dsh_shell_env_core` and std are used here, the
//! two things both crates have.

// A `mod.rs`, so these resolve next to it from either crate's `#[path]`.
mod environment;
mod home;
mod keys;
mod path;

pub use self::environment::*;
pub use self::home::*;
pub use self::keys::*;
pub use self::path::*;

/// Flips the case of the ASCII letters selected by `mask` (bit `i % 64` for character `i`).
pub fn recase(s: &str, mask: u64) -> String {
    s.chars()
        .enumerate()
        .map(|(i, c)| {
            if mask >> (i % 64) & 1 == 0 {
                c
            } else if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// The Windows comparison form: one-to-one upper case (`ß` stays `ß`).
pub fn upper(s: &str) -> String {
    s.chars()
        .map(|c| {
            let mut u = c.to_uppercase();
            match (u.next(), u.next()) {
                (Some(u), None) => u,
                _ => c,
            }
        })
        .collect()
}
