//! The packed text in which the package's JS layer hands resolvers' answers
//! to the binding, and the binding hands a snapshot back: one string each way
//! instead of a Node-API call per key and value, which is most of what a
//! collection cost.
//!
//! Fields are separated by NUL, which no field holds: the JS layer packs an
//! answer only when none of its keys and values holds a NUL or a lone
//! surrogate (it hands any other answer over as it is, for the binding to
//! read and report), and a snapshot's values hold no NUL by the time it is
//! complete (keys are `DSH_*` names and `PATH`).
//!
//! - An answer: `<pairs>\0` then `<key>\0<value>\0` for each of its own
//!   enumerable keys, in property order. Answers to one collection are
//!   concatenated, in the order the resolvers ran.
//! - A snapshot: `1` when directories were left out of its PATH, else `0`;
//!   then `<key>\0` for each variable, in key order; then `\x01`; then
//!   `<value>\0` for each, in the same order. The keys come first, apart,
//!   because they are mostly the same from one collection to the next: the
//!   JS layer keeps the last list it split and reuses it (its strings are
//!   then already the engine's property names) while the text is the same.
//!
//! - A child's environment, as `buildEnvironment()` reports it: `<vars>\0`;
//!   then for each variable, in name order, its source (one character, `0`
//!   and up: its place in [`Source::ALL`]) and `<name>\0`; then `<value>\0`
//!   for each, in the same order; then for each removal, in order, its reason
//!   (its place in [`RemovalReason::ALL`] in the same way) and `<key's length
//!   in UTF-16 code units>\0<key>`: a removed key may hold a NUL (an
//!   unrepresentable one), a child's names and values cannot. The names and
//!   sources come first, apart, for the reason a snapshot's keys do: they
//!   are mostly the same from one call to the next.
//!
//! `lib/packed.js` writes answers and reads snapshots, and `lib/environment.js`
//! reads environments; this module is the other side. Every collection
//! through the package's JS layer goes through both, and every
//! `buildEnvironment()` through the last. (The parent environment crosses
//! packed too, as one answer: `environment::Parent` reads it.)

use crate::environment::{Environment, RemovalReason, Source};
use crate::snapshot::SortedValues;

const SEPARATOR: char = '\0';

/// Ends a snapshot's keys. No key holds it: keys are `DSH_*` names and `PATH`.
const KEYS_END: char = '\u{1}';

/// Reads packed answers one after the other.
#[derive(Debug)]
pub struct Answers<'a> {
    rest: &'a str,
}

/// Packed answers that do not follow the format: the JS layer never writes
/// them, a direct caller of the binding might.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the packed answers are malformed")]
pub struct Malformed;

impl<'a> Answers<'a> {
    /// The answers packed in `text`.
    pub fn new(text: &'a str) -> Self {
        Self { rest: text }
    }

    /// The next field, which must end with its separator.
    fn field(&mut self) -> Result<&'a str, Malformed> {
        // Fields are short: a plain byte scan beats setting up a char searcher.
        let end = self.rest.bytes().position(|byte| byte == SEPARATOR as u8).ok_or(Malformed)?;
        let field = &self.rest[..end];
        self.rest = &self.rest[end + 1..];
        Ok(field)
    }

    /// The next answer's keys and values, in property order, borrowed from
    /// the text.
    pub fn next_answer(&mut self) -> Result<Vec<(&'a str, &'a str)>, Malformed> {
        let pairs: usize = self.field()?.parse().map_err(|_| Malformed)?;
        let mut values = Vec::with_capacity(pairs.min(self.rest.len()));
        for _ in 0..pairs {
            let key = self.field()?;
            let value = self.field()?;
            values.push((key, value));
        }
        Ok(values)
    }
}

/// Packs one answer as the JS layer does (tests and fuzzing use it).
pub fn pack_answer<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let pairs: Vec<_> = pairs.into_iter().collect();
    let mut text = format!("{}{SEPARATOR}", pairs.len());
    for (key, value) in pairs {
        text.push_str(key);
        text.push(SEPARATOR);
        text.push_str(value);
        text.push(SEPARATOR);
    }
    text
}

/// Packs a complete snapshot for the JS layer; `left_out`: directories were
/// left out of its PATH, for the JS layer to report.
pub fn pack_snapshot(snapshot: &SortedValues, left_out: bool) -> String {
    let length = snapshot.iter().map(|(key, value)| key.len() + value.len() + 2).sum::<usize>() + 2;
    let mut text = String::with_capacity(length);
    text.push(if left_out { '1' } else { '0' });
    for (key, _) in snapshot.iter() {
        text.push_str(key);
        text.push(SEPARATOR);
    }
    text.push(KEYS_END);
    for (_, value) in snapshot.iter() {
        text.push_str(value);
        text.push(SEPARATOR);
    }
    text
}

