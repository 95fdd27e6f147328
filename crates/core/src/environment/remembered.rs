//! What the steps that look at the parent (1–7: unrepresentable entries, the
//! managed prefix, `inherit`, credentials, `exclude`, hardening,
//! `includeOnly`) made of a parent, remembered for the next call with the
//! same parent, scrub policy and platform. A host's environment seldom
//! changes from one command to the next, and judging it was most of what
//! building a child's environment cost.
//!
//! A verdict is found again only for exactly the same packed text (every
//! name and value, in the same order), the same unrepresentable names, an
//! equal policy and the same platform rules: any change at all (a value
//! edited in place, a variable added or removed, another object read) is a
//! new parent, judged anew. What is remembered is a pure function of those,
//! so it is the verdict a new judgement would give.

use std::sync::{Arc, Mutex, PoisonError};

use super::{Parent, Platform, ScrubPolicy, Scrubbed};

/// How many parents are remembered: a host alternating a few policies, or a
/// few worker threads or test files each with its own `process.env`.
const PARENTS: usize = 8;

/// A parent longer than this is judged every time, so that what is kept
/// stays small (a few kilobytes is usual).
const MAX_TEXT_BYTES: usize = 256 * 1024;

/// The verdicts every build shares.
pub(super) static REMEMBERED: Remembered = Remembered::new();

/// The last parents judged and their verdicts.
pub(super) struct Remembered {
    /// The most recently used first.
    entries: Mutex<Vec<Entry>>,
}

struct Entry {
    platform: Platform,
    scrub: ScrubPolicy,
    parent: Parent,
    scrubbed: Arc<Scrubbed>,
}

impl Remembered {
    const fn new() -> Self {
        Self { entries: Mutex::new(Vec::new()) }
    }

    /// The steps 1–7 of `parent` under `scrub`: remembered, or made by
    /// `scrub_now` and remembered.
    pub(super) fn scrubbed(
        &self,
        platform: &Platform,
        parent: &Parent,
        scrub: &ScrubPolicy,
        scrub_now: impl FnOnce() -> Scrubbed,
    ) -> Arc<Scrubbed> {
        let same = |entry: &Entry| entry.platform == *platform && entry.parent == *parent && entry.scrub == *scrub;
        {
            let mut entries = self.lock();
            if let Some(index) = entries.iter().position(same) {
                let entry = entries.remove(index);
                let scrubbed = Arc::clone(&entry.scrubbed);
                entries.insert(0, entry);
                return scrubbed;
            }
        }
        // Judged outside the lock: other threads' calls need not wait for it.
        let scrubbed = Arc::new(scrub_now());
        if parent.text_len() <= MAX_TEXT_BYTES {
            let mut entries = self.lock();
            if !entries.iter().any(same) {
                entries.truncate(PARENTS - 1);
                let entry = Entry {
                    platform: *platform,
                    scrub: scrub.clone(),
                    parent: parent.clone(),
                    scrubbed: Arc::clone(&scrubbed),
                };
                entries.insert(0, entry);
            }
        }
        scrubbed
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
    use crate::environment::{scrub, Inherit};

    fn parent(pairs: &[(&str, &str)]) -> Parent {
        Parent::from_pairs(pairs.iter().map(|(name, value)| (name.to_string(), value.to_string())))
    }

    /// Steps 1–7 through `memory`, and whether they were judged anew.
    fn judged(memory: &Remembered, platform: Platform, parent: &Parent, policy: &ScrubPolicy) -> (Vec<String>, bool) {
        let judged = Cell::new(false);
        let scrubbed = memory.scrubbed(&platform, parent, policy, || {
            judged.set(true);
            scrub(&platform, parent, policy)
        });
        (scrubbed.vars.iter().map(|var| var.name.clone()).collect(), judged.get())
    }

    #[test]
    fn the_same_parent_under_the_same_policy_is_judged_once() {
        let memory = Remembered::new();
        let policy = ScrubPolicy::default();
        let host = parent(&[("PATH", "/bin"), ("API_TOKEN", "ghp_secret")]);
        assert_eq!(judged(&memory, Platform::posix(), &host, &policy), (vec!["PATH".into()], true));
        assert_eq!(judged(&memory, Platform::posix(), &host.clone(), &policy), (vec!["PATH".into()], false));
    }

    /// A parent's entries, and the names steps 1–7 keep of them.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);

    #[test]
    fn any_change_to_the_parent_the_policy_or_the_platform_is_judged_anew() {
        let memory = Remembered::new();
        let policy = ScrubPolicy::default();
        let host = [("PATH", "/bin"), ("NOTE", "hello")];
        assert_eq!(
            judged(&memory, Platform::posix(), &parent(&host), &policy),
            (vec!["NOTE".into(), "PATH".into()], true)
        );
        let changed: [Case; 4] = [
            // A value changed in place, to a credential.
            (&[("PATH", "/bin"), ("NOTE", "ghp_0123456789abcdefghijABCDEFGHIJ012345")], &["PATH"]),
            // A credential added.
            (&[("PATH", "/bin"), ("NOTE", "hello"), ("DB_PASSWORD", "hunter2")], &["NOTE", "PATH"]),
            // A variable removed.
            (&[("PATH", "/bin")], &["PATH"]),
            // The same variables in another order: another object's.
            (&[("NOTE", "hello"), ("PATH", "/bin")], &["NOTE", "PATH"]),
        ];
        for (pairs, kept) in changed {
            assert_eq!(
                judged(&memory, Platform::posix(), &parent(pairs), &policy),
                (kept.iter().map(|k| k.to_string()).collect(), true)
            );
        }
        let core = ScrubPolicy { inherit: Inherit::Core, ..ScrubPolicy::default() };
        assert_eq!(judged(&memory, Platform::posix(), &parent(&host), &core), (vec!["PATH".into()], true));
        assert_eq!(
            judged(&memory, Platform::windows(), &parent(&host), &policy),
            (vec!["NOTE".into(), "PATH".into()], true)
        );
        let unreadable = Parent::from_read(host.map(|(name, value)| (name.into(), value.into())), vec!["LONE".into()]);
        assert_eq!(
            judged(&memory, Platform::posix(), &unreadable, &policy),
            (vec!["NOTE".into(), "PATH".into()], true)
        );
        // Each of them is remembered now.
        assert_eq!(judged(&memory, Platform::posix(), &parent(&host), &core), (vec!["PATH".into()], false));
    }

    #[test]
    fn past_its_size_the_oldest_parent_is_forgotten_and_judged_again() {
        let memory = Remembered::new();
        let policy = ScrubPolicy::default();
        let parents: Vec<Parent> = (0..=PARENTS).map(|index| parent(&[("INDEX", &index.to_string())])).collect();
        for each in &parents {
            assert!(judged(&memory, Platform::posix(), each, &policy).1);
        }
        assert!(!judged(&memory, Platform::posix(), &parents[PARENTS], &policy).1);
        assert!(judged(&memory, Platform::posix(), &parents[0], &policy).1);
    }

    #[test]
    fn a_large_parent_is_judged_every_time() {
        let memory = Remembered::new();
        let policy = ScrubPolicy::default();
        let large = parent(&[("LARGE", &"x".repeat(MAX_TEXT_BYTES))]);
        assert!(judged(&memory, Platform::posix(), &large, &policy).1);
        assert!(judged(&memory, Platform::posix(), &large, &policy).1);
    }
}
