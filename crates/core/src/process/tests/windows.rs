//! Process control on Windows against real processes: `cmd.exe`, and this
//! test binary itself started again as a child that sleeps, starts a child of
//! its own, or echoes its stdin (see [`child_mode`]). Commands on a pseudo
//! console are in `console`.

mod console;

use std::os::windows::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::process::*;

/// Names what a copy of this test binary started as a child does.
const CHILD_MODE: &str = "DSH_SHELL_ENV_TEST_CHILD";

/// Not a test: what this binary does when started as a test child. `sleep`
/// prints its pid and sleeps; `tree` starts a `sleep` child (in the same job)
/// and then does the same; `orphan` starts a `sleep` child without its
/// pipes, prints that child's pid and exits; `env` prints two variables; `echo` copies stdin
/// to stdout, and to stderr as well; `inherit` runs `echo` through [`spawn`] with
/// both outputs inherited, then prints its exit code; the `console` modes are
/// `console::child_mode`'s.
#[test]
#[ignore = "run only as a child of the process tests"]
fn child_mode() {
    use std::io::{Read, Write};
    match std::env::var(CHILD_MODE).as_deref() {
        Ok("sleep") => {
            println!("PID {}", std::process::id());
            std::thread::sleep(Duration::from_secs(60));
        }
        Ok("allocate") => {
            // 2 GiB, touched.
            let block = vec![1u8; 2 << 30];
            println!("{}", block.iter().map(|&byte| u64::from(byte)).sum::<u64>());
        }
        Ok("spin") => {
            // Busy on the CPU until something ends it.
            let started = Instant::now();
            let mut spins = 0u64;
            while started.elapsed() < Duration::from_secs(30) {
                spins = std::hint::black_box(spins.wrapping_add(1));
            }
        }
        Ok("tree") => {
            let mut child = std::process::Command::new(std::env::current_exe().unwrap());
            child.args(child_args()).env(CHILD_MODE, "sleep");
            // Never waited for: the job ends it (and Windows has no zombies).
            #[allow(clippy::zombie_processes)]
            let _grandchild = child.spawn().unwrap();
            println!("PID {}", std::process::id());
            std::thread::sleep(Duration::from_secs(60));
        }
        Ok("orphan") => {
            // A grandchild without the pipes, left behind by an exit at once.
            let mut child = std::process::Command::new(std::env::current_exe().unwrap());
            child.args(child_args()).env(CHILD_MODE, "sleep").stdout(std::process::Stdio::null());
            // Never waited for: the job ends it (and Windows has no zombies).
            #[allow(clippy::zombie_processes)]
            let grandchild = child.spawn().unwrap();
            println!("PID {}", grandchild.id());
        }
        Ok("env") => {
            // Looked up in another case than the block spells them: names are case-insensitive.
            let get = |name: &str| std::env::var(name).unwrap_or_else(|_| "<unset>".into());
            print!("[{}] [{}] [{}]", get("dsh_one"), get("DSH_TWO"), get("DSH_INHERITED"));
            std::io::stdout().flush().unwrap();
        }
        Ok("echo") => {
            let mut input = String::new();
            std::io::stdin().read_to_string(&mut input).unwrap();
            print!("ECHO[{input}]");
            std::io::stdout().flush().unwrap();
            eprint!("ERR[{input}]");
        }
        Ok("inherit") => {
            let mut spec = child("echo");
            spec.stdin = Input::Data("passed through".into());
            spec.stdout = Output::Inherit;
            spec.stderr = Output::Inherit;
            let runtime = tokio::runtime::Runtime::new().unwrap();
            let result = runtime.block_on(run(spec));
            println!("\nEXIT {:?} [{}] [{}]", result.exit_code, result.stdout.text, result.stderr.text);
        }
        Ok(mode) => console::child_mode(mode),
        _ => {}
    }
}

/// The test harness's arguments that run [`child_mode`] alone.
fn child_args() -> Vec<String> {
    ["--ignored", "--exact", "process::tests::windows::child_mode", "--nocapture", "--test-threads=1"]
        .map(String::from)
        .into()
}

/// The variables a Windows program needs to start at all.
fn base_env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(name, _)| ["SYSTEMROOT", "WINDIR", "PATH", "TEMP", "TMP"].contains(&name.to_uppercase().as_str()))
        .collect()
}

