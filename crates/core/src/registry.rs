//! The contributor registry: declarations, their validation, and what can be
//! listed without running a resolver.
//!
//! The registry is generic over the resolver handle `R` so it holds no Node
//! types: the binding stores its JS function references there, tests store
//! closures.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::ShellEnvError;
use crate::keys::{self, DSH_HOME, DSH_PROFILE, DSH_PROFILE_DIR, DSH_SESSION_ID, DSH_SHELL};
use crate::trust;

/// The owner shown for the registry's own variables in a catalog.
pub const BUILTIN_OWNER: &str = "built-in";

/// The separator of the platform's search path (`:` or `;`).
pub const PATH_DELIMITER: char = if cfg!(windows) { ';' } else { ':' };

/// The fields of the registry's config: `new ShellEnvRegistry(ctx, config)`,
/// `ctx.plugin(ShellEnvRegistry, config)` and the plugin's `apply`.
pub const CONFIG_FIELDS: &[&str] = &["dshHome", "profile"];

/// The fields of `config.profile`.
pub const PROFILE_FIELDS: &[&str] = &["name", "dir"];

/// Refuses a config field the registry does not know. A misspelt field would
/// otherwise fall back to a default silently (`dshhome` for `dshHome`).
pub fn check_config_field(field: &str) -> Result<(), ShellEnvError> {
    if CONFIG_FIELDS.contains(&field) {
        return Ok(());
    }
    Err(ShellEnvError::UnknownOption { option: field.into(), known: CONFIG_FIELDS })
}

/// Refuses a field of `config.profile` other than `name` and `dir`.
pub fn check_profile_field(field: &str) -> Result<(), ShellEnvError> {
    if PROFILE_FIELDS.contains(&field) {
        return Ok(());
    }
    let reason = format!("profile.{field} is not a profile field (the fields are {})", PROFILE_FIELDS.join(", "));
    Err(ShellEnvError::InvalidProfile { reason })
}

/// The profile the harness was launched with: exposed as `DSH_PROFILE` and
/// `DSH_PROFILE_DIR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    name: String,
    dir: String,
}

impl Profile {
    /// Validates a profile: a non-blank name and an absolute directory, neither
    /// holding a NUL byte (both end up in a child's environment).
    pub fn new(name: impl Into<String>, dir: impl Into<String>) -> Result<Self, ShellEnvError> {
        let (name, dir) = (name.into(), dir.into());
        let invalid = |reason: String| Err(ShellEnvError::InvalidProfile { reason });
        if name.trim().is_empty() {
            return invalid("profile.name must be a non-blank string".into());
        }
        if name.contains('\0') || dir.contains('\0') {
            return invalid("profile name and dir must not contain NUL bytes".into());
        }
        if !Path::new(&dir).is_absolute() {
            return invalid(format!("profile.dir must be an absolute path (got {dir:?})"));
        }
        Ok(Self { name, dir })
    }

    /// The profile name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The profile's absolute directory.
    pub fn dir(&self) -> &str {
        &self.dir
    }
}

/// What a plugin asks to register, before validation.
#[derive(Debug, Clone)]
pub struct Declaration<R> {
    /// Stable contributor name; also the order in which resolvers run.
    pub name: String,
    /// Each declared key with its description (`None`: none was given).
    pub variables: Vec<(String, Option<String>)>,
    /// Absolute directories to prepend to the child's PATH, in this order.
    pub command_directories: Vec<String>,
    /// The handle the caller uses to compute values for one execution.
    pub resolver: R,
}

/// A registry's contributors at one moment, in name order: shared, not
/// copied, by the collections that run over it.
pub type ContributorSet<R> = Arc<[Arc<Contributor<R>>]>;

/// A validated, registered contributor.
#[derive(Debug)]
pub struct Contributor<R> {
    id: u64,
    name: String,
    variables: BTreeMap<String, String>,
    command_directories: Vec<String>,
    resolver: R,
}

