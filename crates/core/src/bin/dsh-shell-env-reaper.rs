//! `dsh-shell-env-reaper GRACE_MS PROGRAM [ARG…]`: runs one command so that
//! none of its descendants can outlive it, on Linux.
//!
//! The spawner starts this program as the leader of the command's process
//! group; it makes itself a child subreaper (`PR_SET_CHILD_SUBREAPER`), starts
//! PROGRAM as its child with its own environment, and then owns every process
//! the command ever creates: a descendant that leaves the group (`setsid`,
//! `setpgid`) or double-forks is orphaned to this process, not to init.
//!
//! Invariants (what the spawner relies on):
//! - this process exits only when it has no child left, so at its exit no
//!   descendant of the command runs (unless it was SIGKILLed itself);
//! - it exits as PROGRAM did: the same code, or by the same signal;
//! - after PROGRAM exits, whatever is left gets SIGTERM (and SIGCONT, so that a
//!   stopped process sees it), and SIGKILL after GRACE_MS, as the spawner does
//!   for a group that outlives its leader;
//! - SIGUSR1 (the spawner's hard kill, and the guardian's at the host's death)
//!   SIGKILLs every descendant at once;
//! - SIGTERM (followed by SIGCONT), SIGINT, SIGHUP and SIGQUIT are passed on to
//!   every descendant: the spawner sends its SIGTERM to this process alone, so
//!   a command started after the signal arrived still gets it;
//! - it holds none of the command's pipes open: its stdin, stdout and stderr
//!   become `/dev/null` once PROGRAM runs.
//!
//! It is single-threaded, installs no signal handler (signals are read from a
//! signalfd) and uses only `libc` beside the standard library.

