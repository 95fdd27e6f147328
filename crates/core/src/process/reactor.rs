//! Supervising children from the caller's own event loop.
//!
//! The runtime's supervisor costs two thread hand-offs per command: a worker
//! wakes to start watching the child, and one wakes at its exit to pass the
//! result on to the caller's thread, while the child competes with both for
//! the CPU. A [`Reactor`] puts each child's pidfd (or, under the supervisor, its
//! link) and pipes into an epoll set
//! instead, whose one descriptor the caller's event loop watches (Node's,
//! through libuv). On the ordinary path (the child runs, writes, exits and its
//! pipes close) everything happens in [`Reactor::turn`] on the caller's thread.
//!
//! Anything else leaves that path for the runtime's supervisor, which then
//! follows the kill schedule as for any other process: a kill of any kind
//! (kill, abort, timeout, teardown), or a group that outlives its leader (pipes
//! still open, members left). Timeouts fire from a thread of their own (see
//! `deadline`), so a busy caller thread cannot hold them up. Which processes
//! a reactor takes at all is decided in `driver` (live output and stdin stay
//! with the runtime from the start); starting processes on a reactor
//! ([`Reactor::spawn`], [`Reactor::spawner`]) is there too.
//!
//! The reactor learns of a kill through the hook it installs on the process
//! ([`OnKill`]), never the other way round: the lifecycle does not know it.
//! The descriptors and the readiness set are the platform's ([`Poller`]);
//! where there is none, [`Reactor::new`] fails and the runtime drives every child.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use tokio::runtime::Handle;

use super::deadline;
use super::exit::{Control, Exit};
use super::handle::Process;
use super::lifecycle::{finish, OnKill, Shared};
use super::output::{take_chunk, OpenStream, Utf8Decoder, READ_CHUNK};
use super::platform::{self, ExitWatch, Fd, Poller};
use super::spawn::{spawn_failed, Started};
use super::stream::StreamKind;
use super::supervise::{self, Io};
use super::sync::lock;
use crate::error::ExecError;

/// Children driven by the caller's event loop: watch [`Reactor::fd`] for
/// readability and call [`Reactor::turn`] when it is readable. Dropping the
/// reactor hands whatever it still drives to the runtime.
pub struct Reactor {
    pub(super) inner: Arc<Inner>,
}

/// What the reactor and the processes it drives share.
pub(super) struct Inner {
    poller: Poller,
    /// Where processes go that leave the fast path, or never take it.
    pub(super) runtime: Handle,
    state: Mutex<State>,
}

struct State {
    /// By pid: unique while the leader is unreaped, which it is until removed.
    entries: HashMap<u32, Entry>,
    /// The [`Reactor`] was dropped: nothing turns it any more.
    closed: bool,
    buf: Vec<u8>,
    text: String,
}

/// One process on the fast path.
struct Entry {
    shared: Arc<Shared>,
    exit_fd: Fd,
    stdout: Option<Stream>,
    stderr: Option<Stream>,
    exit: Option<Exit>,
    /// Under the supervisor: the reaper's report, before its link ends.
    reported: Option<Exit>,
    timeout_at: Option<Instant>,
    deadline: Option<deadline::Key>,
}

/// A pipe not yet at its end.
struct Stream {
    fd: Fd,
    decoder: Utf8Decoder,
}

/// How much one stream may be read in one turn, so that a child writing as
/// fast as it can neither holds the caller's thread nor the lock for long.
const READ_BUDGET: usize = 256 * 1024;

/// What a readiness event is about; the low two bits of its token.
const EXIT: u64 = 0;
const STDOUT: u64 = 1;
const STDERR: u64 = 2;

impl Reactor {
    /// A reactor whose hand-overs go to `runtime`. Fails where the platform
    /// has no readiness set for pidfds and pipes.
    pub fn new(runtime: Handle) -> io::Result<Self> {
        let poller = Poller::new()?;
        let state = State { entries: HashMap::new(), closed: false, buf: vec![0; READ_CHUNK], text: String::new() };
        Ok(Self { inner: Arc::new(Inner { poller, runtime, state: Mutex::new(state) }) })
    }

    /// The descriptor to watch: readable whenever [`Reactor::turn`] has work.
    pub fn fd(&self) -> i32 {
        self.inner.poller.fd()
    }

    /// Handles whatever is ready, without blocking: reads output, notices
    /// exits, and finishes or hands over the processes whose leader exited.
    pub fn turn(&self) {
        const BATCH: usize = 32;
        let mut tokens = [0; BATCH];
        loop {
            let ready = self.inner.poller.ready(&mut tokens);
            if ready == 0 {
                return;
            }
            for &token in &tokens[..ready] {
                self.inner.dispatch(token);
            }
            if ready < BATCH {
                return;
            }
        }
    }
}

