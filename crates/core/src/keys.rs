//! The `DSH_*` namespace: the prefix, the reserved built-in keys and the rule a
//! contributed key must follow.

/// Every managed variable starts with this prefix.
pub const DSH_ENV_PREFIX: &str = "DSH_";

/// The absolute Harness home.
pub const DSH_HOME: &str = "DSH_HOME";
/// Always `"1"`: marks a shell child managed by the harness.
pub const DSH_SHELL: &str = "DSH_SHELL";
/// The calling agent's session id, for agent calls only.
pub const DSH_SESSION_ID: &str = "DSH_SESSION_ID";
/// The profile name, when the registry was given a profile.
pub const DSH_PROFILE: &str = "DSH_PROFILE";
/// The profile's absolute directory, when the registry was given a profile.
pub const DSH_PROFILE_DIR: &str = "DSH_PROFILE_DIR";

/// The built-in keys only the registry itself may set.
pub const RESERVED_KEYS: [&str; 5] = [DSH_HOME, DSH_SHELL, DSH_SESSION_ID, DSH_PROFILE, DSH_PROFILE_DIR];

/// The one non-`DSH_` key a managed snapshot may carry: command directories
/// prepended to the inherited search path.
pub const PATH_KEY: &str = "PATH";

/// Whether `key` is a well-formed managed key: `DSH_` followed by an upper-case
/// ASCII letter and then upper-case letters, digits or underscores.
///
/// Everything else (lower case, non-ASCII, `=`, NUL, a bare prefix) is rejected,
/// so a valid key can always be written into an `execve` environment block.
pub fn is_valid_key(key: &str) -> bool {
    let Some(rest) = key.strip_prefix(DSH_ENV_PREFIX) else {
        return false;
    };
    let mut chars = rest.bytes();
    matches!(chars.next(), Some(b'A'..=b'Z')) && chars.all(|c| matches!(c, b'A'..=b'Z' | b'0'..=b'9' | b'_'))
}

/// Whether `key` is one of the registry's built-ins.
pub fn is_reserved(key: &str) -> bool {
    RESERVED_KEYS.contains(&key)
}

/// Whether an environment name falls in the managed namespace, the way the
/// scrub sees it: any spelling whose upper-cased form starts with `DSH_`.
pub fn has_managed_prefix(name: &str) -> bool {
    name.len() >= DSH_ENV_PREFIX.len()
        && name.as_bytes()[..DSH_ENV_PREFIX.len()].eq_ignore_ascii_case(DSH_ENV_PREFIX.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn accepts_upper_case_keys() {
        for key in ["DSH_A", "DSH_REGION", "DSH_A1_B2", "DSH_X_", "DSH_SESSION_ID"] {
            assert!(is_valid_key(key), "{key}");
        }
    }

    #[test]
    fn rejects_everything_else() {
        for key in [
            "",
            "DSH_",
            "DSH",
            "dsh_region",
            "DSH_region",
            "DSH_1A",
            "DSH__A",
            "DSH_A-B",
            "DSH_A=B",
            "DSH_A\0",
            "DSH_É",
            "REGION",
            " DSH_A",
            "DSH_A ",
        ] {
            assert!(!is_valid_key(key), "{key:?}");
        }
    }

    #[test]
    fn reserved_keys_are_valid_keys() {
        for key in RESERVED_KEYS {
            assert!(is_valid_key(key) && is_reserved(key));
        }
        assert!(!is_reserved("DSH_REGION"));
    }

    #[test]
    fn managed_prefix_ignores_case() {
        assert!(has_managed_prefix("DSH_X"));
        assert!(has_managed_prefix("dsh_x"));
        assert!(has_managed_prefix("Dsh_"));
        assert!(!has_managed_prefix("DSH"));
        assert!(!has_managed_prefix("XDSH_A"));
        assert!(!has_managed_prefix("DSHA"));
    }

    proptest! {
        #[test]
        fn valid_keys_match_the_documented_pattern(key in "\\PC{0,12}") {
            let expected = key.len() > 4
                && key.starts_with("DSH_")
                && key.as_bytes()[4].is_ascii_uppercase()
                && key[4..].bytes().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
            prop_assert_eq!(is_valid_key(&key), expected);
        }

        #[test]
        fn generated_keys_are_accepted(suffix in "[A-Z][A-Z0-9_]{0,20}") {
            let key = format!("DSH_{suffix}");
            prop_assert!(is_valid_key(&key));
            prop_assert!(has_managed_prefix(&key.to_lowercase()));
        }
    }
}
