//! What the pipeline made of the last parents, remembered for the next call
//! with the same one. A host's environment seldom changes from one command to
//! the next, and judging it was most of what building a child's environment
//! cost. Two things are kept per parent, scrub policy and platform: what the
//! steps that look at the parent (1–7: unrepresentable entries, the managed
//! prefix, `inherit`, credentials, `exclude`, hardening, `includeOnly`) left
//! of it, and the last environment built on that with the other layers of a
//! spec (terminal, explicit, managed), for the same spec again.
//!
//! Either is found again only for exactly the same packed text (every name
//! and value, in the same order), the same unrepresentable names, an equal
//! policy (and for an environment, equal layers) and the same platform
//! rules: any change at all (a value edited in place, a variable added or
//! removed, another object read) is a new parent, judged anew. What is
//! remembered is a pure function of those, so it is what building anew would
//! give.

use std::sync::{Arc, Mutex, PoisonError};

use super::{Environment, EnvironmentSpec, Parent, Platform, ScrubPolicy, Scrubbed};

/// How many parents are remembered: a host alternating a few policies, or a
/// few worker threads or test files each with its own `process.env`.
const PARENTS: usize = 8;

/// A parent longer than this is judged every time, so that what is kept
/// stays small (a few kilobytes is usual).
const MAX_TEXT_BYTES: usize = 256 * 1024;

/// What every build shares.
pub(super) static REMEMBERED: Remembered = Remembered::new();

/// The last parents judged, what steps 1–7 left of each, and the last
/// environment built on it.
pub(super) struct Remembered {
    /// The most recently used first.
    entries: Mutex<Vec<Entry>>,
}

struct Entry {
    platform: Platform,
    scrub: ScrubPolicy,
    parent: Parent,
    scrubbed: Arc<Scrubbed>,
    /// The spec of the last environment built here (its `scrub` is this
    /// entry's), and that environment.
    built: Option<(EnvironmentSpec, Arc<Environment>)>,
}

impl Entry {
    fn is(&self, platform: &Platform, parent: &Parent, scrub: &ScrubPolicy) -> bool {
        self.platform == *platform && self.scrub == *scrub && self.parent == *parent
    }
}

impl Remembered {
    const fn new() -> Self {
        Self { entries: Mutex::new(Vec::new()) }
    }

