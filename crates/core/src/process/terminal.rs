//! Commands on a pseudo-terminal (POSIX): the terminal's size, opening one,
//! making it a command's controlling terminal, and what the host may ask of
//! a running one: its foreground process group, and whether that group is
//! waiting for input (Linux, from `/proc`).
//!
//! The command leads a session of its own whose controlling terminal is the
//! slave; the host keeps only the master, which it reads the command's
//! output from. Its input goes through a pipe ([`input_relay`]): Node's
//! streams write a terminal synchronously, so a command that never reads
//! would stall the host's thread, while a pipe is written without waiting
//! and pushes back (`write()` returns `false`, then `'drain'`).

/// A terminal's size, in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalSize {
    /// Rows (lines).
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

#[cfg(unix)]
pub use unix::*;

#[cfg(not(unix))]
pub use elsewhere::*;

#[cfg(unix)]
mod unix {
    use std::ffi::{CStr, OsStr};
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;

    use super::TerminalSize;

    /// A new pseudo-terminal: both ends close-on-exec, neither this process's
    /// controlling terminal.
    pub(crate) struct Pty {
        /// The host's end.
        pub(crate) master: OwnedFd,
        /// The command's end, open here only until the command has it.
        pub(crate) slave: OwnedFd,
        /// Where the reaper's command opens the slave again, to make it its
        /// controlling terminal (the supervisor runs on Linux only).
        #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
        pub(crate) path: PathBuf,
    }

