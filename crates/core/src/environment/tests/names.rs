//! The platform name rules: POSIX names are case-sensitive byte strings;
//! Windows names compare ignoring case when unset, overridden, excluded, kept
//! as core or replaced by the snapshot; the host's own platform is the
//! case-insensitive one exactly on Windows.

use super::{bare, build, build_on, explicit, pairs, reason};
use crate::environment::{EnvironmentSpec, Inherit, Platform, Removal, RemovalReason, ScrubPolicy, Source};

#[test]
fn current_platform_matches_the_target() {
    assert_eq!(Platform::current().case_insensitive, cfg!(windows));
}

#[test]
fn posix_names_are_case_sensitive() {
    let spec = EnvironmentSpec {
        explicit: explicit(&[("foo", None), ("Bar", Some("new"))]),
        managed: pairs(&[("PATH", "/dsh:/bin")]),
        ..bare()
    };
    let env = build(&[("FOO", "1"), ("BAR", "2"), ("Path", "/x")], &spec);
    assert_eq!(env.vars, pairs(&[("BAR", "2"), ("Bar", "new"), ("FOO", "1"), ("PATH", "/dsh:/bin"), ("Path", "/x")]));
    assert_eq!(env.get("foo"), None);
    assert!(env.removed.is_empty());
}

#[test]
fn windows_unset_and_override_ignore_case() {
    let spec = EnvironmentSpec { explicit: explicit(&[("foo", None), ("BAR", Some("new"))]), ..bare() };
    let env = build_on(Platform::windows(), &[("Foo", "1"), ("bar", "2")], &spec);
    assert_eq!(env.vars, pairs(&[("BAR", "new")]));
    assert_eq!(env.get("Bar"), Some("new"));
    assert_eq!(env.source("bar"), Some(Source::Explicit));
    assert_eq!(env.removed, [Removal { key: "Foo".into(), reason: RemovalReason::ExplicitUnset }]);
}

#[test]
fn windows_exclude_and_core_ignore_case() {
    let spec = EnvironmentSpec {
        scrub: ScrubPolicy { inherit: Inherit::Core, exclude: vec!["temp".into()], ..ScrubPolicy::default() },
        ..bare()
    };
    let env = build_on(Platform::windows(), &[("Temp", "t"), ("SystemRoot", "C:\\Windows")], &spec);
    assert_eq!(env.vars, pairs(&[("SystemRoot", "C:\\Windows")]));
    assert_eq!(reason(&env, "Temp"), Some(RemovalReason::Exclude));
}

#[test]
fn windows_managed_replaces_explicit_in_another_case() {
    let spec = EnvironmentSpec {
        explicit: explicit(&[("dsh_session_id", Some("forged"))]),
        managed: pairs(&[("DSH_SESSION_ID", "real")]),
        ..bare()
    };
    let env = build_on(Platform::windows(), &[("Dsh_Session_Id", "stale")], &spec);
    assert_eq!(env.vars, pairs(&[("DSH_SESSION_ID", "real")]));
    assert_eq!(reason(&env, "Dsh_Session_Id"), Some(RemovalReason::ManagedPrefix));
}