impl<R> Contributor<R> {
    /// The contributor's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Declared keys and their descriptions, sorted by key.
    pub fn variables(&self) -> &BTreeMap<String, String> {
        &self.variables
    }

    /// Whether the contributor declared `key`.
    pub fn declares(&self, key: &str) -> bool {
        self.variables.contains_key(key)
    }

    /// The contributor's command directories, in its own order.
    pub fn command_directories(&self) -> &[String] {
        &self.command_directories
    }

    /// The resolver handle given at registration.
    pub fn resolver(&self) -> &R {
        &self.resolver
    }
}

/// Proof of one registration: unregistering with it removes exactly that
/// registration, never a later one that reused the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    name: String,
    id: u64,
}

impl Registration {
    /// The registered contributor's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// One row of [`Registry::list`]: a plugin-declared variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    /// The declaring contributor.
    pub contributor: String,
    /// The declared description.
    pub description: String,
    /// The declared key.
    pub key: String,
}

/// When a variable is present in a shell call's environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// Every call.
    Always,
    /// Calls made by an agent (`execution.agent` set).
    Agent,
    /// Every call, because the registry was given a profile.
    Profile,
    /// When the owning contributor's resolver returns it.
    Resolver,
}

impl Availability {
    /// Every availability, from the widest.
    pub const ALL: [Self; 4] = [Self::Always, Self::Agent, Self::Profile, Self::Resolver];

    /// The name JS callers see: `always`, `agent`, `profile` or `resolver`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Always => "always",
            Self::Agent => "agent",
            Self::Profile => "profile",
            Self::Resolver => "resolver",
        }
    }
}

/// One variable a shell call can receive, built-ins included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEntry {
    /// The variable name.
    pub key: String,
    /// What it holds.
    pub description: String,
    /// [`BUILTIN_OWNER`] or the declaring contributor.
    pub owner: String,
    /// When it is present.
    pub when: Availability,
}

/// Everything a shell call can receive: variables and command directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    /// Variables, sorted by key.
    pub variables: Vec<CatalogEntry>,
    /// Each contributor with command directories, in contributor-name order.
    pub command_directories: Vec<(String, Vec<String>)>,
}

/// The registry of one `ShellEnvRegistry`: its fixed built-ins and the current
/// contributors.
#[derive(Debug)]
pub struct Registry<R> {
    dsh_home: String,
    profile: Option<Profile>,
    state: Mutex<State<R>>,
    left_out: Arc<LeftOutLog>,
}

#[derive(Debug)]
struct State<R> {
    // A BTreeMap keyed by name keeps contributors in code-point order, the
    // order resolvers run and command directories are assembled in.
    contributors: BTreeMap<String, Arc<Contributor<R>>>,
    next_id: u64,
    /// Counts changes to `contributors`.
    generation: u64,
}

impl<R> Registry<R> {
    /// A registry with a resolved home and an optional profile.
    pub fn new(dsh_home: String, profile: Option<Profile>) -> Self {
        Self {
            dsh_home,
            profile,
            state: Mutex::new(State { contributors: BTreeMap::new(), next_id: 1, generation: 0 }),
            left_out: Arc::default(),
        }
    }

    /// Command directories collections left out of PATH since the last call,
    /// each (directory and reason) reported once in the registry's life: what
    /// the caller warns about.
    pub fn take_left_out(&self) -> Vec<LeftOut> {
        self.left_out.take_new()
    }

    /// Whether [`Self::take_left_out`] has anything to hand out: a check the
    /// caller can make after every collection without copying anything.
    pub fn has_left_out(&self) -> bool {
        self.left_out.has_new()
    }

    /// The log collections record left-out directories in.
    pub(crate) fn left_out_log(&self) -> Arc<LeftOutLog> {
        Arc::clone(&self.left_out)
    }

    /// Every registered command directory that cannot be trusted now, in
    /// contributor-name order: what a collection would leave out of PATH.
    pub fn untrusted_directories(&self) -> Vec<LeftOut> {
        let contributors: Vec<Arc<Contributor<R>>> = self.lock().contributors.values().cloned().collect();
        contributors.iter().flat_map(|contributor| LeftOut::check(contributor)).collect()
    }

