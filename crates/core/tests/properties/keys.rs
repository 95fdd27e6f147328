//! The key rule near its boundaries: exactly `DSH_[A-Z][A-Z0-9_]*`, safe
//! managed names, the reserved built-ins, the managed prefix in any ASCII
//! case, and the registry accepting exactly the valid, unreserved keys.

use dsh_shell_env_core::keys::RESERVED_KEYS;
use proptest::prelude::*;

use crate::oracles::{
    check_key_rule, check_managed_prefix, check_registry_accepts, check_reserved, check_valid_key_is_safe, recase,
};

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
        check_key_rule(&key);
    }

    #[test]
    fn valid_keys_are_safe_managed_names(key in key_like()) {
        check_valid_key_is_safe(&key);
    }

    #[test]
    fn reserved_means_exactly_one_of_the_builtins(key in prop_oneof![
        key_like(),
        (proptest::sample::select(RESERVED_KEYS.to_vec()), any::<u64>()).prop_map(|(k, mask)| recase(k, mask)),
    ]) {
        check_reserved(&key);
    }

    #[test]
    fn managed_prefix_ignores_ascii_case_only(key in key_like(), mask in any::<u64>()) {
        check_managed_prefix(&key, mask);
    }

    #[test]
    fn the_registry_accepts_exactly_the_valid_unreserved_keys(key in prop_oneof![
        key_like(),
        proptest::sample::select(RESERVED_KEYS.to_vec()).prop_map(String::from),
    ]) {
        check_registry_accepts(&key);
    }
}
