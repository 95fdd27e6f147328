//! The layers set over what is inherited (steps 8–11): the terminal defaults,
//! then the explicit `env` (set or unset, in order), then the managed snapshot,
//! which nothing displaces and which alone sets managed keys.

use super::{bare, build, explicit, names, pairs, reason};
use crate::environment::{EnvironmentSpec, Removal, RemovalReason, Source};

#[test]
fn terminal_env_overrides_inherited_and_can_be_turned_off() {
    let env = build(&[("TERM", "xterm")], &EnvironmentSpec::default());
    assert_eq!(env.get("TERM"), Some("dumb"));
    assert_eq!(env.source("TERM"), Some(Source::Terminal));
    assert!(env.removed.is_empty());
    let env = build(&[("TERM", "xterm")], &bare());
    assert_eq!(env.vars, pairs(&[("TERM", "xterm")]));
}

#[test]
fn explicit_overrides_terminal() {
    let spec =
        EnvironmentSpec { explicit: explicit(&[("TERM", Some("xterm-256color"))]), ..EnvironmentSpec::default() };
    let env = build(&[], &spec);
    assert_eq!(env.get("TERM"), Some("xterm-256color"));
    assert_eq!(env.source("TERM"), Some(Source::Explicit));
}

#[test]
fn explicit_unset_removes_inherited_and_terminal_names() {
    let spec = EnvironmentSpec {
        explicit: explicit(&[("HOME", None), ("PAGER", None), ("ABSENT", None)]),
        ..EnvironmentSpec::default()
    };
    let env = build(&[("HOME", "/h"), ("PATH", "/bin")], &spec);
    assert_eq!(names(&env), ["GIT_PAGER", "NO_COLOR", "PATH", "TERM"]);
    assert_eq!(
        env.removed,
        [
            Removal { key: "HOME".into(), reason: RemovalReason::ExplicitUnset },
            Removal { key: "PAGER".into(), reason: RemovalReason::ExplicitUnset },
        ]
    );
}

#[test]
fn explicit_entries_apply_in_order() {
    let spec = EnvironmentSpec {
        explicit: explicit(&[("A", Some("1")), ("A", None), ("B", None), ("B", Some("2"))]),
        ..bare()
    };
    let env = build(&[], &spec);
    assert_eq!(env.vars, pairs(&[("B", "2")]));
    assert_eq!(env.removed, [Removal { key: "A".into(), reason: RemovalReason::ExplicitUnset }]);
}

#[test]
fn explicit_cannot_displace_managed() {
    let spec = EnvironmentSpec {
        explicit: explicit(&[("DSH_SESSION_ID", Some("forged")), ("DSH_HOME", None), ("DSH_EXTRA", Some("mine"))]),
        managed: pairs(&[("DSH_SESSION_ID", "real"), ("DSH_HOME", "/home/u/.dsh")]),
        ..bare()
    };
    let env = build(&[], &spec);
    assert_eq!(env.vars, pairs(&[("DSH_HOME", "/home/u/.dsh"), ("DSH_SESSION_ID", "real")]));
    assert_eq!(env.source("DSH_SESSION_ID"), Some(Source::Managed));
}

#[test]
fn only_the_snapshot_sets_managed_keys() {
    // An explicit or terminal entry whose name upper-cases into the
    // namespace never reaches the child unless the snapshot sets that key.
    let spec = EnvironmentSpec {
        terminal: Some(pairs(&[("DSH_FROM_TERMINAL", "t")])),
        explicit: explicit(&[
            ("DSH_SESSION_ID", Some("forged")),
            ("dsh_lower", Some("x")),
            ("DSH_KEPT", Some("explicit")),
        ]),
        managed: pairs(&[("DSH_KEPT", "managed")]),
        ..bare()
    };
    let env = build(&[], &spec);
    assert_eq!(env.vars, pairs(&[("DSH_KEPT", "managed")]));
    for key in ["DSH_FROM_TERMINAL", "DSH_SESSION_ID", "dsh_lower"] {
        assert_eq!(reason(&env, key), Some(RemovalReason::Unmanaged), "{key}");
    }
    assert_eq!(reason(&env, "DSH_KEPT"), None, "replaced by the snapshot, not removed");
}
