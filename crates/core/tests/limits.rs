//! Resource limits against real processes, in each tier this machine has:
//! the cgroup tier (with the `memory` and `pids` controllers, v2 or the
//! hybrid layout's v1) and the `/proc` sweep, where only rlimits apply.
//!
//! The supervisor is one per process and these tests restart it in each
//! tier, so they have this test binary to themselves and take turns.
#![cfg(target_os = "linux")]

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use dsh_shell_env_core::limits::{Limit, Limits};
use dsh_shell_env_core::process::{limit_controllers, spawn, ProcessSpec, RunResult};
use dsh_shell_env_core::supervisor::NO_CGROUPS;
use dsh_shell_env_core::ExecError;
use tokio::sync::{Mutex, MutexGuard};

async fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::const_new(());
    TURN.lock().await
}

/// A scratch directory, removed on drop.
struct TestDir(PathBuf);

impl TestDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("dsh-limits-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("a scratch directory");
        Self(dir)
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn bash(script: &str, limits: Limits) -> ProcessSpec {
    let mut spec = ProcessSpec::new("/bin/bash", std::env::temp_dir());
    spec.args = vec!["-c".into(), script.into()];
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec.limits = limits;
    spec.timeout = Some(Duration::from_secs(20));
    spec.grace = Duration::from_millis(200);
    spec
}

async fn run(script: &str, limits: Limits) -> std::sync::Arc<RunResult> {
    spawn(bash(script, limits)).expect("spawn").wait().await
}

/// The supervisor (started anew) in the cgroup tier, or, with `no_cgroups`,
/// in the sweep tier; whether its commands now run in a cgroup leaf.
async fn restart_supervisor(no_cgroups: bool) -> bool {
    // These tests take turns, so no other thread reads the environment meanwhile.
    if no_cgroups {
        std::env::set_var(NO_CGROUPS, "1");
    } else {
        std::env::remove_var(NO_CGROUPS);
    }
    // The supervisor is a command's reaper's parent, as the command reads
    // it: a scan of this process's children can miss one being reparented
    // (its spawning thread gone), and a supervisor missed is not restarted.
    let found = run("cut -d' ' -f4 /proc/$PPID/stat", Limits::default()).await;
    let pid: i32 = found.stdout.text.trim().parse().expect("the supervisor's pid");
    // SAFETY: signals the supervisor, a child of this process, unreaped until
    // a new one replaces it, so the pid names no one else.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z")) {
        assert!(Instant::now() < deadline, "the supervisor did not die");
        std::thread::sleep(Duration::from_millis(5));
    }
    let result = run("cat /proc/self/cgroup", Limits::default()).await;
    let in_leaf = result.stdout.text.lines().any(|line| line.starts_with("0::") && line.contains("/dsh-shell-env."));
    assert!(!(no_cgroups && in_leaf), "a supervisor asked to keep out of cgroups runs its commands in a leaf");
    in_leaf
}

const MIB: u64 = 1024 * 1024;

/// The rlimits hold in both tiers: a write past `fileBytes` ends the command
/// with SIGXFSZ (through the shell, as its exit code), the file no larger;
/// a busy loop ends after `cpuSeconds`; `openFiles` is the command's
/// `ulimit -n`; no core files once any limit is set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_size_cpu_and_open_files_are_enforced_per_process_in_both_tiers() {
    let _turn = one_at_a_time().await;
    for no_cgroups in [false, true] {
        restart_supervisor(no_cgroups).await;
        let dir = TestDir::new("file");
        let file = dir.0.join("f");
        let script = format!("head -c 100M /dev/zero > '{}'", file.display());
        let result = run(&script, Limits { file_bytes: Some(MIB), ..Limits::default() }).await;
        assert_eq!(result.limit, Some(Limit::FileSize), "{result:?}");
        assert!(fs::metadata(&file).expect("the file").len() <= MIB);

        let started = Instant::now();
        let result = run("while :; do :; done", Limits { cpu_seconds: Some(1), ..Limits::default() }).await;
        assert_eq!((result.signal, result.limit), (Some("SIGXCPU"), Some(Limit::Cpu)), "{result:?}");
        assert!(started.elapsed() < Duration::from_secs(10), "ended by its CPU limit, not its timeout");

        let ignoring = "trap '' XCPU; while :; do :; done";
        let result = run(ignoring, Limits { cpu_seconds: Some(1), ..Limits::default() }).await;
        assert_eq!((result.signal, result.limit), (Some("SIGKILL"), Some(Limit::Cpu)), "{result:?}");

        let result = run("ulimit -n; ulimit -c", Limits { open_files: Some(12), ..Limits::default() }).await;
        assert_eq!(result.stdout.text, "12\n0\n");
        assert_eq!(result.limit, None);

        let unlimited = run("ulimit -f", Limits::default()).await;
        assert_eq!(unlimited.stdout.text, "unlimited\n", "no limit unless asked for");
    }
}

/// A command with limits starts through a child of the reaper that sets
/// them before `execve`: a program that cannot be executed fails to start
/// with `execve`'s errno, in both tiers, and the next command runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limited_command_that_cannot_be_executed_fails_to_start_with_its_errno() {
    let _turn = one_at_a_time().await;
    for no_cgroups in [false, true] {
        restart_supervisor(no_cgroups).await;
        let dir = TestDir::new("exec");
        let plain = dir.0.join("plain");
        fs::write(&plain, "#!/bin/sh\necho ran\n").expect("a file");
        let mut spec = ProcessSpec::new(&plain, &dir.0);
        spec.limits = Limits { open_files: Some(64), cpu_seconds: Some(10), ..Limits::default() };
        let error = spawn(spec).err().expect("refused");
        assert_eq!(error.code(), "ERR_SHELL_EXEC_SPAWN_FAILED");
        match &error {
            ExecError::SpawnFailed { source, .. } => assert_eq!(source.raw_os_error(), Some(libc::EACCES), "{error}"),
            other => panic!("not a spawn failure: {other}"),
        }
        let next = run("ulimit -n", Limits { open_files: Some(64), ..Limits::default() }).await;
        assert_eq!(next.stdout.text, "64\n", "{next:?}");
    }
    std::env::remove_var(NO_CGROUPS);
}

