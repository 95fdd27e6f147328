//! Where the command's standard streams go: stdin written then closed, raw
//! pipes handed to the caller, streams inherited from the host, and a
//! terminal the command leads its session on.

use std::fs;

use super::{run, sh};
use crate::process::{containment, spawn, Input, Output, OutputRead, Pipes, ProcessSpec, StreamKind};

#[tokio::test(flavor = "multi_thread")]
async fn writes_stdin_then_closes_it() {
    let mut spec = ProcessSpec::new("/bin/cat", "/");
    spec.stdin = Input::Data(b"hello\nworld".to_vec());
    let result = run(spec).await;
    assert_eq!(result.stdout.text, "hello\nworld");
    assert_eq!(result.exit_code, Some(0));

    // More than a pipe holds, counted after the close.
    let mut spec = sh("wc -c");
    spec.stdin = Input::Data(vec![b'x'; 1 << 20]);
    assert_eq!(run(spec).await.stdout.text.trim(), "1048576");

    // A child that never reads: the write ends in EPIPE, which is ignored.
    let mut spec = sh("exit 7");
    spec.stdin = Input::Data(vec![b'x'; 1 << 20]);
    assert_eq!(run(spec).await.exit_code, Some(7));

    // No stdin: /dev/null.
    assert_eq!(run(ProcessSpec::new("/bin/cat", "/")).await.stdout.text, "");
}

#[tokio::test(flavor = "multi_thread")]
async fn raw_pipes_go_to_the_caller_and_nothing_of_them_is_kept_here() {
    use std::io::{Read, Write};
    let mut spec = sh("tr a-z A-Z; echo done >&2");
    spec.stdin = Input::Pipe;
    spec.stdout = Output::Pipe;
    spec.stderr = Output::Pipe;
    let process = spawn(spec).unwrap();
    let Pipes { stdin, stdout, stderr, .. } = process.take_pipes();
    let (mut stdin, mut stdout, mut stderr) =
        (fs::File::from(stdin.unwrap()), fs::File::from(stdout.unwrap()), fs::File::from(stderr.unwrap()));
    assert!(process.take_pipes().stdout.is_none(), "taken once");
    stdin.write_all(b"hello").unwrap();
    drop(stdin);
    let (mut out, mut err) = (String::new(), String::new());
    stdout.read_to_string(&mut out).unwrap();
    stderr.read_to_string(&mut err).unwrap();
    assert_eq!((out.as_str(), err.as_str()), ("HELLO", "done\n"));
    let result = process.wait().await;
    assert_eq!(result.exit_code, Some(0));
    assert_eq!((result.stdout.text.as_str(), result.stderr.text.as_str()), ("", ""));
    assert_eq!(process.read_from(StreamKind::Stdout, 0), OutputRead::default());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_inherited_stream_is_the_hosts_own() {
    // The child writes to the host's stderr: nothing is captured, and nothing is handed over.
    let mut spec = sh("echo to-the-host >&2; echo captured");
    spec.stderr = Output::Inherit;
    let process = spawn(spec).unwrap();
    assert!(process.take_pipes().stderr.is_none());
    let result = process.wait().await;
    assert_eq!((result.stdout.text.as_str(), result.stderr.text.as_str()), ("captured\n", ""));
}

/// A command on a terminal, with the supervisor and without: it leads a
/// session of its own whose controlling terminal is the slave, of the asked
/// size; the caller reads its output from the master until the slave is
/// closed (EIO), and the command's pid is the session's.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_command_on_a_terminal_leads_its_session_with_the_terminal_as_its_own() {
    use std::io::Read;
    for supervised in [true, false] {
        if !supervised {
            containment::TEST_SUPERVISOR.set(Some(None));
        }
        let mut spec = sh("stty size; tty; ps -o sid= -p $$; [ -t 0 ] && [ -t 2 ] && echo all-three");
        spec.terminal = Some(crate::process::terminal::TerminalSize { rows: 7, cols: 42 });
        let process = spawn(spec).expect("spawn on a terminal");
        let terminal = process.take_pipes().terminal.expect("a terminal");
        let mut master = fs::File::from(terminal.master);
        let mut bytes = Vec::new();
        let mut chunk = [0; 4096];
        // The end of the slave reads as EIO on Linux, as 0 bytes elsewhere;
        // the master does not block (its input relay made it so).
        loop {
            match master.read(&mut chunk) {
                Ok(read @ 1..) => bytes.extend_from_slice(&chunk[..read]),
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                _ => break,
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.split("\r\n").map(str::trim).collect();
        assert!(lines.contains(&"7 42"), "supervised: {supervised}: {text:?}");
        assert!(lines.iter().any(|line| line.starts_with("/dev/")), "supervised: {supervised}: {text:?}");
        assert!(lines.contains(&terminal.pid.to_string().as_str()), "the command's pid is its session's: {text:?}");
        assert!(lines.contains(&"all-three"), "supervised: {supervised}: {text:?}");
        assert_eq!(process.wait().await.exit_code, Some(0));
    }
}

/// A terminal's input is a pipe relayed to its master: a command that never
/// reads (a raw terminal, so the kernel holds the input back) fills it, and
/// the caller's writes then fail with `EAGAIN` instead of waiting; once the
/// command is gone the relay ends, and a write fails with `EPIPE`.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_terminals_input_never_blocks_its_writer_and_closes_when_the_terminal_ends() {
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    let mut spec = sh("stty raw -echo; exec sleep 1");
    spec.terminal = Some(crate::process::terminal::TerminalSize { rows: 24, cols: 80 });
    let process = spawn(spec).expect("spawn on a terminal");
    let terminal = process.take_pipes().terminal.expect("a terminal");
    let input = terminal.input.expect("an input pipe");
    let fd = input.as_raw_fd();
    // SAFETY: sets a flag on a descriptor this test owns.
    unsafe { libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK) };
    let write = |bytes: &[u8]| {
        // SAFETY: writes from a live buffer of the length given.
        let wrote = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if wrote < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(wrote as usize)
        }
    };
    let chunk = [b'x'; 4096];
    let mut taken = 0;
    let full = loop {
        match write(&chunk) {
            Ok(wrote) => taken += wrote,
            Err(error) => break error,
        }
        assert!(taken < 64 << 20, "64 MiB taken by a command that reads nothing");
        tokio::task::yield_now().await;
    };
    assert_eq!(full.kind(), std::io::ErrorKind::WouldBlock, "after {taken} bytes");
    assert_eq!(process.wait().await.exit_code, Some(0));
    let deadline = Instant::now() + Duration::from_secs(10);
    let ended = loop {
        match write(b"x") {
            Err(error) if error.raw_os_error() == Some(libc::EPIPE) => break true,
            _ if Instant::now() > deadline => break false,
            _ => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    };
    assert!(ended, "the relay ended with the terminal, closing the pipe's read end");
    drop(terminal.master);
}
