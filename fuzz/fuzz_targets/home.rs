//! `resolve_dsh_home` and `reconcile_dsh_home` on arbitrary configured values,
//! `DSH_HOME` values and user homes (relative ones included), from an absolute
//! current directory as the process always has: never a panic, always an
//! absolute, normalised home that resolves to itself.
#![no_main]

use std::path::{Component, Path, PathBuf};

use arbitrary::Arbitrary;
use dsh_shell_env_core::home::{reconcile_dsh_home, resolve_dsh_home, HomeContext};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Input {
    configured: Option<String>,
    skills_local: Option<String>,
    env_home: Option<String>,
    user_home: Option<String>,
    cwd: String,
}

fuzz_target!(|input: Input| {
    let context = HomeContext {
        env_home: input.env_home,
        user_home: input.user_home.map(PathBuf::from),
        cwd: PathBuf::from(format!("/{}", input.cwd)),
    };
    let home = resolve_dsh_home(input.configured.as_deref(), &context);
    let path = Path::new(&home);
    assert!(path.is_absolute(), "{home:?} from {input:?}", input = (&input.configured, &context));
    assert!(path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_))), "{home:?}");
    assert!(home == "/" || !home.ends_with('/'), "{home:?}");
    assert_eq!(resolve_dsh_home(Some(&home), &context), home, "not a fixed point");

    // Reconciling never panics; with one side absent or both equal it is the plain resolution.
    let reconciled = reconcile_dsh_home(input.configured.as_deref(), input.skills_local.as_deref(), &context);
    match input.skills_local.as_deref().filter(|s| !s.is_empty()) {
        None => assert_eq!(reconciled.as_deref(), Ok(home.as_str())),
        Some(skills_local) => {
            if let Ok(reconciled) = reconciled {
                assert!(Path::new(&reconciled).is_absolute());
                assert_eq!(reconciled, resolve_dsh_home(Some(skills_local), &context));
            }
        }
    }
    assert_eq!(reconcile_dsh_home(Some(&home), Some(&home), &context).as_deref(), Ok(home.as_str()));
});
