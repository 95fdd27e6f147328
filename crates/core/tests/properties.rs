//! Property tests over the core's public API, complementing the unit-level
//! properties next to each module: the key rule near its boundaries, PATH
//! assembly in contributor-name order, the environment pipeline against a
//! small reference model and its stated invariants (on both platforms' rules),
//! registry operation sequences against a model, and home resolution.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use dsh_shell_env_core::credentials::{find, Finding};
use dsh_shell_env_core::environment::{
    build_environment, Environment, EnvironmentSpec, Inherit, Platform, RemovalReason, ScrubPolicy, Source,
    HARDENING_PATTERNS, HARDENING_VALUE_PREFIX,
};
use dsh_shell_env_core::home::{reconcile_dsh_home, resolve_dsh_home, HomeContext};
use dsh_shell_env_core::keys::{self, has_managed_prefix, is_reserved, is_valid_key, RESERVED_KEYS};
use dsh_shell_env_core::registry::{Declaration, Profile, Registration, Registry, PATH_DELIMITER};
use dsh_shell_env_core::snapshot::{command_path, Collection, ResolvedValue, Snapshot};
use proptest::prelude::*;
use proptest::sample::Index;

mod oracles;
use oracles::{can_reach_execve, matches_key_pattern, rank, recase, unmanaged, upper};

// ---------------------------------------------------------------------------
// Keys.

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

// ---------------------------------------------------------------------------
// PATH assembly through a collection.

type Values = Vec<(String, ResolvedValue)>;

fn collect(registry: &Registry<Values>, session: Option<&str>, inherited: Option<&str>) -> Snapshot {
    let mut collection = Collection::begin(registry, session.map(|s| ResolvedValue::String(s.into()))).unwrap();
    for contributor in collection.contributors().to_vec() {
        collection.accept(&contributor, contributor.resolver().clone()).unwrap();
    }
    collection.finish(inherited)
}

