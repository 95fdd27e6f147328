//! Home resolution: the home is absolute, normalised and a fixed point, and
//! reconciling two configured homes agrees with resolving them.

use std::path::{is_separator, Component, Path, PathBuf};

use dsh_shell_env_core::home::{reconcile_dsh_home, resolve_dsh_home, HomeContext};

/// Checks a resolved `home` (from `configured` in `context`): absolute,
/// normalised, a fixed point of resolution, and reconciled with itself.
pub fn check_home(home: &str, configured: Option<&str>, context: &HomeContext) {
    let path = Path::new(home);
    assert!(path.is_absolute(), "{home:?} from {configured:?} in {context:?}");
    // Platform-general: a drive or share prefix is allowed, `.` and `..` are not.
    assert!(
        path.components().all(|c| matches!(c, Component::Prefix(_) | Component::RootDir | Component::Normal(_))),
        "{home:?} from {configured:?}"
    );
    match path.parent() {
        // Only a root (any drive's, on Windows) keeps its separator, spelt once: `/`, never `//`.
        None => assert_eq!(path.components().collect::<PathBuf>().as_os_str(), path.as_os_str(), "{home:?}"),
        Some(_) => assert!(!home.ends_with(is_separator), "{home:?} from {configured:?}"),
    }
    // Resolving the result again changes nothing, in any context.
    assert_eq!(resolve_dsh_home(Some(home), context), home, "not a fixed point, in {context:?}");
    assert_eq!(reconcile_dsh_home(Some(home), Some(home), context).as_deref(), Ok(home), "in {context:?}");
}

/// Checks `reconcile_dsh_home`: with one side absent or empty it is the plain
/// resolution of the other; with both, their common resolution, or a conflict.
pub fn check_reconcile(top: Option<&str>, skills_local: Option<&str>, context: &HomeContext) {
    // An empty value counts as absent.
    fn given(value: Option<&str>) -> Option<&str> {
        value.filter(|value| !value.is_empty())
    }
    let reconciled = reconcile_dsh_home(top, skills_local, context);
    let resolve = |value: Option<&str>| resolve_dsh_home(value, context);
    let expected = match (given(top), given(skills_local)) {
        (given_top, None) => Some(resolve(given_top)),
        (None, given_skills_local) => Some(resolve(given_skills_local)),
        // Both given: a conflict exactly when they resolve apart.
        (given_top, given_skills_local) => {
            let home = resolve(given_top);
            (home == resolve(given_skills_local)).then_some(home)
        }
    };
    match (&reconciled, expected) {
        (Ok(home), Some(expected)) => assert_eq!(*home, expected, "from {top:?} and {skills_local:?} in {context:?}"),
        (Err(error), None) => assert_eq!(error.code(), "ERR_SHELL_ENV_HOME_CONFLICT", "{error}"),
        (reconciled, expected) => {
            panic!("{reconciled:?}, expected {expected:?}, from {top:?} and {skills_local:?} in {context:?}")
        }
    }
    if let Ok(home) = &reconciled {
        assert!(Path::new(home).is_absolute(), "{home:?} from {top:?} and {skills_local:?} in {context:?}");
    }
}
