//! Ending a command: timeouts, kills and aborts (each reported once, never
//! both), the grace before SIGKILL, `terminate_now`, and no grace at all.

use std::time::{Duration, Instant};

use super::{assert_group_gone, read_until, run, sh, SLACK};
use crate::process::{spawn, KillReason, Status};

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
