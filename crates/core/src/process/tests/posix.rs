//! What the POSIX behaviours share: commands through `/bin/sh`, waits with
//! a deadline, and looks at processes and groups.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::ExecError;
use crate::process::{spawn, Output, OutputLimits, Process, ProcessSpec, RunResult};

/// Timing slack for a loaded machine (the tests run in parallel).
pub(super) const SLACK: Duration = Duration::from_secs(2);

/// Tests that look at spill files share it; `remove_spill_dir` takes it alone.
pub(super) static SPILL_DIR: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

pub(super) fn sh(script: &str) -> ProcessSpec {
    let mut spec = ProcessSpec::new("/bin/sh", std::env::temp_dir());
    spec.args = vec!["-c".into(), script.into()];
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec
}

pub(super) async fn run(spec: ProcessSpec) -> Arc<RunResult> {
    spawn(spec).expect("spawn").wait().await
}

/// Polls `read_output` until stdout contains `needle`; returns everything read.
pub(super) async fn read_until(process: &Process, needle: &str) -> String {
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
pub(super) fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Whether `pid` is running (not gone and not a zombie).
pub(super) fn running(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
        .unwrap_or(false)
}

/// A killed process may still be in the middle of exiting when its pipes close.
pub(super) async fn assert_stops(pid: i32) {
    let deadline = Instant::now() + Duration::from_secs(1);
    while running(pid) {
        assert!(Instant::now() < deadline, "{pid} still running");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Whether anything of the command that led group `pgid` is left: a
/// member of its group, or its leader. Under the supervisor the leader is
/// the command's reaper, which lives on to take the next command (it runs
/// the supervisor's program); it does not count. A leader already reaped
/// leaves only the other members to ask about: the group's `kill -0` would
/// count its zombies too, which a subreaper may not have reaped yet.
pub(super) fn group_left(pgid: u32) -> bool {
    let leader_left = match fs::read_to_string(format!("/proc/{pgid}/comm")) {
        Ok(comm) => !crate::supervisor::PROGRAM_NAME.starts_with(comm.trim_end()) && alive(-(pgid as i32)),
        Err(_) => false,
    };
    leader_left || crate::process::platform::group_has_live_members(pgid)
}

/// Orphans are reaped by init, which may take a while in a container; until
/// then a zombie keeps the group answering `kill -0`.
pub(super) async fn assert_group_gone(pgid: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while group_left(pgid) {
        assert!(Instant::now() < deadline, "group {pgid} still exists");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A scratch directory, removed on drop.
pub(super) struct TestDir(pub(super) PathBuf);

impl TestDir {
    pub(super) fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "dsh-core-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    pub(super) fn file(&self, name: &str, content: &str, mode: u32) -> PathBuf {
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
pub(super) async fn eventually(condition: impl Fn() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Waits until `path` holds a pid, and returns it.
pub(super) async fn pid_in(path: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(pid) = fs::read_to_string(path).ok().and_then(|text| text.trim().parse().ok()) {
            return pid;
        }
        assert!(Instant::now() < deadline, "no pid in {}", path.display());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

pub(super) fn errno(error: ExecError) -> (io::ErrorKind, Option<i32>) {
    match error {
        ExecError::SpawnFailed { source, .. } => (source.kind(), source.raw_os_error()),
        other => panic!("expected SpawnFailed, got {other:?}"),
    }
}

/// Runs `script`, which starts a grandchild with stdout inherited and prints its
/// pid, then exits 4; returns the result, the time wait() took and the grandchild's pid.
pub(super) async fn leave_grandchild(
    script: &str,
    cwd: &Path,
    grace: Duration,
) -> (Arc<RunResult>, Duration, Process, i32) {
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

pub(super) fn limits(max_bytes: usize, spill_max_bytes: u64) -> Output {
    Output::Capture(OutputLimits { max_bytes, spill_max_bytes })
}
