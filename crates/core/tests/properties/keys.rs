//! The key rule near its boundaries: exactly `DSH_[A-Z][A-Z0-9_]*`, safe
//! managed names, the reserved built-ins, the managed prefix in any ASCII
//! case, and the registry accepting exactly the valid, unreserved keys.

use dsh_shell_env_core::keys::{has_managed_prefix, is_reserved, is_valid_key, RESERVED_KEYS};
use dsh_shell_env_core::registry::{Declaration, Registry};
use proptest::prelude::*;

use crate::oracles::{matches_key_pattern, recase};

/// Strings clustered around the `DSH_` boundary: every case of the prefix, a
/// missing or short prefix, and suffixes mixing the allowed characters with
/// near misses (lower case, `-`, `=`, NUL, space, non-ASCII letters).
fn key_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "(DSH_|dsh_|Dsh_|dSh_|DSh_|DSH|DS|D|_DSH_| DSH_|)[A-Za-z0-9_=\\- \\x00ÉéſßK]{0,6}",
        "DSH_[A-Z][A-Z0-9_]{0,10}",
        "\\PC{0,8}",
    ]
}

proptest! {
    #[test]
    fn key_rule_is_exactly_the_documented_pattern(key in key_like()) {
        prop_assert_eq!(is_valid_key(&key), matches_key_pattern(&key), "{:?}", key);
    }

    #[test]
    fn valid_keys_are_safe_managed_names(key in key_like()) {
        if is_valid_key(&key) {
            prop_assert!(key.is_ascii() && !key.contains('=') && !key.contains('\0'));
            prop_assert!(has_managed_prefix(&key));
            prop_assert_eq!(&key.to_ascii_uppercase(), &key);
            // Lower-casing any one letter makes it invalid.
            for (i, c) in key.char_indices().filter(|(_, c)| c.is_ascii_uppercase()) {
                let mut lowered = key.clone();
                lowered.replace_range(i..i + 1, &c.to_ascii_lowercase().to_string());
                prop_assert!(!is_valid_key(&lowered), "{:?}", lowered);
            }
        }
    }

    #[test]
    fn reserved_means_exactly_one_of_the_builtins(key in prop_oneof![
        key_like(),
        (proptest::sample::select(RESERVED_KEYS.to_vec()), any::<u64>()).prop_map(|(k, mask)| recase(k, mask)),
    ]) {
        prop_assert_eq!(is_reserved(&key), RESERVED_KEYS.contains(&key.as_str()));
        if is_reserved(&key) {
            prop_assert!(is_valid_key(&key));
        }
    }

    #[test]
    fn managed_prefix_ignores_ascii_case_only(key in key_like(), mask in any::<u64>()) {
        prop_assert_eq!(has_managed_prefix(&key), key.to_ascii_uppercase().starts_with("DSH_"), "{:?}", key);
        prop_assert_eq!(has_managed_prefix(&recase(&key, mask)), has_managed_prefix(&key));
    }

    #[test]
    fn the_registry_accepts_exactly_the_valid_unreserved_keys(key in prop_oneof![
        key_like(),
        proptest::sample::select(RESERVED_KEYS.to_vec()).prop_map(String::from),
    ]) {
        let registry: Registry<()> = Registry::new("/h".into(), None);
        let result = registry.register(Declaration {
            name: "c".into(),
            variables: vec![(key.clone(), Some("described".into()))],
            command_directories: vec![],
            resolver: (),
        });
        let expected = if !is_valid_key(&key) {
            Some("ERR_SHELL_ENV_INVALID_KEY")
        } else if is_reserved(&key) {
            Some("ERR_SHELL_ENV_RESERVED_KEY")
        } else {
            None
        };
        prop_assert_eq!(result.as_ref().err().map(|e| e.code()), expected, "{:?}", key);
        prop_assert_eq!(registry.list().len(), usize::from(expected.is_none()));
    }
}
