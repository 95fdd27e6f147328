//! Credentials (step 4) and the caller's `exclude` globs (step 5): names that
//! say they hold a credential, values that carry one and secrets' shapes
//! under a public prefix go by default, in any case; `exclude` adds to them,
//! and only turning the default off keeps them.

use super::{bare, build, names, reason};
use crate::credentials;
use crate::environment::{EnvironmentSpec, RemovalReason, ScrubPolicy};

#[test]
fn credential_names_are_read_ignoring_case() {
    for name in ["AWS_SECRET_ACCESS_KEY", "github_token", "DB_Password", "DSH_API_KEY", "\u{17f}ecret"] {
        assert_eq!(credentials::find(name, "hunter2"), Some(credentials::Finding::Name), "{name}");
    }
    for name in ["PATH", "HOME", "DSH_SESSION_ID", "KE_Y", "TOKE"] {
        assert_eq!(credentials::find(name, "hunter2"), None, "{name}");
    }
}

#[test]
fn default_exclude_drops_credentials_in_any_case() {
    let env = build(
        &[
            ("aws_secret_access_key", "x"),
            ("GITHUB_TOKEN", "x"),
            ("db_Password", "x"),
            ("MY_SECRET", "x"),
            ("PATH", "/bin"),
        ],
        &bare(),
    );
    assert_eq!(names(&env), ["PATH"]);
    for key in ["aws_secret_access_key", "GITHUB_TOKEN", "db_Password", "MY_SECRET"] {
        assert_eq!(reason(&env, key), Some(RemovalReason::Credential), "{key}");
    }
}

#[test]
fn credentials_go_by_name_and_by_value_whatever_the_caller_excludes() {
    let parent = [
        ("GH_PAT", "x"),
        ("MYSQL_PWD", "x"),
        ("DB_PASS", "x"),
        ("NPM_CONFIG__AUTH", "x"),
        ("CI_JOB_JWT", "x"),
        ("BW_SESSION", "x"),
        ("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0001/B0001/AbCdEfGhIjKlMnOpQrStUvWx"),
        ("DATABASE_URL", "postgres://app:pw@db/app"),
        ("MONGODB_URI", "mongodb://u:p@m/db"),
        ("SOME_SETTING", "ghp_0123456789abcdefghijABCDEFGHIJklmnop"),
        ("GOOGLE_APPLICATION_CREDENTIALS", "/home/ada/.config/gcloud/key.json"),
        ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
        ("TOKEN_URL", "https://auth.example.com/oauth/token"),
        ("AWS_REGION", "eu-west-1"),
        ("PWD", "/work"),
        ("OLDPWD", "/"),
        ("PATH", "/bin"),
    ];
    let spec =
        EnvironmentSpec { scrub: ScrubPolicy { exclude: vec!["AWS_*".into()], ..ScrubPolicy::default() }, ..bare() };
    let env = build(&parent, &spec);
    assert_eq!(
        names(&env),
        ["GOOGLE_APPLICATION_CREDENTIALS", "OLDPWD", "PATH", "PWD", "SSH_AUTH_SOCK", "TOKEN_URL"],
        "places stay"
    );
    for key in ["GH_PAT", "MYSQL_PWD", "DB_PASS", "NPM_CONFIG__AUTH", "CI_JOB_JWT", "BW_SESSION"] {
        assert_eq!(reason(&env, key), Some(RemovalReason::Credential), "{key}");
    }
    for key in ["SLACK_WEBHOOK_URL", "DATABASE_URL", "MONGODB_URI", "SOME_SETTING"] {
        assert_eq!(reason(&env, key), Some(RemovalReason::SecretValue), "{key}");
    }
    assert_eq!(reason(&env, "AWS_REGION"), Some(RemovalReason::Exclude), "exclude adds to the defaults");
}

#[test]
fn the_three_credential_steps_report_in_pipeline_order_and_name_order_within_each() {
    let env = build(
        &[
            ("VITE_STRIPE_SECRET_KEY", "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"),
            ("B_SERVICE", "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"),
            ("A_SERVICE", "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"),
            ("Z_TOKEN", "x"),
            ("A_TOKEN", "x"),
            ("VITE_MAPBOX_TOKEN", "pk.eyJ1IjoiYWNtZSIsImEiOiJjbHgifQ.AbCdEf-12"),
            ("VITE_API_KEY", "Zq8Lw3Xv9Tp2Nc7Rb4Hm"),
        ],
        &bare(),
    );
    assert_eq!(names(&env), ["VITE_API_KEY", "VITE_MAPBOX_TOKEN"], "public by construction");
    let removed: Vec<(&str, RemovalReason)> = env.removed.iter().map(|r| (r.key.as_str(), r.reason)).collect();
    assert_eq!(
        removed,
        [
            ("A_TOKEN", RemovalReason::Credential),
            ("Z_TOKEN", RemovalReason::Credential),
            ("A_SERVICE", RemovalReason::SecretValue),
            ("B_SERVICE", RemovalReason::SecretValue),
            ("VITE_STRIPE_SECRET_KEY", RemovalReason::PublicPrefixSecret),
        ]
    );
}

#[test]
fn turning_the_credential_default_off_is_explicit_and_keeps_them() {
    let spec = EnvironmentSpec {
        scrub: ScrubPolicy { default_exclude: false, exclude: vec!["FO?".into()], ..ScrubPolicy::default() },
        ..bare()
    };
    let env = build(&[("FOO", "1"), ("FOOD", "1"), ("DATABASE_URL", "postgres://a:b@c/d"), ("API_KEY", "kept")], &spec);
    assert_eq!(names(&env), ["API_KEY", "DATABASE_URL", "FOOD"]);
    assert_eq!(reason(&env, "FOO"), Some(RemovalReason::Exclude));
}