    /// The Harness home exposed as `DSH_HOME`.
    pub fn dsh_home(&self) -> &str {
        &self.dsh_home
    }

    /// The profile, when one was given.
    pub fn profile(&self) -> Option<&Profile> {
        self.profile.as_ref()
    }

    /// Validates and adds a contributor. On error nothing is registered.
    pub fn register(&self, declaration: Declaration<R>) -> Result<Registration, ShellEnvError> {
        let Declaration { name, variables, command_directories, resolver } = declaration;
        if name.trim().is_empty() {
            return Err(ShellEnvError::InvalidName { found: Some(format!("{name:?}")) });
        }
        if name.contains('\0') {
            // Names show up in listings, catalogs, logs and terminal tables.
            return Err(ShellEnvError::InvalidName { found: Some("a name with a NUL byte".into()) });
        }
        let variables = validate_variables(&name, variables)?;
        validate_directories(&name, &command_directories)?;

        let mut state = self.lock();
        if state.contributors.contains_key(&name) {
            return Err(ShellEnvError::DuplicateContributor { contributor: name });
        }
        for other in state.contributors.values() {
            if let Some(key) = variables.keys().find(|key| other.declares(key)) {
                return Err(ShellEnvError::DuplicateKey {
                    key: key.clone(),
                    owner: other.name.clone(),
                    contributor: name,
                });
            }
        }
        let id = state.next_id;
        state.next_id += 1;
        let contributor = Contributor { id, name: name.clone(), variables, command_directories, resolver };
        state.contributors.insert(name.clone(), Arc::new(contributor));
        state.generation += 1;
        Ok(Registration { name, id })
    }

    /// Removes the registration, if it is still the current one under its
    /// name. Returns whether anything was removed; calling it again is harmless.
    pub fn unregister(&self, registration: &Registration) -> bool {
        let mut state = self.lock();
        match state.contributors.get(&registration.name) {
            Some(current) if current.id == registration.id => {
                state.contributors.remove(&registration.name);
                state.generation += 1;
                true
            }
            _ => false,
        }
    }

    /// The current contributors in name order. A collection works on this
    /// copy, so resolvers may register or dispose while it runs.
    pub fn contributors(&self) -> ContributorSet<R> {
        self.lock().contributors.values().cloned().collect()
    }

    /// A number that changes whenever a contributor is added or removed: a
    /// caller that keeps [`Self::contributors`] between collections asks it
    /// whether the set it kept is still current.
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Plugin-declared variables sorted by key; no resolver runs.
    pub fn list(&self) -> Vec<ListEntry> {
        let mut entries: Vec<ListEntry> = self
            .contributors()
            .iter()
            .flat_map(|contributor| {
                contributor.variables.iter().map(|(key, description)| ListEntry {
                    contributor: contributor.name.clone(),
                    description: description.clone(),
                    key: key.clone(),
                })
            })
            .collect();
        entries.sort_by(|a, b| a.key.cmp(&b.key));
        entries
    }

    /// Every variable a shell call can receive, built-ins included, and every
    /// contributor's command directories.
    pub fn catalog(&self) -> Catalog {
        let builtin = |key: &str, description: &str, when| CatalogEntry {
            key: key.into(),
            description: description.into(),
            owner: BUILTIN_OWNER.into(),
            when,
        };
        let mut variables = vec![
            builtin(DSH_HOME, "Absolute Harness home directory.", Availability::Always),
            builtin(DSH_SHELL, "Always \"1\": this shell was started by the harness.", Availability::Always),
            builtin(DSH_SESSION_ID, "Session id of the agent that made the call.", Availability::Agent),
        ];
        if self.profile.is_some() {
            variables.push(builtin(DSH_PROFILE, "Name of the profile the harness runs.", Availability::Profile));
            variables.push(builtin(DSH_PROFILE_DIR, "Absolute directory of that profile.", Availability::Profile));
        }
        let contributors = self.contributors();
        variables.extend(self.list().into_iter().map(|entry| CatalogEntry {
            key: entry.key,
            description: entry.description,
            owner: entry.contributor,
            when: Availability::Resolver,
        }));
        variables.sort_by(|a, b| a.key.cmp(&b.key));
        let command_directories = contributors
            .iter()
            .filter(|contributor| !contributor.command_directories.is_empty())
            .map(|contributor| (contributor.name.clone(), contributor.command_directories.clone()))
            .collect();
        Catalog { variables, command_directories }
    }

