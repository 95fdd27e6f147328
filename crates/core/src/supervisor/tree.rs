//! A process's descendants, found through `/proc`, and signals to all of them.
//!
//! A pid in a list was a live descendant a moment before. One that was reaped
//! since by its own parent frees its pid, but pids are handed out in
//! increasing order, so another process gets it only after the whole pid
//! space wrapped within those microseconds.

use std::collections::{HashMap, HashSet};
use std::io;

/// Sends `signals`, in order, to every descendant of `root`, each as soon as
/// it is found (a process that forks and exits at once is signalled
/// microseconds after it is listed, not after the whole tree is). Returns
/// how many descendants there were.
pub(super) fn signal_descendants(root: libc::pid_t, signals: &[libc::c_int]) -> usize {
    let signal = |pid: libc::pid_t| {
        for &signal in signals {
            // SAFETY: kill only touches the process table.
            unsafe { libc::kill(pid, signal) };
        }
    };
    let mut seen = HashSet::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        let Some(children) = children_of(pid) else {
            // No `children` files: the slower whole-table scan.
            let descendants = descendants_by_parent(root);
            descendants.iter().copied().for_each(signal);
            return descendants.len().max(seen.len());
        };
        for child in children {
            if seen.insert(child) {
                signal(child);
                stack.push(child);
            }
        }
    }
    seen.len()
}

/// The children of every thread of `pid`; `None` when the kernel keeps no
/// `children` files (built without `CONFIG_PROC_CHILDREN`). A process that
/// is gone has none.
pub(super) fn children_of(pid: libc::pid_t) -> Option<Vec<libc::pid_t>> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Some(Vec::new()) };
    let mut children = Vec::new();
    for task in tasks.flatten() {
        match std::fs::read_to_string(task.path().join("children")) {
            Ok(list) => {
                children.extend(list.split_ascii_whitespace().filter_map(|pid| pid.parse::<libc::pid_t>().ok()))
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound && task.path().exists() => return None,
            Err(_) => {}
        }
    }
    Some(children)
}

/// Every live descendant of `root`, from `/proc/<pid>/stat` of every process.
fn descendants_by_parent(root: libc::pid_t) -> Vec<libc::pid_t> {
    let mut children: HashMap<libc::pid_t, Vec<libc::pid_t>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<libc::pid_t>().ok()) else {
            continue;
        };
        if let Some((state, parent)) = stat(pid) {
            if state != 'Z' && state != 'X' {
                children.entry(parent).or_default().push(pid);
            }
        }
    }
    let mut stack = vec![root];
    let mut seen = HashSet::new();
    let mut found = Vec::new();
    while let Some(pid) = stack.pop() {
        for &child in children.get(&pid).into_iter().flatten() {
            if seen.insert(child) {
                found.push(child);
                stack.push(child);
            }
        }
    }
    found
}

/// The state letter and parent pid from `/proc/<pid>/stat`: `pid (comm) S ppid …`,
/// where `comm` may itself hold spaces and parentheses.
fn stat(pid: libc::pid_t) -> Option<(char, libc::pid_t)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_ascii_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.next()?.parse().ok()?))
}