    fn check(result: libc::c_int) -> io::Result<libc::c_int> {
        if result < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(result)
        }
    }

    /// Opens a pseudo-terminal of `size`.
    pub(crate) fn open(size: TerminalSize) -> io::Result<Pty> {
        // SAFETY: posix_openpt returns a new descriptor or -1.
        let fd = check(unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | OPEN_CLOEXEC) })?;
        // SAFETY: just opened, owned here alone.
        let master = unsafe { OwnedFd::from_raw_fd(fd) };
        set_cloexec(&master)?;
        // SAFETY: plain calls on the master we own; the winsize is fully set.
        unsafe {
            check(libc::grantpt(fd))?;
            check(libc::unlockpt(fd))?;
            let window = libc::winsize { ws_row: size.rows, ws_col: size.cols, ws_xpixel: 0, ws_ypixel: 0 };
            check(libc::ioctl(fd, libc::TIOCSWINSZ, &window))?;
        }
        let path = slave_path(fd)?;
        let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
        // SAFETY: opens the slave by its NUL-terminated path.
        let slave = check(unsafe { libc::open(c_path.as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) })?;
        // SAFETY: just opened, owned here alone.
        Ok(Pty { master, slave: unsafe { OwnedFd::from_raw_fd(slave) }, path })
    }

    // Linux takes O_CLOEXEC in posix_openpt; elsewhere it is set just after.
    #[cfg(target_os = "linux")]
    const OPEN_CLOEXEC: libc::c_int = libc::O_CLOEXEC;
    #[cfg(not(target_os = "linux"))]
    const OPEN_CLOEXEC: libc::c_int = 0;

    fn set_cloexec(fd: &OwnedFd) -> io::Result<()> {
        // SAFETY: sets a flag on a descriptor we own.
        check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) }).map(drop)
    }

    /// The slave's path (`ptsname_r` on Linux).
    #[cfg(target_os = "linux")]
    fn slave_path(master: RawFd) -> io::Result<PathBuf> {
        let mut name = [0 as libc::c_char; 128];
        // SAFETY: ptsname_r writes at most `name.len()` bytes, NUL included.
        let failed = unsafe { libc::ptsname_r(master, name.as_mut_ptr(), name.len()) };
        if failed != 0 {
            return Err(io::Error::from_raw_os_error(failed));
        }
        // SAFETY: ptsname_r succeeded, so `name` holds a NUL-terminated path.
        Ok(PathBuf::from(OsStr::from_bytes(unsafe { CStr::from_ptr(name.as_ptr()) }.to_bytes())))
    }

    /// The slave's path (`ptsname`, whose static buffer a lock guards).
    #[cfg(not(target_os = "linux"))]
    fn slave_path(master: RawFd) -> io::Result<PathBuf> {
        static PTSNAME: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _turn = crate::process::sync::lock(&PTSNAME);
        // SAFETY: ptsname returns null or its static buffer, read before the lock goes.
        let name = unsafe { libc::ptsname(master) };
        if name.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a NUL-terminated path in ptsname's buffer, copied at once.
        Ok(PathBuf::from(OsStr::from_bytes(unsafe { CStr::from_ptr(name) }.to_bytes())))
    }

    /// The terminal's input as a pipe: the write end, for the caller to
    /// write the command's input to, and the relay, a future (to run on the
    /// runtime whose context this is called in) that copies what arrives to
    /// `master` without ever waiting on it. The relay ends when the pipe's
    /// write end closes or the terminal does (a write fails with `EIO` once
    /// no process holds the slave). A command that never reads fills the
    /// terminal's buffer, then the pipe's: the caller's writes then wait,
    /// its thread never does.
    pub(crate) fn input_relay(master: &OwnedFd) -> io::Result<(OwnedFd, impl std::future::Future<Output = ()>)> {
        use tokio::io::unix::AsyncFd;
        use tokio::io::AsyncReadExt;

        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe writes.
        check(unsafe { libc::pipe(fds.as_mut_ptr()) })?;
        // SAFETY: both were just created and are owned here alone.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        set_cloexec(&read)?;
        set_cloexec(&write)?;
        let master = master.try_clone()?;
        // On the master's open file description, which the caller's reads
        // share: they wait for readiness first, so they are unaffected.
        // SAFETY: sets a flag on a descriptor we own.
        let flags = check(unsafe { libc::fcntl(master.as_raw_fd(), libc::F_GETFL) })?;
        // SAFETY: as above.
        check(unsafe { libc::fcntl(master.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) })?;
        // SAFETY: the OwnedFd keeps the descriptor open for the AsyncFd's lifetime.
        let master = unsafe { AsyncFd::register_with_interest(master, tokio::io::Interest::WRITABLE) }
            .map_err(|error| error.into_parts().1)?;
        let mut input = tokio::net::unix::pipe::Receiver::from_owned_fd(read)?;
        let relay = async move {
            let mut buf = vec![0; 16 * 1024];
            loop {
                let len = match input.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(len) => len,
                };
                let mut written = 0;
                while written < len {
                    let Ok(mut ready) = master.writable().await else { return };
                    // No process holds the slave any more (a hang-up, which
                    // stays ready for good): the terminal ended.
                    if ready.ready().is_write_closed() {
                        return;
                    }
                    let chunk = &buf[written..len];
                    match ready.try_io(|fd| {
                        // SAFETY: writes from a live buffer of the length given.
                        let wrote = unsafe { libc::write(fd.as_raw_fd(), chunk.as_ptr().cast(), chunk.len()) };
                        if wrote < 0 {
                            Err(io::Error::last_os_error())
                        } else {
                            Ok(wrote as usize)
                        }
                    }) {
                        Ok(Ok(0)) => return,
                        Ok(Ok(wrote)) => written += wrote,
                        Ok(Err(error)) if error.kind() == io::ErrorKind::Interrupted => {}
                        // EIO: the terminal ended.
                        Ok(Err(_)) => return,
                        // Not writable after all: wait again.
                        Err(_would_block) => {}
                    }
                }
            }
        };
        Ok((write, relay))
    }

    /// In a child between fork and exec, with the slave on 0: a new session
    /// whose controlling terminal it is. Only async-signal-safe calls.
    pub(crate) fn become_session_leader_on_stdin() -> io::Result<()> {
        // `ioctl`'s request type differs: the libc crate gives macOS's
        // TIOCSCTTY as a `u32`, where its `ioctl` takes a `c_ulong`.
        #[cfg(target_os = "linux")]
        const SET_CONTROLLING_TERMINAL: libc::Ioctl = libc::TIOCSCTTY;
        #[cfg(not(target_os = "linux"))]
        const SET_CONTROLLING_TERMINAL: libc::c_ulong = libc::TIOCSCTTY as libc::c_ulong;
        // SAFETY: setsid and ioctl are async-signal-safe and touch only this process.
        unsafe {
            check(libc::setsid())?;
            check(libc::ioctl(0, SET_CONTROLLING_TERMINAL, 0))?;
        }
        Ok(())
    }

    /// The foreground process group of the terminal whose master is
    /// `master`, or `None` when it has none (or `master` is no terminal).
    pub fn foreground_group(master: RawFd) -> Option<u32> {
        // SAFETY: tcgetpgrp only reads the terminal's state; a descriptor that
        // is not a terminal fails with ENOTTY.
        let pgid = unsafe { libc::tcgetpgrp(master) };
        u32::try_from(pgid).ok().filter(|&pgid| pgid > 0)
    }

    /// Where there is no `/proc` (macOS): whether a group waits for input
    /// cannot be proved, so never.
    #[cfg(not(target_os = "linux"))]
    pub fn waits_for_input(_pgid: u32) -> bool {
        false
    }

    #[cfg(target_os = "linux")]
    pub use super::linux::waits_for_input;
}