/// The root absolute fixtures hang from: `/`, or a drive on Windows.
const ROOT: &str = if cfg!(windows) { r"C:\" } else { "/" };

/// `rest` (`/`-separated) below [`ROOT`], in the platform's spelling.
fn absolute(rest: &str) -> String {
    format!("{ROOT}{}", rest.replace('/', std::path::MAIN_SEPARATOR_STR))
}

fn directory() -> impl Strategy<Value = String> {
    // Absolute, free of the delimiters and NUL; a small alphabet so lists overlap.
    prop_oneof!["[ab]{0,2}", "[a-z0-9 ._é-]{1,6}(/[a-z]{1,3})?"].prop_map(|rest| absolute(&rest))
}

proptest! {
    #[test]
    fn path_follows_contributor_names_whatever_the_registration_order(
        (contributors, registration_order) in proptest::collection::btree_map("[a-zA-Z0-9é_-][a-zA-Z0-9 é_-]{0,4}", proptest::collection::vec(directory(), 0..4), 1..6)
            .prop_flat_map(|map| { let entries: Vec<_> = map.clone().into_iter().collect(); (Just(map), Just(entries).prop_shuffle()) }),
        inherited in proptest::option::of(prop_oneof![Just(String::new()), "[/a-z:;]{1,12}"]),
        session in proptest::option::of("[a-z0-9-]{0,8}"),
    ) {
        // Register in a scrambled order: the assembly must only depend on names.
        let registry: Registry<Values> = Registry::new("/h".into(), None);
        for (name, dirs) in registration_order {
            registry.register(Declaration { name, variables: vec![], command_directories: dirs, resolver: vec![] }).unwrap();
        }

        let mut expected: Vec<&str> = Vec::new();
        for dir in contributors.values().flatten() {
            if !expected.contains(&dir.as_str()) {
                expected.push(dir);
            }
        }
        let snapshot = collect(&registry, session.as_deref(), inherited.as_deref());
        let path = snapshot.get(keys::PATH_KEY);
        prop_assert_eq!(path.cloned(), command_path(&registry.contributors(), inherited.as_deref()));
        if expected.is_empty() {
            prop_assert!(path.is_none());
            return Ok(());
        }
        let path = path.unwrap();
        let segments: Vec<&str> = path.split(PATH_DELIMITER).collect();
        // First the command directories, each once, in order ...
        prop_assert_eq!(&segments[..expected.len()], &expected[..]);
        // ... then the inherited path verbatim, or nothing (no dangling delimiter).
        let tail = &segments[expected.len()..];
        match inherited.as_deref().filter(|i| !i.is_empty()) {
            Some(inherited) => prop_assert_eq!(tail.join(&PATH_DELIMITER.to_string()), inherited),
            None => prop_assert!(tail.is_empty(), "{:?}", path),
        }
        // An empty inherited path is the same as none.
        if inherited.as_deref() == Some("") {
            let without = collect(&registry, session.as_deref(), None);
            prop_assert_eq!(Some(path), without.get(keys::PATH_KEY));
        }
    }

    #[test]
    fn unregistering_removes_only_directories_no_one_else_declares(
        contributors in proptest::collection::btree_map("[a-d]", proptest::collection::vec(directory(), 1..3), 2..4),
        victim in any::<Index>(),
    ) {
        let registry: Registry<Values> = Registry::new("/h".into(), None);
        let registrations: Vec<Registration> = contributors
            .iter()
            .map(|(name, dirs)| {
                registry
                    .register(Declaration { name: name.clone(), variables: vec![], command_directories: dirs.clone(), resolver: vec![] })
                    .unwrap()
            })
            .collect();
        let victim = victim.get(&registrations);
        prop_assert!(registry.unregister(victim));
        let path = collect(&registry, None, None).remove(keys::PATH_KEY).unwrap_or_default();
        let segments: BTreeSet<&str> = path.split(PATH_DELIMITER).filter(|s| !s.is_empty()).collect();
        let remaining: BTreeSet<&str> = contributors
            .iter()
            .filter(|(name, _)| name.as_str() != victim.name())
            .flat_map(|(_, dirs)| dirs.iter().map(String::as_str))
            .collect();
        prop_assert_eq!(segments, remaining);
    }

    #[test]
    fn a_finished_snapshot_is_always_a_valid_managed_layer(
        contributors in proptest::collection::btree_map(
            "[a-c]{1,2}",
            (proptest::collection::btree_map("DSH_[A-F][A-Z0-9_]{0,3}", "[ -~é]{0,6}", 0..3), proptest::collection::vec(directory(), 0..2)),
            0..4,
        ),
        session in proptest::option::of("[ -~é]{0,8}"),
        profile in any::<bool>(),
        platform in prop_oneof![Just(Platform::posix()), Just(Platform::windows())],
        parent in proptest::collection::vec((parent_name(), value()), 0..8),
    ) {
        let profile = profile.then(|| Profile::new("work", absolute("p/work")).unwrap());
        let registry: Registry<Values> = Registry::new("/h".into(), profile);
        let mut declared = BTreeSet::new();
        for (name, (values, dirs)) in &contributors {
            // Keys already owned elsewhere are dropped so every registration succeeds.
            let values: Vec<(String, String)> = values
                .iter()
                .filter(|&(key, _)| !is_reserved(key) && declared.insert(key.clone()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            registry
                .register(Declaration {
                    name: name.clone(),
                    variables: values.iter().map(|(k, _)| (k.clone(), Some("d".into()))).collect(),
                    command_directories: dirs.clone(),
                    resolver: values.into_iter().map(|(k, v)| (k, ResolvedValue::String(v))).collect(),
                })
                .unwrap();
        }
        let snapshot = collect(&registry, session.as_deref(), Some("/usr/bin"));
        for key in snapshot.keys() {
            prop_assert!(is_valid_key(key) || key == keys::PATH_KEY, "{:?}", key);
        }
        // Fed to the pipeline as its managed layer, every entry lands as given.
        let spec = EnvironmentSpec { managed: snapshot.clone().into_iter().collect(), ..EnvironmentSpec::default() };
        let env = build_environment(&platform, parent, &spec).unwrap();
        for (key, value) in &snapshot {
            prop_assert_eq!(env.get(key), Some(value.as_str()));
            prop_assert_eq!(env.source(key), Some(Source::Managed));
        }
    }
}

// ---------------------------------------------------------------------------
// The environment pipeline.

/// Names a caller may use: ASCII in several cases, the managed namespace in
/// several cases (including `ſ`, which upper-cases to `S`), names that matter
/// to a step (PATH, core, hardening, default exclude), and non-ASCII letters
/// whose case mapping is not one-to-one.
fn caller_name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-cA-C_]{1,3}",
        3 => "(dsh|DSH|Dsh|dSh|d\u{17f}h|D\u{17f}H)_[a-cA-C_]{0,2}",
        3 => "(PATH|Path|path|pAtH|TERM|term|HOME|home|LC_ALL|lc_all|TEMP|SystemRoot|LD_PRELOAD|ld_preload|BASH_FUNC_f%%|API_KEY|api_key|Github_Token)",
        1 => "[ßſéÉǅǆǄa]{1,3}",
    ]
}

