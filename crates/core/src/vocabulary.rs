//! The words of the package's enumerations, each defined once by its enum's
//! `ALL` and `as_str` (removal reasons, environment sources, availabilities,
//! execution statuses, limits), and the field names of its input shapes, each
//! defined once by the list the binding checks a value's fields against. The
//! binding hands them to JS, and the TypeScript declarations in `index.d.ts`
//! are generated from them (the type tests check the hand-written interfaces
//! against the field names)
//! (`cargo run -p dsh-shell-env-core --example vocabulary -- --write`; a test
//! fails when the file is out of date).

use crate::command::{SCRUB_FIELDS, SPEC_FIELDS};
use crate::environment::{RemovalReason, Source};
use crate::limits::{Limit, LIMIT_FIELDS};
use crate::process::Status;
use crate::registry::Availability;

/// One enumeration as the TypeScript declarations name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vocabulary {
    /// The exported type's name.
    pub type_name: &'static str,
    /// Its doc comment.
    pub doc: &'static str,
    /// Its words, in their enum's order.
    pub words: Vec<&'static str>,
}

/// Every enumeration of the public API.
pub fn all() -> Vec<Vocabulary> {
    vec![
        Vocabulary {
            type_name: "EnvironmentSource",
            doc: "Which step put a variable into the child's environment.",
            words: Source::ALL.iter().map(|source| source.as_str()).collect(),
        },
        Vocabulary {
            type_name: "RemovalReason",
            doc: "Why a variable was removed: the first step of the pipeline that removed it.",
            words: RemovalReason::ALL.iter().map(|reason| reason.as_str()).collect(),
        },
        Vocabulary {
            type_name: "VariableAvailability",
            doc: "When a catalog variable is present: `always`; `agent` (agent calls); `profile` (a profile was given); `resolver` (when its resolver returns it).",
            words: Availability::ALL.iter().map(|when| when.as_str()).collect(),
        },
        Vocabulary {
            type_name: "ExecutionStatus",
            doc: "Where a command is in its life.",
            words: Status::ALL.iter().map(|status| status.as_str()).collect(),
        },
        Vocabulary {
            type_name: "ShellLimitName",
            doc: "A limit, as a result names it.",
            words: Limit::ALL.iter().map(|limit| limit.as_str()).collect(),
        },
        Vocabulary {
            type_name: "ShellExecSpecField",
            doc: "Every field of `ShellExecSpec`: what `execute()` reads; any other is refused.",
            words: SPEC_FIELDS.to_vec(),
        },
        Vocabulary {
            type_name: "ShellLimitsField",
            doc: "Every field of `ShellLimits`.",
            words: LIMIT_FIELDS.to_vec(),
        },
        Vocabulary {
            type_name: "ShellScrubField",
            doc: "Every field of `ShellScrub`.",
            words: SCRUB_FIELDS.to_vec(),
        },
    ]
}

/// The first line of the generated region of `index.d.ts`.
pub const BEGIN: &str =
    "// BEGIN vocabularies: generated from the core crate's enums (crates/core/src/vocabulary.rs); do not edit.";
/// Its last line.
pub const END: &str = "// END vocabularies";

/// The TypeScript declarations of [`all`], between [`BEGIN`] and [`END`].
pub fn typescript() -> String {
    let mut out = format!("{BEGIN}\n");
    for vocabulary in all() {
        let words: Vec<String> = vocabulary.words.iter().map(|word| format!("'{word}'")).collect();
        out.push_str(&format!(
            "\n/** {} */\nexport type {} = {}\n",
            vocabulary.doc,
            vocabulary.type_name,
            words.join(" | ")
        ));
    }
    out.push_str(&format!("\n{END}"));
    out
}

/// `text` with its generated region replaced by [`typescript`]; `None` when
/// it has no such region.
pub fn regenerate(text: &str) -> Option<String> {
    let start = text.find(BEGIN)?;
    let end = text[start..].find(END)? + start + END.len();
    Some(format!("{}{}{}", &text[..start], typescript(), &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_vocabulary_has_distinct_words() {
        for vocabulary in all() {
            let mut words = vocabulary.words.clone();
            words.sort_unstable();
            words.dedup();
            assert_eq!(words.len(), vocabulary.words.len(), "{}", vocabulary.type_name);
        }
    }

    #[test]
    fn the_readmes_execute_table_has_a_row_for_every_spec_field_and_no_other() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
        let readme = std::fs::read_to_string(path).expect("README.md");
        let section = readme.split("### `execute(spec)").nth(1).expect("the execute() section");
        let table = section.lines().skip_while(|line| !line.starts_with("| field")).skip(2);
        let mut documented: Vec<&str> = table
            .take_while(|line| line.starts_with('|'))
            .flat_map(|row| row.split('|').nth(1).unwrap_or("").split(','))
            .map(|name| name.trim().trim_matches('`'))
            .collect();
        let mut fields = SPEC_FIELDS.to_vec();
        documented.sort_unstable();
        fields.sort_unstable();
        assert_eq!(documented, fields, "README.md's execute() table against the core's SPEC_FIELDS");
    }

    #[test]
    fn index_d_ts_holds_the_generated_declarations() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../index.d.ts");
        let text = std::fs::read_to_string(path).expect("index.d.ts");
        let regenerated = regenerate(&text).expect("index.d.ts has the generated region");
        assert!(
            regenerated == text,
            "index.d.ts is out of date: run `cargo run -p dsh-shell-env-core --example vocabulary -- --write`"
        );
    }
}
