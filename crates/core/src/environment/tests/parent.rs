//! The parent environment (step 1): entries that could never reach `execve`
//! are removed as unrepresentable, duplicate names resolve by sort order, and
//! the output is sorted by name.

use super::{bare, build, build_on, names, pairs};
use crate::environment::{build_environment_from, Parent, Platform, Removal, RemovalReason, ScrubPolicy, Source};

fn unrepresentable(keys: &[&str]) -> Vec<Removal> {
    keys.iter().map(|key| Removal { key: key.to_string(), reason: RemovalReason::Unrepresentable }).collect()
}

#[test]
fn parent_entries_that_cannot_reach_execve_are_removed_as_unrepresentable() {
    let env = build(
        &[("", "empty"), ("A=B", "x"), ("NUL\0NAME", "x"), ("NUL_VALUE", "a\0b"), ("=C:", "C:\\"), ("OK", "1")],
        &bare(),
    );
    assert_eq!(env.vars, pairs(&[("=C:", "C:\\"), ("OK", "1")]));
    assert_eq!(env.removed, unrepresentable(&["", "A=B", "NUL\0NAME", "NUL_VALUE"]));
}

#[test]
fn an_unrepresentable_entry_is_not_reported_when_another_entry_of_the_variable_is_kept() {
    let env = build(&[("A", "a\0b"), ("A", "1")], &bare());
    assert_eq!(env.vars, pairs(&[("A", "1")]));
    assert!(env.removed.is_empty());
    let env = build_on(Platform::windows(), &[("path", "a\0b"), ("Path", "/bin"), ("x", "\0"), ("X", "\0")], &bare());
    assert_eq!(env.vars, pairs(&[("Path", "/bin")]));
    // One variable on Windows, reported once, by its first spelling in byte order.
    assert_eq!(env.removed, unrepresentable(&["X"]));
}

#[test]
fn entries_a_caller_could_not_read_as_text_are_reported_first_and_each_once() {
    // As the JS layer packs an object: the entries with text, then the names of those without.
    let unreadable = ["LONE", "NUMBER", "LONE", "KEPT", "NUL"].map(String::from).to_vec();
    let parent = Parent::from_packed("2\x00DSH_OLD\x001\x00KEPT\x00yes\x00".into(), unreadable).unwrap();
    let env = build_environment_from(&Platform::posix(), &parent, &bare()).unwrap();
    assert_eq!(env.vars, pairs(&[("KEPT", "yes")]));
    let mut expected = unrepresentable(&["LONE", "NUL", "NUMBER"]);
    expected.push(Removal { key: "DSH_OLD".into(), reason: RemovalReason::ManagedPrefix });
    assert_eq!(env.removed, expected);
}

#[test]
fn an_unrepresentable_name_can_still_be_set_by_the_caller() {
    let mut spec = bare();
    spec.explicit = vec![("NUL_VALUE".into(), Some("fixed".into()))];
    spec.scrub = ScrubPolicy { default_exclude: false, ..ScrubPolicy::default() };
    let env = build(&[("NUL_VALUE", "a\0b")], &spec);
    assert_eq!(env.get("NUL_VALUE"), Some("fixed"));
    assert_eq!(env.source("NUL_VALUE"), Some(Source::Explicit));
    assert_eq!(env.removed, unrepresentable(&["NUL_VALUE"]));
}

#[test]
fn duplicate_parent_names_resolve_by_sort_order() {
    let env = build(&[("A", "2"), ("A", "1")], &bare());
    assert_eq!(env.vars, pairs(&[("A", "1")]));
    let env = build_on(Platform::windows(), &[("Path", "lower"), ("PATH", "upper")], &bare());
    assert_eq!(env.vars, pairs(&[("PATH", "upper")]));
    assert!(env.removed.is_empty());
}

#[test]
fn output_is_sorted_by_name() {
    let env = build(&[("b", "1"), ("B", "2"), ("a", "3"), ("_", "4")], &bare());
    assert_eq!(names(&env), ["B", "_", "a", "b"]);
}
