//! Process control against real processes (`/bin/sh`, `sleep`, …).

// Some helpers serve only the Linux-only tests (the supervisor's reapers).
#![cfg_attr(not(target_os = "linux"), allow(dead_code, unused_imports))]

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::*;
use crate::error::ExecError;

/// Timing slack for a loaded machine (the tests run in parallel).
const SLACK: Duration = Duration::from_secs(2);

/// Tests that look at spill files share it; `remove_spill_dir` takes it alone.
static SPILL_DIR: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

fn sh(script: &str) -> ProcessSpec {
    let mut spec = ProcessSpec::new("/bin/sh", std::env::temp_dir());
    spec.args = vec!["-c".into(), script.into()];
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec
}

async fn run(spec: ProcessSpec) -> Arc<RunResult> {
    spawn(spec).expect("spawn").wait().await
}

/// Polls `read_output` until stdout contains `needle`; returns everything read.
async fn read_until(process: &Process, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = String::new();
    while !seen.contains(needle) {
        assert!(Instant::now() < deadline, "never saw {needle:?}, got {seen:?}");
        seen.push_str(&process.read_output().stdout);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    seen
}

/// `kill(pid, 0)` without permission problems: does anything answer?
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Whether `pid` is running (not gone and not a zombie).
fn running(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
        .unwrap_or(false)
}

/// A killed process may still be in the middle of exiting when its pipes close.
async fn assert_stops(pid: i32) {
    let deadline = Instant::now() + Duration::from_secs(1);
    while running(pid) {
        assert!(Instant::now() < deadline, "{pid} still running");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Orphans are reaped by init, which may take a while in a container; until
/// then a zombie keeps the group answering `kill -0`.
async fn assert_group_gone(pgid: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(-(pgid as i32)) {
        assert!(Instant::now() < deadline, "group {pgid} still exists");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A scratch directory, removed on drop.
struct TestDir(PathBuf);

impl TestDir {
    fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "dsh-core-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn file(&self, name: &str, content: &str, mode: u32) -> PathBuf {
        let path = self.0.join(name);
        fs::write(&path, content).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        path
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Waits until `condition` holds, for at most two seconds.
async fn eventually(condition: impl Fn() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Waits until `path` holds a pid, and returns it.
async fn pid_in(path: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(pid) = fs::read_to_string(path).ok().and_then(|text| text.trim().parse().ok()) {
            return pid;
        }
        assert!(Instant::now() < deadline, "no pid in {}", path.display());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn errno(error: ExecError) -> (io::ErrorKind, Option<i32>) {
    match error {
        ExecError::SpawnFailed { source, .. } => (source.kind(), source.raw_os_error()),
        other => panic!("expected SpawnFailed, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reports_exit_codes() {
    for code in [0, 1, 3, 255] {
        let process = spawn(sh(&format!("exit {code}"))).unwrap();
        let result = process.wait().await;
        assert_eq!(result.exit_code, Some(code));
        assert_eq!(result.signal, None);
        assert!(!result.timed_out && !result.aborted);
        let state = process.state();
        assert_eq!(state, ProcessState { status: Status::Completed, exit_code: Some(code), signal: None });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reports_death_by_signal_as_completed() {
    let process = spawn(sh("kill -TERM $$")).unwrap();
    let result = process.wait().await;
    assert_eq!((result.exit_code, result.signal), (None, Some("SIGTERM")));
    assert!(!result.timed_out && !result.aborted);
    assert_eq!(process.state().status, Status::Completed);
}

#[tokio::test(flavor = "multi_thread")]
async fn state_is_running_until_exit_and_wait_is_memoised() {
    let process = spawn(sh("sleep 0.2; echo done")).unwrap();
    assert_eq!(process.state().status, Status::Running);
    assert!(process.pid() > 0);
    let clone = process.clone();
    let (first, second) = tokio::join!(process.wait(), clone.wait());
    assert!(Arc::ptr_eq(&first, &second));
    assert!(Arc::ptr_eq(&first, &process.wait().await));
    assert_eq!(first.stdout.text, "done\n");
    assert!(first.duration >= Duration::from_millis(200));
}

#[tokio::test(flavor = "multi_thread")]
async fn on_finish_gets_the_published_result_once_before_and_after_the_end() {
    let process = spawn(sh("sleep 0.2; echo done")).unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    let early = sender.clone();
    process.on_finish(move |result| early.send(("before", result)).unwrap());
    let result = process.wait().await;
    // Registered after the end: called at once, on this thread.
    let caller = std::thread::current().id();
    let late = sender.clone();
    process.on_finish(move |result| {
        assert_eq!(std::thread::current().id(), caller);
        late.send(("after", result)).unwrap();
    });
    drop(sender);
    let calls: Vec<_> = receiver.iter().collect();
    assert_eq!(calls.iter().map(|(when, _)| *when).collect::<Vec<_>>(), ["before", "after"]);
    assert!(calls.iter().all(|(_, delivered)| Arc::ptr_eq(delivered, &result)));
    assert_eq!(result.stdout.text, "done\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_stdin_then_closes_it() {
    let mut spec = ProcessSpec::new("/bin/cat", "/");
    spec.stdin = Input::Data(b"hello\nworld".to_vec());
    let result = run(spec).await;
    assert_eq!(result.stdout.text, "hello\nworld");
    assert_eq!(result.exit_code, Some(0));

    // More than a pipe holds, counted after the close.
    let mut spec = sh("wc -c");
    spec.stdin = Input::Data(vec![b'x'; 1 << 20]);
    assert_eq!(run(spec).await.stdout.text.trim(), "1048576");

    // A child that never reads: the write ends in EPIPE, which is ignored.
    let mut spec = sh("exit 7");
    spec.stdin = Input::Data(vec![b'x'; 1 << 20]);
    assert_eq!(run(spec).await.exit_code, Some(7));

    // No stdin: /dev/null.
    assert_eq!(run(ProcessSpec::new("/bin/cat", "/")).await.stdout.text, "");
}

#[tokio::test(flavor = "multi_thread")]
async fn child_sees_only_the_spec_env() {
    let mut spec = ProcessSpec::new("/usr/bin/env", "/");
    spec.env = vec![("ZED".into(), "last".into()), ("DSH_A".into(), "x y".into()), ("EMPTY".into(), String::new())];
    let result = run(spec).await;
    let lines: BTreeSet<&str> = result.stdout.text.lines().collect();
    assert_eq!(lines, BTreeSet::from(["DSH_A=x y", "EMPTY=", "ZED=last"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn raw_pipes_go_to_the_caller_and_nothing_of_them_is_kept_here() {
    use std::io::{Read, Write};
    let mut spec = sh("tr a-z A-Z; echo done >&2");
    spec.stdin = Input::Pipe;
    spec.stdout = Output::Pipe;
    spec.stderr = Output::Pipe;
    let process = spawn(spec).unwrap();
    let Pipes { stdin, stdout, stderr, .. } = process.take_pipes();
    let (mut stdin, mut stdout, mut stderr) =
        (fs::File::from(stdin.unwrap()), fs::File::from(stdout.unwrap()), fs::File::from(stderr.unwrap()));
    assert!(process.take_pipes().stdout.is_none(), "taken once");
    stdin.write_all(b"hello").unwrap();
    drop(stdin);
    let (mut out, mut err) = (String::new(), String::new());
    stdout.read_to_string(&mut out).unwrap();
    stderr.read_to_string(&mut err).unwrap();
    assert_eq!((out.as_str(), err.as_str()), ("HELLO", "done\n"));
    let result = process.wait().await;
    assert_eq!(result.exit_code, Some(0));
    assert_eq!((result.stdout.text.as_str(), result.stderr.text.as_str()), ("", ""));
    assert_eq!(process.read_from(StreamKind::Stdout, 0), OutputRead::default());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_inherited_stream_is_the_hosts_own() {
    // The child writes to the host's stderr: nothing is captured, and nothing is handed over.
    let mut spec = sh("echo to-the-host >&2; echo captured");
    spec.stderr = Output::Inherit;
    let process = spawn(spec).unwrap();
    assert!(process.take_pipes().stderr.is_none());
    let result = process.wait().await;
    assert_eq!((result.stdout.text.as_str(), result.stderr.text.as_str()), ("captured\n", ""));
}

#[tokio::test(flavor = "multi_thread")]
async fn offset_reads_do_not_consume_and_say_when_the_offset_slid_out_of_the_tail() {
    let mut spec = sh("printf 'abc\\303'; sleep 0.2; printf '\\251xyz'");
    spec.stdout = limits(5, 1 << 20);
    let process = spawn(spec).unwrap();
    let first = loop {
        let read = process.read_from(StreamKind::Stdout, 0);
        if read.next_offset > 0 {
            break read;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    // The first byte of `é` waits for the rest of it.
    assert_eq!((first.text.as_str(), first.next_offset, first.lossy), ("abc", 3, false));
    process.wait().await;
    // Eight bytes, five kept: the tail is `éxyz` (2 + 3 bytes).
    let from_first = process.read_from(StreamKind::Stdout, first.next_offset);
    assert_eq!((from_first.text.as_str(), from_first.next_offset, from_first.lossy), ("\u{e9}xyz", 8, false));
    let from_start = process.read_from(StreamKind::Stdout, 0);
    assert_eq!((from_start.text.as_str(), from_start.lossy), ("\u{e9}xyz", true));
    assert!(from_start.spill_path.is_some(), "the whole stream is in the spill file");
    assert_eq!(process.read_from(StreamKind::Stdout, 8).text, "", "nothing new at the end");
    assert_eq!(process.read_from(StreamKind::Stdout, 0), from_start, "reads consume nothing");
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

#[tokio::test(flavor = "multi_thread")]
async fn timeout_kills_the_group() {
    let mut spec = sh("sleep 10");
    spec.timeout = Some(Duration::from_millis(200));
    let process = spawn(spec).unwrap();
    let result = process.wait().await;
    assert!(result.timed_out && !result.aborted);
    assert_eq!((result.exit_code, result.signal), (None, Some("SIGTERM")));
    assert_eq!(result.timeout_ms, Some(200));
    assert!(result.duration >= Duration::from_millis(200) && result.duration < SLACK, "{:?}", result.duration);
    assert_eq!(process.state().status, Status::Killed);
    assert!(!process.kill(KillReason::Aborted), "already ended");

    // A process that ends in time is not flagged.
    let mut spec = sh("exit 0");
    spec.timeout = Some(Duration::from_secs(10));
    let result = run(spec).await;
    assert!(!result.timed_out);
    assert_eq!(result.timeout_ms, Some(10_000));
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_returns_true_once() {
    let process = spawn(sh("sleep 10")).unwrap();
    assert!(process.kill(KillReason::Requested));
    assert!(!process.kill(KillReason::Requested));
    assert!(!process.kill(KillReason::Aborted));
    let result = process.wait().await;
    assert!(!result.timed_out && !result.aborted);
    assert_eq!(result.signal, Some("SIGTERM"));
    assert_eq!(process.state().status, Status::Killed);
    assert!(!process.kill(KillReason::Requested));
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_and_timeout_never_both() {
    let process = spawn(sh("sleep 10")).unwrap();
    assert!(process.kill(KillReason::Aborted));
    let result = process.wait().await;
    assert!(result.aborted && !result.timed_out);

    // The timer fires first; a later abort changes nothing.
    let mut spec = sh("trap '' TERM; echo ready; sleep 10");
    spec.timeout = Some(Duration::from_millis(100));
    spec.grace = Duration::from_millis(300);
    let process = spawn(spec).unwrap();
    read_until(&process, "ready").await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(!process.kill(KillReason::Aborted));
    let result = process.wait().await;
    assert!(result.timed_out && !result.aborted);
}

#[tokio::test(flavor = "multi_thread")]
async fn term_ignoring_child_is_killed_after_the_grace() {
    let grace = Duration::from_millis(500);
    let mut spec = sh("trap '' TERM; echo ready; sleep 100; echo survived");
    spec.grace = grace;
    let process = spawn(spec).unwrap();
    read_until(&process, "ready").await;
    let killed = Instant::now();
    assert!(process.kill(KillReason::Requested));
    let result = process.wait().await;
    let took = killed.elapsed();
    assert_eq!((result.exit_code, result.signal), (None, Some("SIGKILL")));
    assert!(took >= grace && took < grace + SLACK, "{took:?}");
    assert!(!result.stdout.text.contains("survived"));
    assert_group_gone(process.pid()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn terminate_now_skips_the_grace() {
    let mut spec = sh("trap '' TERM; echo ready; sleep 100");
    spec.grace = Duration::from_secs(60);
    let process = spawn(spec).unwrap();
    read_until(&process, "ready").await;
    assert!(process.kill(KillReason::Requested));
    process.terminate_now();
    let result = process.wait().await;
    assert_eq!(result.signal, Some("SIGKILL"));
    assert!(result.duration < SLACK);
    assert_eq!(process.state().status, Status::Killed);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_no_grace_a_kill_sends_sigkill_alone() {
    let mut spec = sh("trap 'echo got TERM' TERM; echo ready; while :; do sleep 0.01; done");
    spec.grace = Duration::ZERO;
    let process = spawn(spec).unwrap();
    read_until(&process, "ready").await;
    assert!(process.kill(KillReason::Requested));
    let result = process.wait().await;
    assert_eq!(result.signal, Some("SIGKILL"));
    assert!(!result.stdout.text.contains("got TERM"), "{:?}", result.stdout.text);
    assert_group_gone(process.pid()).await;
}

/// Runs `script`, which starts a grandchild with stdout inherited and prints its
/// pid, then exits 4; returns the result, the time wait() took and the grandchild's pid.
async fn leave_grandchild(script: &str, cwd: &Path, grace: Duration) -> (Arc<RunResult>, Duration, Process, i32) {
    let mut spec = sh(&format!("{script}; exit 4"));
    spec.cwd = cwd.to_owned();
    spec.grace = grace;
    let started = Instant::now();
    let process = spawn(spec).unwrap();
    let result = process.wait().await;
    let took = started.elapsed();
    let grandchild = result.stdout.text.trim().parse().unwrap();
    (result, took, process, grandchild)
}

#[tokio::test(flavor = "multi_thread")]
async fn grandchild_holding_stdout_is_terminated_with_the_leader() {
    let (result, took, process, grandchild) =
        leave_grandchild("sleep 100 & echo $!", Path::new("/"), Duration::from_secs(5)).await;
    assert_eq!(result.exit_code, Some(4));
    assert_eq!(process.state().status, Status::Completed);
    // SIGTERM ends sleep at once: no need to wait out the grace.
    assert!(took < SLACK, "{took:?}");
    assert_stops(grandchild).await;
    assert_group_gone(process.pid()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn term_ignoring_grandchild_cannot_hold_wait_past_the_grace() {
    let grace = Duration::from_millis(500);
    // The leader exits only once the grandchild ignores SIGTERM.
    let dir = TestDir::new();
    let script =
        "(trap '' TERM; : > ready; exec sleep 100) & pid=$!; while [ ! -e ready ]; do sleep 0.01; done; echo $pid";
    let (result, took, process, grandchild) = leave_grandchild(script, &dir.0, grace).await;
    assert_eq!(result.exit_code, Some(4));
    assert!(took >= grace && took < grace + SLACK, "{took:?}");
    assert_stops(grandchild).await;
    assert_group_gone(process.pid()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn daemonised_term_ignoring_grandchild_is_killed_before_the_result() {
    let grace = Duration::from_millis(500);
    // The grandchild closes every pipe and ignores SIGTERM: only the group
    // SIGKILL at the end of the grace can stop it, and the result waits for it.
    let dir = TestDir::new();
    let script = "(trap '' TERM; exec sleep 100 </dev/null >/dev/null 2>&1) & echo $! > pid; \
                  while [ ! -s pid ]; do sleep 0.01; done; sleep 0.1";
    let mut spec = sh(script);
    spec.cwd = dir.0.clone();
    spec.grace = grace;
    let started = Instant::now();
    let process = spawn(spec).unwrap();
    let result = process.wait().await;
    let took = started.elapsed();
    assert_eq!(result.exit_code, Some(0));
    assert!(took >= grace && took < grace + SLACK, "{took:?}");
    let grandchild: i32 = fs::read_to_string(dir.0.join("pid")).unwrap().trim().parse().unwrap();
    assert_stops(grandchild).await;
    assert_group_gone(process.pid()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_reaches_a_daemonised_term_ignoring_grandchild() {
    let grace = Duration::from_millis(500);
    let dir = TestDir::new();
    let script = "(trap '' TERM; exec sleep 100 </dev/null >/dev/null 2>&1) & echo $! > pid; sleep 100";
    let mut spec = sh(script);
    spec.cwd = dir.0.clone();
    spec.grace = grace;
    let process = spawn(spec).unwrap();
    while fs::read_to_string(dir.0.join("pid")).map_or(true, |pid| pid.trim().is_empty()) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(process.kill(KillReason::Requested));
    let result = process.wait().await;
    assert_eq!(result.signal, Some("SIGTERM"));
    let grandchild: i32 = fs::read_to_string(dir.0.join("pid")).unwrap().trim().parse().unwrap();
    assert_stops(grandchild).await;
    assert_group_gone(process.pid()).await;
}

fn limits(max_bytes: usize, spill_max_bytes: u64) -> Output {
    Output::Capture(OutputLimits { max_bytes, spill_max_bytes })
}

fn spill_files_of(pid: u32) -> Vec<PathBuf> {
    let suffix = format!("-{pid}.stdout");
    let mut found = Vec::new();
    for dir in fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        if !dir.file_name().to_string_lossy().starts_with(&format!("dsh-shell-env-{}-", std::process::id())) {
            continue;
        }
        for file in fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            if file.file_name().to_string_lossy().ends_with(&suffix) {
                found.push(file.path());
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn keeps_the_tail_cut_at_a_character_and_spills_everything() {
    let _spill_dir = SPILL_DIR.read().await;
    // Three 4-byte emoji and a newline: the last 10 bytes start inside one.
    let mut spec = sh(r"printf '\360\237\230\200\360\237\230\200\360\237\230\200\n'");
    spec.stdout = limits(10, 1 << 20);
    let process = spawn(spec).unwrap();
    let result = process.wait().await;
    assert_eq!(result.stdout.text, "😀😀\n");
    assert!(result.stdout.truncated);
    let spill = result.stdout.spill_path.clone().expect("spilled");
    assert_eq!(fs::read_to_string(&spill).unwrap(), "😀😀😀\n");
    assert_eq!(fs::metadata(&spill).unwrap().permissions().mode() & 0o777, 0o600);
    let dir = spill.parent().unwrap();
    assert_eq!(fs::metadata(dir).unwrap().permissions().mode() & 0o777, 0o700);
    assert!(dir.file_name().unwrap().to_string_lossy().starts_with("dsh-shell-env-"));
    assert!(result.stderr.spill_path.is_none() && !result.stderr.truncated);

    // The file lives as long as the last handle on the process or its result.
    drop(process);
    assert!(spill.exists());
    drop(result);
    let deadline = Instant::now() + Duration::from_secs(5);
    while spill.exists() {
        assert!(Instant::now() < deadline, "spill file outlived its result");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn spill_holds_a_long_stream_in_full() {
    let _spill_dir = SPILL_DIR.read().await;
    let mut spec = sh("i=0; while [ $i -lt 3000 ]; do echo \"line $i\"; i=$((i+1)); done");
    spec.stdout = limits(1000, 1 << 20);
    let result = run(spec).await;
    let expected: String = (0..3000).map(|i| format!("line {i}\n")).collect();
    assert!(result.stdout.truncated);
    assert_eq!(fs::read_to_string(result.stdout.spill_path.as_ref().unwrap()).unwrap(), expected);
    assert!(expected.ends_with(&result.stdout.text) && result.stdout.text.len() <= 1000);
}

#[tokio::test(flavor = "multi_thread")]
async fn output_within_the_cap_is_not_spilled() {
    let mut spec = sh("printf 0123456789");
    spec.stdout = limits(10, 1 << 20);
    let result = run(spec).await;
    assert_eq!(result.stdout.text, "0123456789");
    assert!(!result.stdout.truncated && result.stdout.spill_path.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn spill_over_its_limit_is_deleted() {
    let _spill_dir = SPILL_DIR.read().await;
    let mut spec = sh("head -c 50000 /dev/zero | tr '\\0' a; echo; echo err >&2");
    spec.stdout = limits(100, 10_000);
    let process = spawn(spec).unwrap();
    let result = process.wait().await;
    assert!(result.stdout.truncated && result.stdout.spill_path.is_none());
    assert_eq!(result.stdout.text.len(), 100);
    assert!(result.stdout.text.ends_with("aaa\n"));
    assert!(spill_files_of(process.pid()).is_empty());
    assert_eq!(result.stderr.text, "err\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn read_output_returns_deltas() {
    let mut spec = sh("echo one; echo e1 >&2; sleep 0.3; echo two; printf '\\377'");
    spec.stdout = limits(1000, 0);
    let process = spawn(spec).unwrap();
    let first = read_until(&process, "one\n").await;
    assert_eq!(first, "one\n");
    let result = process.wait().await;
    let rest = process.read_output();
    assert_eq!(rest.stdout, "two\n\u{FFFD}");
    assert!(rest.lossy, "an invalid byte was replaced");
    assert_eq!(process.read_output(), OutputDelta::default());
    assert_eq!(result.stderr.text, "e1\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn unread_output_is_capped_keeping_the_tail() {
    let _spill_dir = SPILL_DIR.read().await;
    let mut spec = sh("head -c 100000 /dev/zero | tr '\\0' x; echo END");
    spec.stdout = limits(100, 1 << 20);
    let process = spawn(spec).unwrap();
    process.wait().await;
    let delta = process.read_output();
    assert!(delta.stdout.len() == 100 && delta.stdout.ends_with("xxEND\n"), "{}", delta.stdout);
    assert!(delta.lossy);
}

#[tokio::test(flavor = "multi_thread")]
async fn live_output_never_splits_a_character() {
    let chunks = Arc::new(Mutex::new(Vec::new()));
    let mut spec = sh("yes 'é😀ü' | head -n 40000; echo done >&2");
    spec.stdout = limits(1000, 0);
    let sink = Arc::clone(&chunks);
    spec.on_output =
        Some(Arc::new(move |kind, text: &str, _receipt| sink.lock().unwrap().push((kind, text.to_owned()))));
    let result = run(spec).await;
    let chunks = chunks.lock().unwrap();
    let stdout: String = chunks.iter().filter(|(k, _)| *k == StreamKind::Stdout).map(|(_, t)| t.as_str()).collect();
    let stderr: String = chunks.iter().filter(|(k, _)| *k == StreamKind::Stderr).map(|(_, t)| t.as_str()).collect();
    assert_eq!(stdout, "é😀ü\n".repeat(40_000));
    assert_eq!(stderr, "done\n");
    assert!(chunks.len() > 2, "expected several chunks");
    assert!(result.stdout.text.ends_with("é😀ü\n") && !result.stdout.text.contains('\u{FFFD}'));
}

#[tokio::test(flavor = "multi_thread")]
async fn held_receipts_pause_reading_until_dropped() {
    // A consumer that keeps every receipt: live output stops at the budget and
    // the child blocks on its full pipe instead of being queued without bound.
    let held = Arc::new(Mutex::new(Vec::new()));
    let delivered = Arc::new(Mutex::new(0usize));
    let mut spec = sh("head -c 8388608 /dev/zero; echo done >&2");
    spec.stdout = limits(1000, 0);
    let (sink_held, sink_delivered) = (Arc::clone(&held), Arc::clone(&delivered));
    spec.on_output = Some(Arc::new(move |_kind, text: &str, receipt| {
        *sink_delivered.lock().unwrap() += text.len();
        sink_held.lock().unwrap().push(receipt);
    }));
    let process = spawn(spec).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let paused_at = *delivered.lock().unwrap();
    assert!(paused_at <= LIVE_OUTPUT_BUDGET, "delivered {paused_at} bytes past the budget");
    assert!(paused_at > LIVE_OUTPUT_BUDGET / 2, "delivered only {paused_at} bytes");
    assert_eq!(process.state().status, Status::Running, "the writer waits for the consumer");
    // Consuming (dropping receipts) as they come lets it finish.
    let drain = {
        let held = Arc::clone(&held);
        tokio::spawn(async move {
            loop {
                held.lock().unwrap().clear();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    let result = process.wait().await;
    drain.abort();
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(*delivered.lock().unwrap(), (8 << 20) + "done\n".len(), "every byte of both streams, once");
    assert_eq!(result.stderr.text, "done\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn keeps_up_with_endless_output_in_flat_memory() {
    fn rss_kib() -> u64 {
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("VmRSS: 0 kB");
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let _spill_dir = SPILL_DIR.read().await;
    let before = rss_kib();
    let result = run(sh("head -c 268435456 /dev/zero")).await;
    assert_eq!(result.exit_code, Some(0));
    assert!(result.stdout.truncated && result.stdout.spill_path.is_none());
    assert_eq!(result.stdout.text.len(), 64_000);
    assert!(rss_kib().saturating_sub(before) < 64 * 1024, "memory grew with the output");
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_hundreds_at_once() {
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200 {
        let process = spawn(sh(&format!("echo {i}; exit $(({i} % 7))"))).unwrap();
        tasks.spawn(async move { (i, process.wait().await) });
    }
    let mut seen = 0;
    while let Some(joined) = tasks.join_next().await {
        let (i, result) = joined.unwrap();
        assert_eq!(result.stdout.text, format!("{i}\n"));
        assert_eq!(result.exit_code, Some(i % 7));
        seen += 1;
    }
    assert_eq!(seen, 200);
}

/// The waiter thread (the fallback when `pidfd_open` fails) does the same job.
#[tokio::test(flavor = "multi_thread")]
async fn thread_waiter_fallback() {
    super::platform::FORCE_THREAD.set(true);
    // Only the host's own children are waited for; under the supervisor the
    // link reports the exit.
    containment::TEST_SUPERVISOR.set(Some(None));

    let process = spawn(sh("sleep 0.3; exit 5")).unwrap();
    #[cfg(target_os = "linux")]
    {
        // The thread names itself once it runs.
        let name = format!("dsh-wait-{}", process.pid());
        let has_thread = || {
            fs::read_dir("/proc/self/task")
                .unwrap()
                .flatten()
                .filter_map(|task| fs::read_to_string(task.path().join("comm")).ok())
                .any(|comm| comm.trim() == name)
        };
        let deadline = Instant::now() + Duration::from_millis(250);
        while !has_thread() {
            assert!(Instant::now() < deadline, "no {name} thread");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    assert_eq!(process.wait().await.exit_code, Some(5));

    let result = run(sh("kill -TERM $$")).await;
    assert_eq!(result.signal, Some("SIGTERM"));

    let mut spec = sh("sleep 10");
    spec.timeout = Some(Duration::from_millis(100));
    assert!(run(spec).await.timed_out);

    let (result, took, process, _) =
        leave_grandchild("sleep 100 & echo $!", Path::new("/"), Duration::from_secs(5)).await;
    assert_eq!(result.exit_code, Some(4));
    assert!(took < SLACK, "{took:?}");
    assert_group_gone(process.pid()).await;

    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..50 {
        let process = spawn(sh(&format!("exit {i}"))).unwrap();
        tasks.spawn(async move { (i, process.wait().await.exit_code) });
    }
    while let Some(joined) = tasks.join_next().await {
        let (i, code) = joined.unwrap();
        assert_eq!(code, Some(i));
    }
}

#[test]
fn dropped_runtime_still_ends_and_reaps_the_child() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let process = runtime.block_on(async { spawn(sh("sleep 100")).unwrap() });
    let pid = process.pid();
    drop(runtime);
    // The result is published from a thread once the SIGKILLed child is reaped.
    let result = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(process.wait());
    assert_eq!(result.signal, Some("SIGKILL"));
    assert!(!alive(pid as i32));
}

#[tokio::test(flavor = "multi_thread")]
async fn remove_spill_dir_removes_files_and_spilling_resumes() {
    let _spill_dir = SPILL_DIR.write().await;
    let mut spec = sh("printf 0123456789");
    spec.stdout = limits(5, 1 << 20);
    let result = run(spec).await;
    let spill = result.stdout.spill_path.clone().unwrap();
    assert!(spill.exists());
    remove_spill_dir();
    assert!(!spill.exists() && !spill.parent().unwrap().exists());

    let mut spec = sh("printf 0123456789");
    spec.stdout = limits(5, 1 << 20);
    let again = run(spec).await;
    assert_eq!(fs::read_to_string(again.stdout.spill_path.as_ref().unwrap()).unwrap(), "0123456789");
}

#[tokio::test(flavor = "multi_thread")]
async fn kept_spill_files_go_in_their_base_outlive_their_result_and_are_removed_on_request() {
    let _spill_dir = SPILL_DIR.read().await;
    let base = TestDir::new();
    let mut spec = sh("printf 0123456789");
    spec.stdout = limits(5, 1 << 20);
    spec.spill = SpillPlace { base: Some(base.0.clone()), keep: true };
    let result = run(spec).await;
    let spill = result.stdout.spill_path.clone().unwrap();
    assert_eq!(spill.parent().and_then(Path::parent), Some(base.0.as_path()));
    drop(result);
    assert_eq!(fs::read_to_string(&spill).unwrap(), "0123456789", "kept past its result");

    let stranger = base.file("not-a-spill-file", "", 0o644);
    assert!(!remove_spill_file(&stranger), "only this process's spill files");
    assert!(stranger.exists());
    assert!(remove_spill_file(&spill));
    assert!(!spill.exists() && spill.parent().unwrap().exists(), "the directory stays for the next spill files");
    assert!(!remove_spill_file(&spill));
}

#[test]
fn a_new_spill_directory_sweeps_those_of_dead_hosts_in_its_base_judged_by_their_lock_not_their_pid() {
    let _spill_dir = SPILL_DIR.blocking_read();
    let base = TestDir::new();
    let spill_dir = |pid: u32, random: &str| base.0.join(format!("dsh-shell-env-{pid}-{random}"));
    let with_lock = |dir: &Path| {
        fs::create_dir(dir).unwrap();
        fs::write(dir.join("0-1.stdout"), "output").unwrap();
        fs::File::create(dir.join("lock")).unwrap()
    };
    // A dead host: its lock file is there, nobody holds it.
    let dead = spill_dir(std::process::id(), "00112233445566ff");
    drop(with_lock(&dead));
    // A live host whose pid means nothing here (another pid namespace), and
    // one whose pid is someone else's: each holds its lock.
    let elsewhere = spill_dir(u32::MAX / 2, "00112233445566aa");
    let held = with_lock(&elsewhere);
    held.lock().unwrap();
    let reused = spill_dir(1, "00112233445566bb");
    let held_too = with_lock(&reused);
    held_too.lock().unwrap();
    // Without a lock file (an older version's) or not a spill directory: left alone.
    let unlocked = spill_dir(u32::MAX / 2, "00112233445566cc");
    fs::create_dir(&unlocked).unwrap();
    let other = base.0.join("dsh-shell-env-notes");
    fs::create_dir(&other).unwrap();

    let place = SpillPlace { base: Some(base.0.clone()), keep: false };
    let (file, _) = spill::SpillFile::create(1, StreamKind::Stdout, &place).unwrap();
    assert!(!dead.exists(), "a dead host's directory goes");
    for stays in [&elsewhere, &reused, &unlocked, &other] {
        assert!(stays.exists(), "{} stays", stays.display());
    }
    // This process's own directory is locked too: another sweep leaves it.
    let own = file.path().parent().unwrap().to_owned();
    let (again, _) =
        spill::SpillFile::create(1, StreamKind::Stderr, &SpillPlace { base: Some(base.0.clone()), keep: false })
            .unwrap();
    assert_eq!(again.path().parent(), Some(own.as_path()));
    drop((file, again, held, held_too));
}

#[tokio::test(flavor = "multi_thread")]
async fn read_output_names_a_spill_file_from_the_moment_it_starts() {
    let _spill_dir = SPILL_DIR.read().await;
    let mut spec = sh("seq 1 100; sleep 30");
    spec.stdout = limits(10, 1 << 20);
    let process = spawn(spec).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let spill = loop {
        let delta = process.read_output();
        if let Some(path) = delta.stdout_spill {
            assert!(delta.stderr_spill.is_none());
            break path;
        }
        assert!(Instant::now() < deadline, "no spill path while the process runs");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(spill.exists());
    assert!(process.kill(KillReason::Requested));
    let result = process.wait().await;
    assert_eq!(result.stdout.spill_path.as_ref(), Some(&spill));
    assert_eq!(process.read_output().stdout_spill, Some(spill), "still named after the exit");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spill_file_goes_with_its_result_and_the_directory_stays_for_the_next() {
    let _spill_dir = SPILL_DIR.write().await;
    let spilled = || async {
        let mut spec = sh("printf 0123456789");
        spec.stdout = limits(5, 1 << 20);
        run(spec).await
    };
    let (first, second) = (spilled().await, spilled().await);
    let (first_file, second_file) =
        (first.stdout.spill_path.clone().unwrap(), second.stdout.spill_path.clone().unwrap());
    let dir = first_file.parent().unwrap().to_owned();
    assert_eq!(second_file.parent(), Some(dir.as_path()));

    // The supervising task may hold a result a moment after publishing it.
    drop(first);
    eventually(|| !first_file.exists(), "the first spill file to go").await;
    assert!(second_file.exists(), "the other file keeps the directory");
    drop(second);
    eventually(|| !second_file.exists(), "the second spill file to go").await;
    assert!(dir.exists(), "the directory stays, locked, until the host ends");

    let again = spilled().await;
    assert_eq!(fs::read_to_string(again.stdout.spill_path.as_ref().unwrap()).unwrap(), "0123456789");
}

/// Descendants that leave the command's process group, as the reaper ends them.
#[cfg(target_os = "linux")]
mod descendants_outside_the_group {
    use super::*;

    /// Starts an escapee that writes its pid to `pid` and ignores SIGTERM:
    /// `setsid -f` forks, so it is orphaned at once and leads its own session.
    const SETSID_ESCAPEE: &str =
        "setsid -f sh -c 'trap \"\" TERM; echo $$ > pid; exec sleep 300' </dev/null >/dev/null 2>&1";

    fn in_dir(dir: &TestDir, script: &str) -> ProcessSpec {
        let mut spec = sh(script);
        spec.cwd = dir.0.clone();
        spec.grace = Duration::from_millis(300);
        spec
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_setsid_escapee_is_dead_when_the_result_is_published() {
        let dir = TestDir::new();
        let script = format!("{SETSID_ESCAPEE}; while [ ! -s pid ]; do sleep 0.01; done; exit 3");
        let result = run(in_dir(&dir, &script)).await;
        assert_eq!(result.exit_code, Some(3));
        let escapee = pid_in(&dir.0.join("pid")).await;
        assert!(!running(escapee), "{escapee} outlived its command");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn double_forks_in_python_and_perl_are_dead_when_the_result_is_published() {
        let dir = TestDir::new();
        let python = "python3 -c 'import os, time\nif os.fork(): os._exit(0)\nos.setsid()\nif os.fork(): os._exit(0)\nopen(\"python\", \"w\").write(str(os.getpid()))\ntime.sleep(300)' </dev/null >/dev/null 2>&1";
        let perl = "perl -MPOSIX -e 'fork and exit; setsid; fork and exit; open my $f, \">\", \"perl\"; print $f $$; close $f; sleep 300' </dev/null >/dev/null 2>&1";
        let script = format!("{python}; {perl}; while [ ! -s python ] || [ ! -s perl ]; do sleep 0.01; done");
        let result = run(in_dir(&dir, &script)).await;
        assert_eq!(result.exit_code, Some(0));
        for name in ["python", "perl"] {
            let escapee = pid_in(&dir.0.join(name)).await;
            assert!(!running(escapee), "the {name} double fork {escapee} outlived its command");
        }
    }

    /// Runs a command that leaves a SIGTERM-ignoring escapee and then sleeps,
    /// ends it with `end`, and checks the escapee is dead once the result is in.
    async fn ended_with(end: impl FnOnce(&Process)) -> Arc<RunResult> {
        let dir = TestDir::new();
        let mut spec = in_dir(&dir, &format!("{SETSID_ESCAPEE}; sleep 100"));
        spec.timeout = Some(Duration::from_secs(60));
        let process = spawn(spec).unwrap();
        let escapee = pid_in(&dir.0.join("pid")).await;
        end(&process);
        let result = tokio::time::timeout(SLACK, process.wait()).await.expect("the result in time");
        assert!(!running(escapee), "{escapee} outlived its command");
        result
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn kill_abort_and_terminate_now_reach_a_setsid_escapee() {
        assert_eq!(ended_with(|process| assert!(process.kill(KillReason::Requested))).await.signal, Some("SIGTERM"));
        assert!(ended_with(|process| assert!(process.kill(KillReason::Aborted))).await.aborted);
        assert_eq!(ended_with(Process::terminate_now).await.signal, Some("SIGKILL"));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_timeout_reaches_a_setsid_escapee() {
        let dir = TestDir::new();
        let mut spec = in_dir(&dir, &format!("{SETSID_ESCAPEE}; sleep 100"));
        spec.timeout = Some(Duration::from_millis(300));
        let process = spawn(spec).unwrap();
        let escapee = pid_in(&dir.0.join("pid")).await;
        let result = process.wait().await;
        assert!(result.timed_out);
        assert!(!running(escapee), "{escapee} outlived the timeout");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_command_that_stops_its_reaper_is_still_ended_after_the_grace() {
        let dir = TestDir::new();
        let process = spawn(in_dir(&dir, &format!("{SETSID_ESCAPEE}; kill -STOP $PPID; sleep 100"))).unwrap();
        let escapee = pid_in(&dir.0.join("pid")).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let killed = Instant::now();
        assert!(process.kill(KillReason::Requested));
        let result = tokio::time::timeout(SLACK, process.wait()).await.expect("the result in time");
        // The stopped reaper holds the SIGTERM until the hard kill continues
        // it; it then reads both, in either order.
        assert!(matches!(result.signal, Some("SIGTERM" | "SIGKILL")), "{:?}", result.signal);
        assert!(killed.elapsed() >= Duration::from_millis(300), "{:?}", killed.elapsed());
        assert!(!running(escapee), "{escapee} outlived its command");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_command_that_kills_its_reaper_still_has_its_group_ended() {
        let dir = TestDir::new();
        let mut spec = in_dir(&dir, "trap '' TERM; echo $$ > pid; kill -KILL $PPID; sleep 100");
        spec.grace = Duration::from_millis(200);
        let process = spawn(spec).unwrap();
        let command = pid_in(&dir.0.join("pid")).await;
        let result = tokio::time::timeout(SLACK, process.wait()).await.expect("the result in time");
        assert_eq!(result.signal, Some("SIGKILL"));
        assert_stops(command).await;
        assert_group_gone(process.pid()).await;
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_kill_right_after_the_spawn_is_reported_as_sigkill_or_sigterm() {
        for _ in 0..20 {
            let process = spawn(sh("sleep 100")).unwrap();
            process.terminate_now();
            assert_eq!(process.wait().await.signal, Some("SIGKILL"));
            let process = spawn(sh("sleep 100")).unwrap();
            process.kill(KillReason::Requested);
            assert_eq!(process.wait().await.signal, Some("SIGTERM"));
        }
    }
}

/// A command on a terminal, with the supervisor and without: it leads a
/// session of its own whose controlling terminal is the slave, of the asked
/// size; the caller reads its output from the master until the slave is
/// closed (EIO), and the command's pid is the session's.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_command_on_a_terminal_leads_its_session_with_the_terminal_as_its_own() {
    use std::io::Read;
    for supervised in [true, false] {
        if !supervised {
            containment::TEST_SUPERVISOR.set(Some(None));
        }
        let mut spec = sh("stty size; tty; ps -o sid= -p $$; [ -t 0 ] && [ -t 2 ] && echo all-three");
        spec.terminal = Some(super::terminal::TerminalSize { rows: 7, cols: 42 });
        let process = spawn(spec).expect("spawn on a terminal");
        let terminal = process.take_pipes().terminal.expect("a terminal");
        let mut master = fs::File::from(terminal.master);
        let mut bytes = Vec::new();
        let mut chunk = [0; 4096];
        // The end of the slave reads as EIO on Linux, as 0 bytes elsewhere.
        while let Ok(read @ 1..) = master.read(&mut chunk) {
            bytes.extend_from_slice(&chunk[..read]);
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.split("\r\n").map(str::trim).collect();
        assert!(lines.contains(&"7 42"), "supervised: {supervised}: {text:?}");
        assert!(lines.iter().any(|line| line.starts_with("/dev/")), "supervised: {supervised}: {text:?}");
        assert!(lines.contains(&terminal.pid.to_string().as_str()), "the command's pid is its session's: {text:?}");
        assert!(lines.contains(&"all-three"), "supervised: {supervised}: {text:?}");
        assert_eq!(process.wait().await.exit_code, Some(0));
    }
}
