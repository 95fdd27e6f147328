//! Verdicts remembered per variable. A host's environment is the same from
//! one command to the next, and judging its values is most of what building a
//! child's environment costs, so each name keeps the verdict on the value it
//! last had; a changed value is judged again.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::{find, Finding};

/// The most names remembered; past it, the memory starts over (a host whose
/// environment keeps growing new names gains nothing from it anyway).
const CAPACITY: usize = 4096;

/// Each name's last value and its verdict.
type Verdicts = HashMap<String, (String, Option<Finding>)>;

static VERDICTS: Mutex<Option<Verdicts>> = Mutex::new(None);

/// [`find`], remembered: the same answer, judged once per name and value.
pub fn find_remembered(name: &str, value: &str) -> Option<Finding> {
    // A verdict is plain data: a panic elsewhere cannot leave one half-written.
    let mut guard = VERDICTS.lock().unwrap_or_else(PoisonError::into_inner);
    let verdicts = guard.get_or_insert_with(HashMap::new);
    if let Some((last, verdict)) = verdicts.get(name) {
        if last == value {
            return *verdict;
        }
    }
    let verdict = find(name, value);
    if verdicts.len() >= CAPACITY && !verdicts.contains_key(name) {
        verdicts.clear();
    }
    verdicts.insert(name.to_owned(), (value.to_owned(), verdict));
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_verdict_is_the_verdict_and_a_new_value_is_judged_again() {
        let name = "REMEMBERED_TEST_API_KEY";
        assert_eq!(find_remembered(name, "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"), Some(Finding::Name));
        assert_eq!(find_remembered(name, "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"), Some(Finding::Name));
        // A switch is not a credential, whatever the name says.
        assert_eq!(find_remembered(name, "true"), None);
        assert_eq!(find_remembered(name, "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"), Some(Finding::Name));
        let other = "REMEMBERED_TEST_SERVICE";
        assert_eq!(find_remembered(other, "postgres://app:s3cret@db/app"), Some(Finding::Value));
        assert_eq!(find_remembered(other, "postgres://db/app"), None);
    }

    #[test]
    fn more_names_than_it_keeps_still_get_their_verdicts() {
        for round in 0..2 {
            for index in 0..CAPACITY + 10 {
                let name = format!("REMEMBERED_FILL_{index}_TOKEN");
                let value = if index % 2 == 0 { "ghp_0123456789abcdefghijABCDEFGHIJ012345" } else { "" };
                assert_eq!(find_remembered(&name, value), find(&name, value), "{name} in round {round}");
            }
        }
    }
}
