//! One collection: the built-ins, each contributor's resolved values checked
//! against its declaration, and the command-directory PATH, folded into the
//! frozen snapshot a shell call receives.
//!
//! The caller owns the resolvers: take a [`Collection`], have each
//! contributor's resolver answered in [`Collection::contributors`] order
//! ([`Collection::resolve_each`] on the caller's thread,
//! [`Collection::resolve_all`] asynchronously under one deadline and an
//! abort), then [`Collection::finish`].

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::abort::AbortToken;

use crate::command::duration_from_millis;

use crate::error::ShellEnvError;
use crate::keys::{DSH_HOME, DSH_PROFILE, DSH_PROFILE_DIR, DSH_SESSION_ID, DSH_SHELL, PATH_KEY};
use crate::registry::{Contributor, ContributorSet, LeftOut, LeftOutLog, Registry, BUILTIN_OWNER, PATH_DELIMITER};

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
    contributors: ContributorSet<R>,
    /// How many contributors have answered, in order.
    answered: usize,
    values: Values,
    left_out: Arc<LeftOutLog>,
}

/// The values a collection has accepted, in the order it accepted them, all
/// in one buffer: a collection costs a few allocations instead of two per
/// value and a map node per few, which was most of its time in Rust; and an
/// answer refused halfway is taken back by truncating.
#[derive(Debug, Default)]
struct Values {
    text: String,
    /// Per value, offsets in `text`: its key's start, its key's end (its
    /// value's start), its value's end.
    entries: Vec<[usize; 3]>,
}

/// How far [`Values`] went, to take back what was added after.
#[derive(Debug, Clone, Copy)]
struct Mark {
    text: usize,
    entries: usize,
}

impl Values {
    /// Room for the built-ins and what `contributors` typically return, so
    /// that a collection seldom grows its buffers.
    fn with_room_for<R>(contributors: &[Arc<Contributor<R>>]) -> Self {
        let entries = 6 + 2 * contributors.len();
        Self { text: String::with_capacity(48 * entries), entries: Vec::with_capacity(entries) }
    }

    fn push(&mut self, key: &str, value: &str) {
        let start = self.text.len();
        self.text.push_str(key);
        self.text.push_str(value);
        self.entries.push([start, start + key.len(), self.text.len()]);
    }

    /// Adds a contributor's resolved values (see [`Collection::accept`]).
    fn add_resolved<R>(
        &mut self,
        contributor: &Contributor<R>,
        resolved: &[(String, ResolvedValue)],
    ) -> Result<(), ShellEnvError> {
        let name = contributor.name();
        self.add_answer(contributor, resolved.iter().map(|(key, value)| (key.as_str(), text_of(name, key, value))))
    }

    /// Adds a contributor's answer of strings (see [`Collection::accept_text`]).
    fn add_text<'v, R>(
        &mut self,
        contributor: &Contributor<R>,
        resolved: impl IntoIterator<Item = (&'v str, &'v str)>,
    ) -> Result<(), ShellEnvError> {
        let name = contributor.name();
        self.add_answer(contributor, resolved.into_iter().map(|(key, value)| (key, checked_text(name, key, value))))
    }

    /// Adds one answer's checked pairs unless one is refused or its key is
    /// undeclared: then none.
    fn add_answer<'v, R>(
        &mut self,
        contributor: &Contributor<R>,
        checked: impl Iterator<Item = (&'v str, Result<&'v str, ShellEnvError>)>,
    ) -> Result<(), ShellEnvError> {
        let mark = self.mark();
        for (key, value) in checked {
            let value = if contributor.declares(key) {
                value
            } else {
                Err(ShellEnvError::UndeclaredKey { contributor: contributor.name().into(), key: key.into() })
            };
            match value {
                // Declared keys are owned by exactly one contributor, so
                // nothing here can shadow a built-in or another
                // contributor's value.
                Ok(value) => self.push(key, value),
                Err(refused) => {
                    self.take_back(mark);
                    return Err(refused);
                }
            }
        }
        Ok(())
    }

    fn mark(&self) -> Mark {
        Mark { text: self.text.len(), entries: self.entries.len() }
    }

    fn take_back(&mut self, mark: Mark) {
        self.text.truncate(mark.text);
        self.entries.truncate(mark.entries);
    }

    #[inline]
    fn pair(&self, [key, value, end]: [usize; 3]) -> (&str, &str) {
        (&self.text[key..value], &self.text[value..end])
    }

    /// The entries in key order. A key added twice keeps its last value, as
    /// a map would (it never is: each key has one owner).
    fn sorted(mut self) -> SortedValues {
        // Bytes order as text does. An entry added later starts later: ties
        // sort the last added first, and it is the one kept.
        let text = self.text.as_bytes();
        let key = |&[start, end, _]: &[usize; 3]| &text[start..end];
        self.entries.sort_by(|a, b| key(a).cmp(key(b)).then(b[0].cmp(&a[0])));
        self.entries.dedup_by(|later, kept| key(later) == key(kept));
        SortedValues(self)
    }
}

