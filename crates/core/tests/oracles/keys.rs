//! The key rule: exactly `DSH_[A-Z][A-Z0-9_]*`, safe managed names, the
//! reserved built-ins, the managed prefix in any ASCII case, and what the
//! registry accepts.

use dsh_shell_env_core::keys::{has_managed_prefix, is_reserved, is_valid_key, RESERVED_KEYS};
use dsh_shell_env_core::registry::{Declaration, Registry};

use super::recase;

/// `DSH_[A-Z][A-Z0-9_]*`, spelled out over characters rather than bytes.
pub fn matches_key_pattern(key: &str) -> bool {
    let Some(rest) = key.strip_prefix("DSH_") else { return false };
    let mut chars = rest.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Checks that `is_valid_key` is exactly [`matches_key_pattern`].
pub fn check_key_rule(key: &str) {
    assert_eq!(is_valid_key(key), matches_key_pattern(key), "is_valid_key({key:?})");
}

/// Checks that a valid key is a safe managed name: ASCII, no `=` or NUL, the
/// managed prefix, upper case, and invalid once any one letter is lowered.
pub fn check_valid_key_is_safe(key: &str) {
    if !is_valid_key(key) {
        return;
    }
    assert!(key.is_ascii() && !key.contains('=') && !key.contains('\0'), "{key:?}");
    assert!(has_managed_prefix(key), "{key:?}");
    assert_eq!(key.to_ascii_uppercase(), key, "{key:?}");
    // Lower-casing any one letter makes it invalid.
    for (i, c) in key.char_indices().filter(|(_, c)| c.is_ascii_uppercase()) {
        let mut lowered = key.to_owned();
        lowered.replace_range(i..i + 1, &c.to_ascii_lowercase().to_string());
        assert!(!is_valid_key(&lowered), "{lowered:?}, lowered from {key:?}, is valid");
    }
}

/// Checks that reserved means exactly one of [`RESERVED_KEYS`], as spelt,
/// and that every reserved key is valid.
pub fn check_reserved(key: &str) {
    assert_eq!(is_reserved(key), RESERVED_KEYS.contains(&key), "is_reserved({key:?})");
    assert!(!is_reserved(key) || is_valid_key(key), "{key:?} is reserved but not valid");
}

/// Checks that the managed prefix ignores ASCII case, and only ASCII case
/// (`ſ` does not count as `S`): `key` and `key` re-cased by `mask` agree.
pub fn check_managed_prefix(key: &str, mask: u64) {
    let prefixed = has_managed_prefix(key);
    assert_eq!(prefixed, key.to_ascii_uppercase().starts_with("DSH_"), "has_managed_prefix({key:?})");
    let recased = recase(key, mask);
    assert_eq!(has_managed_prefix(&recased), prefixed, "{recased:?} re-cased from {key:?}");
}

/// Checks that a registry accepts a declaration of `key` exactly when it is
/// valid and unreserved, refusing it with the matching code otherwise.
pub fn check_registry_accepts(key: &str) {
    let registry: Registry<()> = Registry::new("/h".into(), None);
    let result = registry.register(Declaration {
        name: "c".into(),
        variables: vec![(key.to_owned(), Some("described".into()))],
        command_directories: vec![],
        resolver: (),
    });
    let expected = if !is_valid_key(key) {
        Some("ERR_SHELL_ENV_INVALID_KEY")
    } else if is_reserved(key) {
        Some("ERR_SHELL_ENV_RESERVED_KEY")
    } else {
        None
    };
    assert_eq!(result.as_ref().err().map(|e| e.code()), expected, "{key:?}");
    assert_eq!(registry.list().len(), usize::from(expected.is_none()), "{key:?}");
}
