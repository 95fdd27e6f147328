//! The supervisor against real processes: what a command cannot escape by
//! killing its reaper or the supervisor, or by forking faster than a sweep,
//! in both tiers (a cgroup leaf per command where this machine allows, and
//! the reapers' `/proc` sweep); and what many commands cost the host.
//!
//! The supervisor is one per process and these tests kill it, so they have
//! this test binary to themselves, and take turns (`one_at_a_time`).
#![cfg(target_os = "linux")]

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use dsh_shell_env_core::error::SUPERVISOR_LOST;
use dsh_shell_env_core::limits::Limits;
use dsh_shell_env_core::process::{spawn, KillReason, Process, ProcessSpec, Status};
use dsh_shell_env_core::supervisor::{NO_CGROUPS, PROGRAM_NAME};
use tokio::sync::{Mutex, MutexGuard};

/// The tests share the supervisor, which some of them kill.
async fn one_at_a_time() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::const_new(());
    TURN.lock().await
}

fn sh(script: &str) -> ProcessSpec {
    let mut spec = ProcessSpec::new("/bin/sh", std::env::temp_dir());
    spec.args = vec!["-c".into(), script.into()];
    spec.env = vec![("PATH".into(), "/usr/bin:/bin".into())];
    spec
}

/// A scratch directory, removed on drop.
struct TestDir(PathBuf);

impl TestDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("dsh-supervisor-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("a scratch directory");
        Self(dir)
    }

    fn spec(&self, script: &str) -> ProcessSpec {
        let mut spec = sh(script);
        spec.cwd = self.0.clone();
        spec
    }

    /// Waits until file `name` holds a pid.
    fn pid(&self, name: &str) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(pid) = fs::read_to_string(self.0.join(name)).ok().and_then(|text| text.trim().parse().ok()) {
                return pid;
            }
            assert!(Instant::now() < deadline, "no pid in {name}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Whether `pid` runs (exists and is not a zombie).
fn running(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.rsplit(") ").next().unwrap_or("").starts_with('Z'))
        .unwrap_or(false)
}

/// This process's supervisor, if one runs.
fn supervisor_pid() -> Option<i32> {
    let tasks = fs::read_dir("/proc/self/task").ok()?;
    let children = tasks.flatten().filter_map(|task| fs::read_to_string(task.path().join("children")).ok());
    let mut pids =
        children.flat_map(|list| list.split_whitespace().filter_map(|pid| pid.parse::<i32>().ok()).collect::<Vec<_>>());
    pids.find(|pid| fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe.ends_with(PROGRAM_NAME)))
}

/// Kills supervisor `pid` and waits until it is gone. The pid is the one a
/// single look found: looking again could find none, when the supervisor
/// was exiting meanwhile.
fn kill_supervisor(pid: i32) {
    // SAFETY: signals the supervisor, a child of this process, unreaped until
    // a new one replaces it, so the pid names no one else.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(pid) {
        assert!(Instant::now() < deadline, "the supervisor did not die");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `test` in each tier this machine has, the supervisor started anew
/// for each: first the cgroup tier (when available), then the `/proc` sweep.
/// Returns the tiers tried, each with whether commands ran in a leaf.
async fn in_each_tier(test: impl AsyncFn(&str)) -> Vec<bool> {
    let mut tiers = Vec::new();
    for no_cgroups in [false, true] {
        // These tests take turns, so no other thread reads the environment meanwhile.
        if no_cgroups {
            std::env::set_var(NO_CGROUPS, "1");
        } else {
            std::env::remove_var(NO_CGROUPS);
        }
        if let Some(pid) = supervisor_pid() {
            kill_supervisor(pid);
        }
        let leaf = in_a_leaf().await;
        tiers.push(leaf);
        if !no_cgroups && !leaf {
            // No cgroup tier here: the second round covers the sweep.
            continue;
        }
        test(if leaf { "cgroup" } else { "sweep" }).await;
    }
    std::env::remove_var(NO_CGROUPS);
    tiers
}

/// Whether a command now runs in a leaf of the supervisor's.
async fn in_a_leaf() -> bool {
    let result = spawn(sh("cat /proc/self/cgroup")).expect("spawn").wait().await;
    result.stdout.text.lines().any(|line| line.starts_with("0::") && line.contains("/dsh-shell-env."))
}

/// The supervisor's resident set, in KiB.
fn supervisor_rss_kib() -> u64 {
    let pid = supervisor_pid().expect("a supervisor runs");
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("its status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:")?.trim().strip_suffix("kB")?.trim().parse().ok())
        .expect("VmRSS")
}

