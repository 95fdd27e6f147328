//! The environment pipeline's invariants, under either platform's rules: the
//! shape of the result, the managed namespace, the last write winning
//! (managed last), removals, and determinism.

use std::collections::{BTreeMap, BTreeSet};

use dsh_shell_env_core::environment::{
    build_environment, Environment, EnvironmentSpec, Platform, RemovalReason, Source,
};
use dsh_shell_env_core::keys::has_managed_prefix;

use super::upper;

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

/// The form `platform` compares names in: [`upper`] when case-insensitive, the name itself otherwise.
pub fn fold(platform: &Platform, name: &str) -> String {
    if platform.case_insensitive {
        upper(name)
    } else {
        name.to_owned()
    }
}

/// Every write (set or unset) the spec makes to `name`, compared the platform's
/// way, in the order the pipeline applies them.
pub fn writes<'a>(platform: &Platform, spec: &'a EnvironmentSpec, name: &str) -> Vec<(Source, Option<&'a str>)> {
    let same = |k: &str| platform.same_name(k, name);
    let terminal =
        spec.terminal.iter().flatten().filter(|(k, _)| same(k)).map(|(_, v)| (Source::Terminal, Some(v.as_str())));
    let explicit = spec.explicit.iter().filter(|(k, _)| same(k)).map(|(_, v)| (Source::Explicit, v.as_deref()));
    let managed = spec.managed.iter().filter(|(k, _)| same(k)).map(|(_, v)| (Source::Managed, Some(v.as_str())));
    terminal.chain(explicit).chain(managed).collect()
}

/// Checks the result's shape: sorted, one entry per name the platform's way,
/// `sources` naming exactly the variables, every entry able to reach `execve`.
pub fn check_shape(platform: &Platform, env: &Environment) {
    assert!(env.vars.windows(2).all(|w| w[0].0 < w[1].0), "not sorted: {:?}", env.vars);
    assert!(env.sources.keys().eq(env.vars.iter().map(|(k, _)| k)), "{:?} vs {:?}", env.sources, env.vars);
    // Both the oracle's comparison form and the platform's own must see distinct names.
    let folded: BTreeSet<String> = env.vars.iter().map(|(k, _)| fold(platform, k)).collect();
    assert_eq!(folded.len(), env.vars.len(), "two spellings of one name: {:?}", env.vars);
    for (i, (name, value)) in env.vars.iter().enumerate() {
        assert!(can_reach_execve(name, value), "{name:?} = {value:?} cannot reach execve");
        assert!(env.vars[i + 1..].iter().all(|(other, _)| !platform.same_name(name, other)), "{name:?} twice");
    }
}

/// Checks the managed namespace: no inherited managed-prefix name survives,
/// each such parent name is reported as `ManagedPrefix`, and it is present
/// afterwards only when the caller or the snapshot set it again.
pub fn check_managed_namespace(
    platform: &Platform,
    parent: &[(String, String)],
    spec: &EnvironmentSpec,
    env: &Environment,
) {
    for (name, _) in &env.vars {
        if has_managed_prefix(&fold(platform, name)) {
            assert_ne!(env.sources[name], Source::Inherited, "{name:?} survived from the parent");
        }
    }
    // Every such parent name is reported, by the first step.
    for (name, value) in parent {
        if can_reach_execve(name, value) && has_managed_prefix(&fold(platform, name)) {
            let removal = env.removed.iter().find(|r| platform.same_name(&r.key, name));
            assert_eq!(removal.map(|r| r.reason), Some(RemovalReason::ManagedPrefix), "{name:?}");
            // Present afterwards only when the caller or the snapshot set it again.
            if let Some(source) = env.source(name) {
                let writes = writes(platform, spec, name);
                assert!(
                    writes.iter().any(|(s, v)| *s == source && v.is_some()),
                    "{name:?} from {source:?}: {writes:?}"
                );
            }
        }
    }
}

