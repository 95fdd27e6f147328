//! `build_environment` on arbitrary parents and specs, under both platforms'
//! rules, asserting the pipeline's invariants so the fuzzer reports any
//! violation as a crash:
//! - a spec is either built or refused as an invalid spec, never a panic, and
//!   a clean spec is always built;
//! - the result is sorted, one entry per name (ignoring case on Windows), and
//!   every entry can reach `execve`; `sources` names exactly the result;
//! - no inherited name in the managed namespace survives, and each is reported;
//! - the last managed entry for a key always wins; every name the spec writes
//!   holds its last write, except a managed-namespace name the snapshot does
//!   not set, which is absent;
//! - a removed name is reported once, in pipeline order, and is absent unless
//!   a later layer sets it;
//! - the result does not depend on the parent's order or on repeats.
#![no_main]

use arbitrary::Arbitrary;
use dsh_shell_env_core::environment::{build_environment, EnvironmentSpec, Inherit, Platform, ScrubPolicy};
use dsh_shell_env_core::keys::{is_valid_key, PATH_KEY};
use dsh_shell_env_fuzz::{
    check_deterministic, check_last_managed_wins, check_last_writes, check_managed_namespace, check_removals,
    check_shape, Glob, ManagedKey, Name,
};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Input {
    windows: bool,
    parent: Vec<(Name, String)>,
    inherit: u8,
    /// Drop credentials by name and by value (the default).
    default_exclude: bool,
    /// The caller's globs, on top of the credentials.
    exclude: Vec<Glob>,
    include_only: Option<Vec<Glob>>,
    hardening: bool,
    terminal: Option<Vec<(Name, String)>>,
    explicit: Vec<(Name, Option<String>)>,
    managed: Vec<(ManagedKey, String)>,
}

fuzz_target!(|input: Input| {
    let platform = if input.windows { Platform::windows() } else { Platform::posix() };
    let parent: Vec<(String, String)> = input.parent.into_iter().map(|(n, v)| (n.0, v)).collect();
    let globs = |g: Vec<Glob>| g.into_iter().map(|g| g.0).collect::<Vec<_>>();
    let spec = EnvironmentSpec {
        scrub: ScrubPolicy {
            inherit: [Inherit::All, Inherit::Core, Inherit::None][usize::from(input.inherit % 3)],
            default_exclude: input.default_exclude,
            exclude: globs(input.exclude),
            include_only: input.include_only.map(globs),
            hardening: input.hardening,
        },
        terminal: input.terminal.map(|t| t.into_iter().map(|(n, v)| (n.0, v)).collect()),
        explicit: input.explicit.into_iter().map(|(n, v)| (n.0, v)).collect(),
        managed: input.managed.into_iter().map(|(k, v)| (k.0, v)).collect(),
    };

    let caller_name = |name: &str| !name.is_empty() && !name.contains('=') && !name.contains('\0');
    let clean_globs = |g: &[String]| g.iter().all(|g| !g.is_empty() && !g.contains('\0'));
    let clean = clean_globs(&spec.scrub.exclude)
        && spec.scrub.include_only.as_deref().is_none_or(clean_globs)
        && spec.terminal.iter().flatten().all(|(n, v)| caller_name(n) && !v.contains('\0'))
        && spec.explicit.iter().all(|(n, v)| caller_name(n) && v.as_ref().is_none_or(|v| !v.contains('\0')))
        && spec.managed.iter().all(|(k, v)| (is_valid_key(k) || k == PATH_KEY) && !v.contains('\0'));

    let env = match build_environment(&platform, parent.clone(), &spec) {
        Ok(env) => env,
        Err(error) => {
            assert_eq!(error.code(), "ERR_SHELL_EXEC_INVALID_SPEC", "{error}");
            assert!(!clean, "a clean spec was refused: {error}");
            return;
        }
    };

    check_shape(&platform, &env);
    check_managed_namespace(&platform, &parent, &spec, &env);
    // Layers: managed is last of all, and each name the spec writes holds its last write.
    check_last_managed_wins(&spec, &env);
    check_last_writes(&platform, &spec, &env);
    check_removals(&platform, &spec, &env);
    check_deterministic(&platform, &parent, &spec, &env);
});
