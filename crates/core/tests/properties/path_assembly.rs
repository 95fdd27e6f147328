//! PATH assembly through a collection: contributor-name order whatever the
//! registration order, unregistering, and a finished snapshot as a valid
//! managed layer of the environment pipeline.

use std::collections::BTreeSet;

use dsh_shell_env_core::environment::{build_environment, EnvironmentSpec, Platform, Source};
use dsh_shell_env_core::keys::{self, is_reserved};
use dsh_shell_env_core::registry::{Declaration, Profile, Registration, Registry, PATH_DELIMITER};
use dsh_shell_env_core::snapshot::{Collection, ResolvedValue, Snapshot};
use proptest::prelude::*;
use proptest::sample::Index;

use crate::absolute;
use crate::environment::{parent_name, value};
use crate::oracles::{check_assembled_path, check_command_path, check_snapshot_entries, expected_directories};

type Values = Vec<(String, ResolvedValue)>;

fn collect(registry: &Registry<Values>, session: Option<&str>, inherited: Option<&str>) -> Snapshot {
    let mut collection = Collection::begin(registry, session.map(|s| ResolvedValue::String(s.into()))).unwrap();
    for contributor in collection.contributors().to_vec() {
        collection.accept(&contributor, contributor.resolver().clone()).unwrap();
    }
    collection.finish(inherited)
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

        // Expected from the generated map, not from the registry.
        let expected = expected_directories(contributors.iter().map(|(name, dirs)| (name.as_str(), dirs.as_slice())));
        let snapshot = collect(&registry, session.as_deref(), inherited.as_deref());
        check_command_path(&snapshot, &registry.contributors(), inherited.as_deref());
        let path = snapshot.get(keys::PATH_KEY);
        check_assembled_path(path.map(String::as_str), &expected, inherited.as_deref());
        // An empty inherited path is the same as none.
        if inherited.as_deref() == Some("") {
            let without = collect(&registry, session.as_deref(), None);
            prop_assert_eq!(path, without.get(keys::PATH_KEY));
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
        check_snapshot_entries(&snapshot, Some("/usr/bin"));
        // Fed to the pipeline as its managed layer, every entry lands as given.
        let spec = EnvironmentSpec { managed: snapshot.clone().into_iter().collect(), ..EnvironmentSpec::default() };
        let env = build_environment(&platform, parent, &spec).unwrap();
        for (key, value) in &snapshot {
            prop_assert_eq!(env.get(key), Some(value.as_str()));
            prop_assert_eq!(env.source(key), Some(Source::Managed));
        }
    }
}
