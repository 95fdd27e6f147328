//! The guardian: a small `/bin/sh` process that outlives its host only to end
//! the host's commands, where they run as the host's own children (no
//! supervisor: macOS, or Linux without the supervisor program; under the
//! supervisor the host's sockets tell of its death instead). The host holds
//! the write end of a pipe to the guardian's stdin and writes `+<pgid>` when
//! a command's group starts and `-<pgid>` right before its leader is reaped.
//! When the pipe closes because the host is gone — whatever killed it:
//! SIGKILL, an out-of-memory crash, `abort()`, a signal nothing handles — the
//! guardian SIGKILLs every group still listed, then exits. At an orderly exit
//! the host has already ended its groups (`process::teardown`) and tells the
//! guardian so (`x`), so a group id reused after the host's children were
//! reaped is never signalled.
//!
//! Invariants:
//! - messages for one group are written in the order `+` then `-`, and `-` is
//!   written before the leader is reaped, so the guardian never holds a group
//!   id the kernel could have handed to someone else while the host lived;
//! - the write end is close-on-exec and non-blocking: commands never hold it
//!   (their exit cannot look like the host's), and a guardian that stops
//!   reading never blocks a spawn. A write that fails replaces the guardian:
//!   the old one is SIGKILLed (so it signals nothing) and a new one is given
//!   every live group.
//!
//! A command's descendant that leaves its group (`setsid`) is not a group
//! member: only a reaper reaches it.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use crate::process::sync::lock;

/// What the guardian runs: it reads the host's messages, and on end of input
/// SIGKILLs the groups still listed. It ignores the terminal's signals, which
/// reach it only when its own group is the foreground one.
const SCRIPT: &str = r#"trap '' HUP INT QUIT
live=' '
while IFS= read -r line; do
  case $line in
    +*) live="$live${line#+} " ;;
    -*) p=${line#-}
        case $live in *" $p "*) live="${live%% $p *} ${live#* $p }" ;; esac ;;
    x) exit 0 ;;
  esac
done
for p in $live; do kill -s KILL -- "-$p" 2>/dev/null; done
"#;

struct Guardian {
    pid: u32,
    pipe: File,
}

/// The running guardian, made with the first command.
static GUARDIAN: Mutex<Option<Guardian>> = Mutex::new(None);

/// Tells the guardian that group `pgid` started. `live` is every live group
/// (this one included), replayed to a new guardian when one has to be made.
pub(crate) fn started(pgid: u32, live: &[u32]) {
    send(&announce(pgid), live);
}

fn announce(pgid: u32) -> String {
    format!("+{pgid}\n")
}

/// Tells the guardian that group `pgid`'s leader is about to be reaped.
/// `live` is every live group still to watch (this one no longer).
pub(crate) fn ending(pgid: u32, live: &[u32]) {
    send(&format!("-{pgid}\n"), live);
}

/// The host is exiting in order and has ended its groups: the guardian exits
/// without signalling anything.
pub(crate) fn dismiss() {
    // Never block during exit: a guardian in use elsewhere is left to see the pipe close.
    if let Ok(mut guardian) = GUARDIAN.try_lock() {
        if let Some(guardian) = guardian.as_mut() {
            let _ = guardian.pipe.write_all(b"x\n");
        }
    }
}

fn send(line: &str, live: &[u32]) {
    let mut guardian = lock(&GUARDIAN);
    if let Some(running) = guardian.as_mut() {
        if running.pipe.write_all(line.as_bytes()).is_ok() {
            return;
        }
        // It stopped reading or is gone: it must not act on a stale list.
        retire(guardian.take().expect("checked above"));
    }
    // A new guardian learns the whole live set, this message's effect included.
    *guardian = start(live).ok();
}

/// Starts a guardian watching `live`.
fn start(live: &[u32]) -> io::Result<Guardian> {
    let (read, write) = pipe()?;
    let child = Command::new("/bin/sh")
        .args(["-c", SCRIPT])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/")
        .process_group(0)
        .stdin(Stdio::from(read))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let mut guardian = Guardian { pid: child.id(), pipe: File::from(write) };
    // Its exit is only ever of interest to the kernel: the handle is not waited on here.
    drop(child);
    let replay: String = live.iter().map(|&pgid| announce(pgid)).collect();
    if let Err(error) = guardian.pipe.write_all(replay.as_bytes()) {
        retire(guardian);
        return Err(error);
    }
    Ok(guardian)
}

/// SIGKILLs a guardian that can no longer be told about groups, so that it
/// never signals a group it holds a stale record of, and reaps it.
fn retire(guardian: Guardian) {
    // SAFETY: the guardian is this process's unreaped child, so the pid is its own.
    unsafe { libc::kill(guardian.pid as libc::pid_t, libc::SIGKILL) };
    drop(guardian.pipe);
    std::thread::spawn(move || {
        let mut status = 0;
        // SAFETY: waits for this very child only.
        unsafe { libc::waitpid(guardian.pid as libc::pid_t, &mut status, 0) };
    });
}

/// A pipe whose write end (the host's) is close-on-exec and non-blocking; the
/// read end becomes the guardian's stdin.
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe() writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here alone.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    add_flag(&read, libc::F_GETFD, libc::F_SETFD, libc::FD_CLOEXEC)?;
    add_flag(&write, libc::F_GETFD, libc::F_SETFD, libc::FD_CLOEXEC)?;
    add_flag(&write, libc::F_GETFL, libc::F_SETFL, libc::O_NONBLOCK)?;
    Ok((read, write))
}

/// Adds `flag` to a descriptor's flags, read with `get` and written with `set`
/// (`F_GETFD`/`F_SETFD` or `F_GETFL`/`F_SETFL`).
fn add_flag(fd: &OwnedFd, get: libc::c_int, set: libc::c_int, flag: libc::c_int) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor the caller owns.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), get) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd.as_raw_fd(), set, flags | flag) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
