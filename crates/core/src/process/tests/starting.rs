//! Starting a command: exactly the spec's environment, its working directory,
//! no stray descriptors, program resolution like `execvp`, the workdir check,
//! spawn errors, and `spawn_async` off the runtime thread.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use std::{fs, io};

use super::{errno, run, sh, TestDir};
use crate::error::ExecError;
use crate::process::{check_workdir, resolve_program, spawn, spawn_async, ProcessSpec, Search};

#[tokio::test(flavor = "multi_thread")]
async fn child_sees_only_the_spec_env() {
    let mut spec = ProcessSpec::new("/usr/bin/env", "/");
    spec.env = vec![("ZED".into(), "last".into()), ("DSH_A".into(), "x y".into()), ("EMPTY".into(), String::new())];
    let result = run(spec).await;
    let lines: BTreeSet<&str> = result.stdout.text.lines().collect();
    assert_eq!(lines, BTreeSet::from(["DSH_A=x y", "EMPTY=", "ZED=last"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_in_the_given_workdir() {
    let dir = TestDir::new();
    let mut spec = sh("pwd -P");
    spec.cwd = dir.0.clone();
    assert_eq!(run(spec).await.stdout.text.trim(), fs::canonicalize(&dir.0).unwrap().to_str().unwrap());
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn child_inherits_no_stray_fds() {
    // Besides stdio and the fd ls opens, the child may only have what this test
    // process itself inherited without close-on-exec.
    let inherited: BTreeSet<String> = fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .map(|fd| fd.file_name().to_string_lossy().into_owned())
        // SAFETY: F_GETFD only reads the descriptor flags.
        .filter(|fd| unsafe { libc::fcntl(fd.parse().unwrap(), libc::F_GETFD) } == 0)
        .collect();
    let result = run(sh("exec ls /proc/self/fd")).await;
    for fd in result.stdout.text.lines() {
        assert!(["0", "1", "2", "3"].contains(&fd) || inherited.contains(fd), "child got fd {fd}");
    }
}

#[test]
fn resolves_programs_like_execvp() {
    let dir = TestDir::new();
    let tool = dir.file("tool", "#!/bin/sh\necho tool\n", 0o755);
    dir.file("plain", "data", 0o644);
    fs::create_dir(dir.0.join("adir")).unwrap();
    let cwd = dir.0.as_path();
    let path = format!("/nonexistent:{}:/bin", cwd.display());

    assert_eq!(resolve_program("sh", Search::posix(Some("/nonexistent:/bin")), cwd).unwrap(), Path::new("/bin/sh"));
    assert_eq!(resolve_program("tool", Search::posix(Some(&path)), cwd).unwrap(), tool);
    // An empty entry is the working directory; a relative one is relative to it.
    assert_eq!(resolve_program("tool", Search::posix(Some("/nonexistent::/bin")), cwd).unwrap(), tool);
    assert_eq!(resolve_program("tool", Search::posix(Some(".")), cwd).unwrap(), tool);
    // With a slash: relative to the working directory, `.` dropped.
    assert_eq!(resolve_program("./tool", Search::posix(None), cwd).unwrap(), tool);
    assert_eq!(resolve_program("/bin/sh", Search::posix(Some("")), cwd).unwrap(), Path::new("/bin/sh"));
    // Unset PATH falls back to the execvp default.
    assert_eq!(resolve_program("sh", Search::posix(None), cwd).unwrap(), Path::new("/bin/sh"));

    let enoent = (io::ErrorKind::NotFound, Some(libc::ENOENT));
    let eacces = (io::ErrorKind::PermissionDenied, Some(libc::EACCES));
    assert_eq!(errno(resolve_program("no-such-tool", Search::posix(Some(&path)), cwd).unwrap_err()), enoent);
    assert_eq!(errno(resolve_program("", Search::posix(Some(&path)), cwd).unwrap_err()), enoent);
    assert_eq!(errno(resolve_program("./missing", Search::posix(None), cwd).unwrap_err()), enoent);
    assert_eq!(errno(resolve_program("plain", Search::posix(Some(&path)), cwd).unwrap_err()), eacces);
    assert_eq!(errno(resolve_program("./plain", Search::posix(None), cwd).unwrap_err()), eacces);
    assert_eq!(errno(resolve_program("adir", Search::posix(Some(&path)), cwd).unwrap_err()), eacces);
    assert_eq!(errno(resolve_program("./adir", Search::posix(None), cwd).unwrap_err()), eacces);
    // A later executable wins over an earlier non-executable one.
    let later = TestDir::new();
    let other = later.file("plain", "#!/bin/sh\n", 0o755);
    let both = format!("{}:{}", cwd.display(), later.0.display());
    assert_eq!(resolve_program("plain", Search::posix(Some(&both)), cwd).unwrap(), other);

    let error = resolve_program("no-such-tool", Search::posix(Some(&path)), cwd).unwrap_err();
    assert_eq!(error.code(), "ERR_SHELL_EXEC_SPAWN_FAILED");
    assert!(error.to_string().contains("no-such-tool"), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn spawns_a_resolved_program() {
    let dir = TestDir::new();
    dir.file("tool", "#!/bin/sh\necho \"tool $1\"\n", 0o755);
    let program = resolve_program("tool", Search::posix(Some(dir.0.to_str().unwrap())), &dir.0).unwrap();
    let mut spec = ProcessSpec::new(program, &dir.0);
    spec.args = vec!["arg".into()];
    assert_eq!(run(spec).await.stdout.text, "tool arg\n");
}

#[test]
fn checks_the_workdir() {
    let dir = TestDir::new();
    let file = dir.file("file", "", 0o644);
    check_workdir(&dir.0).unwrap();
    for (path, errno, message) in [
        (dir.0.join("missing"), libc::ENOENT, "does not exist (ENOENT)"),
        (file, libc::ENOTDIR, "is not a directory (ENOTDIR)"),
    ] {
        let error = check_workdir(&path).unwrap_err();
        assert!(error.to_string().ends_with(message), "{error}");
        match error {
            ExecError::InvalidWorkdir { path: shown, source } => {
                assert_eq!((shown.as_str(), source.raw_os_error()), (path.to_str().unwrap(), Some(errno)));
            }
            other => panic!("expected InvalidWorkdir, got {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn spawn_failures_are_errors() {
    let error = spawn(ProcessSpec::new("/nonexistent/program", "/")).err().unwrap();
    assert_eq!(errno(error).1, Some(libc::ENOENT));
    let error = spawn(ProcessSpec::new("bin/sh", "/")).err().unwrap();
    assert_eq!(error.code(), "ERR_SHELL_EXEC_INVALID_SPEC");
    // A working directory that vanished before the spawn.
    let error = spawn(ProcessSpec::new("/bin/sh", "/nonexistent-dir")).err().unwrap();
    assert_eq!(errno(error).1, Some(libc::ENOENT));
}

#[tokio::test(flavor = "current_thread")]
async fn spawn_async_leaves_the_runtime_thread_free() {
    // One runtime thread: a burst of spawns must not keep a timer on it from
    // firing, since each spawn runs on the blocking pool.
    let ticks = Arc::new(AtomicU32::new(0));
    let ticker = {
        let ticks = Arc::clone(&ticks);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(1)).await;
                ticks.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..100 {
        tasks.spawn(async move { spawn_async(sh(&format!("exit {}", i % 5))).await.unwrap().wait().await.exit_code });
    }
    let mut codes = Vec::new();
    while let Some(code) = tasks.join_next().await {
        codes.push(code.unwrap());
    }
    ticker.abort();
    assert_eq!(codes.len(), 100);
    assert!(codes.iter().all(|code| matches!(code, Some(0..=4))));
    assert!(ticks.load(Ordering::Relaxed) > 0, "the timer ran while children were spawned");
    // Errors come through unchanged.
    let error = spawn_async(ProcessSpec::new("bin/sh", "/")).await.err().unwrap();
    assert_eq!(error.code(), "ERR_SHELL_EXEC_INVALID_SPEC");
    let error = spawn_async(ProcessSpec::new("/nonexistent/program", "/")).await.err().unwrap();
    assert_eq!(errno(error).1, Some(libc::ENOENT));
}

#[test]
fn spawn_needs_a_runtime() {
    let error = spawn(sh("exit 0")).err().unwrap();
    assert_eq!(error.code(), "ERR_SHELL_EXEC_SPAWN_FAILED");
}
