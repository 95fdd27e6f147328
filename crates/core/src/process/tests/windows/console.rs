//! Commands on a pseudo console (ConPTY), against this test binary started
//! again as the command. The command writes `CONOUT$` itself: wine passes
//! that through a pseudo console, where an ordinary command's standard
//! handles do not reach it (the JS terminal spec covers those on Windows).
//!
//! The cases take turns ([`TURN`]), so that the conhost
//! processes one of them sees are its own.

use std::io::Write;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::sync::Mutex;

use super::{assert_gone, child, pids, CHILD_MODE};
use crate::process::terminal::TerminalSize;
use crate::process::*;

/// What a copy of this test binary does on a pseudo console (see
/// `child_mode`): `console` writes its console's size and its pid to
/// `CONOUT$` and exits with 7; `console-tree` starts a `sleep` child, writes
/// both pids and sleeps; `console-handles` runs `console` on a pseudo console
/// six times in a row and writes its own handle count after the first and
/// after the last. Any other mode is not one of these.
pub(super) fn child_mode(mode: &str) {
    match mode {
        "console" => {
            let mut console = conout();
            let (rows, cols) = console_size(&console);
            write!(console, "SIZE {rows}x{cols} PID {}\r\n", std::process::id()).unwrap();
            console.flush().unwrap();
            std::process::exit(7);
        }
        "console-tree" => {
            let mut grandchild = std::process::Command::new(std::env::current_exe().unwrap());
            grandchild.args(super::child_args()).env(CHILD_MODE, "sleep");
            // Never waited for: the job ends it (and Windows has no zombies).
            #[allow(clippy::zombie_processes)]
            let grandchild = grandchild.spawn().unwrap();
            let mut console = conout();
            write!(console, "PID {}\r\nPID {}\r\n", std::process::id(), grandchild.id()).unwrap();
            console.flush().unwrap();
            std::thread::sleep(Duration::from_secs(60));
        }
        "console-handles" => {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            let mut counts = Vec::new();
            for round in 0..6 {
                let (output, result) =
                    runtime.block_on(on_console(child("console"), TerminalSize { rows: 24, cols: 80 }));
                assert_eq!(result.exit_code, Some(7), "round {round}: {output:?}");
                // Each console is closed on a thread of its own: give the last one its moment.
                std::thread::sleep(Duration::from_millis(300));
                if round == 0 || round == 5 {
                    counts.push(handle_count());
                }
            }
            println!("HANDLES {} {}", counts[0], counts[1]);
        }
        _ => {}
    }
}

/// This process's console screen buffer, opened by name: on a pseudo
/// console whatever the standard handles are.
fn conout() -> std::fs::File {
    std::fs::OpenOptions::new().read(true).write(true).open("CONOUT$").expect("CONOUT$")
}

/// The visible window of `console`: (rows, columns).
fn console_size(console: &std::fs::File) -> (i32, i32) {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::System::Console::{GetConsoleScreenBufferInfo, CONSOLE_SCREEN_BUFFER_INFO};
    // SAFETY: zeroed is a valid out structure; the handle is an open console buffer.
    let mut info: CONSOLE_SCREEN_BUFFER_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: as above; `info` is writable.
    assert_ne!(unsafe { GetConsoleScreenBufferInfo(console.as_raw_handle(), &mut info) }, 0);
    let window = info.srWindow;
    (i32::from(window.Bottom - window.Top) + 1, i32::from(window.Right - window.Left) + 1)
}

/// The text of a console's VT output as it would read on the screen, for
/// what these commands write (one line at a time): control sequences left
/// out, a cursor moved forward (`CSI n C`) read as that many spaces.
fn screen_text(vt: &str) -> String {
    let mut text = String::new();
    let mut chars = vt.chars();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            text.push(c);
            continue;
        }
        if chars.next() != Some('[') {
            continue;
        }
        let mut parameters = String::new();
        for c in chars.by_ref() {
            if ('@'..='~').contains(&c) {
                if c == 'C' {
                    text.push_str(&" ".repeat(parameters.parse().unwrap_or(1)));
                }
                break;
            }
            parameters.push(c);
        }
    }
    text
}

