//! Unit tests of the environment pipeline, one module per behaviour, and the
//! helpers they share. The pipeline's own properties are in
//! `tests/properties/environment.rs`.

use crate::environment::{build_environment, Environment, EnvironmentSpec, Platform, RemovalReason, ScrubPolicy};

mod credentials;
mod defaults;
mod globs;
mod hardening;
mod layers;
mod names;
mod parent;
mod path;
mod remembered;
mod scrub;
mod validation;

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The default scrub, without the terminal defaults, so tests see only what they add.
fn bare() -> EnvironmentSpec {
    EnvironmentSpec { terminal: None, ..EnvironmentSpec::default() }
}

fn build_on(platform: Platform, parent: &[(&str, &str)], spec: &EnvironmentSpec) -> Environment {
    build_environment(&platform, pairs(parent), spec).unwrap()
}

fn build(parent: &[(&str, &str)], spec: &EnvironmentSpec) -> Environment {
    build_on(Platform::posix(), parent, spec)
}

fn names(env: &Environment) -> Vec<&str> {
    env.vars.iter().map(|(k, _)| k.as_str()).collect()
}

fn reason(env: &Environment, key: &str) -> Option<RemovalReason> {
    env.removed.iter().find(|r| r.key == key).map(|r| r.reason)
}

/// Asserts the spec is rejected as an invalid spec naming `field`.
fn assert_invalid(spec: &EnvironmentSpec, field: &str) {
    let err = build_environment(&Platform::posix(), Vec::new(), spec).unwrap_err();
    assert_eq!(err.code(), "ERR_SHELL_EXEC_INVALID_SPEC");
    let message = err.to_string();
    assert!(message.contains(&format!("field {field}:")), "{message:?} should name {field:?}");
}

fn explicit(list: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
    list.iter().map(|(k, v)| (k.to_string(), v.map(String::from))).collect()
}

fn including(globs: &[&str]) -> EnvironmentSpec {
    EnvironmentSpec {
        scrub: ScrubPolicy {
            include_only: Some(globs.iter().map(|g| g.to_string()).collect()),
            ..ScrubPolicy::default()
        },
        ..EnvironmentSpec::default()
    }
}
