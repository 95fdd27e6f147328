//! The private glob matchers: `*` and `?`, exact otherwise, `Globs` ignoring
//! case; and, as properties, both agree with an obvious recursive matcher.

use std::convert::identity;

use proptest::prelude::*;

use crate::environment::{glob_matches, upper, Globs};

#[test]
fn globs_match_stars_and_question_marks() {
    for (pattern, name) in [
        ("PATH", "PATH"),
        ("*", ""),
        ("*", "ANY"),
        ("*KEY*", "KEY"),
        ("*KEY*", "AWS_ACCESS_KEY_ID"),
        ("LC_*", "LC_"),
        ("A?C", "ABC"),
        ("*A*B", "XAYAB"),
        ("**B", "B"),
        ("A*B*C", "ABBCC"),
    ] {
        assert!(glob_matches(pattern, name, identity), "{pattern} ~ {name}");
    }
    for (pattern, name) in [
        ("PATH", "PATHX"),
        ("PATH", "XPATH"),
        ("A?C", "AC"),
        ("A?C", "ABBC"),
        ("*A*B", "XAYABC"),
        ("LC_*", "LC"),
        ("?", ""),
    ] {
        assert!(!glob_matches(pattern, name, identity), "{pattern} !~ {name}");
    }
}

#[test]
fn globs_ignore_case() {
    let globs = Globs::new(&["*key*", "X?Z"]);
    assert!(globs.matches("aws_access_key_id"));
    assert!(globs.matches("AWS_ACCESS_KEY_ID"));
    assert!(globs.matches("xyz"));
    assert!(!globs.matches("PATH"));
}

// Properties of the private matchers; the pipeline's own properties are in
// tests/properties/environment.rs.

/// The obvious recursive glob matcher, to check the backtracking one against.
fn reference_glob(pattern: &[char], name: &[char]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some(('*', rest)) => (0..=name.len()).any(|skip| reference_glob(rest, &name[skip..])),
        Some((&c, rest)) => name.first().is_some_and(|&n| c == '?' || c == n) && reference_glob(rest, &name[1..]),
    }
}

proptest! {
    #[test]
    fn globs_match_like_the_reference_ignoring_case(pattern in "[aAé€ſb*?]{1,6}", name in "[aAé€ſbB]{0,8}") {
        let upper_chars = |s: &str| upper(s).chars().collect::<Vec<_>>();
        let expected = reference_glob(&upper_chars(&pattern), &upper_chars(&name));
        prop_assert_eq!(Globs::new(&[&pattern]).matches(&name), expected);
    }

    #[test]
    fn glob_matches_like_the_reference(pattern in "[aé€b*?]{0,6}", name in "[aé€b]{0,8}") {
        let expected = reference_glob(&pattern.chars().collect::<Vec<_>>(), &name.chars().collect::<Vec<_>>());
        prop_assert_eq!(glob_matches(&pattern, &name, identity), expected);
    }
}