/// A complete snapshot as [`Collection::finish_sorted`] returns it: read in
/// key order without building a map.
#[derive(Debug)]
pub struct SortedValues(Values);

impl SortedValues {
    /// The variables, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + Clone + '_ {
        self.0.entries.iter().map(|&entry| self.0.pair(entry))
    }

    /// The same as a map.
    pub fn to_snapshot(&self) -> Snapshot {
        self.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect()
    }
}

impl<'a> FromIterator<(&'a str, &'a str)> for SortedValues {
    /// Sorts `pairs` by key; a key given twice keeps its last value.
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(pairs: I) -> Self {
        let mut values = Values::default();
        for (key, value) in pairs {
            values.push(key, value);
        }
        values.sorted()
    }
}

impl<R> Collection<R> {
    /// Starts a collection: records the built-ins and copies the contributor set.
    /// `session_id` is the calling agent's session id (`None` for no agent).
    pub fn begin(registry: &Registry<R>, session_id: Option<ResolvedValue>) -> Result<Self, ShellEnvError> {
        Self::begin_over(registry, registry.contributors(), session_id)
    }

    /// Starts a collection over `contributors`, a set [`Registry::contributors`]
    /// returned earlier (a caller that keeps the set between collections
    /// while the registry is unchanged).
    pub fn begin_over(
        registry: &Registry<R>,
        contributors: ContributorSet<R>,
        session_id: Option<ResolvedValue>,
    ) -> Result<Self, ShellEnvError> {
        let mut values = Values::with_room_for(&contributors);
        values.push(DSH_HOME, registry.dsh_home());
        values.push(DSH_SHELL, "1");
        if let Some(profile) = registry.profile() {
            values.push(DSH_PROFILE, profile.name());
            values.push(DSH_PROFILE_DIR, profile.dir());
        }
        if let Some(session_id) = &session_id {
            values.push(DSH_SESSION_ID, text_of(BUILTIN_OWNER, DSH_SESSION_ID, session_id)?);
        }
        Ok(Self { contributors, answered: 0, values, left_out: registry.left_out_log() })
    }

    /// The contributors whose resolvers must run, in name order.
    pub fn contributors(&self) -> &[Arc<Contributor<R>>] {
        &self.contributors
    }

    /// Checks one contributor's resolved values against its declaration and
    /// adds them: undeclared keys, non-strings and NUL bytes are errors, and
    /// a refused answer adds nothing.
    pub fn accept(
        &mut self,
        contributor: &Contributor<R>,
        resolved: Vec<(String, ResolvedValue)>,
    ) -> Result<(), ShellEnvError> {
        self.values.add_resolved(contributor, &resolved)
    }

