//! Descendants that leave the command's process group, as the reaper ends them
//! (Linux: under the supervisor, the leader is a reaper).
//!
//! Each needs the supervisor program, which `cargo test` builds and `cargo
//! test --lib` does not: without it a command is this test binary's own
//! child, and one that kills its reaper (`kill -KILL $PPID`) would kill the
//! test binary. So each is skipped, saying why, where the program is not
//! built, and fails instead where `CI` is set.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{assert_group_gone, assert_stops, pid_in, run, running, sh, TestDir, SLACK};
use crate::process::{containment, spawn, KillReason, Process, ProcessSpec, RunResult};

/// Whether commands run under reapers here; see the module's note.
fn reapers(test: &str) -> bool {
    if containment::supervisor().is_some() {
        return true;
    }
    let why = "the supervisor program is not built (`cargo test` builds it; `cargo test --lib` alone does not)";
    assert!(std::env::var_os("CI").is_none(), "{test}: {why}");
    // Past the harness's capture (which holds `eprintln!`), so that the skip shows.
    let _ = writeln!(std::io::stderr(), "skipped {test}: {why}");
    false
}

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
    if !reapers("a_setsid_escapee_is_dead_when_the_result_is_published") {
        return;
    }
    let dir = TestDir::new();
    let script = format!("{SETSID_ESCAPEE}; while [ ! -s pid ]; do sleep 0.01; done; exit 3");
    let result = run(in_dir(&dir, &script)).await;
    assert_eq!(result.exit_code, Some(3));
    let escapee = pid_in(&dir.0.join("pid")).await;
    assert!(!running(escapee), "{escapee} outlived its command");
    // The escapee, and `setsid`'s own parent if it is still exiting.
    assert!((1..=2).contains(&result.ended_after_exit), "the result counts what it ended: {result:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn double_forks_in_python_and_perl_are_dead_when_the_result_is_published() {
    if !reapers("double_forks_in_python_and_perl_are_dead_when_the_result_is_published") {
        return;
    }
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
    if !reapers("kill_abort_and_terminate_now_reach_a_setsid_escapee") {
        return;
    }
    assert_eq!(ended_with(|process| assert!(process.kill(KillReason::Requested))).await.signal, Some("SIGTERM"));
    assert!(ended_with(|process| assert!(process.kill(KillReason::Aborted))).await.aborted);
    assert_eq!(ended_with(Process::terminate_now).await.signal, Some("SIGKILL"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_reaches_a_setsid_escapee() {
    if !reapers("a_timeout_reaches_a_setsid_escapee") {
        return;
    }
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
    if !reapers("a_command_that_stops_its_reaper_is_still_ended_after_the_grace") {
        return;
    }
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
    if !reapers("a_command_that_kills_its_reaper_still_has_its_group_ended") {
        return;
    }
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
async fn a_command_that_kills_its_reaper_first_thing_is_started_and_reported_killed() {
    if !reapers("a_command_that_kills_its_reaper_first_thing_is_started_and_reported_killed") {
        return;
    }
    // Its reaper may not have reported the start yet: the spawn succeeds
    // all the same, on the supervisor's word of which reaper took it.
    for round in 0..20 {
        let process = spawn(sh("kill -KILL $PPID; sleep 100")).unwrap_or_else(|error| panic!("round {round}: {error}"));
        let result = tokio::time::timeout(SLACK, process.wait()).await.expect("the result in time");
        assert_eq!(result.signal, Some("SIGKILL"), "round {round}");
        assert_group_gone(process.pid()).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kill_right_after_the_spawn_is_reported_as_sigkill_or_sigterm() {
    if !reapers("a_kill_right_after_the_spawn_is_reported_as_sigkill_or_sigterm") {
        return;
    }
    for _ in 0..20 {
        let process = spawn(sh("sleep 100")).unwrap();
        process.terminate_now();
        assert_eq!(process.wait().await.signal, Some("SIGKILL"));
        let process = spawn(sh("sleep 100")).unwrap();
        process.kill(KillReason::Requested);
        assert_eq!(process.wait().await.signal, Some("SIGTERM"));
    }
}