/// Parent names: what a caller may use, the `=C:` form Windows keeps, and
/// entries that can never reach `execve` (skipped silently).
fn parent_name() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => caller_name(),
        1 => "=[A-C]:",
        1 => "(|A=B|=A=|A\\x00B|\\x00)",
    ]
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z() ]{0,4}",
        1 => Just("() { :; }".to_owned()),
        1 => "[a-z]\\x00",
        1 => Just("postgres://app:pw@db/app".to_owned()),
        1 => Just("ghp_0123456789abcdefghijABCDEFGHIJ".to_owned()),
    ]
}

fn caller_value() -> impl Strategy<Value = String> {
    "[a-z() ;:/]{0,4}"
}

fn glob() -> impl Strategy<Value = String> {
    prop_oneof!["[a-cA-C_*?]{1,3}", "(\\*KEY\\*|\\*token\\*|path|PATH|dsh_\\*|\u{17f}\\*|LC_\\*|\\*)"]
}

/// Managed entries: valid keys (with repeats, so a later entry must replace an
/// earlier one) and possibly `PATH`, in any order.
fn managed() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec(
        (prop_oneof![3 => "DSH_[A-C][A-C_]{0,1}", 1 => Just("PATH".to_owned())], caller_value()),
        0..5,
    )
}

fn spec() -> impl Strategy<Value = EnvironmentSpec> {
    let inherit = prop_oneof![Just(Inherit::All), Just(Inherit::Core), Just(Inherit::None)];
    let exclude = proptest::collection::vec(glob(), 0..3);
    let include_only = proptest::option::of(proptest::collection::vec(glob(), 0..3));
    let terminal = proptest::option::of(proptest::collection::vec((caller_name(), caller_value()), 0..3));
    let explicit = proptest::collection::vec((caller_name(), proptest::option::of(caller_value())), 0..6);
    let flags = (any::<bool>(), any::<bool>());
    (inherit, exclude, include_only, flags, terminal, explicit, managed()).prop_map(
        |(inherit, exclude, include_only, (default_exclude, hardening), terminal, explicit, managed)| EnvironmentSpec {
            scrub: ScrubPolicy { inherit, default_exclude, exclude, include_only, hardening },
            terminal,
            explicit,
            managed,
        },
    )
}

fn platform() -> impl Strategy<Value = Platform> {
    prop_oneof![Just(Platform::posix()), Just(Platform::windows())]
}

fn parent() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec((parent_name(), value()), 0..16)
}

fn fold(platform: &Platform, name: &str) -> String {
    if platform.case_insensitive {
        upper(name)
    } else {
        name.to_owned()
    }
}

/// The obvious recursive glob matcher.
fn glob_match(pattern: &[char], name: &[char]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some(('*', rest)) => (0..=name.len()).any(|skip| glob_match(rest, &name[skip..])),
        Some((&c, rest)) => name.first().is_some_and(|&n| c == '?' || c == n) && glob_match(rest, &name[1..]),
    }
}

fn any_glob(patterns: &[impl AsRef<str>], name: &str) -> bool {
    let name: Vec<char> = upper(name).chars().collect();
    patterns.iter().any(|p| glob_match(&upper(p.as_ref()).chars().collect::<Vec<_>>(), &name))
}

/// What the reference model predicts.
#[derive(Debug, PartialEq)]
struct Model {
    vars: Vec<(String, String)>,
    sources: BTreeMap<String, Source>,
    /// (comparison form, reason rank), one per removed name.
    removed: BTreeSet<(String, u8)>,
}

/// A scrub step of the reference model: its reason and which (name, value) it drops.
type Step<'a> = (RemovalReason, Box<dyn Fn(&str, &str) -> bool + 'a>);