    fn lock(&self) -> MutexGuard<'_, State<R>> {
        // A panic while holding the lock cannot leave the map half-updated
        // (every update is a single insert or remove), so poisoning is ignored.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A command directory a collection left out of PATH, and why: it cannot be
/// trusted now ([`trust::check`]), though it could be at `register()`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LeftOut {
    /// The contributor that declared it.
    pub contributor: String,
    /// The directory as declared.
    pub directory: String,
    /// Why, after the directory's name: `is writable by …`, `is inside …`.
    pub reason: String,
}

impl LeftOut {
    /// `contributor`'s directories that cannot be trusted now.
    pub(crate) fn check<R>(contributor: &Contributor<R>) -> Vec<LeftOut> {
        contributor
            .command_directories
            .iter()
            .filter_map(|directory| {
                let untrusted = trust::check(Path::new(directory))?;
                Some(LeftOut {
                    contributor: contributor.name.clone(),
                    directory: directory.clone(),
                    reason: untrusted.to_string(),
                })
            })
            .collect()
    }
}

/// The directories collections left out, each kept for the caller to hear
/// of once.
#[derive(Debug, Default)]
pub(crate) struct LeftOutLog {
    state: Mutex<(HashSet<LeftOut>, Vec<LeftOut>)>,
}

impl LeftOutLog {
    /// Records `left_out`; those not seen before wait for [`Self::take_new`].
    pub(crate) fn record(&self, left_out: &[LeftOut]) {
        if left_out.is_empty() {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (seen, new) = &mut *state;
        for entry in left_out {
            if seen.insert(entry.clone()) {
                new.push(entry.clone());
            }
        }
    }

    fn has_new(&self) -> bool {
        !self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).1.is_empty()
    }

    fn take_new(&self) -> Vec<LeftOut> {
        std::mem::take(&mut self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).1)
    }
}

fn validate_variables(
    contributor: &str,
    variables: Vec<(String, Option<String>)>,
) -> Result<BTreeMap<String, String>, ShellEnvError> {
    let mut validated = BTreeMap::new();
    for (key, description) in variables {
        if !keys::is_valid_key(&key) {
            return Err(ShellEnvError::InvalidKey { contributor: contributor.into(), key });
        }
        if keys::is_reserved(&key) {
            return Err(ShellEnvError::ReservedKey { contributor: contributor.into(), key });
        }
        match description {
            Some(description) if description.contains('\0') => {
                let reason = format!("the description of {key} must not contain NUL bytes");
                return Err(ShellEnvError::InvalidContributor { contributor: contributor.into(), reason });
            }
            Some(description) if !description.trim().is_empty() => {
                validated.insert(key, description);
            }
            _ => return Err(ShellEnvError::MissingDescription { contributor: contributor.into(), key }),
        }
    }
    Ok(validated)
}

