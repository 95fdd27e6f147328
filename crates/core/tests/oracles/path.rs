//! PATH assembly: the contributors' command directories in contributor-name
//! order, first occurrence kept, then the inherited path verbatim; and what a
//! finished snapshot may hold.

use std::collections::BTreeSet;
use std::sync::Arc;

use dsh_shell_env_core::keys::{is_valid_key, PATH_KEY};
use dsh_shell_env_core::registry::{Contributor, PATH_DELIMITER};
use dsh_shell_env_core::snapshot::{command_path, Snapshot};

/// The directories a PATH starts with: every contributor's command directories
/// (`(name, directories)` in any order), contributors in name order, each
/// directory at its first occurrence only.
pub fn expected_directories<'a>(contributors: impl IntoIterator<Item = (&'a str, &'a [String])>) -> Vec<&'a str> {
    let mut contributors: Vec<(&str, &[String])> = contributors.into_iter().collect();
    // Sorted here, by code point as a registry's names are, so the order is checked, not taken from the registry.
    contributors.sort_by_key(|&(name, _)| name);
    let mut expected: Vec<&str> = Vec::new();
    for directory in contributors.into_iter().flat_map(|(_, directories)| directories) {
        if !expected.contains(&directory.as_str()) {
            expected.push(directory);
        }
    }
    expected
}

/// Checks an assembled PATH: present exactly when there are `directories`,
/// which come first, each once, then `inherited` verbatim or nothing (no
/// dangling delimiter when it is empty or absent).
pub fn check_assembled_path(path: Option<&str>, directories: &[&str], inherited: Option<&str>) {
    assert_eq!(path.is_some(), !directories.is_empty(), "PATH {path:?} for the directories {directories:?}");
    let Some(path) = path else { return };
    let distinct: BTreeSet<&str> = directories.iter().copied().collect();
    assert_eq!(distinct.len(), directories.len(), "{directories:?} names a directory twice");
    let delimiter = PATH_DELIMITER.to_string();
    let Some(tail) = path.strip_prefix(directories.join(&delimiter).as_str()) else {
        panic!("{path:?} does not start with the directories {directories:?}");
    };
    let inherited_tail = |inherited: &str| format!("{delimiter}{inherited}");
    match inherited.filter(|inherited| !inherited.is_empty()) {
        None => assert_eq!(tail, "", "{path:?} after {directories:?} with no inherited path"),
        // Callers check for NUL first; the assembly may leave such a path out.
        Some(inherited) if inherited.contains('\0') => {
            assert!(tail.is_empty() || tail == inherited_tail(inherited), "{path:?} with {inherited:?}")
        }
        Some(inherited) => assert_eq!(tail, inherited_tail(inherited), "{path:?} with {inherited:?}"),
    }
}

/// Checks that `command_path` over `contributors` is the snapshot's PATH.
pub fn check_command_path<R>(snapshot: &Snapshot, contributors: &[Arc<Contributor<R>>], inherited: Option<&str>) {
    assert_eq!(
        snapshot.get(PATH_KEY).map(String::as_str),
        command_path(contributors, inherited).as_deref(),
        "the snapshot's PATH and command_path differ, inherited {inherited:?}"
    );
}

/// Checks a finished snapshot: every key is valid or `PATH`, and no value
/// holds NUL, unless it is a PATH built from an `inherited` path that does.
pub fn check_snapshot_entries(snapshot: &Snapshot, inherited: Option<&str>) {
    for (key, value) in snapshot {
        assert!(is_valid_key(key) || key == PATH_KEY, "{key:?} in a snapshot");
        let from_inherited = key == PATH_KEY && inherited.is_some_and(|inherited| inherited.contains('\0'));
        assert!(!value.contains('\0') || from_inherited, "{key:?} = {value:?} holds NUL");
    }
}