#[cfg(target_os = "linux")]
fn main() {
    linux::main()
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("dsh-shell-env-reaper: only Linux has child subreapers");
    std::process::exit(127);
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{HashMap, HashSet};
    use std::ffi::{CString, OsString};
    use std::io;
    use std::mem::MaybeUninit;
    use std::os::unix::ffi::OsStringExt;
    use std::ptr;
    use std::time::{Duration, Instant};

    /// How often descendants are looked for again while they are being killed:
    /// a killed process's children are orphaned to us a moment later.
    const KILL_SCAN_INTERVAL: Duration = Duration::from_millis(5);

    /// The signals this process handles itself, through a signalfd.
    const HANDLED: [libc::c_int; 6] =
        [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1];

    pub(super) fn main() {
        let args: Vec<OsString> = std::env::args_os().skip(1).collect();
        let (grace, argv) = match parse(args) {
            Some(parsed) => parsed,
            None => fail(2, "usage: dsh-shell-env-reaper GRACE_MS PROGRAM [ARG...]"),
        };
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
            fail(126, &format!("cannot become a child subreaper: {}", io::Error::last_os_error()));
        }
        let signals = handled_set();
        // SAFETY: `signals` is an initialised set; the old mask is not wanted.
        unsafe { libc::sigprocmask(libc::SIG_BLOCK, &signals, ptr::null_mut()) };
        // SAFETY: a new descriptor for the blocked set.
        let signal_fd = unsafe { libc::signalfd(-1, &signals, libc::SFD_CLOEXEC) };
        if signal_fd < 0 {
            fail(126, &format!("cannot watch signals: {}", io::Error::last_os_error()));
        }
        let child = match start(&argv) {
            Ok(child) => child,
            Err(error) => {
                let code = if error.kind() == io::ErrorKind::NotFound { 127 } else { 126 };
                fail(code, &format!("cannot run {}: {error}", argv[0].to_string_lossy()))
            }
        };
        release_stdio();
        Reaper { child, grace, signal_fd, status: None, left_behind: false, term_due: None, killing: false }.run()
    }

    fn parse(args: Vec<OsString>) -> Option<(Duration, Vec<CString>)> {
        let mut args = args.into_iter();
        let grace = args.next()?.into_string().ok()?.parse::<u64>().ok()?;
        let argv = args.map(|arg| CString::new(arg.into_vec()).ok()).collect::<Option<Vec<_>>>()?;
        (!argv.is_empty()).then_some((Duration::from_millis(grace), argv))
    }

    fn fail(code: i32, message: &str) -> ! {
        eprintln!("dsh-shell-env-reaper: {message}");
        std::process::exit(code)
    }

    fn handled_set() -> libc::sigset_t {
        let mut set = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigemptyset initialises the set; sigaddset only adds to it.
        unsafe {
            libc::sigemptyset(set.as_mut_ptr());
            for signal in HANDLED {
                libc::sigaddset(set.as_mut_ptr(), signal);
            }
            set.assume_init()
        }
    }

    /// Starts PROGRAM in this process group, with this environment, the default
    /// disposition for every signal handled here and an empty signal mask.
    fn start(argv: &[CString]) -> io::Result<libc::pid_t> {
        let mut pointers: Vec<*mut libc::c_char> = argv.iter().map(|arg| arg.as_ptr().cast_mut()).collect();
        pointers.push(ptr::null_mut());
        let mut defaults = handled_set();
        // SAFETY: adds to an initialised set.
        unsafe { libc::sigaddset(&mut defaults, libc::SIGPIPE) };
        let mut attr = MaybeUninit::<libc::posix_spawnattr_t>::uninit();
        let mut pid = 0;
        // SAFETY: the attribute object is initialised before use and destroyed
        // after; argv is NUL-terminated and outlives the call; `environ` is
        // this process's environment.
        let result = unsafe {
            libc::posix_spawnattr_init(attr.as_mut_ptr());
            let mut empty = MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(empty.as_mut_ptr());
            libc::posix_spawnattr_setsigmask(attr.as_mut_ptr(), empty.as_ptr());
            libc::posix_spawnattr_setsigdefault(attr.as_mut_ptr(), &defaults);
            let flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF;
            libc::posix_spawnattr_setflags(attr.as_mut_ptr(), flags as libc::c_short);
            extern "C" {
                static environ: *const *mut libc::c_char;
            }
            let result =
                libc::posix_spawn(&mut pid, argv[0].as_ptr(), ptr::null(), attr.as_ptr(), pointers.as_ptr(), environ);
            libc::posix_spawnattr_destroy(attr.as_mut_ptr());
            result
        };
        if result != 0 {
            return Err(io::Error::from_raw_os_error(result));
        }
        Ok(pid)
    }

    /// Points stdin, stdout and stderr at `/dev/null`, so that only the command
    /// holds its pipes: the spawner reads them to their end.
    fn release_stdio() {
        // SAFETY: opens a new descriptor and duplicates it over 0, 1 and 2.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
            if null >= 0 {
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
                libc::close(null);
            }
        }
    }

    struct Reaper {
        child: libc::pid_t,
        grace: Duration,
        signal_fd: libc::c_int,
        /// The command's wait status, once it exited.
        status: Option<libc::c_int>,
        /// What the command left behind got its SIGTERM.
        left_behind: bool,
        /// When what is left after the command's exit gets SIGKILL.
        term_due: Option<Instant>,
        /// Every descendant is being SIGKILLed.
        killing: bool,
    }

    impl Reaper {
        fn run(mut self) -> ! {
            loop {
                let children_left = self.reap_all();
                if let Some(status) = self.status {
                    if !children_left {
                        // No child left, so no descendant either: they are orphaned to us.
                        exit_as(status);
                    }
                    if !self.left_behind {
                        self.left_behind = true;
                        self.after_exit();
                    }
                }
                if self.term_due.is_some_and(|due| Instant::now() >= due) {
                    self.killing = true;
                }
                if self.killing {
                    signal_descendants(&[libc::SIGKILL]);
                }
                let timeout = if self.killing {
                    Some(KILL_SCAN_INTERVAL)
                } else {
                    self.term_due.map(|due| due.saturating_duration_since(Instant::now()))
                };
                if let Some(info) = self.next_signal(timeout) {
                    self.on_signal(&info);
                }
            }
        }

        /// Reaps every exited child. Returns whether a child is left.
        fn reap_all(&mut self) -> bool {
            loop {
                let mut status = 0;
                // SAFETY: waits for any child of ours, without blocking.
                let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
                if pid == 0 {
                    return true;
                }
                if pid < 0 {
                    match io::Error::last_os_error().raw_os_error() {
                        Some(libc::EINTR) => continue,
                        // ECHILD: nothing left.
                        _ => return false,
                    }
                }
                if pid == self.child && self.status.is_none() {
                    self.status = Some(status);
                }
            }
        }

        /// The command exited: SIGTERM to what it left behind, SIGKILL after
        /// the grace. Nothing to do when it left nothing.
        fn after_exit(&mut self) {
            if signal_descendants(&[libc::SIGTERM, libc::SIGCONT]) > 0 {
                self.term_due = Some(Instant::now() + self.grace);
            }
        }

        fn on_signal(&mut self, info: &libc::signalfd_siginfo) {
            let signal = info.ssi_signo as libc::c_int;
            match signal {
                libc::SIGCHLD => {}
                libc::SIGUSR1 => self.killing = true,
                _ => {
                    let signals: &[libc::c_int] =
                        if signal == libc::SIGTERM { &[libc::SIGTERM, libc::SIGCONT] } else { &[signal] };
                    signal_descendants(signals);
                }
            }
        }

        /// Waits up to `timeout` (forever for `None`) for a handled signal.
        fn next_signal(&self, timeout: Option<Duration>) -> Option<libc::signalfd_siginfo> {
            let millis = timeout.map_or(-1, |timeout| timeout.as_millis().min(i32::MAX as u128) as libc::c_int);
            let mut poll = libc::pollfd { fd: self.signal_fd, events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            if unsafe { libc::poll(&mut poll, 1, millis) } <= 0 {
                return None;
            }
            let mut info = MaybeUninit::<libc::signalfd_siginfo>::zeroed();
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            // SAFETY: reads at most one siginfo into a buffer of that size.
            let read = unsafe { libc::read(self.signal_fd, info.as_mut_ptr().cast(), size) };
            // SAFETY: zeroed, then filled by a complete read.
            (read == size as isize).then(|| unsafe { info.assume_init() })
        }
    }

    /// Sends `signals`, in order, to every descendant. Returns how many
    /// descendants there were.
    ///
    /// A pid in the list was a live descendant a moment before. One that was
    /// reaped since by its own parent frees its pid, but pids are handed out
    /// in increasing order, so another process gets it only after the whole
    /// pid space wrapped within those microseconds.
    fn signal_descendants(signals: &[libc::c_int]) -> usize {
        let descendants = descendants();
        for &pid in &descendants {
            for &signal in signals {
                // SAFETY: kill only touches the process table.
                unsafe { libc::kill(pid, signal) };
            }
        }
        descendants.len()
    }

    /// Every live descendant of this process: from the `children` files of
    /// `/proc/<pid>/task/<tid>/`, or where the kernel has none, from the parent
    /// pid of every process in `/proc`.
    fn descendants() -> Vec<libc::pid_t> {
        // SAFETY: getpid cannot fail.
        let me = unsafe { libc::getpid() };
        let mut found = Vec::new();
        let mut stack = vec![me];
        while let Some(pid) = stack.pop() {
            let Some(children) = children_of(pid) else {
                return descendants_by_parent(me);
            };
            for child in children {
                if !found.contains(&child) {
                    found.push(child);
                    stack.push(child);
                }
            }
        }
        found
    }

    /// The children of every thread of `pid`; `None` when the kernel keeps no
    /// `children` files (built without `CONFIG_PROC_CHILDREN`). A process that
    /// is gone has none.
    fn children_of(pid: libc::pid_t) -> Option<Vec<libc::pid_t>> {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Some(Vec::new()) };
        let mut children = Vec::new();
        for task in tasks.flatten() {
            match std::fs::read_to_string(task.path().join("children")) {
                Ok(list) => {
                    children.extend(list.split_ascii_whitespace().filter_map(|pid| pid.parse::<libc::pid_t>().ok()))
                }
                Err(error) if error.kind() == io::ErrorKind::NotFound && task.path().exists() => return None,
                Err(_) => {}
            }
        }
        Some(children)
    }

    /// Every live descendant of `root`, from `/proc/<pid>/stat` of every process.
    fn descendants_by_parent(root: libc::pid_t) -> Vec<libc::pid_t> {
        let mut children: HashMap<libc::pid_t, Vec<libc::pid_t>> = HashMap::new();
        let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<libc::pid_t>().ok()) else {
                continue;
            };
            if let Some((state, parent)) = stat(pid) {
                if state != 'Z' && state != 'X' {
                    children.entry(parent).or_default().push(pid);
                }
            }
        }
        let mut stack = vec![root];
        let mut seen = HashSet::new();
        let mut found = Vec::new();
        while let Some(pid) = stack.pop() {
            for &child in children.get(&pid).into_iter().flatten() {
                if seen.insert(child) {
                    found.push(child);
                    stack.push(child);
                }
            }
        }
        found
    }

    /// The state letter and parent pid from `/proc/<pid>/stat`: `pid (comm) S ppid …`,
    /// where `comm` may itself hold spaces and parentheses.
    fn stat(pid: libc::pid_t) -> Option<(char, libc::pid_t)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_ascii_whitespace();
        let state = fields.next()?.chars().next()?;
        Some((state, fields.next()?.parse().ok()?))
    }

    /// Exits as a process with wait status `status` did: with its code, or by
    /// its signal (without a core dump).
    fn exit_as(status: libc::c_int) -> ! {
        if libc::WIFSIGNALED(status) {
            let signal = libc::WTERMSIG(status);
            // SAFETY: resets one disposition, disables core files, unblocks
            // and raises the signal; all plain syscalls.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                let no_core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                libc::setrlimit(libc::RLIMIT_CORE, &no_core);
                let mut set = MaybeUninit::<libc::sigset_t>::uninit();
                libc::sigemptyset(set.as_mut_ptr());
                libc::sigaddset(set.as_mut_ptr(), signal);
                libc::sigprocmask(libc::SIG_UNBLOCK, set.as_ptr(), ptr::null_mut());
                libc::raise(signal);
            }
            std::process::exit(128 + signal);
        }
        std::process::exit(if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 1 })
    }
}