/// With the `memory` controller, the whole command is held to
/// `memoryBytes`: a program touching 2 GiB under 256 MiB is killed, the
/// result names the memory limit, and a command whose shell survives the
/// kill reports it as reached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_is_held_for_the_whole_command_by_the_cgroup_tier() {
    let _turn = one_at_a_time().await;
    restart_supervisor(false).await;
    if limit_controllers().expect("the supervisor").memory.is_none() {
        eprintln!("skipped: no cgroup with the memory controller for commands on this machine");
        return;
    }
    let limits = Limits { memory_bytes: Some(256 * MIB), ..Limits::default() };
    let hog = "perl -e '$x = \"a\" x (2 * 1024 ** 3); print length $x'";
    let result = run(hog, limits).await;
    assert_eq!(result.limit, Some(Limit::Memory), "{result:?}");
    assert_eq!(result.stdout.text, "");
    let survived = run(&format!("{hog}; echo survived"), limits).await;
    assert_eq!(survived.stdout.text, "survived\n");
    assert_eq!((survived.limit, survived.limits_hit.iter().collect::<Vec<_>>()), (None, vec![Limit::Memory]));
}

/// Without a cgroup, memory is each process's `RLIMIT_DATA`: an allocation
/// past it fails inside the program (no kill, so no limit is named), and
/// `processes` cannot be enforced at all, so it is refused before anything runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_cgroup_memory_is_per_process_and_processes_are_refused() {
    let _turn = one_at_a_time().await;
    restart_supervisor(true).await;
    let limits = Limits { memory_bytes: Some(256 * MIB), ..Limits::default() };
    let result = run("perl -e '$x = \"a\" x (2 * 1024 ** 3); print length $x'", limits).await;
    assert_ne!(result.exit_code, Some(0), "{result:?}");
    assert!(result.stderr.text.contains("Out of memory"), "{result:?}");
    let error = spawn(bash("true", Limits { processes: Some(64), ..Limits::default() })).err().expect("refused");
    assert_eq!(error.code(), "ERR_SHELL_EXEC_UNSUPPORTED");
    assert!(error.to_string().starts_with("limits.processes is not supported here"), "{error}");
    std::env::remove_var(NO_CGROUPS);
}

/// With the `pids` controller, a fork bomb under `processes: 64` gets its
/// forks refused, leaves this process responsive, ends at its timeout, and
/// the result says the limit was reached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_bomb_is_held_to_its_processes_and_ends_at_its_timeout() {
    let _turn = one_at_a_time().await;
    restart_supervisor(false).await;
    if limit_controllers().expect("the supervisor").pids.is_none() {
        eprintln!("skipped: no cgroup with the pids controller for commands on this machine");
        return;
    }
    let mut spec =
        bash("bomb() { while :; do bomb & done; }; bomb", Limits { processes: Some(64), ..Limits::default() });
    spec.timeout = Some(Duration::from_secs(3));
    let bomb = spawn(spec).expect("spawn");
    let started = Instant::now();
    // Meanwhile this process starts and finishes others at once.
    let responsive = run("echo alive", Limits::default()).await;
    assert_eq!(responsive.stdout.text, "alive\n");
    let result = bomb.wait().await;
    assert!(result.timed_out, "{result:?}");
    assert!(result.limits_hit.contains(Limit::Processes), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A reaper serves one command after another in its leaf: each command
/// gets exactly its own limits there, whichever limits the commands before
/// it had (a memory limit first, then a process limit, then none), and a
/// limit is lifted for the next command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_command_on_a_reused_reaper_gets_exactly_its_own_cgroup_limits() {
    let _turn = one_at_a_time().await;
    restart_supervisor(false).await;
    let controllers = limit_controllers().expect("the supervisor");
    if controllers.memory.is_none() || controllers.pids.is_none() {
        eprintln!("skipped: no cgroup with the memory and pids controllers for commands on this machine");
        return;
    }
    let memory = Limits { memory_bytes: Some(256 * MIB), ..Limits::default() };
    let processes = Limits { processes: Some(5), ..Limits::default() };
    // Twenty sleepers at once: more than 5 processes, far fewer than a host has.
    let sleepers = "for i in $(seq 20); do sleep 1 & done 2>/dev/null; wait; echo done";
    for round in 0..3 {
        let hog = run("perl -e '$x = \"a\" x (1024 ** 3); print length $x'", memory).await;
        assert_eq!(hog.limit, Some(Limit::Memory), "round {round}: {hog:?}");
        let held = run(sleepers, processes).await;
        assert!(held.limits_hit.contains(Limit::Processes), "round {round}: {held:?}");
        let free = run(sleepers, Limits::default()).await;
        assert_eq!(
            (free.stdout.text.as_str(), free.limits_hit.iter().count()),
            ("done\n", 0),
            "round {round}: {free:?}"
        );
        let big = run("perl -e '$x = \"a\" x (512 * 1024 ** 2); print length $x'", Limits::default()).await;
        assert_eq!((big.exit_code, big.limit), (Some(0), None), "round {round}: the memory limit was lifted: {big:?}");
    }
}
