//! The environment pipeline against a small reference model and its stated
//! invariants, on both platforms' rules: no inherited managed name survives,
//! the last write wins (managed last), removals, sources, determinism, and
//! Windows' case-insensitive names.

use std::collections::{BTreeMap, BTreeSet};

use dsh_shell_env_core::credentials::{find, Finding};
use dsh_shell_env_core::environment::{
    build_environment, Environment, EnvironmentSpec, Inherit, Platform, RemovalReason, ScrubPolicy, Source,
    HARDENING_PATTERNS, HARDENING_VALUE_PREFIX,
};
use proptest::prelude::*;
use proptest::sample::Index;

use crate::oracles::{
    can_reach_execve, check_deterministic, check_last_managed_wins, check_last_writes, check_managed_namespace,
    check_rebuilds, check_removals, check_shape, fold, rank, recase, unmanaged, upper,
};

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
pub(crate) fn parent_name() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => caller_name(),
        1 => "=[A-C]:",
        1 => "(|A=B|=A=|A\\x00B|\\x00)",
    ]
}

pub(crate) fn value() -> impl Strategy<Value = String> {
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
    // An entry no child could be given, unless another entry of the variable is kept.
    for (name, value) in parent {
        if !can_reach_execve(name, value) && !vars.iter().any(|(n, _, _)| fold(platform, n) == fold(platform, name)) {
            report(&mut removed, name, RemovalReason::Unrepresentable);
        }
    }
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
        (
            RemovalReason::PublicPrefixSecret,
            Box::new(|n, v| scrub.default_exclude && find(&fold(platform, n), v) == Some(Finding::PublicPrefixSecret)),
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
        check_managed_namespace(&platform, &parent, &spec, &env);
    }

    #[test]
    fn the_last_managed_entry_always_wins(platform in platform(), parent in parent(), spec in spec()) {
        let env = build(&platform, &parent, &spec);
        check_last_managed_wins(&spec, &env);
    }

    #[test]
    fn each_name_holds_its_last_write(platform in platform(), parent in parent(), spec in spec()) {
        // Terminal, then explicit, then managed, each in order: a name written by any
        // of them ends with the last write, whatever the parent held.
        let env = build(&platform, &parent, &spec);
        check_last_writes(&platform, &spec, &env);
    }

    #[test]
    fn removed_names_are_absent_unless_a_later_layer_sets_them(platform in platform(), parent in parent(), spec in spec()) {
        let env = build(&platform, &parent, &spec);
        check_removals(&platform, &spec, &env);
    }

    #[test]
    fn sources_name_exactly_the_result(platform in platform(), parent in parent(), spec in spec()) {
        let env = build(&platform, &parent, &spec);
        check_shape(&platform, &env);
    }

    #[test]
    fn the_pipeline_is_deterministic(
        (parent, shuffled) in parent().prop_flat_map(|p| (Just(p.clone()), Just(p).prop_shuffle())),
        platform in platform(),
        spec in spec(),
    ) {
        let env = build(&platform, &parent, &spec);
        check_deterministic(&platform, &parent, &spec, &env);
        let doubled: Vec<_> = shuffled.iter().chain(parent.iter().rev()).cloned().collect();
        check_rebuilds(&platform, shuffled, &spec, &env);
        check_rebuilds(&platform, doubled, &spec, &env);
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
