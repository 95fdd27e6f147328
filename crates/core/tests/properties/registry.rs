//! Registry operation sequences against a model: registrations and stale
//! handles keep ownership, `list()`, the contributors and the catalog
//! consistent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use dsh_shell_env_core::keys::{is_reserved, is_valid_key};
use dsh_shell_env_core::registry::{Declaration, Registration, Registry};
use proptest::prelude::*;
use proptest::sample::Index;

#[derive(Debug, Clone)]
enum Op {
    Register { name: usize, keys: Vec<usize>, dir: Option<usize> },
    Unregister { handle: Index },
}

const NAMES: [&str; 4] = ["a", "b", "c", "ä"];
/// Mostly valid keys; the last two are rejected at registration.
const KEYS: [&str; 7] = ["DSH_A", "DSH_B", "DSH_C", "DSH_D", "DSH_E", "DSH_HOME", "dsh_a"];
const DIRS: [&str; 3] = if cfg!(windows) { [r"C:\x", r"C:\y", "relative"] } else { ["/x", "/y", "relative"] };

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..NAMES.len(), proptest::collection::vec(prop_oneof![8 => 0..5usize, 1 => 5..7usize], 0..3), proptest::option::of(0..DIRS.len()))
            .prop_map(|(name, keys, dir)| Op::Register { name, keys, dir }),
        2 => any::<Index>().prop_map(|handle| Op::Unregister { handle }),
    ]
}

/// One current registration in the model.
#[derive(Debug, Clone)]
struct Owned {
    id: u64,
    keys: BTreeSet<&'static str>,
    dirs: Vec<&'static str>,
}

proptest! {
    #[test]
    fn registry_operations_keep_ownership_consistent(ops in proptest::collection::vec(op(), 1..40)) {
        let registry: Registry<()> = Registry::new("/h".into(), None);
        let mut model: BTreeMap<&str, Owned> = BTreeMap::new();
        let mut handles: Vec<(Registration, &str, u64)> = Vec::new();
        let mut next_id = 0u64;
        for op in ops {
            match op {
                Op::Register { name, keys, dir } => {
                    let name = NAMES[name];
                    let keys: Vec<&'static str> = keys.into_iter().map(|k| KEYS[k]).collect();
                    let dirs: Vec<&'static str> = dir.map(|d| DIRS[d]).into_iter().collect();
                    let result = registry.register(Declaration {
                        name: name.into(),
                        variables: keys.iter().map(|k| (k.to_string(), Some(format!("{name} {k}")))).collect(),
                        command_directories: dirs.iter().map(|d| d.to_string()).collect(),
                        resolver: (),
                    });
                    // The declaration's keys in order, then its directories, then the registry.
                    let bad_key = keys.iter().find_map(|k| {
                        if !is_valid_key(k) {
                            Some("ERR_SHELL_ENV_INVALID_KEY")
                        } else if is_reserved(k) {
                            Some("ERR_SHELL_ENV_RESERVED_KEY")
                        } else {
                            None
                        }
                    });
                    let expected = if bad_key.is_some() {
                        bad_key
                    } else if dirs.iter().any(|d| !Path::new(d).is_absolute()) {
                        Some("ERR_SHELL_ENV_INVALID_DIRECTORY")
                    } else if model.contains_key(name) {
                        Some("ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR")
                    } else if model.values().any(|o| keys.iter().any(|k| o.keys.contains(k))) {
                        Some("ERR_SHELL_ENV_DUPLICATE_KEY")
                    } else {
                        None
                    };
                    prop_assert_eq!(result.as_ref().err().map(|e| e.code()), expected, "{} {:?}", name, keys);
                    if let Ok(registration) = result {
                        prop_assert_eq!(registration.name(), name);
                        next_id += 1;
                        model.insert(name, Owned { id: next_id, keys: keys.into_iter().collect(), dirs });
                        handles.push((registration, name, next_id));
                    }
                }
                Op::Unregister { handle } => {
                    if handles.is_empty() {
                        continue;
                    }
                    let (registration, name, id) = handle.get(&handles).clone();
                    let current = model.get(name).is_some_and(|o| o.id == id);
                    prop_assert_eq!(registry.unregister(&registration), current, "a stale handle removed a newer registration");
                    if current {
                        model.remove(name);
                    }
                }
            }

            // list(): sorted by key, each key once, owned by its current contributor.
            let list = registry.list();
            prop_assert!(list.windows(2).all(|w| w[0].key < w[1].key), "{:?}", list);
            let expected: Vec<(&str, &str)> = {
                let mut rows: Vec<(&str, &str)> =
                    model.iter().flat_map(|(name, o)| o.keys.iter().map(move |k| (*k, *name))).collect();
                rows.sort();
                rows
            };
            let actual: Vec<(&str, &str)> = list.iter().map(|e| (e.key.as_str(), e.contributor.as_str())).collect();
            prop_assert_eq!(actual, expected);
            for entry in &list {
                prop_assert_eq!(&entry.description, &format!("{} {}", entry.contributor, entry.key));
            }
            // contributors() and the catalog agree with the model, in name order.
            let names: Vec<String> = registry.contributors().iter().map(|c| c.name().to_owned()).collect();
            prop_assert_eq!(names, model.keys().map(|n| n.to_string()).collect::<Vec<_>>());
            let catalog = registry.catalog();
            prop_assert!(catalog.variables.windows(2).all(|w| w[0].key < w[1].key));
            let dirs: Vec<(String, Vec<String>)> = model
                .iter()
                .filter(|(_, o)| !o.dirs.is_empty())
                .map(|(n, o)| (n.to_string(), o.dirs.iter().map(|d| d.to_string()).collect()))
                .collect();
            prop_assert_eq!(catalog.command_directories, dirs);
        }
    }
}
