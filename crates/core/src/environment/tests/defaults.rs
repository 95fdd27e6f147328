//! The defaults a spec starts from (inherit everything, credentials out,
//! hardening off, the terminal variables), and the stable spellings of
//! `inherit`, of a variable's source and of a removal's reason.

use super::{build, pairs};
use crate::environment::{EnvironmentSpec, Inherit, RemovalReason, ScrubPolicy, Source, DEFAULT_TERMINAL_ENV};

#[test]
fn defaults() {
    let scrub = ScrubPolicy::default();
    assert_eq!(scrub.inherit, Inherit::All);
    assert!(scrub.default_exclude, "credentials go by default");
    assert!(scrub.exclude.is_empty(), "the caller's globs add to the credentials");
    assert_eq!(scrub.include_only, None);
    assert!(!scrub.hardening, "hardening is a preset, off by default");
    let spec = EnvironmentSpec::default();
    assert_eq!(spec.scrub, scrub);
    assert_eq!(spec.terminal, Some(pairs(&DEFAULT_TERMINAL_ENV)));
    assert!(spec.explicit.is_empty() && spec.managed.is_empty());
}

#[test]
fn default_spec_gives_terminal_variables() {
    let env = build(&[("PATH", "/bin")], &EnvironmentSpec::default());
    assert_eq!(
        env.vars,
        pairs(&[("GIT_PAGER", "cat"), ("NO_COLOR", "1"), ("PAGER", "cat"), ("PATH", "/bin"), ("TERM", "dumb")])
    );
    assert_eq!(env.source("TERM"), Some(Source::Terminal));
    assert_eq!(env.source("PATH"), Some(Source::Inherited));
    assert!(env.removed.is_empty());
}

#[test]
fn inherit_parses_its_three_spellings() {
    for inherit in [Inherit::All, Inherit::Core, Inherit::None] {
        assert_eq!(inherit.as_str().parse::<Inherit>().unwrap(), inherit);
    }
    for bad in ["ALL", "", "some"] {
        let err = bad.parse::<Inherit>().unwrap_err();
        assert_eq!(err.code(), "ERR_SHELL_EXEC_INVALID_SPEC");
        assert!(err.to_string().contains("field scrub.inherit:"));
    }
}

#[test]
fn sources_and_reasons_have_stable_names() {
    let sources = [Source::Inherited, Source::Terminal, Source::Explicit, Source::Managed];
    assert_eq!(sources.map(Source::as_str), ["inherited", "terminal", "explicit", "managed"]);
    let reasons = [
        RemovalReason::ManagedPrefix,
        RemovalReason::Inherit,
        RemovalReason::Exclude,
        RemovalReason::Hardening,
        RemovalReason::IncludeOnly,
        RemovalReason::ExplicitUnset,
    ];
    assert_eq!(
        reasons.map(RemovalReason::as_str),
        ["managed-prefix", "inherit", "exclude", "hardening", "include-only", "explicit-unset"]
    );
}
