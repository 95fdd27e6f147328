//! The rules stated plainly, for the property tests (`tests/properties/`)
//! and the fuzz targets (`fuzz/src/lib.rs` includes this file by path), so
//! both check the code against one statement of each rule.

use dsh_shell_env_core::environment::RemovalReason;

/// `DSH_[A-Z][A-Z0-9_]*`, spelled out over characters rather than bytes.
pub fn matches_key_pattern(key: &str) -> bool {
    let Some(rest) = key.strip_prefix("DSH_") else { return false };
    let mut chars = rest.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

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

/// A non-empty name without NUL or a `=` after its first character, and a value without NUL.
pub fn can_reach_execve(name: &str, value: &str) -> bool {
    !name.is_empty() && !name.chars().skip(1).any(|c| c == '=') && !name.contains('\0') && !value.contains('\0')
}

/// The pipeline step a removal reason belongs to, in pipeline order.
pub fn rank(reason: RemovalReason) -> u8 {
    RemovalReason::ALL.iter().position(|r| *r == reason).expect("every reason is listed") as u8
}

/// Whether a terminal or explicit entry named `name` is dropped before the
/// spawn: its name upper-cases into the managed namespace and no managed key
/// (`same` compares names the platform's way) is the same variable.
pub fn unmanaged(name: &str, managed: &[(String, String)], same: impl Fn(&str, &str) -> bool) -> bool {
    upper(name).starts_with("DSH_") && !managed.iter().any(|(key, _)| same(key, name))
}
