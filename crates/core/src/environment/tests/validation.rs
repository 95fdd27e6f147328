//! Spec validation: names and values in `env`, `terminalEnv` and `dshEnv`, and
//! the scrub's globs, are refused as an invalid spec naming the field.

use super::{assert_invalid, bare, explicit, including, pairs};
use crate::environment::{EnvironmentSpec, ScrubPolicy};

#[test]
fn explicit_names_and_values_are_validated() {
    for (name, value, field) in [
        ("", Some("x"), "env."),
        ("A=B", Some("x"), "env.A=B"),
        ("=C:", Some("x"), "env.=C:"),
        ("A\0B", Some("x"), "env.A\0B"),
        ("FOO", Some("a\0b"), "env.FOO"),
        ("A=B", None, "env.A=B"),
        ("", None, "env."),
    ] {
        let spec = EnvironmentSpec { explicit: explicit(&[("OK", Some("1")), (name, value)]), ..bare() };
        assert_invalid(&spec, field);
    }
}

#[test]
fn terminal_names_and_values_are_validated() {
    for (name, value, field) in [
        ("TERM", "du\0mb", "terminalEnv.TERM"),
        ("", "x", "terminalEnv."),
        ("A=B", "x", "terminalEnv.A=B"),
        ("A\0", "x", "terminalEnv.A\0"),
    ] {
        let spec = EnvironmentSpec { terminal: Some(pairs(&[(name, value)])), ..bare() };
        assert_invalid(&spec, field);
    }
}

#[test]
fn managed_keys_and_values_are_validated() {
    for key in ["DSH_x", "FOO", "Path", "path", "DSH_", ""] {
        let spec = EnvironmentSpec { managed: pairs(&[(key, "1")]), ..bare() };
        assert_invalid(&spec, &format!("dshEnv.{key}"));
    }
    let spec = EnvironmentSpec { managed: pairs(&[("DSH_A", "a\0b")]), ..bare() };
    assert_invalid(&spec, "dshEnv.DSH_A");
    let spec = EnvironmentSpec { managed: pairs(&[("PATH", "/a\0")]), ..bare() };
    assert_invalid(&spec, "dshEnv.PATH");
}

#[test]
fn globs_must_not_be_empty() {
    let spec = EnvironmentSpec {
        scrub: ScrubPolicy { exclude: vec!["A".into(), "B".into(), String::new()], ..ScrubPolicy::default() },
        ..bare()
    };
    assert_invalid(&spec, "scrub.exclude[2]");
    assert_invalid(&including(&["*", ""]), "scrub.includeOnly[1]");
}

#[test]
fn globs_must_not_contain_nul() {
    let spec = EnvironmentSpec {
        scrub: ScrubPolicy { exclude: vec!["A".into(), "B\0*".into()], ..ScrubPolicy::default() },
        ..bare()
    };
    assert_invalid(&spec, "scrub.exclude[1]");
    assert_invalid(&including(&["\0"]), "scrub.includeOnly[0]");
}
