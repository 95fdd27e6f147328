//! What the fuzz targets share: input types that reach the interesting
//! branches quickly (dictionary names in random case, valid managed keys,
//! globs) while still allowing any string, and the oracles' checks of the
//! invariants, which the property tests make too.

use arbitrary::{Arbitrary, Result, Unstructured};

// The rules and the checks of each invariant, as the property tests make
// them, shared by path.
#[path = "../../crates/core/tests/oracles/mod.rs"]
mod oracles;
pub use oracles::{
    check_assembled_path, check_command_path, check_deterministic, check_home, check_key_rule, check_last_managed_wins,
    check_last_writes, check_managed_namespace, check_managed_prefix, check_reconcile, check_registry_accepts,
    check_removals, check_reserved, check_shape, check_snapshot_entries, check_valid_key_is_safe, expected_directories,
    recase,
};

/// Names some step of the pipeline treats specially, in one spelling each;
/// [`Name`] re-cases them and sometimes adds a suffix.
pub const NAMES: &[&str] = &[
    "DSH_SESSION_ID",
    "DSH_HOME",
    "DSH_X",
    "DSH_",
    "d\u{17f}h_session_id",
    "DSHX",
    "XDSH_A",
    "PATH",
    "Path",
    "TERM",
    "HOME",
    "LC_ALL",
    "TEMP",
    "SystemRoot",
    "PATHEXT",
    "LD_PRELOAD",
    "BASH_FUNC_f%%",
    "NODE_OPTIONS",
    "API_KEY",
    "GITHUB_TOKEN",
    "NO_COLOR",
    "PAGER",
    "=C:",
    "A=B",
    "A\0B",
    "",
    "\u{df}",
    "\u{1c5}",
    "a",
    "B",
];

/// Globs that select some of [`NAMES`].
pub const GLOBS: &[&str] = &["*", "*KEY*", "*token*", "dsh_*", "PATH", "?A*", "LC_*", "\u{17f}*", "*_*", "T?RM", ""];

/// An environment name: usually a dictionary entry, re-cased and maybe
/// extended, sometimes any string at all.
#[derive(Debug, Clone)]
pub struct Name(pub String);

impl<'a> Arbitrary<'a> for Name {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Self(dictionary_or_any(u, NAMES)?))
    }
}

/// A scrub glob, drawn the same way from [`GLOBS`].
#[derive(Debug, Clone)]
pub struct Glob(pub String);

impl<'a> Arbitrary<'a> for Glob {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Self(dictionary_or_any(u, GLOBS)?))
    }
}

fn dictionary_or_any(u: &mut Unstructured<'_>, dictionary: &[&str]) -> Result<String> {
    if u.ratio(1, 5)? {
        return String::arbitrary(u);
    }
    let mut s = recase(u.choose(dictionary)?, u64::arbitrary(u)?);
    if u.ratio(1, 4)? {
        s.push(char::arbitrary(u)?);
    }
    Ok(s)
}

/// A managed key: usually `PATH` or a valid `DSH_*` key, sometimes any string
/// (which the pipeline must reject, not panic on).
#[derive(Debug, Clone)]
pub struct ManagedKey(pub String);

impl<'a> Arbitrary<'a> for ManagedKey {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        if u.ratio(1, 10)? {
            return Ok(Self(String::arbitrary(u)?));
        }
        if u.ratio(1, 5)? {
            return Ok(Self("PATH".into()));
        }
        const FIRST: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        const REST: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
        let mut key = String::from("DSH_");
        key.push(*u.choose(FIRST)? as char);
        for _ in 0..u.int_in_range(0..=3)? {
            key.push(*u.choose(REST)? as char);
        }
        Ok(Self(key))
    }
}
