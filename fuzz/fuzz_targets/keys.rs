//! The key rule: `DSH_[A-Z][A-Z0-9_]*` exactly, reserved keys, the
//! case-insensitive managed prefix, and what the registry accepts.
#![no_main]

use dsh_shell_env_fuzz::{
    check_key_rule, check_managed_prefix, check_registry_accepts, check_reserved, check_valid_key_is_safe, Name,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (Name, String, u64)| {
    let (Name(name), raw, mask) = input;
    for key in [name, raw] {
        check_key_rule(&key);
        check_valid_key_is_safe(&key);
        check_reserved(&key);
        // The scrub's prefix test ignores ASCII case, and only ASCII case.
        check_managed_prefix(&key, mask);
        check_registry_accepts(&key);
    }
});
