//! The key rule: `DSH_[A-Z][A-Z0-9_]*` exactly, reserved keys, the
//! case-insensitive managed prefix, and what the registry accepts.
#![no_main]

use dsh_shell_env_core::keys::{has_managed_prefix, is_reserved, is_valid_key, RESERVED_KEYS};
use dsh_shell_env_core::registry::{Declaration, Registry};
use dsh_shell_env_fuzz::{matches_key_pattern, recase, Name};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (Name, String, u64)| {
    let (Name(name), raw, mask) = input;
    for key in [name, raw] {
        let valid = is_valid_key(&key);
        assert_eq!(valid, matches_key_pattern(&key), "{key:?}");
        if valid {
            assert!(key.is_ascii() && !key.contains('=') && !key.contains('\0'), "{key:?}");
            assert!(has_managed_prefix(&key), "{key:?}");
        }
        assert_eq!(is_reserved(&key), RESERVED_KEYS.contains(&key.as_str()), "{key:?}");
        assert!(!is_reserved(&key) || valid, "{key:?}");

        // The scrub's prefix test ignores ASCII case, and only ASCII case.
        let prefixed = has_managed_prefix(&key);
        assert_eq!(prefixed, key.to_ascii_uppercase().starts_with("DSH_"), "{key:?}");
        assert_eq!(has_managed_prefix(&recase(&key, mask)), prefixed, "{key:?}");

        // The registry accepts exactly the valid, unreserved keys.
        let registry: Registry<()> = Registry::new("/h".into(), None);
        let result = registry.register(Declaration {
            name: "c".into(),
            variables: vec![(key.clone(), Some("described".into()))],
            command_directories: vec![],
            resolver: (),
        });
        let expected = if !valid {
            Some("ERR_SHELL_ENV_INVALID_KEY")
        } else if is_reserved(&key) {
            Some("ERR_SHELL_ENV_RESERVED_KEY")
        } else {
            None
        };
        assert_eq!(result.as_ref().err().map(|e| e.code()), expected, "{key:?}");
        assert_eq!(registry.list().len(), usize::from(expected.is_none()));
    }
});