#[cfg(target_os = "linux")]
mod linux {
    /// Whether a thread of a live process in group `pgid` is blocked reading
    /// its standard input: in `read(0, …)`, or in `select`, `poll` or
    /// `epoll_wait` on a set that holds descriptor 0 (what readline, a REPL or
    /// `cat` do while waiting for a line). Read from `/proc/<pid>/task/<tid>/syscall`
    /// (and the sets from `/proc/<pid>/mem`), which this user may read of its
    /// commands; `false` whenever something cannot be read.
    pub fn waits_for_input(pgid: u32) -> bool {
        let Ok(entries) = std::fs::read_dir("/proc") else { return false };
        entries.flatten().filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok()).any(|pid| {
            // SAFETY: getpgid only reads; a pid that is gone fails with ESRCH.
            let member = unsafe { libc::getpgid(pid) } == pgid as libc::pid_t;
            member && threads(pid).any(|tid| blocked_on_stdin(pid, tid))
        })
    }

    fn threads(pid: i32) -> impl Iterator<Item = i32> {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
    }

    /// The syscall numbers that wait for input, on this architecture.
    #[cfg(target_arch = "x86_64")]
    mod calls {
        pub(super) const READ: i64 = 0;
        pub(super) const POLL: Option<i64> = Some(7);
        pub(super) const SELECT: Option<i64> = Some(23);
        pub(super) const EPOLL_WAIT: Option<i64> = Some(232);
        pub(super) const PSELECT6: i64 = 270;
        pub(super) const PPOLL: i64 = 271;
        pub(super) const EPOLL_PWAIT: i64 = 281;
    }
    #[cfg(not(target_arch = "x86_64"))]
    mod calls {
        // The generic table (aarch64, riscv64, …): no poll, select or epoll_wait.
        pub(super) const READ: i64 = 63;
        pub(super) const POLL: Option<i64> = None;
        pub(super) const SELECT: Option<i64> = None;
        pub(super) const EPOLL_WAIT: Option<i64> = None;
        pub(super) const PSELECT6: i64 = 72;
        pub(super) const PPOLL: i64 = 73;
        pub(super) const EPOLL_PWAIT: i64 = 22;
    }

    fn blocked_on_stdin(pid: i32, tid: i32) -> bool {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall")) else { return false };
        let mut fields = text.split_whitespace();
        let Some(number) = fields.next().and_then(|field| field.parse::<i64>().ok()) else { return false };
        let args: Vec<u64> =
            fields.take(6).filter_map(|field| u64::from_str_radix(field.trim_start_matches("0x"), 16).ok()).collect();
        let arg = |index: usize| args.get(index).copied().unwrap_or(0);
        if number == calls::READ {
            arg(0) == 0
        } else if Some(number) == calls::SELECT || number == calls::PSELECT6 {
            // fd 0 is the lowest bit of the read set's first byte.
            arg(0) >= 1 && read_memory(pid, arg(1), 1).is_some_and(|set| set[0] & 1 == 1)
        } else if Some(number) == calls::POLL || number == calls::PPOLL {
            poll_holds_stdin(pid, arg(0), arg(1))
        } else if Some(number) == calls::EPOLL_WAIT || number == calls::EPOLL_PWAIT {
            epoll_holds_stdin(pid, arg(0))
        } else {
            false
        }
    }

    /// Whether the `count` pollfds at `address` ask for input on fd 0.
    fn poll_holds_stdin(pid: i32, address: u64, count: u64) -> bool {
        let count = count.min(1024) as usize;
        let Some(fds) = read_memory(pid, address, count * 8) else { return false };
        fds.chunks_exact(8).any(|pollfd| {
            let fd = i32::from_ne_bytes([pollfd[0], pollfd[1], pollfd[2], pollfd[3]]);
            let events = i16::from_ne_bytes([pollfd[4], pollfd[5]]);
            fd == 0 && events & libc::POLLIN != 0
        })
    }

    /// Whether epoll instance `epfd` of `pid` watches fd 0.
    fn epoll_holds_stdin(pid: i32, epfd: u64) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{epfd}")).is_ok_and(|info| {
            info.lines().any(|line| {
                line.trim_start().strip_prefix("tfd:").is_some_and(|rest| rest.split_whitespace().next() == Some("0"))
            })
        })
    }

    fn read_memory(pid: i32, address: u64, len: usize) -> Option<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        if address == 0 || len == 0 {
            return None;
        }
        let file = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
        let mut bytes = vec![0; len];
        let read = file.read_at(&mut bytes, address).ok()?;
        bytes.truncate(read);
        (read == len).then_some(bytes)
    }
}

