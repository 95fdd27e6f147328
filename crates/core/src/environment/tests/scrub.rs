//! The filters on inherited variables besides credentials and hardening: the
//! managed prefix (step 2), `inherit` (step 3) and `includeOnly` (step 7), and
//! which step a removed name is reported under.

use super::{bare, build, build_on, explicit, including, names, pairs, reason};
use crate::environment::{EnvironmentSpec, Inherit, Platform, Removal, RemovalReason, ScrubPolicy, Source};

// managed-prefix.

#[test]
fn managed_prefix_drops_stale_names_in_any_case() {
    let env = build(
        &[("DSH_SESSION_ID", "stale"), ("dsh_stale", "x"), ("Dsh_Mixed", "x"), ("DSHX", "kept"), ("XDSH_A", "kept")],
        &bare(),
    );
    assert_eq!(names(&env), ["DSHX", "XDSH_A"]);
    for key in ["DSH_SESSION_ID", "Dsh_Mixed", "dsh_stale"] {
        assert_eq!(reason(&env, key), Some(RemovalReason::ManagedPrefix), "{key}");
    }
}

#[test]
fn managed_prefix_is_reported_even_when_the_snapshot_re_adds_the_key() {
    let spec = EnvironmentSpec { managed: pairs(&[("DSH_SESSION_ID", "fresh")]), ..bare() };
    let env = build(&[("DSH_SESSION_ID", "stale"), ("dsh_stale", "x")], &spec);
    assert_eq!(env.vars, pairs(&[("DSH_SESSION_ID", "fresh")]));
    assert_eq!(reason(&env, "DSH_SESSION_ID"), Some(RemovalReason::ManagedPrefix));
    assert_eq!(reason(&env, "dsh_stale"), Some(RemovalReason::ManagedPrefix));
}

#[test]
fn windows_managed_prefix_drops_names_that_fold_into_the_namespace() {
    // U+017F (long s) upper-cases to `S`: on Windows this is DSH_SESSION_ID.
    let env = build_on(Platform::windows(), &[("d\u{17f}h_session_id", "stale"), ("ds\u{17f}_x", "kept")], &bare());
    assert_eq!(env.get("DSH_SESSION_ID"), None);
    assert_eq!(reason(&env, "d\u{17f}h_session_id"), Some(RemovalReason::ManagedPrefix));
    assert_eq!(names(&env), ["ds\u{17f}_x"]);
    // POSIX names are byte strings: the same name is not a managed one there.
    let env = build(&[("d\u{17f}h_session_id", "kept")], &bare());
    assert_eq!(names(&env), ["d\u{17f}h_session_id"]);
}

// inherit.

fn with_inherit(inherit: Inherit) -> EnvironmentSpec {
    EnvironmentSpec { scrub: ScrubPolicy { inherit, ..ScrubPolicy::default() }, ..bare() }
}

#[test]
fn inherit_all_keeps_everything() {
    let env = build(&[("FOO", "1"), ("PATH", "/bin")], &with_inherit(Inherit::All));
    assert_eq!(names(&env), ["FOO", "PATH"]);
}

#[test]
fn inherit_core_keeps_the_posix_core_case_sensitively() {
    let parent = [
        ("PATH", "/bin"),
        ("HOME", "/h"),
        ("USER", "u"),
        ("LOGNAME", "u"),
        ("SHELL", "/bin/sh"),
        ("LANG", "C"),
        ("LC_ALL", "C"),
        ("LC_CTYPE", "C"),
        ("TMPDIR", "/t"),
        ("TEMP", "/t"),
        ("TMP", "/t"),
        ("TZ", "UTC"),
        ("FOO", "1"),
        ("path", "lower"),
        ("SYSTEMROOT", "C:\\Windows"),
    ];
    let env = build(&parent, &with_inherit(Inherit::Core));
    assert_eq!(env.vars.len(), 12);
    for key in ["FOO", "path", "SYSTEMROOT"] {
        assert_eq!(env.get(key), None, "{key}");
        assert_eq!(reason(&env, key), Some(RemovalReason::Inherit), "{key}");
    }
}