    /// [`Collection::accept`] for an answer whose values are all strings
    /// (as packed answers are), borrowed.
    pub fn accept_text<'v>(
        &mut self,
        contributor: &Contributor<R>,
        resolved: impl IntoIterator<Item = (&'v str, &'v str)>,
    ) -> Result<(), ShellEnvError> {
        self.values.add_text(contributor, resolved)
    }

    /// The contributor whose answer [`Collection::accept_next`] takes: the
    /// first that has not answered; `None` once all have.
    pub fn next_contributor(&self) -> Option<&Arc<Contributor<R>>> {
        self.contributors.get(self.answered)
    }

    /// Checks and adds the answer of [`Collection::next_contributor`] (see
    /// [`Collection::accept`]). A caller that got answers some other way
    /// (several at once) hands them in here in order; `resolve_each` and
    /// `resolve_all` go on from the next.
    pub fn accept_next(&mut self, resolved: Vec<(String, ResolvedValue)>) -> Result<(), ShellEnvError> {
        let Some(contributor) = self.contributors.get(self.answered) else {
            return Ok(());
        };
        self.values.add_resolved(contributor, &resolved)?;
        self.answered += 1;
        Ok(())
    }

    /// [`Collection::accept_next`] for an answer of strings (see
    /// [`Collection::accept_text`]).
    pub fn accept_next_text<'v>(
        &mut self,
        resolved: impl IntoIterator<Item = (&'v str, &'v str)>,
    ) -> Result<(), ShellEnvError> {
        let Some(contributor) = self.contributors.get(self.answered) else {
            return Ok(());
        };
        self.values.add_text(contributor, resolved)?;
        self.answered += 1;
        Ok(())
    }

    /// Has every contributor that has not answered yet answer on this
    /// thread, in [`Collection::contributors`] order; the first error
    /// (`resolve`'s own or a refused value) ends the collection.
    pub fn resolve_each<E>(
        mut self,
        mut resolve: impl FnMut(&Contributor<R>) -> Result<Vec<(String, ResolvedValue)>, E>,
    ) -> Result<Self, E>
    where
        E: From<ShellEnvError>,
    {
        while let Some(contributor) = self.next_contributor().cloned() {
            let values = resolve(&contributor)?;
            self.accept_next(values)?;
        }
        Ok(self)
    }

    /// Has every contributor that has not answered yet answer, one after the
    /// other in [`Collection::contributors`] order, within one `timeout` for
    /// all of them together. An abort wins over an answer that is ready at
    /// the same moment; the resolver still running when the time is up or the
    /// token fires is named in the timeout error, or dropped for the abort
    /// error.
    pub async fn resolve_all<E, Answer>(
        mut self,
        timeout: Duration,
        abort: AbortToken,
        mut resolve: impl FnMut(Arc<Contributor<R>>) -> Answer,
    ) -> Result<Self, E>
    where
        E: From<ShellEnvError>,
        Answer: Future<Output = Result<Vec<(String, ResolvedValue)>, E>>,
    {
        let deadline = Instant::now() + timeout;
        let aborted = abort.clone().aborted();
        tokio::pin!(aborted);
        while let Some(contributor) = self.next_contributor().cloned() {
            // Checked first: `select!` below asks the resolver before it polls anything.
            if abort.is_aborted() {
                return Err(ShellEnvError::Aborted.into());
            }
            let values = tokio::select! {
                biased;
                () = &mut aborted => return Err(ShellEnvError::Aborted.into()),
                values = resolve(Arc::clone(&contributor)) => values?,
                () = tokio::time::sleep_until(deadline) => {
                    let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
                    return Err(ShellEnvError::ResolverTimeout { contributor: contributor.name().into(), timeout_ms }.into());
                }
            };
            self.accept_next(values)?;
        }
        Ok(self)
    }

    /// Completes the snapshot. When any contributor declares command
    /// directories, `PATH` holds them (contributor-name order, each
    /// contributor's own order, first occurrence wins) followed by
    /// `inherited_path`; with none, there is no `PATH` key. A directory that
    /// cannot be trusted now is left out, and the registry records it for
    /// its caller to report ([`Registry::take_left_out`]).
    pub fn finish(self, inherited_path: Option<&str>) -> Snapshot {
        self.finish_sorted(inherited_path).to_snapshot()
    }

    /// [`Collection::finish`], for a caller that reads the snapshot once, in
    /// key order.
    pub fn finish_sorted(mut self, inherited_path: Option<&str>) -> SortedValues {
        let left_out: Vec<LeftOut> =
            self.contributors.iter().flat_map(|contributor| LeftOut::check(contributor)).collect();
        self.left_out.record(&left_out);
        let trusted = |directory: &str| !left_out.iter().any(|entry| entry.directory == directory);
        if let Some(path) = assemble_path(&self.contributors, inherited_path, trusted) {
            self.values.push(PATH_KEY, &path);
        }
        self.values.sorted()
    }
}

