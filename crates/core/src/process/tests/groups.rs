//! The command's process group: grandchildren that hold its output, ignore
//! SIGTERM or close every pipe are ended with the leader, within the grace,
//! before the result is published.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{assert_group_gone, assert_stops, leave_grandchild, sh, TestDir, SLACK};
use crate::process::{spawn, KillReason, Status};

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
    assert_eq!(result.signal, Some("SIGTERM"), "{result:?}");
    let grandchild: i32 = fs::read_to_string(dir.0.join("pid")).unwrap().trim().parse().unwrap();
    assert_stops(grandchild).await;
    assert_group_gone(process.pid()).await;
}