/// The pipeline as the module documentation states it, written as plainly as
/// possible: a list of variables searched linearly with the platform's name
/// comparison.
fn reference(platform: &Platform, parent: &[(String, String)], spec: &EnvironmentSpec) -> Model {
    let mut entries: Vec<&(String, String)> = parent.iter().filter(|(n, v)| can_reach_execve(n, v)).collect();
    entries.sort();
    let mut vars: Vec<(String, String, Source)> = Vec::new();
    for (name, value) in entries {
        if !vars.iter().any(|(n, _, _)| fold(platform, n) == fold(platform, name)) {
            vars.push((name.clone(), value.clone(), Source::Inherited));
        }
    }
    let mut removed: Vec<(String, RemovalReason)> = Vec::new();
    let report = |removed: &mut Vec<(String, RemovalReason)>, name: &str, reason| {
        let key = fold(platform, name);
        if !removed.iter().any(|(k, _)| *k == key) {
            removed.push((key, reason));
        }
    };
    let scrub = &spec.scrub;
    let steps: Vec<Step> = vec![
        (RemovalReason::ManagedPrefix, Box::new(|n, _| fold(platform, n).to_ascii_uppercase().starts_with("DSH_"))),
        (
            RemovalReason::Inherit,
            Box::new(|n, _| match scrub.inherit {
                Inherit::All => false,
                Inherit::Core => !platform.core.iter().any(|p| {
                    glob_match(&p.chars().collect::<Vec<_>>(), &fold(platform, n).chars().collect::<Vec<_>>())
                }),
                Inherit::None => true,
            }),
        ),
        // The credential rule is the corpus's to judge (tests/corpus.rs); the
        // model checks where the pipeline applies it.
        (
            RemovalReason::Credential,
            Box::new(|n, v| scrub.default_exclude && find(&fold(platform, n), v) == Some(Finding::Name)),
        ),
        (
            RemovalReason::SecretValue,
            Box::new(|n, v| scrub.default_exclude && find(&fold(platform, n), v) == Some(Finding::Value)),
        ),
        (RemovalReason::Exclude, Box::new(|n, _| any_glob(&scrub.exclude, n))),
        (
            RemovalReason::Hardening,
            Box::new(|n, v| {
                scrub.hardening && (any_glob(HARDENING_PATTERNS, n) || v.starts_with(HARDENING_VALUE_PREFIX))
            }),
        ),
        (RemovalReason::IncludeOnly, Box::new(|n, _| scrub.include_only.as_ref().is_some_and(|g| !any_glob(g, n)))),
    ];
    for (reason, drop) in &steps {
        vars.retain(|(name, value, source)| {
            let gone = *source == Source::Inherited && drop(name, value);
            if gone {
                report(&mut removed, name, *reason);
            }
            !gone
        });
    }
    let set = |vars: &mut Vec<(String, String, Source)>, name: &str, value: &str, source| match vars
        .iter_mut()
        .find(|(n, _, _)| fold(platform, n) == fold(platform, name))
    {
        Some(var) => {
            let keep = platform.keep_path_spelling && fold(platform, name) == "PATH";
            *var = (if keep { var.0.clone() } else { name.to_owned() }, value.to_owned(), source);
        }
        None => vars.push((name.to_owned(), value.to_owned(), source)),
    };
    for (name, value) in spec.terminal.iter().flatten() {
        set(&mut vars, name, value, Source::Terminal);
    }
    for (name, value) in &spec.explicit {
        match value {
            Some(value) => set(&mut vars, name, value, Source::Explicit),
            None => {
                if let Some(at) = vars.iter().position(|(n, _, _)| fold(platform, n) == fold(platform, name)) {
                    let (old, _, _) = vars.remove(at);
                    report(&mut removed, &old, RemovalReason::ExplicitUnset);
                }
            }
        }
    }
    vars.retain(|(name, _, source)| {
        let gone = matches!(source, Source::Terminal | Source::Explicit)
            && unmanaged(name, &spec.managed, |a, b| fold(platform, a) == fold(platform, b));
        if gone {
            report(&mut removed, name, RemovalReason::Unmanaged);
        }
        !gone
    });
    for (name, value) in &spec.managed {
        set(&mut vars, name, value, Source::Managed);
    }
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    Model {
        sources: vars.iter().map(|(n, _, s)| (n.clone(), *s)).collect(),
        vars: vars.into_iter().map(|(n, v, _)| (n, v)).collect(),
        removed: removed.into_iter().map(|(key, reason)| (key, rank(reason))).collect(),
    }
}

fn build(platform: &Platform, parent: &[(String, String)], spec: &EnvironmentSpec) -> Environment {
    build_environment(platform, parent.to_vec(), spec).expect("generated specs are valid")
}