/// Packs a child's environment for the JS layer (see the module documentation).
pub fn pack_environment(environment: &Environment) -> String {
    let code = |index: usize| char::from(b'0' + index as u8);
    let length = environment.vars.iter().map(|(name, value)| name.len() + value.len() + 3).sum::<usize>()
        + environment.removed.iter().map(|removal| removal.key.len() + 8).sum::<usize>()
        + 8;
    let mut text = String::with_capacity(length);
    text.push_str(&environment.vars.len().to_string());
    text.push(SEPARATOR);
    // Both in name order, one entry per name.
    debug_assert!(environment.sources.keys().eq(environment.vars.iter().map(|(name, _)| name)));
    for ((name, _), source) in environment.vars.iter().zip(environment.sources.values()) {
        text.push(code(Source::ALL.iter().position(|each| each == source).unwrap_or_default()));
        text.push_str(name);
        text.push(SEPARATOR);
    }
    for (_, value) in &environment.vars {
        text.push_str(value);
        text.push(SEPARATOR);
    }
    for removal in &environment.removed {
        text.push(code(RemovalReason::ALL.iter().position(|each| *each == removal.reason).unwrap_or_default()));
        text.push_str(&removal.key.encode_utf16().count().to_string());
        text.push(SEPARATOR);
        text.push_str(&removal.key);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn strings(values: Vec<(&str, &str)>) -> Vec<(String, String)> {
        values.into_iter().map(|(key, value)| (key.to_string(), value.to_string())).collect()
    }

    #[test]
    fn concatenated_answers_read_back_in_order_empty_keys_and_values_included() {
        let text = [pack_answer([("DSH_A", "1"), ("", "")]), pack_answer([]), pack_answer([("DSH_B", "x=y")])].concat();
        let mut answers = Answers::new(&text);
        assert_eq!(
            strings(answers.next_answer().unwrap()),
            [("DSH_A".into(), "1".into()), (String::new(), String::new())]
        );
        assert_eq!(strings(answers.next_answer().unwrap()), []);
        assert_eq!(strings(answers.next_answer().unwrap()), [("DSH_B".into(), "x=y".into())]);
    }

    #[test]
    fn malformed_answers_are_refused_not_misread() {
        for text in ["", "x\0", "2\0DSH_A\0a\0", "1\0DSH_A\0"] {
            assert_eq!(Answers::new(text).next_answer(), Err(Malformed), "{text:?}");
        }
    }

    #[test]
    fn a_snapshot_packs_its_keys_then_its_values_in_key_order() {
        let snapshot: SortedValues =
            [("PATH", "/bin"), ("DSH_HOME", "/srv/dsh"), ("DSH_EMPTY", "")].into_iter().collect();
        assert_eq!(pack_snapshot(&snapshot, false), "0DSH_EMPTY\0DSH_HOME\0PATH\0\u{1}\0/srv/dsh\0/bin\0");
        assert!(pack_snapshot(&snapshot, true).starts_with("1DSH_EMPTY\0"));
    }

    #[test]
    fn an_environment_packs_its_names_with_their_sources_then_its_values_then_its_removals_by_length() {
        use crate::environment::{build_environment, EnvironmentSpec, Platform};
        let parent = strings(vec![("PATH", "/bin"), ("NUL\0NAME", "x"), ("DB_PASSWORD", "hunter2"), ("É", "é")]);
        let spec =
            EnvironmentSpec { terminal: None, explicit: vec![("X".into(), Some("1".into()))], ..Default::default() };
        let environment = build_environment(&Platform::posix(), parent, &spec).unwrap();
        // Sources: 0 inherited, 2 explicit; reasons: 0 unrepresentable, 3 credential.
        assert_eq!(
            pack_environment(&environment),
            "3\x000PATH\x002X\x000É\x00/bin\x001\x00é\x0008\x00NUL\x00NAME311\x00DB_PASSWORD"
        );
    }

    proptest! {
        #[test]
        fn any_answer_without_nul_reads_back_as_packed(pairs in proptest::collection::vec(("[^\0]*", "[^\0]*"), 0..8)) {
            let text = pack_answer(pairs.iter().map(|(key, value)| (key.as_str(), value.as_str())));
            let read = strings(Answers::new(&text).next_answer().unwrap());
            prop_assert_eq!(read, pairs);
        }
    }
}