/// The text of a resolved value a child can receive: a string without NUL
/// bytes. Anything else is refused.
fn text_of<'v>(contributor: &str, key: &str, value: &'v ResolvedValue) -> Result<&'v str, ShellEnvError> {
    match value {
        ResolvedValue::String(text) => checked_text(contributor, key, text),
        ResolvedValue::IllFormed(_) => {
            Err(invalid_value(contributor, key, "is not well-formed Unicode (it holds a lone surrogate)"))
        }
        ResolvedValue::Other(found) => Err(ShellEnvError::NonStringValue {
            contributor: contributor.into(),
            key: key.into(),
            found: found.clone(),
        }),
    }
}

/// `text`, unless it holds a NUL byte, which no child could receive.
fn checked_text<'v>(contributor: &str, key: &str, text: &'v str) -> Result<&'v str, ShellEnvError> {
    if text.contains('\0') {
        return Err(invalid_value(contributor, key, "contains a NUL byte"));
    }
    Ok(text)
}

fn invalid_value(contributor: &str, key: &str, reason: &'static str) -> ShellEnvError {
    ShellEnvError::InvalidValue { contributor: contributor.into(), key: key.into(), reason }
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

/// Whether a snapshot over `contributors` holds a `PATH`: some contributor
/// declares a command directory. Only then is the inherited PATH read.
pub fn has_path<R>(contributors: &[Arc<Contributor<R>>]) -> bool {
    contributors.iter().any(|contributor| !contributor.command_directories().is_empty())
}

/// The PATH value for a contributor set, or `None` when no contributor
/// declares a command directory. An `inherited_path` that is empty or holds a
/// NUL byte (one read from an environment object, which could never reach
/// `execve`) is left out, as if there were none.
pub fn command_path<R>(contributors: &[Arc<Contributor<R>>], inherited_path: Option<&str>) -> Option<String> {
    assemble_path(contributors, inherited_path, |_| true)
}

/// [`command_path`] with only the directories `trusted` accepts; still a
/// `PATH` (the inherited one) when every declared directory was left out.
fn assemble_path<R>(
    contributors: &[Arc<Contributor<R>>],
    inherited_path: Option<&str>,
    trusted: impl Fn(&str) -> bool,
) -> Option<String> {
    if !has_path(contributors) {
        return None;
    }
    let mut directories: Vec<&str> = Vec::new();
    for directory in contributors.iter().flat_map(|contributor| contributor.command_directories()) {
        if !directories.contains(&directory.as_str()) && trusted(directory) {
            directories.push(directory);
        }
    }
    let inherited = inherited_path.filter(|inherited| !inherited.is_empty() && !inherited.contains('\0'));
    let parts: Vec<&str> = directories.into_iter().chain(inherited).collect();
    (!parts.is_empty()).then(|| parts.join(&PATH_DELIMITER.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{Declaration, Profile};
    use crate::test_paths::{abs, search_path};
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
        let collection = Collection::begin(registry, session.map(string))?;
        let collection =
            collection.resolve_each(|contributor| Ok::<_, ShellEnvError>(contributor.resolver().clone()))?;
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
        let profile_dir = abs("p/work");
        let registry = Registry::new("/h".into(), Some(Profile::new("work", &profile_dir).unwrap()));
        assert_eq!(
            pairs(&collect(&registry, Some("s-1"), None).unwrap()),
            [
                ("DSH_HOME", "/h"),
                ("DSH_PROFILE", "work"),
                ("DSH_PROFILE_DIR", &profile_dir),
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
    fn a_refused_answer_adds_none_of_its_values() {
        let registry = Registry::new("/h".into(), None);
        register(&registry, "c", &["DSH_A", "DSH_B"], &[], vec![]);
        let contributor = Arc::clone(&registry.contributors()[0]);
        let mut collection = Collection::begin(&registry, None).unwrap();
        let refused =
            collection.accept(&contributor, vec![("DSH_A".into(), string("a")), ("DSH_OTHER".into(), string("x"))]);
        assert_eq!(refused.unwrap_err().code(), "ERR_SHELL_ENV_UNDECLARED_KEY");
        let refused = collection.accept_text(&contributor, [("DSH_A", "a"), ("DSH_B", "b\0")]);
        assert_eq!(refused.unwrap_err().code(), "ERR_SHELL_ENV_INVALID_VALUE");
        collection.accept_text(&contributor, [("DSH_B", "b")]).unwrap();
        assert_eq!(pairs(&collection.finish(None)), [("DSH_B", "b"), ("DSH_HOME", "/h"), ("DSH_SHELL", "1")]);
    }

    #[test]
    fn text_answers_are_checked_as_resolved_ones_are() {
        for (answer, code) in [
            ([("DSH_OTHER", "x")], "ERR_SHELL_ENV_UNDECLARED_KEY"),
            ([("DSH_HOME", "/evil")], "ERR_SHELL_ENV_UNDECLARED_KEY"),
            ([("DSH_A", "a\0b")], "ERR_SHELL_ENV_INVALID_VALUE"),
        ] {
            let registry = Registry::new("/h".into(), None);
            register(&registry, "c", &["DSH_A"], &[], vec![]);
            let mut collection = Collection::begin(&registry, None).unwrap();
            let err = collection.accept_next_text(answer).unwrap_err();
            assert_eq!(err.code(), code);
            assert!(err.to_string().contains("\"c\""), "message names the contributor: {err}");
            assert!(collection.next_contributor().is_some(), "a refused answer is not an answer");
        }
    }

    #[test]
    fn sorted_values_are_in_key_order_and_a_repeated_key_keeps_its_last_value() {
        let sorted: SortedValues =
            [("DSH_B", "1"), ("PATH", "/bin"), ("DSH_A", "2"), ("DSH_B", "3")].into_iter().collect();
        assert_eq!(sorted.iter().collect::<Vec<_>>(), [("DSH_A", "2"), ("DSH_B", "3"), ("PATH", "/bin")]);
        assert_eq!(pairs(&sorted.to_snapshot()), [("DSH_A", "2"), ("DSH_B", "3"), ("PATH", "/bin")]);
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
        assert!(check_inherited_path(&search_path(&[&abs("usr/bin"), &abs("bin")])).is_ok());
        let registry = Registry::new("/h".into(), None);
        register(&registry, "a", &[], &[&abs("a")], vec![]);
        assert_eq!(collect(&registry, None, Some(&format!("{}\0", abs("bin")))).unwrap()["PATH"], abs("a"));
    }

    #[test]
    fn command_directories_in_name_order_then_inherited_path() {
        let registry = Registry::new("/h".into(), None);
        let [a1, b1, b2, shared, usr_bin, bin] = ["a1", "b1", "b2", "shared", "usr/bin", "bin"].map(abs);
        register(&registry, "b", &[], &[&b1, &shared, &b2], vec![]);
        register(&registry, "a", &[], &[&a1, &shared], vec![]);
        let snapshot = collect(&registry, None, Some(&search_path(&[&usr_bin, &bin]))).unwrap();
        assert_eq!(snapshot["PATH"], search_path(&[&a1, &shared, &b1, &b2, &usr_bin, &bin]));
        let snapshot = collect(&registry, None, None).unwrap();
        assert_eq!(snapshot["PATH"], search_path(&[&a1, &shared, &b1, &b2]));
    }

    #[test]
    fn a_collection_keeps_the_contributor_set_it_started_with() {
        let registry = Registry::new("/h".into(), None);
        register(&registry, "a", &["DSH_A"], &[], vec![("DSH_A".into(), string("1"))]);
        let collection = Collection::begin(&registry, None).unwrap();
        register(&registry, "b", &["DSH_B"], &[], vec![]);
        assert_eq!(collection.contributors().len(), 1);
    }

    #[test]
    fn answers_taken_one_by_one_and_then_resolved_go_on_from_the_next_contributor() {
        let registry = Registry::new("/h".into(), None);
        for name in ["a", "b", "c"] {
            let key = format!("DSH_{}", name.to_uppercase());
            register(&registry, name, &[&key], &[], vec![(key.clone(), string(name))]);
        }
        let mut collection = Collection::begin(&registry, None).unwrap();
        assert_eq!(collection.next_contributor().map(|next| next.name()), Some("a"));
        collection.accept_next(vec![("DSH_A".into(), string("at once"))]).unwrap();
        assert_eq!(collection.next_contributor().map(|next| next.name()), Some("b"));
        let mut called = Vec::new();
        let collection = collection
            .resolve_each(|contributor| {
                called.push(contributor.name().to_string());
                Ok::<_, ShellEnvError>(contributor.resolver().clone())
            })
            .unwrap();
        assert_eq!(called, ["b", "c"]);
        assert!(collection.next_contributor().is_none());
        let snapshot = collection.finish(None);
        assert_eq!((snapshot["DSH_A"].as_str(), snapshot["DSH_C"].as_str()), ("at once", "c"));
        // A refused answer leaves the contributor next, so nothing goes on past it.
        let mut collection = Collection::begin(&registry, None).unwrap();
        let refused = collection.accept_next(vec![("DSH_B".into(), string("not a's"))]).unwrap_err();
        assert_eq!(refused.code(), "ERR_SHELL_ENV_UNDECLARED_KEY");
        assert_eq!(collection.next_contributor().map(|next| next.name()), Some("a"));
    }

    /// Three contributors whose resolvers answer after `delays` (paused time),
    /// collected asynchronously; the names called, in order, and the result.
    async fn resolve_all_after(
        delays: [u64; 3],
        timeout_ms: u64,
        abort: AbortToken,
    ) -> (Vec<String>, Result<Snapshot, ShellEnvError>) {
        let registry = Registry::new("/h".into(), None);
        for name in ["c", "a", "b"] {
            let key = format!("DSH_{}", name.to_uppercase());
            register(&registry, name, &[key.as_str()], &[], vec![(key.clone(), string(name))]);
        }
        let called = std::sync::Mutex::new(Vec::new());
        let collection = Collection::begin(&registry, None).unwrap();
        let result = collection
            .resolve_all(Duration::from_millis(timeout_ms), abort, |contributor| {
                called.lock().unwrap().push(contributor.name().to_string());
                let delay = delays[called.lock().unwrap().len() - 1];
                async move {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    Ok(contributor.resolver().clone())
                }
            })
            .await;
        (called.into_inner().unwrap(), result.map(|collection| collection.finish(None)))
    }

    #[tokio::test(start_paused = true)]
    async fn async_collection_asks_in_name_order_and_merges_every_answer() {
        let (called, result) = resolve_all_after([10, 10, 10], 1000, AbortToken::never()).await;
        assert_eq!(called, ["a", "b", "c"]);
        let snapshot = result.unwrap();
        assert_eq!(
            pairs(&snapshot),
            [("DSH_A", "a"), ("DSH_B", "b"), ("DSH_C", "c"), ("DSH_HOME", "/h"), ("DSH_SHELL", "1")]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn async_collection_has_one_deadline_for_all_resolvers_together() {
        // Each answers well within the timeout; the third one crosses it.
        let (called, result) = resolve_all_after([40, 40, 40], 100, AbortToken::never()).await;
        assert_eq!(called, ["a", "b", "c"]);
        assert_eq!(result.unwrap_err(), ShellEnvError::ResolverTimeout { contributor: "c".into(), timeout_ms: 100 });
    }

    #[tokio::test(start_paused = true)]
    async fn an_abort_wins_over_answers_ready_at_the_same_moment() {
        let (called, result) = resolve_all_after([0, 0, 0], 1000, AbortToken::fired()).await;
        assert_eq!(result.unwrap_err(), ShellEnvError::Aborted);
        assert!(called.is_empty(), "{called:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_abort_during_a_resolver_ends_the_collection_without_asking_the_rest() {
        let (abort, token) = crate::abort::pair();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(15)).await;
            abort.abort();
        });
        let (called, result) = resolve_all_after([10, 60_000, 10], 120_000, token).await;
        assert_eq!(called, ["a", "b"]);
        assert_eq!(result.unwrap_err(), ShellEnvError::Aborted);
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_answer_ends_the_async_collection_there() {
        let registry = Registry::new("/h".into(), None);
        register(&registry, "a", &["DSH_A"], &[], vec![("DSH_NOT_MINE".into(), string("x"))]);
        register(&registry, "b", &["DSH_B"], &[], vec![("DSH_B".into(), string("b"))]);
        let mut called = Vec::new();
        let result = Collection::begin(&registry, None)
            .unwrap()
            .resolve_all(DEFAULT_COLLECT_TIMEOUT, AbortToken::never(), |contributor| {
                called.push(contributor.name().to_string());
                std::future::ready(Ok::<_, ShellEnvError>(contributor.resolver().clone()))
            })
            .await;
        assert_eq!(result.unwrap_err().code(), "ERR_SHELL_ENV_UNDECLARED_KEY");
        assert_eq!(called, ["a"]);
    }

    #[test]
    fn a_resolver_error_ends_the_collection_on_the_callers_thread() {
        let registry = Registry::new("/h".into(), None);
        register(&registry, "a", &["DSH_A"], &[], vec![]);
        register(&registry, "b", &["DSH_B"], &[], vec![]);
        let mut called = Vec::new();
        let result = Collection::begin(&registry, None).unwrap().resolve_each(|contributor| {
            called.push(contributor.name().to_string());
            Err(ShellEnvError::Aborted)
        });
        assert_eq!(result.unwrap_err(), ShellEnvError::Aborted);
        assert_eq!(called, ["a"]);
    }

    proptest! {
        #[test]
        fn path_assembly_keeps_first_occurrences_in_order(
            dirs in proptest::collection::vec(proptest::collection::vec("[a-c]{1,2}".prop_map(|d| abs(&d)), 0..4), 1..5),
            inherited in proptest::option::of(
                proptest::collection::vec("[a-z]{1,3}".prop_map(|d| abs(&d)), 1..4).prop_map(|dirs| dirs.join(&PATH_DELIMITER.to_string()))
            ),
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
                let mut want = expected.join(&PATH_DELIMITER.to_string());
                if let Some(inherited) = &inherited {
                    want = format!("{want}{PATH_DELIMITER}{inherited}");
                }
                prop_assert_eq!(&snapshot["PATH"], &want);
            }
        }
    }
}
