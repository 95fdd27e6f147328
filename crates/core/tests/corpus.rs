//! The default scrub scored on a labelled corpus of realistic environments
//! (`tests/corpus/environment.json`: CI runners, a Kubernetes pod, cloud and
//! AI SDKs, developer shells, frontend builds, package managers, chat bots):
//! every credential is removed and every other variable reaches the child.
//! An entry may also name the reason it must be removed for.

use dsh_shell_env_core::environment::{build_environment, EnvironmentSpec, Platform, RemovalReason};

struct Labelled {
    group: String,
    name: String,
    value: String,
    credential: bool,
    why: String,
    reason: Option<String>,
}

fn corpus() -> Vec<Labelled> {
    let text = include_str!("corpus/environment.json");
    let json: serde_json::Value = serde_json::from_str(text).expect("the corpus is JSON");
    let field = |entry: &serde_json::Value, key: &str| entry[key].as_str().expect(key).to_owned();
    json["variables"]
        .as_array()
        .expect("a variables array")
        .iter()
        .map(|entry| {
            let label = field(entry, "label");
            assert!(label == "credential" || label == "keep", "label {label:?}");
            Labelled {
                group: field(entry, "group"),
                name: field(entry, "name"),
                value: field(entry, "value"),
                credential: label == "credential",
                why: field(entry, "why"),
                reason: entry.get("reason").map(|reason| reason.as_str().expect("reason").to_owned()),
            }
        })
        .collect()
}

#[test]
fn the_corpus_is_large_and_balanced_enough_to_judge_by() {
    let corpus = corpus();
    let credentials = corpus.iter().filter(|entry| entry.credential).count();
    assert!(corpus.len() >= 200, "{} variables", corpus.len());
    assert!(credentials >= 60 && corpus.len() - credentials >= 100, "{credentials} credentials");
    let mut names: Vec<&str> = corpus.iter().map(|entry| entry.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), corpus.len(), "names are unique");
}

#[test]
fn the_default_scrub_removes_every_credential_and_nothing_else() {
    score(Platform::posix());
}

#[test]
fn windows_names_ignoring_case_are_judged_the_same() {
    score(Platform::windows());
}

fn score(platform: Platform) {
    let corpus = corpus();
    let parent = corpus.iter().map(|entry| (entry.name.clone(), entry.value.clone()));
    let spec = EnvironmentSpec { terminal: None, ..EnvironmentSpec::default() };
    let env = build_environment(&platform, parent, &spec).expect("the default spec is valid");
    let reason = |name: &str| env.removed.iter().find(|removal| removal.key == name).map(|removal| removal.reason);
    let mut wrong = Vec::new();
    for entry in &corpus {
        let kept = env.get(&entry.name).is_some();
        if kept == entry.credential {
            let verdict = if kept { "passes" } else { "is removed" };
            let label = if entry.credential { "credential" } else { "legitimate" };
            wrong.push(format!("{label} {} ({}: {}) {verdict}", entry.name, entry.group, entry.why));
        } else if let Some(wanted) = &entry.reason {
            let given = reason(&entry.name).map(RemovalReason::as_str);
            if given != Some(wanted.as_str()) {
                wrong.push(format!("credential {} ({}) is removed as {given:?}, not {wanted}", entry.name, entry.why));
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {} judged wrongly:\n{}", wrong.len(), corpus.len(), wrong.join("\n"));
}