impl Drop for Reactor {
    fn drop(&mut self) {
        let entries: Vec<Entry> = {
            let mut state = lock(&self.inner.state);
            state.closed = true;
            let pids: Vec<u32> = state.entries.keys().copied().collect();
            pids.into_iter().filter_map(|pid| self.inner.take(&mut state, pid)).collect()
        };
        for entry in entries {
            self.inner.hand_over(entry);
        }
    }
}

impl Inner {
    /// Takes a child just started onto the fast path, watching its exit
    /// through `exit_fd`, its pidfd or its link (`driver` chose this reactor for it).
    pub(super) fn adopt(self: &Arc<Self>, started: Started, exit_fd: Fd) -> Result<Process, ExecError> {
        // From here on a kill (the timer thread's, say) asks this reactor to
        // release the process, found or not yet (see below).
        let hook: Weak<Self> = Arc::downgrade(self);
        let hook: Weak<dyn OnKill> = hook;
        let _ = started.shared.on_kill.set(hook);
        // `driver` made sure the timer thread runs.
        let deadline = started.timeout_at.map(|at| deadline::add(at, &started.shared));
        let Started { shared, program, stdout, stderr, timeout_at, .. } = started;
        let entry = Entry {
            shared: Arc::clone(&shared),
            exit_fd,
            stdout: Some(Stream { fd: stdout, decoder: Utf8Decoder::default() }),
            stderr: Some(Stream { fd: stderr, decoder: Utf8Decoder::default() }),
            exit: None,
            reported: None,
            timeout_at,
            deadline,
        };
        // Entry and descriptors go in together under the lock: an event never
        // finds no entry, and a release never misses descriptors.
        let mut state = lock(&self.state);
        // The reactor was dropped meanwhile (by its thread, while another one
        // spawns), or a kill came before the entry was here to be released:
        // the runtime takes the process. (A kill records its cause before it
        // asks for the release, which takes this lock.)
        if state.closed || shared.group.cause().is_some() {
            drop(state);
            self.hand_over(entry);
            return Ok(Process { shared });
        }
        if let Err(error) = self.watch(&entry) {
            self.unwatch_all(&entry);
            drop(state);
            if let Some(key) = entry.deadline {
                deadline::remove(key);
            }
            shared.group.terminate_now();
            shared.group.reap();
            return Err(spawn_failed(&program, error));
        }
        state.entries.insert(shared.pid, entry);
        Ok(Process { shared })
    }

    /// Adds the exit's descriptor and both pipes to the readiness set.
    fn watch(&self, entry: &Entry) -> io::Result<()> {
        let token = u64::from(entry.shared.pid) << 2;
        let pipes = [(&entry.stdout, STDOUT), (&entry.stderr, STDERR)];
        for (fd, source) in pipes.into_iter().filter_map(|(stream, source)| Some((&stream.as_ref()?.fd, source))) {
            platform::set_nonblocking(fd)?;
            self.poller.add(fd, token | source)?;
        }
        self.poller.add(&entry.exit_fd, token | EXIT)
    }

    /// Removes an entry's descriptors from the readiness set.
    fn unwatch_all(&self, entry: &Entry) {
        self.unwatch(&[&entry.exit_fd]);
        for stream in [&entry.stdout, &entry.stderr].into_iter().flatten() {
            self.unwatch(&[&stream.fd]);
        }
    }

    /// Removes `pid`'s entry, and its descriptors from the readiness set, so that
    /// nothing about it fires once the lock is released.
    fn take(&self, state: &mut State, pid: u32) -> Option<Entry> {
        let entry = state.entries.remove(&pid)?;
        self.unwatch_all(&entry);
        Some(entry)
    }

    /// Removes descriptors from the readiness set; one that was never added is fine.
    fn unwatch(&self, fds: &[&Fd]) {
        for fd in fds {
            self.poller.remove(fd);
        }
    }

