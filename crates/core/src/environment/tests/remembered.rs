//! Builds in a row from a parent that changes between them: each is built
//! from the parent as it is then, whatever an earlier build remembered.

use super::{bare, build, names, reason};
use crate::environment::RemovalReason;

#[test]
fn a_parent_changed_between_builds_is_scrubbed_as_it_is_now() {
    let host = [("PATH", "/bin"), ("REMEMBERED_SPEC_NOTE", "hello")];
    for _ in 0..2 {
        assert_eq!(names(&build(&host, &bare())), ["PATH", "REMEMBERED_SPEC_NOTE"]);
    }
    // A credential added.
    let added =
        build(&[("PATH", "/bin"), ("REMEMBERED_SPEC_NOTE", "hello"), ("REMEMBERED_SPEC_PASSWORD", "hunter2")], &bare());
    assert_eq!(names(&added), ["PATH", "REMEMBERED_SPEC_NOTE"]);
    assert_eq!(reason(&added, "REMEMBERED_SPEC_PASSWORD"), Some(RemovalReason::Credential));
    // A value changed in place, to a token.
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let changed = build(&[("PATH", "/bin"), ("REMEMBERED_SPEC_NOTE", token)], &bare());
    assert_eq!(names(&changed), ["PATH"]);
    assert_eq!(reason(&changed, "REMEMBERED_SPEC_NOTE"), Some(RemovalReason::SecretValue));
    // A value changed in place to one of the same length: a switch, then a password.
    let switch = build(&[("PATH", "/bin"), ("REMEMBERED_SPEC_PASSWORD", "true")], &bare());
    assert_eq!(names(&switch), ["PATH", "REMEMBERED_SPEC_PASSWORD"]);
    let password = build(&[("PATH", "/bin"), ("REMEMBERED_SPEC_PASSWORD", "hunt")], &bare());
    assert_eq!(names(&password), ["PATH"]);
    // A variable removed, and the first parent again.
    assert_eq!(names(&build(&[("PATH", "/bin")], &bare())), ["PATH"]);
    let again = build(&host, &bare());
    assert_eq!(names(&again), ["PATH", "REMEMBERED_SPEC_NOTE"]);
    assert!(again.removed.is_empty());
}