/// How many handles this process has open, as the system's handle table
/// lists them (`SystemExtendedHandleInformation`, which wine answers too,
/// where its `GetProcessHandleCount` always says 0).
fn handle_count() -> usize {
    use windows_sys::Wdk::System::SystemInformation::{NtQuerySystemInformation, SYSTEM_INFORMATION_CLASS};
    /// One entry of the table (`SYSTEM_HANDLE_TABLE_ENTRY_INFO_EX`).
    #[repr(C)]
    struct Entry {
        object: usize,
        process: usize,
        handle: usize,
        access: u32,
        back_trace: u16,
        object_type: u16,
        attributes: u32,
        reserved: u32,
    }
    const EXTENDED_HANDLE_INFORMATION: SYSTEM_INFORMATION_CLASS = 64;
    const INFO_LENGTH_MISMATCH: i32 = 0xC000_0004_u32 as i32;
    let mut buffer = vec![0usize; 1 << 16];
    loop {
        let bytes = std::mem::size_of_val(&buffer[..]) as u32;
        // SAFETY: a writable buffer of `bytes`; the length out pointer may be null.
        let status = unsafe {
            NtQuerySystemInformation(
                EXTENDED_HANDLE_INFORMATION,
                buffer.as_mut_ptr().cast(),
                bytes,
                std::ptr::null_mut(),
            )
        };
        if status == INFO_LENGTH_MISMATCH {
            buffer.resize(buffer.len() * 2, 0);
            continue;
        }
        assert!(status >= 0, "NtQuerySystemInformation: {status:#x}");
        break;
    }
    // The table: a count, a reserved word, then the entries.
    let count = buffer[0];
    let entries = (buffer.len() - 2) * std::mem::size_of::<usize>() / std::mem::size_of::<Entry>();
    assert!(count <= entries, "{count} entries in a buffer of {entries}");
    // SAFETY: the call filled `count` entries after the two words, within the buffer.
    let entries = unsafe { std::slice::from_raw_parts(buffer.as_ptr().add(2).cast::<Entry>(), count) };
    let own = entries.iter().filter(|entry| entry.process == std::process::id() as usize).count();
    assert!(own > 0, "this process has handles");
    own
}

/// The conhost processes this process started: its pseudo consoles.
fn conhosts() -> Vec<u32> {
    use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::System::Diagnostics::ToolHelp::{
        CreateToolhelp32Snapshot, Process32FirstW, Process32NextW, PROCESSENTRY32W, TH32CS_SNAPPROCESS,
    };
    let mut found = Vec::new();
    // SAFETY: a snapshot of the process table, closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
    assert_ne!(snapshot, INVALID_HANDLE_VALUE);
    // SAFETY: zeroed is a valid entry; its size is set as the API wants.
    let mut entry: PROCESSENTRY32W = unsafe { std::mem::zeroed() };
    entry.dwSize = std::mem::size_of::<PROCESSENTRY32W>() as u32;
    // SAFETY: an open snapshot and a sized entry, for each call.
    let mut more = unsafe { Process32FirstW(snapshot, &mut entry) } != 0;
    while more {
        let name = String::from_utf16_lossy(&entry.szExeFile);
        let name = name.trim_end_matches('\0');
        if entry.th32ParentProcessID == std::process::id() && name.eq_ignore_ascii_case("conhost.exe") {
            found.push(entry.th32ProcessID);
        }
        // SAFETY: as above.
        more = unsafe { Process32NextW(snapshot, &mut entry) } != 0;
    }
    // SAFETY: opened above, closed once.
    unsafe { CloseHandle(snapshot) };
    found
}

/// One case with pseudo consoles at a time (each case has a runtime of its own).
static TURN: Mutex<()> = Mutex::const_new(());

/// Runs `spec` on a pseudo console of `size`: everything read from the
/// terminal up to its end, and the result.
async fn on_console(mut spec: ProcessSpec, size: TerminalSize) -> (String, std::sync::Arc<RunResult>) {
    spec.terminal = Some(size);
    let process = spawn(spec).expect("spawn");
    let terminal = process.take_pipes().terminal.expect("a terminal");
    assert!(terminal.input.is_some(), "the console's input pipe is handed over at once");
    let output = read_to_end(terminal.master);
    let result = async { tokio::time::timeout(Duration::from_secs(60), process.wait()).await.expect("finished") };
    tokio::join!(output, result)
}

