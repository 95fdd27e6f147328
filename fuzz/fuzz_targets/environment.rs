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
use dsh_shell_env_core::environment::{
    build_environment, Environment, EnvironmentSpec, Inherit, Platform, RemovalReason, ScrubPolicy, Source,
};
use dsh_shell_env_core::keys::{has_managed_prefix, is_valid_key, PATH_KEY};
use dsh_shell_env_fuzz::{can_reach_execve, rank, unmanaged, upper, Glob, ManagedKey, Name};
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
    let fold = |name: &str| if platform.case_insensitive { upper(name) } else { name.to_owned() };
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

    // Shape.
    assert!(env.vars.windows(2).all(|w| w[0].0 < w[1].0), "not sorted: {:?}", env.vars);
    assert!(env.sources.keys().eq(env.vars.iter().map(|(k, _)| k)), "{:?} vs {:?}", env.sources, env.vars);
    for (i, (name, value)) in env.vars.iter().enumerate() {
        assert!(can_reach_execve(name, value), "{name:?}");
        assert!(env.vars[i + 1..].iter().all(|(other, _)| !platform.same_name(name, other)), "{name:?} twice");
    }

    // The managed namespace: nothing inherited survives, every such parent name is reported.
    for (name, _) in &env.vars {
        if has_managed_prefix(&fold(name)) {
            assert_ne!(env.sources[name], Source::Inherited, "{name:?} survived from the parent");
        }
    }
    for (name, value) in &parent {
        if can_reach_execve(name, value) && has_managed_prefix(&fold(name)) {
            let removal = env.removed.iter().find(|r| platform.same_name(&r.key, name));
            assert_eq!(removal.map(|r| r.reason), Some(RemovalReason::ManagedPrefix), "{name:?}");
        }
    }

    // Layers: each name the spec writes holds its last write; managed is last of all.
    let writes = |name: &str| -> Vec<(Source, Option<&str>)> {
        let same = |k: &str| platform.same_name(k, name);
        let terminal =
            spec.terminal.iter().flatten().filter(|(k, _)| same(k)).map(|(_, v)| (Source::Terminal, Some(v.as_str())));
        let explicit = spec.explicit.iter().filter(|(k, _)| same(k)).map(|(_, v)| (Source::Explicit, v.as_deref()));
        let managed = spec.managed.iter().filter(|(k, _)| same(k)).map(|(_, v)| (Source::Managed, Some(v.as_str())));
        terminal.chain(explicit).chain(managed).collect()
    };
    let written = spec.terminal.iter().flatten().map(|(k, _)| k).chain(spec.explicit.iter().map(|(k, _)| k));
    for name in written.chain(spec.managed.iter().map(|(k, _)| k)) {
        match *writes(name).last().unwrap() {
            (source, Some(_)) if source != Source::Managed && unmanaged(name, &spec.managed, |a, b| platform.same_name(a, b)) => {
                assert_eq!(env.get(name), None, "{name:?} is not the snapshot's");
            }
            (source, Some(value)) => {
                assert_eq!(env.get(name), Some(value), "{name:?}");
                assert_eq!(env.source(name), Some(source), "{name:?}");
            }
            (_, None) => assert_eq!(env.get(name), None, "{name:?}"),
        }
    }
    if let Some((key, value)) = spec.managed.last() {
        assert_eq!((env.get(key), env.source(key)), (Some(value.as_str()), Some(Source::Managed)));
    }

    // Removals: once each, in pipeline order, absent unless a later layer set them.
    for (i, removal) in env.removed.iter().enumerate() {
        assert!(env.removed[i + 1..].iter().all(|r| !platform.same_name(&r.key, &removal.key)), "{removal:?} twice");
        if let Some(source) = env.source(&removal.key) {
            assert_ne!(source, Source::Inherited, "{removal:?}");
            let last = writes(&removal.key).last().map(|(s, v)| (*s, v.is_some()));
            assert_eq!(last, Some((source, true)), "{removal:?} came back");
        }
    }
    assert!(env.removed.windows(2).all(|w| rank(w[0].reason) <= rank(w[1].reason)), "{:?}", env.removed);

    // Determinism: a reversed and repeated parent gives the same environment.
    let again: Vec<(String, String)> = parent.iter().rev().chain(parent.iter()).cloned().collect();
    let other: Environment = build_environment(&platform, again, &spec).expect("built once, builds again");
    assert_eq!(env, other);
});