/// Every write (set or unset) the spec makes to `name`, compared the platform's
/// way, in the order the pipeline applies them.
fn writes<'a>(platform: &Platform, spec: &'a EnvironmentSpec, name: &str) -> Vec<(Source, Option<&'a str>)> {
    let same = |k: &str| platform.same_name(k, name);
    let terminal =
        spec.terminal.iter().flatten().filter(|(k, _)| same(k)).map(|(_, v)| (Source::Terminal, Some(v.as_str())));
    let explicit = spec.explicit.iter().filter(|(k, _)| same(k)).map(|(_, v)| (Source::Explicit, v.as_deref()));
    let managed = spec.managed.iter().filter(|(k, _)| same(k)).map(|(_, v)| (Source::Managed, Some(v.as_str())));
    terminal.chain(explicit).chain(managed).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_pipeline_matches_the_reference_model(platform in platform(), parent in parent(), spec in spec()) {
        let env = build(&platform, &parent, &spec);
        let model = reference(&platform, &parent, &spec);
        prop_assert_eq!(&env.vars, &model.vars);
        prop_assert_eq!(&env.sources, &model.sources);
        let removed: BTreeSet<(String, u8)> = env.removed.iter().map(|r| (fold(&platform, &r.key), rank(r.reason))).collect();
        prop_assert_eq!(removed, model.removed);
    }

    #[test]
    fn no_inherited_name_in_the_managed_namespace_survives(platform in platform(), parent in parent(), spec in spec()) {
        let env = build(&platform, &parent, &spec);
        for (name, _) in &env.vars {
            if has_managed_prefix(&fold(&platform, name)) {
                prop_assert_ne!(env.sources[name], Source::Inherited, "{:?} survived from the parent", name);
            }
        }
        // Every such parent name is reported, by the first step.
        for (name, value) in &parent {
            let reaches = can_reach_execve(name, value);
            if reaches && has_managed_prefix(&fold(&platform, name)) {
                let removal = env.removed.iter().find(|r| platform.same_name(&r.key, name));
                prop_assert_eq!(removal.map(|r| r.reason), Some(RemovalReason::ManagedPrefix), "{:?}", name);
                // Present afterwards only when the caller or the snapshot set it again.
                if let Some(source) = env.source(name) {
                    prop_assert!(writes(&platform, &spec, name).iter().any(|(s, v)| *s == source && v.is_some()));
                }
            }
        }
    }

    #[test]
    fn the_last_managed_entry_always_wins(platform in platform(), parent in parent(), spec in spec()) {
        let env = build(&platform, &parent, &spec);
        let mut last: BTreeMap<&str, &str> = BTreeMap::new();
        for (key, value) in &spec.managed {
            last.insert(key, value);
        }
        for (key, value) in last {
            prop_assert_eq!(env.get(key), Some(value), "{}", key);
            prop_assert_eq!(env.source(key), Some(Source::Managed), "{}", key);
        }
    }

    #[test]
    fn each_name_holds_its_last_write(platform in platform(), parent in parent(), spec in spec()) {
        // Terminal, then explicit, then managed, each in order: a name written by any
        // of them ends with the last write, whatever the parent held.
        let env = build(&platform, &parent, &spec);
        let names = spec.terminal.iter().flatten().map(|(k, _)| k).chain(spec.explicit.iter().map(|(k, _)| k));
        for name in names.chain(spec.managed.iter().map(|(k, _)| k)) {
            let (source, value) = *writes(&platform, &spec, name).last().unwrap();
            let dropped = source != Source::Managed && unmanaged(name, &spec.managed, |a, b| platform.same_name(a, b));
            match value {
                Some(_) if dropped => prop_assert_eq!(env.get(name), None, "{} is not the snapshot's", name),
                Some(value) => {
                    prop_assert_eq!(env.get(name), Some(value), "{}", name);
                    prop_assert_eq!(env.source(name), Some(source), "{}", name);
                }
                None => prop_assert_eq!(env.get(name), None, "{}", name),
            }
        }
    }

    #[test]
    fn removed_names_are_absent_unless_a_later_layer_sets_them(platform in platform(), parent in parent(), spec in spec()) {
        let env = build(&platform, &parent, &spec);
        let mut seen = BTreeSet::new();
        for removal in &env.removed {
            prop_assert!(seen.insert(fold(&platform, &removal.key)), "{:?} reported twice", removal.key);
            let Some(source) = env.source(&removal.key) else { continue };
            prop_assert_ne!(source, Source::Inherited);
            if removal.reason == RemovalReason::ExplicitUnset {
                prop_assert_ne!(source, Source::Terminal, "{:?}", removal.key);
            }
            let writes = writes(&platform, &spec, &removal.key);
            prop_assert_eq!(writes.last().map(|(s, v)| (*s, v.is_some())), Some((source, true)), "{:?}", removal.key);
        }
        // Pipeline order: step by step, and by comparison form within a scrub step.
        prop_assert!(env.removed.windows(2).all(|w| rank(w[0].reason) <= rank(w[1].reason)), "{:?}", env.removed);
        for w in env.removed.windows(2) {
            if w[0].reason == w[1].reason && w[0].reason != RemovalReason::ExplicitUnset {
                prop_assert!(fold(&platform, &w[0].key) < fold(&platform, &w[1].key), "{:?}", env.removed);
            }
        }
    }

    #[test]
    fn sources_name_exactly_the_result(platform in platform(), parent in parent(), spec in spec()) {
        let env = build(&platform, &parent, &spec);
        prop_assert!(env.sources.keys().eq(env.vars.iter().map(|(k, _)| k)), "{:?} vs {:?}", env.sources, env.vars);
        prop_assert!(env.vars.windows(2).all(|w| w[0].0 < w[1].0));
        let folded: BTreeSet<String> = env.vars.iter().map(|(k, _)| fold(&platform, k)).collect();
        prop_assert_eq!(folded.len(), env.vars.len(), "two spellings of one name: {:?}", env.vars);
        for (name, value) in &env.vars {
            prop_assert!(can_reach_execve(name, value), "{:?}", name);
        }
    }

    #[test]
    fn the_pipeline_is_deterministic(
        (parent, shuffled) in parent().prop_flat_map(|p| (Just(p.clone()), Just(p).prop_shuffle())),
        platform in platform(),
        spec in spec(),
    ) {
        let env = build(&platform, &parent, &spec);
        prop_assert_eq!(&env, &build(&platform, &parent, &spec));
        prop_assert_eq!(&env, &build(&platform, &shuffled, &spec));
        let doubled: Vec<_> = shuffled.iter().chain(parent.iter().rev()).cloned().collect();
        prop_assert_eq!(&env, &build(&platform, &doubled, &spec));
    }

    #[test]
    fn windows_rules_ignore_the_case_of_every_name(
        parent in parent(),
        spec in spec(),
        masks in proptest::collection::vec(any::<u64>(), 32),
    ) {
        // Re-casing any name or glob changes at most spellings, never which
        // variables the child gets, their values, sources or removals. The parent
        // keeps one spelling per name so the duplicate rule is not in play.
        let windows = Platform::windows();
        let mut unique = BTreeSet::new();
        let parent: Vec<(String, String)> = parent.into_iter().filter(|(n, _)| unique.insert(upper(n))).collect();
        let mut mask = masks.iter().cycle();
        let mut re = |s: &String| recase(s, *mask.next().unwrap());
        let recased_parent: Vec<(String, String)> = parent.iter().map(|(n, v)| (re(n), v.clone())).collect();
        let recased = EnvironmentSpec {
            scrub: ScrubPolicy {
                inherit: spec.scrub.inherit,
                default_exclude: spec.scrub.default_exclude,
                exclude: spec.scrub.exclude.iter().map(&mut re).collect(),
                include_only: spec.scrub.include_only.as_ref().map(|g| g.iter().map(&mut re).collect()),
                hardening: spec.scrub.hardening,
            },
            terminal: spec.terminal.as_ref().map(|t| t.iter().map(|(k, v)| (re(k), v.clone())).collect()),
            explicit: spec.explicit.iter().map(|(k, v)| (re(k), v.clone())).collect(),
            managed: spec.managed.clone(),
        };
        let view = |env: &Environment| {
            let vars: BTreeMap<String, (String, Source)> =
                env.vars.iter().map(|(k, v)| (upper(k), (v.clone(), env.sources[k]))).collect();
            let removed: Vec<(String, RemovalReason)> = env.removed.iter().map(|r| (upper(&r.key), r.reason)).collect();
            (vars, removed)
        };
        prop_assert_eq!(view(&build(&windows, &parent, &spec)), view(&build(&windows, &recased_parent, &recased)));
    }

    #[test]
    fn windows_keeps_the_path_spelling_it_finds(
        spelling in "(PATH|Path|path|pAtH)",
        writes in proptest::collection::vec(("(PATH|Path|path|pATh)", caller_value()), 0..3),
        managed_path in caller_value(),
    ) {
        let parent = vec![(spelling.clone(), "C:\\bin".to_owned())];
        let spec = EnvironmentSpec {
            terminal: None,
            explicit: writes.iter().map(|(k, v)| (k.clone(), Some(v.clone()))).collect(),
            managed: vec![("PATH".into(), managed_path.clone())],
            ..EnvironmentSpec::default()
        };
        let env = build(&Platform::windows(), &parent, &spec);
        prop_assert_eq!(&env.vars, &vec![(spelling.clone(), managed_path.clone())]);
        // POSIX: different spellings are different variables; only `PATH` is replaced.
        let env = build(&Platform::posix(), &parent, &spec);
        prop_assert_eq!(env.get("PATH"), Some(managed_path.as_str()));
        if spelling != "PATH" {
            prop_assert_eq!(env.get(&spelling), writes.iter().rev().find(|(k, _)| *k == spelling).map_or(Some("C:\\bin"), |(_, v)| Some(v.as_str())));
        }
    }

    #[test]
    fn invalid_caller_names_fail_and_never_panic(
        platform in platform(),
        parent in parent(),
        spec in spec(),
        bad in "(|=|A=B|=C:|A\\x00|\\x00)",
        value in proptest::option::of("[a-z]{0,2}"),
        at in any::<Index>(),
    ) {
        let mut spec = spec;
        let index = at.index(spec.explicit.len() + 1);
        spec.explicit.insert(index, (bad.clone(), value));
        let err = build_environment(&platform, parent, &spec).unwrap_err();
        prop_assert_eq!(err.code(), "ERR_SHELL_EXEC_INVALID_SPEC");
    }
}