/// All a terminal's output, up to its end (within 30 s).
async fn read_to_end(master: crate::process::platform::Fd) -> String {
    let mut reader = crate::process::platform::async_reader(master).unwrap();
    let mut bytes = Vec::new();
    // A pipe whose writer is gone reads as broken rather than at its end.
    let read = tokio::time::timeout(Duration::from_secs(30), reader.read_to_end(&mut bytes)).await;
    assert!(read.is_ok(), "the terminal's output never ended: {:?}", String::from_utf8_lossy(&bytes));
    String::from_utf8_lossy(&bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_on_a_pseudo_console_is_read_through_the_terminal_with_the_asked_size_and_its_exit_code() {
    let _turn = TURN.lock().await;
    let before = conhosts();
    let (output, result) = on_console(child("console"), TerminalSize { rows: 33, cols: 101 }).await;
    assert_eq!(result.exit_code, Some(7), "{output:?}");
    // What the console shows arrives as VT sequences.
    assert!(output.contains("\x1b["), "{output:?}");
    let screen = screen_text(&output);
    assert!(screen.contains("SIZE 33x101"), "{screen:?} from {output:?}");
    assert_eq!(pids(&screen).len(), 1, "{screen:?}");
    // The console was closed at the exit: its conhost is gone too.
    for conhost in conhosts().into_iter().filter(|pid| !before.contains(pid)) {
        assert_gone(conhost).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_hangs_up_a_console_and_ends_the_commands_tree_and_its_conhost() {
    let _turn = TURN.lock().await;
    let before = conhosts();
    let mut spec = child("console-tree");
    spec.terminal = Some(TerminalSize { rows: 24, cols: 80 });
    spec.grace = Duration::from_secs(2);
    let process = spawn(spec).expect("spawn");
    let terminal = process.take_pipes().terminal.expect("a terminal");
    let started = conhosts().into_iter().filter(|pid| !before.contains(pid)).collect::<Vec<_>>();
    assert_eq!(started.len(), 1, "one conhost for the console: {started:?}");
    let mut reader = crate::process::platform::async_reader(terminal.master).unwrap();
    let (mut seen, mut buf) = (String::new(), [0u8; 4096]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while pids(&screen_text(&seen)).len() < 2 {
        assert!(Instant::now() < deadline, "the tree never started: {seen:?}");
        let read = tokio::time::timeout(Duration::from_secs(30), reader.read(&mut buf)).await.unwrap().unwrap();
        assert_ne!(read, 0, "the output ended early: {seen:?}");
        seen.push_str(&String::from_utf8_lossy(&buf[..read]));
    }
    assert!(process.kill(KillReason::Requested));
    let result = tokio::time::timeout(Duration::from_secs(30), process.wait()).await.expect("finished");
    // The graceful step is the console's hang-up: the leader ends on
    // CTRL_CLOSE_EVENT within the grace, not by the job's kill (SIGKILL),
    // which ends what is left after it. The exit is what the hang-up made of
    // it (wine: a clean one); the status is the kill's.
    assert_eq!(result.signal, None, "{result:?}");
    assert_eq!(process.state().status, Status::Killed, "{result:?}");
    for pid in pids(&screen_text(&seen)) {
        assert_gone(pid).await;
    }
    assert_gone(started[0]).await;
    // And the terminal's output reaches its end.
    let mut rest = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(30), reader.read_to_end(&mut rest)).await;
    assert!(ended.is_ok(), "the output never ended");
}

#[test]
fn pseudo_consoles_leave_no_handle_behind() {
    let _turn = TURN.blocking_lock();
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(super::child_args())
        .env(CHILD_MODE, "console-handles")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let counts: Vec<u32> = stdout
        .lines()
        .find_map(|line| line.split("HANDLES ").nth(1))
        .expect("the counts")
        .split_whitespace()
        .map(|count| count.parse().unwrap())
        .collect();
    // After the first console, five more leave the count where it was.
    assert!(counts[1] <= counts[0], "handles after the first console and after six: {counts:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_terminal_size_past_what_a_console_holds_fails_the_spawn() {
    let mut spec = child("console");
    spec.terminal = Some(TerminalSize { rows: 24, cols: 40_000 });
    let error = spawn(spec).err().expect("refused");
    assert_eq!(error.code(), "ERR_SHELL_EXEC_SPAWN_FAILED");
    assert!(error.to_string().contains("32767"), "{error}");
}
