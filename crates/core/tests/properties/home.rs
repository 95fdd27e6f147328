//! Home resolution: the home is always absolute, normalised and a fixed
//! point, and an absolute configured home ignores the context.

use std::path::PathBuf;

use dsh_shell_env_core::home::{resolve_dsh_home, HomeContext};
use proptest::prelude::*;

use crate::absolute;
use crate::oracles::{check_home, check_reconcile};

fn home_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("  ".to_owned()),
        "~(/[a-z.]{0,3}){0,3}/?",
        "~[a-z]{1,3}(/[a-z]{1,2})?",
        "(/|\\./|\\.\\./)?([a-z.]{1,3}/){0,4}[a-z.]{0,3}",
        "\\PC{0,8}",
    ]
}

fn absolute_dir() -> impl Strategy<Value = PathBuf> {
    "([a-z.]{1,3}/){0,3}[a-z.]{0,3}".prop_map(|rest| PathBuf::from(absolute(&rest)))
}

fn context() -> impl Strategy<Value = HomeContext> {
    let user_home =
        proptest::option::of(prop_oneof![absolute_dir(), "([a-z.]{1,3}/){0,2}[a-z]{0,2}".prop_map(PathBuf::from)]);
    (proptest::option::of(home_value()), user_home, absolute_dir()).prop_map(|(env_home, user_home, cwd)| HomeContext {
        env_home,
        user_home,
        cwd,
    })
}

proptest! {
    #[test]
    fn the_home_is_always_absolute_and_normalised(configured in proptest::option::of(home_value()), context in context()) {
        let home = resolve_dsh_home(configured.as_deref(), &context);
        check_home(&home, configured.as_deref(), &context);
        // The configured value reconciles with the home it resolved to, and with itself.
        check_reconcile(configured.as_deref(), Some(&home), &context);
        check_reconcile(configured.as_deref(), configured.as_deref(), &context);
    }

    #[test]
    fn an_absolute_configured_home_ignores_the_context(
        configured in "([a-z.]{1,3}/){0,3}[a-z.]{0,3}".prop_map(|rest| absolute(&rest)),
        a in context(),
        b in context(),
    ) {
        prop_assert_eq!(resolve_dsh_home(Some(&configured), &a), resolve_dsh_home(Some(&configured), &b));
    }
}
