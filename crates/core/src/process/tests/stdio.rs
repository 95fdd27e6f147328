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
        // The end of the slave reads as EIO on Linux, as 0 bytes elsewhere.
        while let Ok(read @ 1..) = master.read(&mut chunk) {
            bytes.extend_from_slice(&chunk[..read]);
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