#[cfg(not(unix))]
mod elsewhere {
    use std::future::Future;
    use std::io;

    /// No terminals here: never called.
    pub(crate) fn input_relay<Fd>(_master: &Fd) -> io::Result<(Fd, impl Future<Output = ()>)> {
        Err::<(Fd, std::future::Ready<()>), _>(io::Error::from(io::ErrorKind::Unsupported))
    }

    /// No terminals here: never one.
    pub fn foreground_group(_master: i32) -> Option<u32> {
        None
    }

    /// No terminals here: never one.
    pub fn waits_for_input(_pgid: u32) -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::*;

    /// Polls `condition` for up to 5 s.
    fn eventually(condition: impl Fn() -> bool) -> bool {
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if condition() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn a_new_terminal_has_the_asked_size_a_slave_path_and_no_foreground_group_yet() {
        let pty = open(TerminalSize { rows: 12, cols: 34 }).expect("a pseudo-terminal");
        assert!(pty.path.starts_with("/dev/pts"), "{}", pty.path.display());
        let mut window = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: reads the slave's size into a valid winsize.
        assert_eq!(unsafe { libc::ioctl(pty.slave.as_raw_fd(), libc::TIOCGWINSZ, &mut window) }, 0);
        assert_eq!((window.ws_row, window.ws_col), (12, 34));
        assert_eq!(foreground_group(pty.master.as_raw_fd()), None, "no session has it as its terminal");
        assert_eq!(foreground_group(-1), None, "not a descriptor");
    }

    #[test]
    fn a_group_blocked_reading_its_stdin_waits_for_input_and_a_sleeping_one_does_not() {
        let mut reader =
            Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::null()).process_group(0).spawn().unwrap();
        let mut sleeper = Command::new("sleep").arg("30").stdin(Stdio::piped()).process_group(0).spawn().unwrap();
        assert!(eventually(|| waits_for_input(reader.id())), "cat reads fd 0");
        assert!(!waits_for_input(sleeper.id()), "sleep reads nothing");
        assert!(!waits_for_input(u32::MAX >> 1), "no such group");
        for child in [&mut reader, &mut sleeper] {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}