    /// One ready descriptor.
    fn dispatch(&self, token: u64) {
        let pid = (token >> 2) as u32;
        let mut state = lock(&self.state);
        let State { entries, buf, text, .. } = &mut *state;
        // Gone: finished or handed over since the event was queued.
        let Some(entry) = entries.get_mut(&pid) else {
            return;
        };
        match token & 3 {
            STDOUT => self.read(&entry.shared, StreamKind::Stdout, &mut entry.stdout, buf, text),
            STDERR => self.read(&entry.shared, StreamKind::Stderr, &mut entry.stderr, buf, text),
            _ => {
                let polled = match entry.shared.group.control() {
                    Control::Child => platform::poll_exit(pid),
                    Control::Supervised { .. } => {
                        platform::supervisor::read_exit(&entry.exit_fd, true, &mut entry.reported)
                    }
                };
                let exit = match polled {
                    Ok(Some(exit)) => exit,
                    Ok(None) => return,
                    Err(_) => Exit::UNKNOWN,
                };
                entry.exit = Some(exit);
                entry.shared.group.leader_exited(exit);
                // What the leader wrote is in the pipes by now.
                self.read(&entry.shared, StreamKind::Stdout, &mut entry.stdout, buf, text);
                self.read(&entry.shared, StreamKind::Stderr, &mut entry.stderr, buf, text);
            }
        }
        if entry.exit.is_none() {
            return;
        }
        let entry = self.take(&mut state, pid).expect("looked up above");
        // Publishing runs callbacks, and a hand-over spawns a task: not under the lock.
        drop(state);
        let drained = entry.stdout.is_none() && entry.stderr.is_none();
        // Looking for group members scans every process, which can take
        // milliseconds: not on this thread.
        if drained && entry.shared.group.known_alone() {
            self.finish(entry);
        } else {
            self.hand_over(entry);
        }
    }

    /// Reads `stream` until it would block, to its end (then it is closed),
    /// or for [`READ_BUDGET`] bytes: the rest shows up again at the next turn.
    fn read(&self, shared: &Shared, kind: StreamKind, stream: &mut Option<Stream>, buf: &mut [u8], text: &mut String) {
        let Some(open) = stream else { return };
        let capture = shared.capture(kind);
        let mut taken = 0;
        while taken < READ_BUDGET {
            match platform::read(&open.fd, buf) {
                Ok(read) if read > 0 => {
                    take_chunk(capture, &mut open.decoder, &buf[..read], text);
                    taken += read;
                    continue;
                }
                // The end of file.
                Ok(_) => {}
                Err(error) => match error.kind() {
                    io::ErrorKind::Interrupted => continue,
                    io::ErrorKind::WouldBlock => return,
                    // Any other error ends the stream just as the end of file does.
                    _ => {}
                },
            }
            take_chunk(capture, &mut open.decoder, &[], text);
            self.unwatch(&[&open.fd]);
            *stream = None;
            return;
        }
    }

    /// The whole group is gone: reap the leader and publish the result.
    fn finish(&self, entry: Entry) {
        if let Some(key) = entry.deadline {
            deadline::remove(key);
        }
        finish(&entry.shared);
    }

    /// Takes `shared`'s process off the fast path (a kill, see [`Process::kill`]).
    fn release(&self, shared: &Shared) {
        let mut state = lock(&self.state);
        // The pid alone may be a later child's, once this one was reaped.
        let found =
            state.entries.get(&shared.pid).is_some_and(|entry| std::ptr::eq(Arc::as_ptr(&entry.shared), shared));
        let entry = if found { self.take(&mut state, shared.pid) } else { None };
        drop(state);
        if let Some(entry) = entry {
            self.hand_over(entry);
        }
    }

    /// Moves a process to the runtime's supervisor, with its exit if seen and
    /// the pipes still open, each with what its decoder carries.
    fn hand_over(&self, entry: Entry) {
        let Entry { shared, exit_fd, stdout, stderr, exit, reported, timeout_at, deadline } = entry;
        if let Some(key) = deadline {
            deadline::remove(key);
        }
        let _entered = self.runtime.enter();
        let open = |stream: Option<Stream>| -> io::Result<Option<OpenStream>> {
            stream.map(|Stream { fd, decoder }| Ok((platform::async_reader(fd)?, decoder))).transpose()
        };
        let io = (|| {
            let watch = match exit {
                Some(exit) => ExitWatch::Exited(exit),
                None => match shared.group.control() {
                    Control::Child => ExitWatch::from_pidfd(shared.pid, exit_fd)?,
                    Control::Supervised { .. } => ExitWatch::from_link(exit_fd, reported)?,
                },
            };
            io::Result::Ok(Io { watch, stdout: open(stdout)?, stderr: open(stderr)?, stdin: None, live: None })
        })();
        match io {
            Ok(io) => drop(self.runtime.spawn(supervise::run(shared, io, timeout_at))),
            Err(_) => supervise::abandon(shared),
        }
    }
}

impl OnKill for Inner {
    fn killed(&self, shared: &Shared) {
        self.release(shared);
    }
}