fn cmd(script: &str) -> ProcessSpec {
    let program =
        resolve_program("cmd", Search::windows(std::env::var("PATH").ok().as_deref(), None), &std::env::temp_dir())
            .expect("cmd.exe on PATH");
    let mut spec = ProcessSpec::new(program, std::env::temp_dir());
    spec.args = vec!["/d".into(), "/s".into(), "/c".into(), script.into()];
    spec.env = base_env();
    spec
}

fn child(mode: &str) -> ProcessSpec {
    let mut spec = ProcessSpec::new(std::env::current_exe().unwrap(), std::env::temp_dir());
    spec.args = child_args();
    spec.env = base_env();
    spec.env.push((CHILD_MODE.into(), mode.into()));
    spec
}

async fn run(spec: ProcessSpec) -> Arc<RunResult> {
    tokio::time::timeout(Duration::from_secs(60), spawn(spec).expect("spawn").wait()).await.expect("finished")
}

/// The pids a test child printed.
fn pids(text: &str) -> Vec<u32> {
    // The harness prints its own words on the same line.
    text.lines()
        .filter_map(|line| line.split("PID ").nth(1))
        .filter_map(|rest| rest.split_whitespace().next()?.parse().ok())
        .collect()
}

/// Whether a process with `pid` is running.
fn process_exists(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{CloseHandle, GetLastError, ERROR_ACCESS_DENIED, STILL_ACTIVE};
    use windows_sys::Win32::System::Threading::{GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION};
    // SAFETY: opens a handle (closed below) or fails; no memory effects.
    let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if handle.is_null() {
        // Access denied means it exists and is someone else's.
        // SAFETY: no arguments.
        return unsafe { GetLastError() } == ERROR_ACCESS_DENIED;
    }
    let mut code = 0u32;
    // SAFETY: `handle` is open; `code` is a valid out pointer; closed once.
    unsafe {
        let running = GetExitCodeProcess(handle, &mut code) != 0 && code == STILL_ACTIVE as u32;
        CloseHandle(handle);
        running
    }
}

