//! `resolve_dsh_home` and `reconcile_dsh_home` on arbitrary configured values,
//! `DSH_HOME` values and user homes (relative ones included), from an absolute
//! current directory as the process always has: never a panic, always an
//! absolute, normalised home that resolves to itself.
#![no_main]

use std::path::PathBuf;

use arbitrary::Arbitrary;
use dsh_shell_env_core::home::{resolve_dsh_home, HomeContext};
use dsh_shell_env_fuzz::{check_home, check_reconcile};
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
    check_home(&home, input.configured.as_deref(), &context);
    // Reconciling never panics, and agrees with resolving either side.
    check_reconcile(input.configured.as_deref(), input.skills_local.as_deref(), &context);
});
