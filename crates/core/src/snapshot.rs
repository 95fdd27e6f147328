//! One collection: the built-ins, each contributor's resolved values checked
//! against its declaration, and the command-directory PATH, folded into the
//! frozen snapshot a shell call receives.
//!
//! The caller drives it (it owns the resolvers): take a [`Collection`], call
//! each contributor's resolver in [`Collection::contributors`] order, hand the
//! values to [`Collection::accept`], then [`Collection::finish`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::command::duration_from_millis;

use crate::error::ShellEnvError;
use crate::keys::{DSH_HOME, DSH_PROFILE, DSH_PROFILE_DIR, DSH_SESSION_ID, DSH_SHELL, PATH_KEY};
use crate::registry::{Contributor, Registry, BUILTIN_OWNER, PATH_DELIMITER};

/// How long an asynchronous collection waits for its resolvers, all together,
/// unless told otherwise.
pub const DEFAULT_COLLECT_TIMEOUT: Duration = Duration::from_millis(5000);

/// The `timeoutMs` option of an asynchronous collection: the default when
/// absent, else a positive finite number of milliseconds.
pub fn collect_timeout(millis: Option<f64>) -> Result<Duration, ShellEnvError> {
    let Some(millis) = millis else { return Ok(DEFAULT_COLLECT_TIMEOUT) };
    duration_from_millis(millis, false).ok_or_else(|| ShellEnvError::InvalidOption {
        option: "timeoutMs",
        reason: format!("must be a positive finite number of milliseconds (got {millis})"),
    })
}

/// A managed snapshot: keys sorted, values ready for an environment block.
pub type Snapshot = BTreeMap<String, String>;

/// One value returned by a resolver, as the caller read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolvedValue {
    /// A string: accepted unless it holds a NUL byte.
    String(String),
    /// A string that is not well-formed Unicode (a lone surrogate): never
    /// accepted, because no child could receive it unchanged.
    IllFormed(crate::text::IllFormedText),
    /// Anything else, described for the error message (`"number"`, `"undefined"`, …).
    Other(String),
}

/// A collection in progress over the contributor set as it was when it began.
#[derive(Debug)]
pub struct Collection<R> {
    contributors: Vec<Arc<Contributor<R>>>,
    values: Snapshot,
}

impl<R> Collection<R> {
    /// Starts a collection: records the built-ins and copies the contributor set.
    /// `session_id` is the calling agent's session id (`None` for no agent).
    pub fn begin(registry: &Registry<R>, session_id: Option<ResolvedValue>) -> Result<Self, ShellEnvError> {
        let mut values = Snapshot::new();
        values.insert(DSH_HOME.into(), registry.dsh_home().into());
        values.insert(DSH_SHELL.into(), "1".into());
        if let Some(profile) = registry.profile() {
            values.insert(DSH_PROFILE.into(), profile.name().into());
            values.insert(DSH_PROFILE_DIR.into(), profile.dir().into());
        }
        if let Some(session_id) = session_id {
            let session_id = checked_value(BUILTIN_OWNER, DSH_SESSION_ID, session_id)?;
            values.insert(DSH_SESSION_ID.into(), session_id);
        }
        Ok(Self { contributors: registry.contributors(), values })
    }

    /// The contributors whose resolvers must run, in name order.
    pub fn contributors(&self) -> &[Arc<Contributor<R>>] {
        &self.contributors
    }

    /// Checks one contributor's resolved values against its declaration and
    /// adds them: undeclared keys, non-strings and NUL bytes are errors.
    pub fn accept(
        &mut self,
        contributor: &Contributor<R>,
        resolved: Vec<(String, ResolvedValue)>,
    ) -> Result<(), ShellEnvError> {
        let mut accepted = Vec::with_capacity(resolved.len());
        for (key, value) in resolved {
            if !contributor.declares(&key) {
                return Err(ShellEnvError::UndeclaredKey { contributor: contributor.name().into(), key });
            }
            accepted.push((key.clone(), checked_value(contributor.name(), &key, value)?));
        }
        // Declared keys are owned by exactly one contributor, so nothing here
        // can overwrite a built-in or another contributor's value.
        self.values.extend(accepted);
        Ok(())
    }

    /// Completes the snapshot. When any contributor declares command
    /// directories, `PATH` holds them (contributor-name order, each
    /// contributor's own order, first occurrence wins) followed by
    /// `inherited_path`; with none, there is no `PATH` key.
    pub fn finish(mut self, inherited_path: Option<&str>) -> Snapshot {
        if let Some(path) = command_path(&self.contributors, inherited_path) {
            self.values.insert(PATH_KEY.into(), path);
        }
        self.values
    }
}

fn checked_value(contributor: &str, key: &str, value: ResolvedValue) -> Result<String, ShellEnvError> {
    let invalid =
        |reason| Err(ShellEnvError::InvalidValue { contributor: contributor.into(), key: key.into(), reason });
    match value {
        ResolvedValue::String(value) if value.contains('\0') => invalid("contains a NUL byte"),
        ResolvedValue::IllFormed(_) => invalid("is not well-formed Unicode (it holds a lone surrogate)"),
        ResolvedValue::String(value) => Ok(value),
        ResolvedValue::Other(found) => {
            Err(ShellEnvError::NonStringValue { contributor: contributor.into(), key: key.into(), found })
        }
    }
}

