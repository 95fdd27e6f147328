//! How a command's end is detected, reported and published: exit codes and
//! signals, the state, the memoised result and `on_finish`, many commands at
//! once, the waiter thread fallback, and a runtime dropped under a child.

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{assert_group_gone, group_left, leave_grandchild, run, sh, SLACK};
use crate::process::{containment, spawn, ProcessState, Status};

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
    crate::process::platform::FORCE_THREAD.set(true);
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
    assert!(!group_left(pid));
}