// ---------------------------------------------------------------------------
// Registry operation sequences.

#[derive(Debug, Clone)]
enum Op {
    Register { name: usize, keys: Vec<usize>, dir: Option<usize> },
    Unregister { handle: Index },
}

const NAMES: [&str; 4] = ["a", "b", "c", "ä"];
/// Mostly valid keys; the last two are rejected at registration.
const KEYS: [&str; 7] = ["DSH_A", "DSH_B", "DSH_C", "DSH_D", "DSH_E", "DSH_HOME", "dsh_a"];
const DIRS: [&str; 3] = if cfg!(windows) { [r"C:\x", r"C:\y", "relative"] } else { ["/x", "/y", "relative"] };

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..NAMES.len(), proptest::collection::vec(prop_oneof![8 => 0..5usize, 1 => 5..7usize], 0..3), proptest::option::of(0..DIRS.len()))
            .prop_map(|(name, keys, dir)| Op::Register { name, keys, dir }),
        2 => any::<Index>().prop_map(|handle| Op::Unregister { handle }),
    ]
}

/// One current registration in the model.
#[derive(Debug, Clone)]
struct Owned {
    id: u64,
    keys: BTreeSet<&'static str>,
    dirs: Vec<&'static str>,
}

proptest! {
    #[test]
    fn registry_operations_keep_ownership_consistent(ops in proptest::collection::vec(op(), 1..40)) {
        let registry: Registry<()> = Registry::new("/h".into(), None);
        let mut model: BTreeMap<&str, Owned> = BTreeMap::new();
        let mut handles: Vec<(Registration, &str, u64)> = Vec::new();
        let mut next_id = 0u64;
        for op in ops {
            match op {
                Op::Register { name, keys, dir } => {
                    let name = NAMES[name];
                    let keys: Vec<&'static str> = keys.into_iter().map(|k| KEYS[k]).collect();
                    let dirs: Vec<&'static str> = dir.map(|d| DIRS[d]).into_iter().collect();
                    let result = registry.register(Declaration {
                        name: name.into(),
                        variables: keys.iter().map(|k| (k.to_string(), Some(format!("{name} {k}")))).collect(),
                        command_directories: dirs.iter().map(|d| d.to_string()).collect(),
                        resolver: (),
                    });
                    // The declaration's keys in order, then its directories, then the registry.
                    let bad_key = keys.iter().find_map(|k| {
                        if !is_valid_key(k) {
                            Some("ERR_SHELL_ENV_INVALID_KEY")
                        } else if is_reserved(k) {
                            Some("ERR_SHELL_ENV_RESERVED_KEY")
                        } else {
                            None
                        }
                    });
                    let expected = if bad_key.is_some() {
                        bad_key
                    } else if dirs.iter().any(|d| !Path::new(d).is_absolute()) {
                        Some("ERR_SHELL_ENV_INVALID_DIRECTORY")
                    } else if model.contains_key(name) {
                        Some("ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR")
                    } else if model.values().any(|o| keys.iter().any(|k| o.keys.contains(k))) {
                        Some("ERR_SHELL_ENV_DUPLICATE_KEY")
                    } else {
                        None
                    };
                    prop_assert_eq!(result.as_ref().err().map(|e| e.code()), expected, "{} {:?}", name, keys);
                    if let Ok(registration) = result {
                        prop_assert_eq!(registration.name(), name);
                        next_id += 1;
                        model.insert(name, Owned { id: next_id, keys: keys.into_iter().collect(), dirs });
                        handles.push((registration, name, next_id));
                    }
                }
                Op::Unregister { handle } => {
                    if handles.is_empty() {
                        continue;
                    }
                    let (registration, name, id) = handle.get(&handles).clone();
                    let current = model.get(name).is_some_and(|o| o.id == id);
                    prop_assert_eq!(registry.unregister(&registration), current, "a stale handle removed a newer registration");
                    if current {
                        model.remove(name);
                    }
                }
            }

            // list(): sorted by key, each key once, owned by its current contributor.
            let list = registry.list();
            prop_assert!(list.windows(2).all(|w| w[0].key < w[1].key), "{:?}", list);
            let expected: Vec<(&str, &str)> = {
                let mut rows: Vec<(&str, &str)> =
                    model.iter().flat_map(|(name, o)| o.keys.iter().map(move |k| (*k, *name))).collect();
                rows.sort();
                rows
            };
            let actual: Vec<(&str, &str)> = list.iter().map(|e| (e.key.as_str(), e.contributor.as_str())).collect();
            prop_assert_eq!(actual, expected);
            for entry in &list {
                prop_assert_eq!(&entry.description, &format!("{} {}", entry.contributor, entry.key));
            }
            // contributors() and the catalog agree with the model, in name order.
            let names: Vec<String> = registry.contributors().iter().map(|c| c.name().to_owned()).collect();
            prop_assert_eq!(names, model.keys().map(|n| n.to_string()).collect::<Vec<_>>());
            let catalog = registry.catalog();
            prop_assert!(catalog.variables.windows(2).all(|w| w[0].key < w[1].key));
            let dirs: Vec<(String, Vec<String>)> = model
                .iter()
                .filter(|(_, o)| !o.dirs.is_empty())
                .map(|(n, o)| (n.to_string(), o.dirs.iter().map(|d| d.to_string()).collect()))
                .collect();
            prop_assert_eq!(catalog.command_directories, dirs);
        }
    }
}