/// Checks a caller-given inherited PATH (the `inheritedPath` option): it is
/// appended to a managed PATH, so it must be able to reach `execve`.
pub fn check_inherited_path(path: &str) -> Result<(), ShellEnvError> {
    if path.contains('\0') {
        return Err(ShellEnvError::InvalidOption {
            option: "inheritedPath",
            reason: "must not contain NUL bytes".into(),
        });
    }
    Ok(())
}

/// The PATH value for a contributor set, or `None` when no contributor
/// declares a command directory. An `inherited_path` that is empty or holds a
/// NUL byte (one read from an environment object, which could never reach
/// `execve`) is left out, as if there were none.
pub fn command_path<R>(contributors: &[Arc<Contributor<R>>], inherited_path: Option<&str>) -> Option<String> {
    let mut directories: Vec<&str> = Vec::new();
    for directory in contributors.iter().flat_map(|contributor| contributor.command_directories()) {
        if !directories.contains(&directory.as_str()) {
            directories.push(directory);
        }
    }
    if directories.is_empty() {
        return None;
    }
    let mut path = directories.join(&PATH_DELIMITER.to_string());
    if let Some(inherited) = inherited_path.filter(|inherited| !inherited.is_empty() && !inherited.contains('\0')) {
        path.push(PATH_DELIMITER);
        path.push_str(inherited);
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{Declaration, Profile};
    use proptest::prelude::*;

    type Values = Vec<(String, ResolvedValue)>;

    fn string(value: &str) -> ResolvedValue {
        ResolvedValue::String(value.into())
    }

    fn register(registry: &Registry<Values>, name: &str, keys: &[&str], dirs: &[&str], values: Values) {
        registry
            .register(Declaration {
                name: name.into(),
                variables: keys.iter().map(|key| (key.to_string(), Some("described".into()))).collect(),
                command_directories: dirs.iter().map(|dir| dir.to_string()).collect(),
                resolver: values,
            })
            .unwrap();
    }

    /// Drives a collection the way the binding does, with canned values as resolvers.
    fn collect(
        registry: &Registry<Values>,
        session: Option<&str>,
        inherited_path: Option<&str>,
    ) -> Result<Snapshot, ShellEnvError> {
        let mut collection = Collection::begin(registry, session.map(string))?;
        for contributor in collection.contributors().to_vec() {
            collection.accept(&contributor, contributor.resolver().clone())?;
        }
        Ok(collection.finish(inherited_path))
    }

    fn pairs(snapshot: &Snapshot) -> Vec<(&str, &str)> {
        snapshot.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    #[test]
    fn collect_timeout_defaults_and_checks() {
        assert_eq!(collect_timeout(None), Ok(DEFAULT_COLLECT_TIMEOUT));
        assert_eq!(collect_timeout(Some(50.0)), Ok(Duration::from_millis(50)));
        for bad in [0.0, -5.0, f64::NAN, f64::INFINITY] {
            assert_eq!(collect_timeout(Some(bad)).unwrap_err().code(), "ERR_SHELL_ENV_INVALID_OPTION");
        }
    }

    #[test]
    fn builtins_without_agent_or_profile() {
        let registry = Registry::new("/h".into(), None);
        assert_eq!(pairs(&collect(&registry, None, None).unwrap()), [("DSH_HOME", "/h"), ("DSH_SHELL", "1")]);
    }

    #[test]
    fn builtins_with_agent_and_profile() {
        let registry = Registry::new("/h".into(), Some(Profile::new("work", "/p/work").unwrap()));
        assert_eq!(
            pairs(&collect(&registry, Some("s-1"), None).unwrap()),
            [
                ("DSH_HOME", "/h"),
                ("DSH_PROFILE", "work"),
                ("DSH_PROFILE_DIR", "/p/work"),
                ("DSH_SESSION_ID", "s-1"),
                ("DSH_SHELL", "1")
            ]
        );
    }

    #[test]
    fn contributor_values_are_merged_and_may_be_partial() {
        let registry = Registry::new("/h".into(), None);
        register(&registry, "region", &["DSH_REGION", "DSH_ZONE"], &[], vec![("DSH_REGION".into(), string("cn"))]);
        let snapshot = collect(&registry, None, None).unwrap();
        assert_eq!(snapshot.get("DSH_REGION").map(String::as_str), Some("cn"));
        assert!(!snapshot.contains_key("DSH_ZONE"));
        assert!(!snapshot.contains_key("PATH"));
    }

    #[test]
    fn undeclared_non_string_and_nul_values_fail() {
        let cases: [(Values, &str); 4] = [
            (vec![("DSH_OTHER".into(), string("x"))], "ERR_SHELL_ENV_UNDECLARED_KEY"),
            (vec![("DSH_HOME".into(), string("/evil"))], "ERR_SHELL_ENV_UNDECLARED_KEY"),
            (vec![("DSH_A".into(), ResolvedValue::Other("number".into()))], "ERR_SHELL_ENV_NON_STRING_VALUE"),
            (vec![("DSH_A".into(), string("a\0b"))], "ERR_SHELL_ENV_INVALID_VALUE"),
        ];
        for (values, code) in cases {
            let registry = Registry::new("/h".into(), None);
            register(&registry, "c", &["DSH_A"], &[], values);
            let err = collect(&registry, None, None).unwrap_err();
            assert_eq!(err.code(), code);
            assert!(err.to_string().contains("\"c\""), "message names the contributor: {err}");
        }
    }

    #[test]
    fn session_id_must_be_a_clean_string() {
        let registry: Registry<Values> = Registry::new("/h".into(), None);
        let err = Collection::begin(&registry, Some(ResolvedValue::Other("number".into()))).unwrap_err();
        assert_eq!(err.code(), "ERR_SHELL_ENV_NON_STRING_VALUE");
        assert_eq!(collect(&registry, Some("a\0"), None).unwrap_err().code(), "ERR_SHELL_ENV_INVALID_VALUE");
        let ill_formed = ResolvedValue::IllFormed(crate::text::from_utf16(&[0xD800]).unwrap_err());
        let err = Collection::begin(&registry, Some(ill_formed)).unwrap_err();
        assert_eq!(err.code(), "ERR_SHELL_ENV_INVALID_VALUE");
        assert!(err.to_string().contains("DSH_SESSION_ID") && err.to_string().contains("well-formed"), "{err}");
    }

    #[test]
    fn ill_formed_values_are_refused_naming_the_key() {
        let registry = Registry::new("/h".into(), None);
        let ill_formed = ResolvedValue::IllFormed(crate::text::from_utf16(&[0x61, 0xDC00]).unwrap_err());
        register(&registry, "c", &["DSH_A"], &[], vec![("DSH_A".into(), ill_formed)]);
        let err = collect(&registry, None, None).unwrap_err();
        assert_eq!(err.code(), "ERR_SHELL_ENV_INVALID_VALUE");
        assert!(err.to_string().contains("DSH_A") && err.to_string().contains("lone surrogate"), "{err}");
    }

    #[test]
    fn an_inherited_path_with_nul_is_refused_as_an_option_and_dropped_when_read() {
        assert_eq!(check_inherited_path("/bin\0").unwrap_err().code(), "ERR_SHELL_ENV_INVALID_OPTION");
        assert!(check_inherited_path("/usr/bin:/bin").is_ok());
        let registry = Registry::new("/h".into(), None);
        register(&registry, "a", &[], &["/a"], vec![]);
        assert_eq!(collect(&registry, None, Some("/bin\0")).unwrap()["PATH"], "/a");
    }

    #[test]
    fn command_directories_in_name_order_then_inherited_path() {
        let registry = Registry::new("/h".into(), None);
        register(&registry, "b", &[], &["/b1", "/shared", "/b2"], vec![]);
        register(&registry, "a", &[], &["/a1", "/shared"], vec![]);
        let snapshot = collect(&registry, None, Some("/usr/bin:/bin")).unwrap();
        assert_eq!(snapshot["PATH"], "/a1:/shared:/b1:/b2:/usr/bin:/bin");
        let snapshot = collect(&registry, None, None).unwrap();
        assert_eq!(snapshot["PATH"], "/a1:/shared:/b1:/b2");
    }

    #[test]
    fn a_collection_keeps_the_contributor_set_it_started_with() {
        let registry = Registry::new("/h".into(), None);
        register(&registry, "a", &["DSH_A"], &[], vec![("DSH_A".into(), string("1"))]);
        let collection = Collection::begin(&registry, None).unwrap();
        register(&registry, "b", &["DSH_B"], &[], vec![]);
        assert_eq!(collection.contributors().len(), 1);
    }

    proptest! {
        #[test]
        fn path_assembly_keeps_first_occurrences_in_order(
            dirs in proptest::collection::vec(proptest::collection::vec("/[a-c]{1,2}", 0..4), 1..5),
            inherited in proptest::option::of("/[a-z]{1,3}(:/[a-z]{1,3}){0,2}"),
        ) {
            let registry = Registry::new("/h".into(), None);
            for (index, list) in dirs.iter().enumerate() {
                let list: Vec<&str> = list.iter().map(String::as_str).collect();
                register(&registry, &format!("c{index}"), &[], &list, vec![]);
            }
            let mut expected: Vec<&str> = Vec::new();
            for dir in dirs.iter().flatten() {
                if !expected.contains(&dir.as_str()) {
                    expected.push(dir);
                }
            }
            let snapshot = collect(&registry, None, inherited.as_deref()).unwrap();
            if expected.is_empty() {
                prop_assert!(!snapshot.contains_key("PATH"));
            } else {
                let mut want = expected.join(":");
                if let Some(inherited) = &inherited {
                    want = format!("{want}:{inherited}");
                }
                prop_assert_eq!(&snapshot["PATH"], &want);
            }
        }
    }
}