/// Waits (briefly) until no process has `pid`.
async fn assert_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while process_exists(pid) {
        assert!(Instant::now() < deadline, "{pid} still running");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether this runs under wine, whose ntdll exports its version.
fn under_wine() -> bool {
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    let ntdll: Vec<u16> = "ntdll.dll".encode_utf16().chain(Some(0)).collect();
    // SAFETY: a NUL-terminated module name and symbol name; nothing is called.
    unsafe {
        let module = GetModuleHandleW(ntdll.as_ptr());
        !module.is_null() && GetProcAddress(module, c"wine_get_version".as_ptr().cast()).is_some()
    }
}

#[test]
fn cmd_is_found_through_pathext() {
    let path = std::env::var("PATH").unwrap();
    let found = resolve_program("cmd", Search::windows(Some(&path), None), &std::env::temp_dir()).unwrap();
    let name = found.file_name().unwrap().to_string_lossy().to_lowercase();
    assert_eq!(name, "cmd.exe");
    assert!(found.is_absolute());
    // Without the extension in PATHEXT it is not found.
    let error = resolve_program("cmd", Search::windows(Some(&path), Some(".BAT")), &std::env::temp_dir()).unwrap_err();
    assert_eq!(error.code(), "ERR_SHELL_EXEC_SPAWN_FAILED");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_runs_with_exactly_the_environment_block_it_is_given() {
    // Set here, so inherited if anything were inherited.
    std::env::set_var("DSH_INHERITED", "leaked");
    let mut spec = child("env");
    spec.env.push(("DSH_ONE".into(), "é € 😀 1".into()));
    spec.env.push(("DSH_TWO".into(), "two words".into()));
    let result = run(spec).await;
    assert_eq!(result.exit_code, Some(0));
    assert!(result.stdout.text.contains("[é € 😀 1] [two words] [<unset>]"), "{:?}", result.stdout.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cmd_script_gives_its_exit_code() {
    let result = run(cmd("echo hi & exit /b 3")).await;
    assert_eq!(result.exit_code, Some(3));
    assert_eq!(result.signal, None);
    assert_eq!(result.stdout.text.trim_end(), "hi");
}

#[test]
fn inherited_outputs_write_to_the_hosts_own_handles_and_nothing_is_captured() {
    // The host here is a copy of this binary whose stdout and stderr are
    // pipes read by this test.
    let host = std::process::Command::new(std::env::current_exe().unwrap())
        .args(child_args())
        .env(CHILD_MODE, "inherit")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&host.stdout);
    let stderr = String::from_utf8_lossy(&host.stderr);
    assert!(stdout.contains("ECHO[passed through]"), "{stdout:?}");
    assert!(stderr.contains("ERR[passed through]"), "{stderr:?}");
    assert!(stdout.contains("EXIT Some(0) [] []"), "{stdout:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn raw_pipes_are_handed_to_the_caller_and_carry_the_childs_streams() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut spec = child("echo");
    spec.stdin = Input::Pipe;
    spec.stdout = Output::Pipe;
    spec.stderr = Output::Pipe;
    let process = spawn(spec).expect("spawn");
    let pipes = process.take_pipes();
    let (mut stdin, stdout, stderr) = (
        crate::process::platform::async_writer(pipes.stdin.expect("stdin")).unwrap(),
        crate::process::platform::async_reader(pipes.stdout.expect("stdout")).unwrap(),
        crate::process::platform::async_reader(pipes.stderr.expect("stderr")).unwrap(),
    );
    stdin.write_all(b"through the pipe").await.unwrap();
    drop(stdin);
    let read = |mut pipe: crate::process::platform::PipeReader| async move {
        let mut text = String::new();
        // A pipe whose writer is gone reads as broken rather than at its end.
        let _ = pipe.read_to_string(&mut text).await;
        text
    };
    let (stdout, stderr) = tokio::join!(read(stdout), read(stderr));
    let result = tokio::time::timeout(Duration::from_secs(60), process.wait()).await.expect("finished");
    assert_eq!(result.exit_code, Some(0));
    assert!(stdout.contains("ECHO[through the pipe]"), "{stdout:?}");
    assert!(stderr.contains("ERR[through the pipe]"), "{stderr:?}");
    // Nothing of a raw pipe is kept here.
    assert_eq!((result.stdout.text.as_str(), result.stderr.text.as_str()), ("", ""));
}

#[tokio::test(flavor = "multi_thread")]
async fn stdin_is_written_then_closed() {
    let mut spec = child("echo");
    spec.stdin = Input::Data("one\ntwo".into());
    let result = run(spec).await;
    assert!(result.stdout.text.contains("ECHO[one\ntwo]"), "{:?}", result.stdout.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn output_past_the_cap_keeps_the_tail_and_says_so() {
    let mut spec = cmd("for /L %i in (1,1,3000) do @echo line %i");
    spec.stdout = Output::Capture(OutputLimits { max_bytes: 1000, ..OutputLimits::default() });
    let result = run(spec).await;
    assert_eq!(result.exit_code, Some(0));
    assert!(result.stdout.truncated);
    assert!(result.stdout.text.len() <= 1000);
    assert!(result.stdout.text.trim_end().ends_with("line 3000"), "{:?}", result.stdout.text);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_ends_the_whole_tree_through_the_job() {
    let mut spec = child("tree");
    spec.timeout = Some(Duration::from_millis(1500));
    spec.grace = Duration::from_millis(200);
    let started = Instant::now();
    let result = run(spec).await;
    assert!(result.timed_out);
    assert_eq!(result.signal, Some("SIGKILL"));
    assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
    let pids = pids(&result.stdout.text);
    assert_eq!(pids.len(), 2, "{:?}", result.stdout.text);
    for pid in pids {
        assert_gone(pid).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_ends_a_running_command_and_reports_it_killed() {
    let mut spec = child("tree");
    spec.grace = Duration::from_millis(300);
    let process = spawn(spec).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = String::new();
    while pids(&seen).len() < 2 {
        assert!(Instant::now() < deadline, "children never started: {seen:?}");
        seen.push_str(&process.read_output().stdout);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(process.state().status, Status::Running);
    assert!(process.kill(KillReason::Requested));
    let result = tokio::time::timeout(Duration::from_secs(30), process.wait()).await.unwrap();
    assert_eq!(process.state().status, Status::Killed);
    assert_eq!(result.signal, Some("SIGKILL"));
    assert!(!result.timed_out && !result.aborted);
    for pid in pids(&seen) {
        assert_gone(pid).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_program_fails_the_spawn_and_starts_nothing() {
    let spec = ProcessSpec::new(PathBuf::from(r"C:\no\such\program.exe"), std::env::temp_dir());
    let error = spawn(spec).err().expect("refused");
    assert_eq!(error.code(), "ERR_SHELL_EXEC_SPAWN_FAILED");
}

#[test]
fn a_private_directory_has_one_entry_for_this_user_and_inherits_nothing() {
    use windows_sys::Win32::Foundation::LocalFree;
    use windows_sys::Win32::Security::Authorization::{GetNamedSecurityInfoW, SE_FILE_OBJECT};
    use windows_sys::Win32::Security::{
        AclSizeInformation, GetAclInformation, GetSecurityDescriptorControl, ACL, ACL_SIZE_INFORMATION,
        DACL_SECURITY_INFORMATION, SE_DACL_PROTECTED,
    };

    let dir = std::env::temp_dir().join(format!("dsh-private-{}", std::process::id()));
    // A failed earlier run (pids repeat) may have left it.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    platform::restrict_to_owner(&dir).unwrap();
    // Files made in it still work for this user.
    std::fs::write(dir.join("spill"), "x").unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("spill")).unwrap(), "x");

    let name: Vec<u16> = dir.as_os_str().encode_wide().chain(Some(0)).collect();
    let (mut dacl, mut descriptor) = (std::ptr::null_mut::<ACL>(), std::ptr::null_mut());
    // SAFETY: a NUL-terminated path and valid out pointers; the descriptor is
    // freed below and `dacl` points into it.
    let status = unsafe {
        GetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut descriptor,
        )
    };
    assert_eq!(status, 0);
    // SAFETY: zeroed is a valid out structure of the size passed.
    let mut size: ACL_SIZE_INFORMATION = unsafe { std::mem::zeroed() };
    let (mut control, mut revision) = (0u16, 0u32);
    // SAFETY: `dacl` and `descriptor` came from the call above and are freed last.
    unsafe {
        assert_ne!(
            GetAclInformation(
                dacl,
                (&mut size as *mut ACL_SIZE_INFORMATION).cast(),
                std::mem::size_of::<ACL_SIZE_INFORMATION>() as u32,
                AclSizeInformation,
            ),
            0
        );
        assert_ne!(GetSecurityDescriptorControl(descriptor, &mut control, &mut revision), 0);
        LocalFree(descriptor);
    }
    std::fs::remove_dir_all(&dir).unwrap();
    if under_wine() {
        // Wine keeps file security as Unix modes and reports a made-up DACL;
        // this part is checked on real Windows (the release pipeline).
        return;
    }
    assert_eq!(size.AceCount, 1);
    assert_ne!(control & SE_DACL_PROTECTED, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_command_leaves_in_its_job_ends_when_the_grace_runs_out() {
    let mut spec = child("orphan");
    spec.grace = Duration::from_millis(500);
    let started = Instant::now();
    let result = run(spec).await;
    // The command's own exit, not the kill of what it left.
    assert_eq!(result.exit_code, Some(0));
    assert!(!result.timed_out);
    let pids = pids(&result.stdout.text);
    assert_eq!(pids.len(), 1, "{:?}", result.stdout.text);
    assert!(started.elapsed() >= Duration::from_millis(500), "published before the grace: {:?}", started.elapsed());
    assert_gone(pids[0]).await;
}

/// Wine keeps none of the job limits (run under wine 8, each case ran to its
/// timeout): these cases hold on Windows, and are skipped under wine.
fn job_limits_here() -> bool {
    if under_wine() {
        eprintln!("skipped under wine, which implements no job limit");
    }
    !under_wine()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_ends_a_command_at_its_cpu_time_and_the_result_names_the_limit() {
    if !job_limits_here() {
        return;
    }
    let mut spec = child("spin");
    spec.limits = crate::limits::Limits { cpu_seconds: Some(1), ..Default::default() };
    spec.timeout = Some(Duration::from_secs(20));
    let started = Instant::now();
    let result = run(spec).await;
    assert_eq!(result.limit, Some(crate::limits::Limit::Cpu), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_refuses_processes_past_its_limit_and_the_result_says_it_was_reached() {
    if !job_limits_here() {
        return;
    }
    let mut spec = child("tree");
    spec.limits = crate::limits::Limits { processes: Some(1), ..Default::default() };
    spec.timeout = Some(Duration::from_secs(20));
    let result = run(spec).await;
    // The test child's second process could not start, so it failed.
    assert_ne!(result.exit_code, Some(0), "{result:?}");
    assert!(result.limits_hit.contains(crate::limits::Limit::Processes), "{result:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_refuses_memory_past_its_limit_and_the_result_says_it_was_reached() {
    if !job_limits_here() {
        return;
    }
    let mut spec = child("allocate");
    spec.limits = crate::limits::Limits { memory_bytes: Some(256 << 20), ..Default::default() };
    spec.timeout = Some(Duration::from_secs(20));
    let result = run(spec).await;
    assert_ne!(result.exit_code, Some(0), "{result:?}");
    assert!(result.limits_hit.contains(crate::limits::Limit::Memory), "{result:?}");
}
