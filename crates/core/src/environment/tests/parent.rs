//! The parent environment (step 1): entries that could never reach `execve`
//! are skipped without a report, duplicate names resolve by sort order, and
//! the output is sorted by name.

use super::{bare, build, build_on, names, pairs};
use crate::environment::Platform;

#[test]
fn parent_entries_that_cannot_reach_execve_are_skipped_silently() {
    let env = build(
        &[("", "empty"), ("A=B", "x"), ("NUL\0NAME", "x"), ("NUL_VALUE", "a\0b"), ("=C:", "C:\\"), ("OK", "1")],
        &bare(),
    );
    assert_eq!(env.vars, pairs(&[("=C:", "C:\\"), ("OK", "1")]));
    assert!(env.removed.is_empty());
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
