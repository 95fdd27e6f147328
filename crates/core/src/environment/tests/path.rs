//! `PATH` from the managed snapshot: it replaces the inherited one, and on
//! Windows it keeps the spelling the parent's `Path` already had.

use super::{bare, build, build_on, names, pairs};
use crate::environment::{build_environment, EnvironmentSpec, Platform, Source};

#[test]
fn managed_path_replaces_the_inherited_path() {
    let spec = EnvironmentSpec { managed: pairs(&[("PATH", "/dsh/bin:/bin")]), ..bare() };
    let env = build(&[("PATH", "/bin")], &spec);
    assert_eq!(env.vars, pairs(&[("PATH", "/dsh/bin:/bin")]));
    assert_eq!(env.source("PATH"), Some(Source::Managed));
}

#[test]
fn windows_keeps_the_existing_path_spelling() {
    let spec = EnvironmentSpec { managed: pairs(&[("PATH", "C:\\dsh;C:\\bin")]), ..bare() };
    let env = build_on(Platform::windows(), &[("Path", "C:\\bin")], &spec);
    assert_eq!(env.vars, pairs(&[("Path", "C:\\dsh;C:\\bin")]));
    assert_eq!(env.source("PATH"), Some(Source::Managed));
    // With no PATH in any spelling, the managed spelling is used.
    let env = build_on(Platform::windows(), &[], &spec);
    assert_eq!(names(&env), ["PATH"]);
}

#[test]
fn windows_keeps_the_found_path_spelling_through_several_writes() {
    // Two writes of `PATH` over an inherited `Path`: the kept spelling must
    // stay the key the second write finds (a regression a property test caught).
    let spec = EnvironmentSpec {
        terminal: Some(pairs(&[("PATH", "terminal")])),
        managed: pairs(&[("PATH", "managed")]),
        ..EnvironmentSpec::default()
    };
    let env = build_environment(&Platform::windows(), pairs(&[("Path", "inherited")]), &spec).unwrap();
    assert_eq!(env.vars, pairs(&[("Path", "managed")]));
    assert_eq!(env.source("PATH"), Some(Source::Managed));
}