fn validate_directories(contributor: &str, directories: &[String]) -> Result<(), ShellEnvError> {
    for directory in directories {
        let reason = if directory.contains('\0') {
            "must not contain NUL bytes"
        } else if directory.contains(PATH_DELIMITER) {
            if cfg!(windows) {
                "must not contain the PATH delimiter ';'"
            } else {
                "must not contain the PATH delimiter ':'"
            }
        } else if !Path::new(directory).is_absolute() {
            "must be an absolute path"
        } else if let Some(untrusted) = trust::check(Path::new(directory)) {
            return Err(ShellEnvError::InvalidDirectory {
                contributor: contributor.into(),
                directory: directory.clone(),
                reason: untrusted.to_string(),
            });
        } else {
            continue;
        };
        return Err(ShellEnvError::InvalidDirectory {
            contributor: contributor.into(),
            directory: directory.clone(),
            reason: reason.into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_paths::{abs, under, USER_HOME};

    fn registry() -> Registry<()> {
        Registry::new(under(USER_HOME, ".dsh"), None)
    }

    fn declaration(name: &str, keys: &[&str], dirs: &[&str]) -> Declaration<()> {
        Declaration {
            name: name.into(),
            variables: keys.iter().map(|key| (key.to_string(), Some(format!("about {key}")))).collect(),
            command_directories: dirs.iter().map(|dir| dir.to_string()).collect(),
            resolver: (),
        }
    }

    fn code(result: Result<Registration, ShellEnvError>) -> &'static str {
        result.unwrap_err().code()
    }

    #[test]
    fn config_fields_are_dsh_home_and_profile_and_nothing_else() {
        assert!(check_config_field("dshHome").is_ok());
        assert!(check_config_field("profile").is_ok());
        for field in ["dshhome", "DSH_HOME", "home", ""] {
            let error = check_config_field(field).unwrap_err();
            assert_eq!(error.code(), "ERR_SHELL_ENV_INVALID_OPTION");
            assert_eq!(
                error.to_string(),
                format!("invalid option {field}: unknown field (the fields are dshHome, profile)")
            );
        }
    }

    #[test]
    fn profile_fields_are_name_and_dir_and_nothing_else() {
        assert!(check_profile_field("name").is_ok());
        assert!(check_profile_field("dir").is_ok());
        let error = check_profile_field("path").unwrap_err();
        assert_eq!(error.code(), "ERR_SHELL_ENV_INVALID_PROFILE");
        assert!(error.to_string().contains("profile.path is not a profile field"), "{error}");
    }

    #[test]
    fn registers_and_lists_sorted_by_key() {
        let registry = registry();
        registry.register(declaration("zeta", &["DSH_A"], &[])).unwrap();
        registry.register(declaration("alpha", &["DSH_C", "DSH_B"], &[])).unwrap();
        let keys: Vec<_> = registry.list().into_iter().map(|e| (e.key, e.contributor)).collect();
        assert_eq!(
            keys,
            [("DSH_A".into(), "zeta".into()), ("DSH_B".into(), "alpha".into()), ("DSH_C".into(), "alpha".into())]
        );
        let names: Vec<_> = registry.contributors().iter().map(|c| c.name().to_string()).collect();
        assert_eq!(names, ["alpha", "zeta"]);
    }

    #[test]
    fn rejects_blank_names() {
        assert_eq!(code(registry().register(declaration("  ", &[], &[]))), "ERR_SHELL_ENV_INVALID_NAME");
        assert_eq!(code(registry().register(declaration("", &[], &[]))), "ERR_SHELL_ENV_INVALID_NAME");
    }

    #[test]
    fn rejects_names_and_descriptions_with_nul() {
        let registry = registry();
        let err = registry.register(declaration("a\0b", &["DSH_A"], &[])).unwrap_err();
        assert_eq!(err.code(), "ERR_SHELL_ENV_INVALID_NAME");
        assert!(err.to_string().contains("NUL"), "{err}");
        let declaration = Declaration {
            name: "a".into(),
            variables: vec![("DSH_A".into(), Some("about\0A".into()))],
            command_directories: vec![],
            resolver: (),
        };
        let err = registry.register(declaration).unwrap_err();
        assert_eq!(err.code(), "ERR_SHELL_ENV_INVALID_CONTRIBUTOR");
        assert!(err.to_string().contains("DSH_A"), "{err}");
        assert!(registry.list().is_empty() && registry.contributors().is_empty());
    }

    #[test]
    fn prototype_names_are_ordinary_names() {
        let registry = registry();
        registry.register(declaration("__proto__", &["DSH_A"], &[&abs("opt/a")])).unwrap();
        registry.register(declaration("constructor", &["DSH_B"], &[])).unwrap();
        let owners: Vec<_> = registry.list().into_iter().map(|e| e.contributor).collect();
        assert_eq!(owners, ["__proto__", "constructor"]);
    }

    #[test]
    fn rejects_duplicate_contributors() {
        let registry = registry();
        registry.register(declaration("a", &["DSH_A"], &[])).unwrap();
        assert_eq!(code(registry.register(declaration("a", &["DSH_B"], &[]))), "ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR");
    }

    #[test]
    fn rejects_invalid_and_reserved_keys() {
        for key in ["dsh_a", "DSH_", "DSH_a", "HOME", "DSH_A=B", "DSH_A\0", "DSH_Ä"] {
            assert_eq!(
                code(registry().register(declaration("a", &[key], &[]))),
                "ERR_SHELL_ENV_INVALID_KEY",
                "{key:?}"
            );
        }
        for key in keys::RESERVED_KEYS {
            assert_eq!(code(registry().register(declaration("a", &[key], &[]))), "ERR_SHELL_ENV_RESERVED_KEY");
        }
    }

    #[test]
    fn rejects_missing_or_blank_descriptions() {
        for description in [None, Some(String::new()), Some(" \t".into())] {
            let declaration = Declaration {
                name: "a".into(),
                variables: vec![("DSH_A".into(), description)],
                command_directories: vec![],
                resolver: (),
            };
            assert_eq!(code(registry().register(declaration)), "ERR_SHELL_ENV_MISSING_DESCRIPTION");
        }
    }

    #[test]
    fn duplicate_keys_name_both_owners() {
        let registry = registry();
        registry.register(declaration("first", &["DSH_A"], &[])).unwrap();
        let err = registry.register(declaration("second", &["DSH_B", "DSH_A"], &[])).unwrap_err();
        assert_eq!(err.code(), "ERR_SHELL_ENV_DUPLICATE_KEY");
        let message = err.to_string();
        assert!(message.contains("\"first\"") && message.contains("\"second\"") && message.contains("DSH_A"));
        assert_eq!(registry.list().len(), 1, "nothing of the failed registration remains");
    }

    #[test]
    fn rejects_bad_directories() {
        let with_delimiter = format!("{}{PATH_DELIMITER}b", abs("a"));
        for dir in ["relative/bin", "", &with_delimiter, &abs("a\0b")] {
            assert_eq!(
                code(registry().register(declaration("a", &[], &[dir]))),
                "ERR_SHELL_ENV_INVALID_DIRECTORY",
                "{dir:?}"
            );
        }
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_a_directory_needs_a_drive_and_may_not_hold_a_semicolon() {
        for dir in ["/opt/tools", r"\opt\tools", r"C:opt\tools", r"C:\a;b"] {
            assert_eq!(
                code(registry().register(declaration("a", &[], &[dir]))),
                "ERR_SHELL_ENV_INVALID_DIRECTORY",
                "{dir:?}"
            );
        }
        // `:` is only the delimiter on Unix: a drive letter is fine here.
        assert!(registry().register(declaration("a", &[], &[r"C:\opt\tools", r"\\server\share\bin"])).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn refuses_directories_anyone_could_plant_a_command_in() {
        use std::os::unix::fs::PermissionsExt;
        let base = crate::test_paths::trusted_scratch("command-dirs");
        let (private, shared) = (base.join("private"), base.join("shared"));
        for (dir, mode) in [(&private, 0o755), (&shared, 0o775)] {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let path = |dir: &Path| dir.display().to_string();
        assert!(registry().register(declaration("ok", &[], &[&path(&private)])).is_ok());
        assert!(registry().register(declaration("later", &[], &[&path(&base.join("not-yet"))])).is_ok());
        for dir in [path(&shared), "/tmp".to_string(), "/tmp/dsh-core-not-made-yet".to_string()] {
            let error = registry().register(declaration("planted", &[], &[&dir])).unwrap_err();
            assert_eq!(error.code(), "ERR_SHELL_ENV_INVALID_DIRECTORY", "{dir}");
            assert!(error.to_string().contains("writable by its group or by others"), "{error}");
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_directory_that_turns_untrusted_after_register_is_left_out_of_path_and_reported_once() {
        use crate::snapshot::Collection;
        use std::os::unix::fs::PermissionsExt;
        let base = crate::test_paths::trusted_scratch("turns-untrusted");
        let (good, bad) = (base.join("good"), base.join("bad"));
        let path = |dir: &Path| dir.display().to_string();
        let registry = registry();
        registry.register(declaration("tools", &[], &[&path(&bad), &path(&good)])).unwrap();
        // Made later, by someone who lets others write it.
        for dir in [&good, &bad] {
            std::fs::create_dir(dir).unwrap();
        }
        std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o777)).unwrap();
        let collect = || {
            Collection::begin(&registry, None)
                .unwrap()
                .resolve_each(|_| Ok::<_, ShellEnvError>(vec![]))
                .unwrap()
                .finish(Some("/usr/bin"))
        };
        assert_eq!(collect()["PATH"], format!("{}:/usr/bin", path(&good)));
        let expected = LeftOut {
            contributor: "tools".into(),
            directory: path(&bad),
            reason: "is writable by its group or by others, so anyone could plant a command there".into(),
        };
        assert_eq!(registry.take_left_out(), std::slice::from_ref(&expected));
        assert_eq!(registry.untrusted_directories(), [expected]);
        collect();
        assert_eq!(registry.take_left_out(), [], "each is reported once");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn stale_registrations_never_remove_later_ones() {
        let registry = registry();
        let first = registry.register(declaration("a", &["DSH_A"], &[])).unwrap();
        assert!(registry.unregister(&first));
        assert!(!registry.unregister(&first), "idempotent");
        let second = registry.register(declaration("a", &["DSH_A"], &[])).unwrap();
        assert!(!registry.unregister(&first), "stale handle leaves the new registration alone");
        assert_eq!(registry.list().len(), 1);
        assert!(registry.unregister(&second));
        assert!(registry.list().is_empty());
    }

    #[test]
    fn profile_validation() {
        assert!(Profile::new("work", abs("profiles/work")).is_ok());
        let p = abs("p");
        for (name, dir) in [("", &*p), ("  ", &p), ("work", "relative"), ("work", ""), ("w\0", &p)] {
            assert_eq!(Profile::new(name, dir).unwrap_err().code(), "ERR_SHELL_ENV_INVALID_PROFILE");
        }
    }

    #[test]
    fn catalog_lists_builtins_and_directories() {
        let with_profile = Registry::new(abs("h"), Some(Profile::new("work", abs("p")).unwrap()));
        let tools = abs("opt/tools/bin");
        with_profile.register(declaration("tools", &["DSH_TOOL"], &[&tools])).unwrap();
        with_profile.register(declaration("plain", &["DSH_PLAIN"], &[])).unwrap();
        let catalog = with_profile.catalog();
        let rows: Vec<_> = catalog.variables.iter().map(|e| (e.key.as_str(), e.owner.as_str(), e.when)).collect();
        assert_eq!(
            rows,
            [
                ("DSH_HOME", BUILTIN_OWNER, Availability::Always),
                ("DSH_PLAIN", "plain", Availability::Resolver),
                ("DSH_PROFILE", BUILTIN_OWNER, Availability::Profile),
                ("DSH_PROFILE_DIR", BUILTIN_OWNER, Availability::Profile),
                ("DSH_SESSION_ID", BUILTIN_OWNER, Availability::Agent),
                ("DSH_SHELL", BUILTIN_OWNER, Availability::Always),
                ("DSH_TOOL", "tools", Availability::Resolver),
            ]
        );
        assert_eq!(catalog.command_directories, [("tools".to_string(), vec![tools])]);
        assert!(!registry().catalog().variables.iter().any(|e| e.key == DSH_PROFILE));
    }
}