fn open_descriptors() -> usize {
    fs::read_dir("/proc/self/fd").map(Iterator::count).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_kills_its_reaper_leaves_no_escapee_in_either_tier() {
    let _turn = one_at_a_time().await;
    let tiers = in_each_tier(async |tier| {
        let dir = TestDir::new(&format!("kills-reaper-{tier}"));
        let mut spec = dir.spec(
            "setsid -f sh -c 'trap \"\" TERM; echo $$ > escapee; exec sleep 300' </dev/null >/dev/null 2>&1; \
             while [ ! -s escapee ]; do sleep 0.01; done; trap '' TERM; echo $$ > command; kill -KILL $PPID; sleep 300",
        );
        spec.grace = Duration::from_millis(200);
        let process = spawn(spec).expect("spawn");
        let (escapee, command) = (dir.pid("escapee"), dir.pid("command"));
        let result = tokio::time::timeout(Duration::from_secs(10), process.wait()).await.expect("a result in time");
        assert_eq!(result.signal, Some("SIGKILL"), "{tier}: the reaper's own death is what the host sees");
        assert!(!result.supervisor_lost, "{tier}");
        assert!(!running(escapee), "{tier}: the escapee {escapee} outlived its killed reaper");
        assert!(!running(command), "{tier}: the command {command} outlived its killed reaper");
    })
    .await;
    assert!(tiers.contains(&false), "the sweep was tested");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_supervisor_takes_every_tree_with_it_and_the_next_spawn_starts_a_new_one() {
    let _turn = one_at_a_time().await;
    in_each_tier(async |tier| {
        let dir = TestDir::new(&format!("supervisor-dies-{tier}"));
        let running_commands: Vec<Process> = (0..3)
            .map(|n| {
                let script = format!(
                    "setsid -f sh -c 'trap \"\" TERM; echo $$ > escapee{n}; exec sleep 300' </dev/null >/dev/null 2>&1; \
                     trap '' TERM; sleep 300"
                );
                spawn(dir.spec(&script)).expect("spawn")
            })
            .collect();
        let escapees: Vec<i32> = (0..3).map(|n| dir.pid(&format!("escapee{n}"))).collect();
        let old = supervisor_pid().expect("a supervisor runs");
        kill_supervisor(old);
        for process in &running_commands {
            let result = tokio::time::timeout(Duration::from_secs(10), process.wait()).await.expect("a result in time");
            assert!(result.supervisor_lost, "{tier}: the result says why ({SUPERVISOR_LOST})");
            assert_eq!(process.state().status, Status::Killed, "{tier}");
        }
        for escapee in escapees {
            assert!(!running(escapee), "{tier}: the escapee {escapee} outlived the supervisor");
        }
        let next = spawn(sh("echo next")).expect("the next spawn").wait().await;
        assert_eq!((next.exit_code, next.stdout.text.as_str()), (Some(0), "next\n"), "{tier}");
        assert_ne!(supervisor_pid(), Some(old), "{tier}: a new supervisor serves");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pid_hoppers_forking_faster_than_a_sweep_are_all_gone_soon_after_the_grace() {
    let _turn = one_at_a_time().await;
    in_each_tier(async |tier| {
        let dir = TestDir::new(&format!("hoppers-{tier}"));
        // Each hopper ignores SIGTERM, notes its hop, starts the next in a
        // session of its own (`setsid -f` forks) and exits at once, forever:
        // 120 chains, each link orphaned; only the SIGKILL after the grace
        // ends them. A link lives for milliseconds, too short to be found by
        // a look at /proc: the notes say whether any chain still hops.
        let hop = r#"trap "" TERM; echo >> hops; setsid -f sh -c "$HOP" </dev/null >/dev/null 2>&1"#;
        let mut spec =
            dir.spec(&format!(r#"export HOP='{hop}'; for i in $(seq 120); do sh -c "$HOP"; done; sleep 300"#));
        spec.timeout = Some(Duration::from_millis(500));
        spec.grace = Duration::from_millis(200);
        let hops = || fs::metadata(dir.0.join("hops")).map_or(0, |meta| meta.len());
        let process = spawn(spec).expect("spawn");
        let result = tokio::time::timeout(Duration::from_secs(60), process.wait()).await.expect("a result in time");
        assert!(result.timed_out, "{tier}");
        let ended_after = result.duration.saturating_sub(Duration::from_millis(700));
        let hopped = hops();
        assert!(hopped >= 240, "{tier}: the chains hopped ({hopped} hops)");
        std::thread::sleep(Duration::from_millis(500));
        eprintln!("{tier}: {hopped} hops; the result came {ended_after:?} after the grace");
        assert!(ended_after < Duration::from_secs(10), "{tier}: {ended_after:?}");
        assert_eq!(hops(), hopped, "{tier}: a chain still hops after the result");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_commands_leave_the_host_descriptors_and_the_supervisor_memory_flat() {
    let _turn = one_at_a_time().await;
    let warm = |count| async move {
        for _ in 0..count {
            spawn(sh("exit 0")).expect("spawn").wait().await;
        }
    };
    warm(50).await;
    let (fds, rss) = (open_descriptors(), supervisor_rss_kib());
    warm(1_000).await;
    assert_eq!(open_descriptors(), fds, "the host's descriptors");
    let grown = supervisor_rss_kib().saturating_sub(rss);
    assert!(grown < 256, "the supervisor grew by {grown} KiB over 1,000 commands");
    assert!(supervisor_rss_kib() <= 4 * 1024, "the supervisor's RSS is {} KiB", supervisor_rss_kib());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_commands_at_once_each_get_their_own_result() {
    let _turn = one_at_a_time().await;
    let processes: Vec<Process> =
        (0..300).map(|n| spawn(sh(&format!("sleep 0.2; echo {n}; exit {}", n % 50))).expect("spawn")).collect();
    for (n, process) in processes.iter().enumerate() {
        let result = tokio::time::timeout(Duration::from_secs(60), process.wait()).await.expect("a result in time");
        assert_eq!((result.exit_code, result.stdout.text.trim()), (Some((n % 50) as i32), n.to_string().as_str()));
    }
    let killed = spawn(sh("sleep 300")).expect("spawn");
    assert!(killed.kill(KillReason::Requested));
    assert_eq!(killed.wait().await.signal, Some("SIGTERM"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_a_result_is_published_its_reaper_has_no_child_left_in_either_tier() {
    let _turn = one_at_a_time().await;
    in_each_tier(async |tier| {
        for round in 0..200 {
            // One at a time: a reaper whose command ended may already serve
            // the next command started.
            let process = spawn(sh("exit 0")).expect("spawn");
            process.wait().await;
            // A zombie is still a child: the command is gone only once reaped.
            let left = children_of(process.pid() as i32).unwrap_or_default();
            assert!(left.is_empty(), "{left:?} left after the result ({tier} tier, round {round})");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_one_after_another_are_served_by_the_same_few_reapers_in_either_tier() {
    let _turn = one_at_a_time().await;
    in_each_tier(async |tier| {
        let mut reapers = std::collections::BTreeSet::new();
        for n in 0..50 {
            let result = spawn(sh(&format!("echo {n}"))).expect("spawn");
            reapers.insert(result.pid());
            assert_eq!(result.wait().await.stdout.text, format!("{n}\n"));
        }
        // No process is made per command: the pool's spare reapers at most.
        assert!(reapers.len() <= 3, "50 commands had {} reapers ({tier} tier)", reapers.len());
        let limited = Limits { processes: Some(64), ..Limits::default() };
        for n in (0..5).filter(|_| tier == "cgroup") {
            let mut spec = sh(&format!("echo {n}"));
            spec.limits = limited;
            let result = spawn(spec).expect("spawn").wait().await;
            assert_eq!(result.stdout.text, format!("{n}\n"), "{tier} tier");
        }
    })
    .await;
}

/// Children of `pid`, over all of its threads; `None` once it is gone (a
/// reaper can end between the listing of its parent's children and this).
fn children_of(pid: i32) -> Option<Vec<i32>> {
    let tasks = fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let children = tasks
        .flatten()
        .filter_map(|task| fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| list.split_whitespace().filter_map(|pid| pid.parse::<i32>().ok()).collect::<Vec<_>>())
        .collect();
    Some(children)
}

/// The supervisor's children without children of their own: its idle
/// reapers (a running command's reaper has the command).
fn standby_reapers(supervisor: i32) -> Vec<i32> {
    let reapers = children_of(supervisor).expect("the supervisor runs");
    reapers.into_iter().filter(|&pid| children_of(pid).is_some_and(|children| children.is_empty())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spare_reapers_wait_for_the_next_command_and_reapers_killed_while_idle_are_replaced() {
    let _turn = one_at_a_time().await;
    spawn(sh("true")).expect("spawn").wait().await;
    let supervisor = supervisor_pid().expect("a supervisor runs");
    let spare = || async {
        for _ in 0..200 {
            if standby_reapers(supervisor).len() >= 2 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        false
    };
    assert!(spare().await, "two reapers wait: {:?}", standby_reapers(supervisor));
    // A command that runs on takes one; the pool still has two waiting.
    let running = spawn(sh("sleep 300")).expect("spawn");
    assert!(spare().await, "a second reaper waits again: {:?}", standby_reapers(supervisor));
    for pid in standby_reapers(supervisor) {
        // SAFETY: signals an idle reaper, a process of this test's own.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let result = spawn(sh("echo after")).expect("the next spawns").wait().await;
    assert_eq!(result.stdout.text, "after\n", "{result:?}");
    assert!(spare().await, "the killed reapers are replaced: {:?}", standby_reapers(supervisor));
    assert!(running.kill(KillReason::Requested));
    running.wait().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_reapers_on_standby_costs_no_running_command() {
    let _turn = one_at_a_time().await;
    let running = spawn(sh("sleep 300")).expect("spawn");
    let supervisor = supervisor_pid().expect("a supervisor runs");
    let standby = standby_reapers(supervisor);
    assert!(!standby.is_empty(), "reapers wait on standby");
    for pid in standby {
        // SAFETY: signals a reaper on standby, a process of this test's own.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    for n in 0..4 {
        let result = spawn(sh(&format!("echo {n}"))).expect("the next spawns").wait().await;
        // The whole result on failure: this was seen once empty on a fresh machine.
        assert_eq!(result.stdout.text, format!("{n}\n"), "{result:?}");
    }
    assert_eq!(supervisor_pid(), Some(supervisor), "the same supervisor serves");
    assert!(running.kill(KillReason::Requested));
    let result = running.wait().await;
    assert_eq!((result.signal, result.supervisor_lost), (Some("SIGTERM"), false));
}