// ---------------------------------------------------------------------------
// Home resolution.

fn home_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("  ".to_owned()),
        "~(/[a-z.]{0,3}){0,3}/?",
        "~[a-z]{1,3}(/[a-z]{1,2})?",
        "(/|\\./|\\.\\./)?([a-z.]{1,3}/){0,4}[a-z.]{0,3}",
        "\\PC{0,8}",
    ]
}

fn absolute_dir() -> impl Strategy<Value = PathBuf> {
    "([a-z.]{1,3}/){0,3}[a-z.]{0,3}".prop_map(|rest| PathBuf::from(absolute(&rest)))
}

fn context() -> impl Strategy<Value = HomeContext> {
    let user_home =
        proptest::option::of(prop_oneof![absolute_dir(), "([a-z.]{1,3}/){0,2}[a-z]{0,2}".prop_map(PathBuf::from)]);
    (proptest::option::of(home_value()), user_home, absolute_dir()).prop_map(|(env_home, user_home, cwd)| HomeContext {
        env_home,
        user_home,
        cwd,
    })
}

proptest! {
    #[test]
    fn the_home_is_always_absolute_and_normalised(configured in proptest::option::of(home_value()), context in context()) {
        let home = resolve_dsh_home(configured.as_deref(), &context);
        let path = Path::new(&home);
        prop_assert!(path.is_absolute(), "{:?} from {:?} in {:?}", home, configured, context);
        prop_assert!(
            path.components().all(|c| matches!(c, Component::Prefix(_) | Component::RootDir | Component::Normal(_))),
            "{:?}",
            home
        );
        // Only a root (any drive's, on Windows) keeps its separator.
        prop_assert!(path.parent().is_none() || !home.ends_with(std::path::MAIN_SEPARATOR), "{:?}", home);
        // Resolving the result again changes nothing, in any context.
        prop_assert_eq!(&resolve_dsh_home(Some(&home), &context), &home);
        prop_assert_eq!(reconcile_dsh_home(Some(&home), Some(&home), &context).unwrap(), home);
    }

    #[test]
    fn an_absolute_configured_home_ignores_the_context(
        configured in "([a-z.]{1,3}/){0,3}[a-z.]{0,3}".prop_map(|rest| absolute(&rest)),
        a in context(),
        b in context(),
    ) {
        prop_assert_eq!(resolve_dsh_home(Some(&configured), &a), resolve_dsh_home(Some(&configured), &b));
    }
}
