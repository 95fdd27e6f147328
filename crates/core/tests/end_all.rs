//! `process::end_all` against real processes. It SIGKILLs every live group of
//! the host process, so it has this test binary to itself.
#![cfg(unix)]

use std::fs;
use std::time::{Duration, Instant};

use dsh_shell_env_core::process::{end_all, spawn, Output, OutputLimits, Process, ProcessSpec};

fn sh(script: &str) -> ProcessSpec {
    let mut spec = ProcessSpec::new("/bin/sh", std::env::temp_dir());
    spec.args = vec!["-c".into(), script.into()];
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec
}

/// The first line of stdout, read as it comes.
async fn first_line(process: &Process) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = String::new();
    while !seen.contains('\n') {
        assert!(Instant::now() < deadline, "no line on stdout, got {seen:?}");
        seen.push_str(&process.read_output().stdout);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    seen.lines().next().unwrap_or_default().to_owned()
}

/// Whether `pid` runs (exists and is not a zombie).
fn running(pid: &str) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kills_every_live_group_and_removes_the_spill_directory() {
    let mut spilling = sh("head -c 5000 /dev/zero");
    spilling.stdout = Output::Capture(OutputLimits { max_bytes: 100, spill_max_bytes: 1 << 20 });
    let spilled = spawn(spilling).expect("spawn").wait().await;
    let spill_file = spilled.stdout.spill_path.clone().expect("the output spilled");
    let spill_dir = spill_file.parent().expect("a directory").to_owned();
    assert!(spill_file.exists());

    let plain = spawn(sh("sleep 60")).expect("spawn");
    // A leader that ignores SIGTERM, with a grandchild in its group.
    let stubborn = spawn(sh("trap '' TERM; sleep 60 & echo $!; wait")).expect("spawn");
    let grandchild = first_line(&stubborn).await;
    assert!(running(&grandchild));
    // A TERM-ignoring escapee that left the group, where the reaper is built.
    let escaping = spawn(sh("setsid -f sh -c 'trap \"\" TERM; echo $$; exec sleep 60'; sleep 60")).expect("spawn");
    let escapee = first_line(&escaping).await;
    assert!(running(&escapee));

    end_all();

    let waited = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::join!(plain.wait(), stubborn.wait(), escaping.wait())
    });
    let (plain, stubborn, escaping) = waited.await.expect("every group ended");
    assert_eq!(plain.signal, Some("SIGKILL"));
    assert_eq!(stubborn.signal, Some("SIGKILL"));
    assert_eq!(escaping.signal, Some("SIGKILL"));
    #[cfg(target_os = "linux")]
    assert!(!running(&escapee), "the escapee {escapee} still runs");
    let deadline = Instant::now() + Duration::from_secs(2);
    while running(&grandchild) {
        assert!(Instant::now() < deadline, "the grandchild {grandchild} still runs");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(!spill_file.exists() && !spill_dir.exists(), "{} is still there", spill_dir.display());

    // Later commands run and are tracked as usual.
    let after = spawn(sh("echo after")).expect("spawn").wait().await;
    assert_eq!((after.exit_code, after.stdout.text.as_str()), (Some(0), "after\n"));
}
