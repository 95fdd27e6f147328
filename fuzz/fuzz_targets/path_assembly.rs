//! A whole collection: contributors with arbitrary names, keys, directories
//! and resolved values, registered in input order. Checks what registration
//! accepts, that a collection fails exactly on bad values, and the PATH it
//! assembles (contributor-name order, first occurrence wins, the platform
//! delimiter, then the inherited path verbatim).
#![no_main]

use arbitrary::Arbitrary;
use dsh_shell_env_core::keys::{self, is_valid_key, PATH_KEY};
use dsh_shell_env_core::registry::{Declaration, Profile, Registry, PATH_DELIMITER};
use dsh_shell_env_core::snapshot::{Collection, ResolvedValue};
use dsh_shell_env_fuzz::{
    check_assembled_path, check_command_path, check_snapshot_entries, expected_directories, ManagedKey,
};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Contributor {
    name: String,
    keys: Vec<ManagedKey>,
    directories: Vec<Directory>,
    /// Resolved values: a key (declared or not) and a string, or a non-string.
    values: Vec<(ManagedKey, Option<String>)>,
}

/// A command directory: usually absolute and from a small set, so lists overlap.
#[derive(Debug)]
struct Directory(String);

impl<'a> Arbitrary<'a> for Directory {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Self(if u.ratio(1, 4)? {
            String::arbitrary(u)?
        } else {
            format!("/{}", u.choose(&["a", "b", "c", "usr/bin", "a/../b", "é"])?)
        }))
    }
}

#[derive(Debug, Arbitrary)]
struct Input {
    contributors: Vec<Contributor>,
    inherited: Option<String>,
    session: Option<Option<String>>,
    profile: bool,
}

fuzz_target!(|input: Input| {
    let profile = input.profile.then(|| Profile::new("work", "/p/work").unwrap());
    let registry: Registry<Vec<(String, ResolvedValue)>> = Registry::new("/h".into(), profile);
    for contributor in input.contributors {
        let keys: Vec<String> = contributor.keys.into_iter().map(|k| k.0).collect();
        let directories: Vec<String> = contributor.directories.into_iter().map(|d| d.0).collect();
        let values = contributor
            .values
            .into_iter()
            .map(|(key, value)| (key.0, value.map_or(ResolvedValue::Other("number".into()), ResolvedValue::String)))
            .collect();
        let valid = !contributor.name.trim().is_empty()
            && keys.iter().all(|k| is_valid_key(k) && !keys::is_reserved(k))
            && directories.iter().all(|d| d.starts_with('/') && !d.contains('\0') && !d.contains(PATH_DELIMITER));
        let result = registry.register(Declaration {
            name: contributor.name,
            variables: keys.iter().map(|k| (k.clone(), Some("d".into()))).collect(),
            command_directories: directories,
            resolver: values,
        });
        // A malformed declaration is always refused (a well-formed one may still clash).
        assert!(valid || result.is_err(), "accepted a malformed declaration: {result:?}");
    }

    // list(): sorted by key, every key owned once.
    let list = registry.list();
    assert!(list.windows(2).all(|w| w[0].key < w[1].key), "{list:?}");

    let contributors = registry.contributors();
    let session = input.session.map(|s| s.map_or(ResolvedValue::Other("undefined".into()), ResolvedValue::String));
    let session_ok = !matches!(&session, Some(ResolvedValue::Other(_)))
        && !matches!(&session, Some(ResolvedValue::String(s)) if s.contains('\0'));
    let mut collection = match Collection::begin(&registry, session) {
        Ok(collection) => collection,
        Err(_) => {
            assert!(!session_ok);
            return;
        }
    };
    assert!(session_ok);
    for contributor in collection.contributors().to_vec() {
        let values = contributor.resolver().clone();
        let clean = values.iter().all(|(key, value)| {
            contributor.declares(key) && matches!(value, ResolvedValue::String(s) if !s.contains('\0'))
        });
        let accepted = collection.accept(&contributor, values);
        assert_eq!(accepted.is_ok(), clean, "{accepted:?}");
        if accepted.is_err() {
            return;
        }
    }
    let inherited = input.inherited.as_deref();
    let snapshot = collection.finish(inherited);
    check_snapshot_entries(&snapshot, inherited);

    // PATH: the contributors' directories in name order, each once, then the inherited path.
    let expected = expected_directories(contributors.iter().map(|c| (c.name(), c.command_directories())));
    check_command_path(&snapshot, &contributors, inherited);
    check_assembled_path(snapshot.get(PATH_KEY).map(String::as_str), &expected, inherited);
});