#[test]
fn inherit_core_keeps_the_windows_basics_in_any_case() {
    let parent = [
        ("Path", "C:\\bin"),
        ("PATHEXT", ".EXE"),
        ("SystemRoot", "C:\\Windows"),
        ("SystemDrive", "C:"),
        ("windir", "C:\\Windows"),
        ("ComSpec", "cmd.exe"),
        ("USERPROFILE", "C:\\Users\\u"),
        ("USERNAME", "u"),
        ("HOMEDRIVE", "C:"),
        ("HOMEPATH", "\\Users\\u"),
        ("APPDATA", "a"),
        ("LOCALAPPDATA", "l"),
        ("ProgramData", "p"),
        ("ProgramFiles", "p"),
        ("ProgramFiles(x86)", "p"),
        ("COMPUTERNAME", "c"),
        ("TEMP", "t"),
        ("TMP", "t"),
        ("TZ", "UTC"),
        ("LANG", "C"),
        ("lc_all", "C"),
        ("FOO", "1"),
    ];
    let env = build_on(Platform::windows(), &parent, &with_inherit(Inherit::Core));
    assert_eq!(env.vars.len(), parent.len() - 1);
    assert_eq!(env.get("FOO"), None);
    assert_eq!(env.removed, [Removal { key: "FOO".into(), reason: RemovalReason::Inherit }]);
}

#[test]
fn inherit_none_keeps_nothing() {
    let spec = EnvironmentSpec { explicit: explicit(&[("A", Some("1"))]), ..with_inherit(Inherit::None) };
    let env = build(&[("PATH", "/bin"), ("HOME", "/h")], &spec);
    assert_eq!(env.vars, pairs(&[("A", "1")]));
    assert_eq!(reason(&env, "PATH"), Some(RemovalReason::Inherit));
    assert_eq!(reason(&env, "HOME"), Some(RemovalReason::Inherit));
}

#[test]
fn a_name_is_reported_by_the_first_step_that_removes_it() {
    // TOKEN is outside the core list and matches an exclude glob; inherit runs first.
    let env = build(&[("TOKEN", "x")], &with_inherit(Inherit::Core));
    assert_eq!(env.removed, [Removal { key: "TOKEN".into(), reason: RemovalReason::Inherit }]);
    // Re-set and unset explicitly afterwards: still reported once, as excluded.
    let spec =
        EnvironmentSpec { explicit: explicit(&[("GITHUB_TOKEN", Some("new")), ("GITHUB_TOKEN", None)]), ..bare() };
    let env = build(&[("GITHUB_TOKEN", "old")], &spec);
    assert!(env.vars.is_empty());
    assert_eq!(env.removed, [Removal { key: "GITHUB_TOKEN".into(), reason: RemovalReason::Credential }]);
}

// includeOnly.

#[test]
fn include_only_keeps_matching_inherited_names() {
    let env = build(
        &[("PATH", "/bin"), ("home", "/h"), ("LC_ALL", "C"), ("FOO", "1")],
        &including(&["path", "HOME", "lc_*"]),
    );
    assert_eq!(env.get("FOO"), None);
    assert_eq!(reason(&env, "FOO"), Some(RemovalReason::IncludeOnly));
    for key in ["PATH", "home", "LC_ALL"] {
        assert_eq!(env.source(key), Some(Source::Inherited), "{key}");
    }
}

#[test]
fn include_only_does_not_filter_terminal_explicit_or_managed() {
    let spec = EnvironmentSpec {
        explicit: explicit(&[("MINE", Some("1"))]),
        managed: pairs(&[("DSH_SHELL", "1")]),
        ..including(&[])
    };
    let env = build(&[("PATH", "/bin"), ("TERM", "xterm")], &spec);
    assert_eq!(names(&env), ["DSH_SHELL", "GIT_PAGER", "MINE", "NO_COLOR", "PAGER", "TERM"]);
    assert_eq!(env.get("TERM"), Some("dumb"));
    assert_eq!(reason(&env, "PATH"), Some(RemovalReason::IncludeOnly));
    assert_eq!(reason(&env, "TERM"), Some(RemovalReason::IncludeOnly));
}