    /// The environment `spec` gives on `parent`: the one built last time for
    /// the same parent and spec, or made by `layer` on what steps 1–7 left of
    /// the parent (remembered, or made by `scrub_now`), and remembered.
    pub(super) fn built(
        &self,
        platform: &Platform,
        parent: &Parent,
        spec: &EnvironmentSpec,
        scrub_now: impl FnOnce() -> Scrubbed,
        layer: impl FnOnce(&Scrubbed) -> Environment,
    ) -> Arc<Environment> {
        let found = {
            let mut entries = self.lock();
            match entries.iter().position(|entry| entry.is(platform, parent, &spec.scrub)) {
                Some(index) => {
                    let entry = entries.remove(index);
                    let found = match &entry.built {
                        Some((built_for, environment)) if built_for == spec => Ok(Arc::clone(environment)),
                        _ => Err(Arc::clone(&entry.scrubbed)),
                    };
                    entries.insert(0, entry);
                    Some(found)
                }
                None => None,
            }
        };
        // Judged and built outside the lock: other threads' calls need not wait.
        let scrubbed = match found {
            Some(Ok(environment)) => return environment,
            Some(Err(scrubbed)) => scrubbed,
            None => Arc::new(scrub_now()),
        };
        let environment = Arc::new(layer(&scrubbed));
        if parent.text_len() <= MAX_TEXT_BYTES {
            let built = Some((spec.clone(), Arc::clone(&environment)));
            let mut entries = self.lock();
            match entries.iter_mut().find(|entry| entry.is(platform, parent, &spec.scrub)) {
                Some(entry) => entry.built = built,
                None => {
                    entries.truncate(PARENTS - 1);
                    let entry = Entry {
                        platform: *platform,
                        scrub: spec.scrub.clone(),
                        parent: parent.clone(),
                        scrubbed,
                        built,
                    };
                    entries.insert(0, entry);
                }
            }
        }
        environment
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        // Plain data: a panic elsewhere cannot leave an entry half-written.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::environment::{layer, scrub, Inherit};

    fn parent(pairs: &[(&str, &str)]) -> Parent {
        Parent::from_pairs(pairs.iter().map(|(name, value)| (name.to_string(), value.to_string())))
    }

    /// A spec with `policy` and nothing added.
    fn spec(policy: &ScrubPolicy) -> EnvironmentSpec {
        EnvironmentSpec { scrub: policy.clone(), terminal: None, ..EnvironmentSpec::default() }
    }

    /// What was done anew to build an environment through `memory`.
    #[derive(Debug, PartialEq)]
    struct Done {
        /// The environment's names.
        names: Vec<String>,
        /// Steps 1–7 were run.
        judged: bool,
        /// Steps 8–11 were run.
        layered: bool,
    }

    fn built(memory: &Remembered, platform: Platform, parent: &Parent, spec: &EnvironmentSpec) -> Done {
        let (judged, layered) = (Cell::new(false), Cell::new(false));
        let environment = memory.built(
            &platform,
            parent,
            spec,
            || {
                judged.set(true);
                scrub(&platform, parent, &spec.scrub)
            },
            |scrubbed| {
                layered.set(true);
                layer(&platform, scrubbed, spec)
            },
        );
        let names = environment.vars.iter().map(|(name, _)| name.clone()).collect();
        Done { names, judged: judged.get(), layered: layered.get() }
    }

    fn done(names: &[&str], judged: bool, layered: bool) -> Done {
        Done { names: names.iter().map(|name| name.to_string()).collect(), judged, layered }
    }

    /// A parent's entries, and the names steps 1–7 keep of them.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);

    #[test]
    fn the_same_parent_and_spec_are_built_once() {
        let memory = Remembered::new();
        let policy = spec(&ScrubPolicy::default());
        let host = parent(&[("PATH", "/bin"), ("API_TOKEN", "ghp_secret")]);
        assert_eq!(built(&memory, Platform::posix(), &host, &policy), done(&["PATH"], true, true));
        assert_eq!(built(&memory, Platform::posix(), &host.clone(), &policy.clone()), done(&["PATH"], false, false));
    }

    #[test]
    fn other_layers_on_the_same_parent_and_policy_are_layered_anew_on_the_same_judgement() {
        let memory = Remembered::new();
        let plain = spec(&ScrubPolicy::default());
        let host = parent(&[("PATH", "/bin"), ("API_TOKEN", "ghp_secret")]);
        assert_eq!(built(&memory, Platform::posix(), &host, &plain), done(&["PATH"], true, true));
        let explicit = EnvironmentSpec { explicit: vec![("X".into(), Some("1".into()))], ..plain.clone() };
        assert_eq!(built(&memory, Platform::posix(), &host, &explicit), done(&["PATH", "X"], false, true));
        let managed = EnvironmentSpec { managed: vec![("DSH_SESSION_ID".into(), "s".into())], ..plain.clone() };
        assert_eq!(built(&memory, Platform::posix(), &host, &managed), done(&["DSH_SESSION_ID", "PATH"], false, true));
        let terminal = EnvironmentSpec { terminal: Some(vec![("TERM".into(), "dumb".into())]), ..plain.clone() };
        assert_eq!(built(&memory, Platform::posix(), &host, &terminal), done(&["PATH", "TERM"], false, true));
        assert_eq!(built(&memory, Platform::posix(), &host, &terminal), done(&["PATH", "TERM"], false, false));
        assert_eq!(built(&memory, Platform::posix(), &host, &plain), done(&["PATH"], false, true));
    }

    #[test]
    fn any_change_to_the_parent_the_policy_or_the_platform_is_judged_anew() {
        let memory = Remembered::new();
        let policy = spec(&ScrubPolicy::default());
        let host = [("PATH", "/bin"), ("NOTE", "hello")];
        assert_eq!(built(&memory, Platform::posix(), &parent(&host), &policy), done(&["NOTE", "PATH"], true, true));
        let changed: [Case; 5] = [
            // A value changed in place, to a credential.
            (&[("PATH", "/bin"), ("NOTE", "ghp_0123456789abcdefghijABCDEFGHIJ012345")], &["PATH"]),
            // A value changed in place to one of the same length: a switch, then a password.
            (&[("PATH", "/bin"), ("NOTE", "hello"), ("DB_PASSWORD", "true")], &["DB_PASSWORD", "NOTE", "PATH"]),
            (&[("PATH", "/bin"), ("NOTE", "hello"), ("DB_PASSWORD", "hunt")], &["NOTE", "PATH"]),
            // A variable removed.
            (&[("PATH", "/bin")], &["PATH"]),
            // The same variables in another order: another object's.
            (&[("NOTE", "hello"), ("PATH", "/bin")], &["NOTE", "PATH"]),
        ];
        for (pairs, kept) in changed {
            assert_eq!(built(&memory, Platform::posix(), &parent(pairs), &policy), done(kept, true, true));
        }
        let core = spec(&ScrubPolicy { inherit: Inherit::Core, ..ScrubPolicy::default() });
        assert_eq!(built(&memory, Platform::posix(), &parent(&host), &core), done(&["PATH"], true, true));
        assert_eq!(built(&memory, Platform::windows(), &parent(&host), &policy), done(&["NOTE", "PATH"], true, true));
        let unreadable = Parent::from_read(host.map(|(name, value)| (name.into(), value.into())), vec!["LONE".into()]);
        assert_eq!(built(&memory, Platform::posix(), &unreadable, &policy), done(&["NOTE", "PATH"], true, true));
        // Each of them is remembered now.
        assert_eq!(built(&memory, Platform::posix(), &parent(&host), &core), done(&["PATH"], false, false));
    }

    #[test]
    fn past_its_size_the_oldest_parent_is_forgotten_and_judged_again() {
        let memory = Remembered::new();
        let policy = spec(&ScrubPolicy::default());
        let parents: Vec<Parent> = (0..=PARENTS).map(|index| parent(&[("INDEX", &index.to_string())])).collect();
        for each in &parents {
            assert!(built(&memory, Platform::posix(), each, &policy).judged);
        }
        assert!(!built(&memory, Platform::posix(), &parents[PARENTS], &policy).judged);
        assert!(built(&memory, Platform::posix(), &parents[0], &policy).judged);
    }

    #[test]
    fn a_large_parent_is_judged_every_time() {
        let memory = Remembered::new();
        let policy = spec(&ScrubPolicy::default());
        let large = parent(&[("LARGE", &"x".repeat(MAX_TEXT_BYTES))]);
        assert_eq!(built(&memory, Platform::posix(), &large, &policy), done(&["LARGE"], true, true));
        assert_eq!(built(&memory, Platform::posix(), &large, &policy), done(&["LARGE"], true, true));
    }
}