/// Checks that the last managed entry for each key always wins.
pub fn check_last_managed_wins(spec: &EnvironmentSpec, env: &Environment) {
    // Managed keys are upper case (`DSH_*` or `PATH`), so exact spelling is the platform's comparison too.
    let mut last: BTreeMap<&str, &str> = BTreeMap::new();
    for (key, value) in &spec.managed {
        last.insert(key, value);
    }
    for (key, value) in last {
        assert_eq!(env.get(key), Some(value), "{key}");
        assert_eq!(env.source(key), Some(Source::Managed), "{key}");
    }
}

/// Checks that every name the spec writes (terminal, then explicit, then
/// managed) holds its last write, except a managed-namespace name the
/// snapshot does not set, which is absent.
pub fn check_last_writes(platform: &Platform, spec: &EnvironmentSpec, env: &Environment) {
    let names = spec.terminal.iter().flatten().map(|(k, _)| k).chain(spec.explicit.iter().map(|(k, _)| k));
    for name in names.chain(spec.managed.iter().map(|(k, _)| k)) {
        let (source, value) = *writes(platform, spec, name).last().expect("the spec writes it");
        let dropped = source != Source::Managed && unmanaged(name, &spec.managed, |a, b| platform.same_name(a, b));
        match value {
            Some(_) if dropped => assert_eq!(env.get(name), None, "{name:?} is not the snapshot's"),
            Some(value) => {
                assert_eq!(env.get(name), Some(value), "{name:?}");
                assert_eq!(env.source(name), Some(source), "{name:?}");
            }
            None => assert_eq!(env.get(name), None, "{name:?}"),
        }
    }
}

/// Checks removals: each name once, in pipeline order (by comparison form
/// within a scrub step), absent afterwards unless a later layer set it.
pub fn check_removals(platform: &Platform, spec: &EnvironmentSpec, env: &Environment) {
    let mut seen = BTreeSet::new();
    for (i, removal) in env.removed.iter().enumerate() {
        assert!(seen.insert(fold(platform, &removal.key)), "{:?} reported twice", removal.key);
        assert!(env.removed[i + 1..].iter().all(|r| !platform.same_name(&r.key, &removal.key)), "{removal:?} twice");
        let Some(source) = env.source(&removal.key) else { continue };
        assert_ne!(source, Source::Inherited, "{removal:?}");
        if removal.reason == RemovalReason::ExplicitUnset {
            assert_ne!(source, Source::Terminal, "{removal:?}");
        }
        let last = writes(platform, spec, &removal.key).last().map(|(s, v)| (*s, v.is_some()));
        assert_eq!(last, Some((source, true)), "{removal:?} came back");
    }
    // Pipeline order: step by step, and by comparison form within a scrub step.
    assert!(env.removed.windows(2).all(|w| rank(w[0].reason) <= rank(w[1].reason)), "{:?}", env.removed);
    for w in env.removed.windows(2) {
        if w[0].reason == w[1].reason && w[0].reason != RemovalReason::ExplicitUnset {
            assert!(fold(platform, &w[0].key) < fold(platform, &w[1].key), "{:?}", env.removed);
        }
    }
}

/// Checks that `parent` (the original one reordered or repeated) builds `env` again.
pub fn check_rebuilds(platform: &Platform, parent: Vec<(String, String)>, spec: &EnvironmentSpec, env: &Environment) {
    let again = build_environment(platform, parent.clone(), spec).expect("built once, builds again");
    assert_eq!(&again, env, "from the parent {parent:?}");
}

/// Checks determinism: the same parent, and the parent reversed and then
/// repeated, build the same environment.
pub fn check_deterministic(
    platform: &Platform,
    parent: &[(String, String)],
    spec: &EnvironmentSpec,
    env: &Environment,
) {
    check_rebuilds(platform, parent.to_vec(), spec, env);
    check_rebuilds(platform, parent.iter().rev().chain(parent).cloned().collect(), spec, env);
}
