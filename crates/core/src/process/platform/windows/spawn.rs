//! Starting a command: `CreateProcessW` suspended, with only its three
//! standard handles inheritable (or on a pseudo console, inheriting nothing),
//! then into its job, then resumed.

use std::ffi::c_void;
use std::io;
use std::mem::{size_of, size_of_val, zeroed};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use tokio::sync::watch;
use windows_sys::Win32::Foundation::{SetHandleInformation, HANDLE, HANDLE_FLAG_INHERIT};
use windows_sys::Win32::System::Console::{GetConsoleWindow, HPCON, STD_ERROR_HANDLE, STD_OUTPUT_HANDLE};
use windows_sys::Win32::System::JobObjects::AssignProcessToJobObject;
use windows_sys::Win32::System::Threading::{
    CreateProcessW, DeleteProcThreadAttributeList, InitializeProcThreadAttributeList, ResumeThread,
    UpdateProcThreadAttribute, CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, CREATE_SUSPENDED,
    CREATE_UNICODE_ENVIRONMENT, EXTENDED_STARTUPINFO_PRESENT, LPPROC_THREAD_ATTRIBUTE_LIST, PROCESS_INFORMATION,
    PROC_THREAD_ATTRIBUTE_HANDLE_LIST, PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, STARTF_USESTDHANDLES, STARTUPINFOEXW,
};

use crate::limits::Observed;
use crate::process::platform::command_line::{batch_arguments_are_safe, command_line, environment_block};
use crate::process::platform::{Leader, SpawnRequest, StdioPlan};
use crate::process::terminal::TerminalSize;

use super::conpty::{self, PseudoConsole};
use super::job::{associate, children, completion_port, new_job, Child};
use super::pipes::{inherited_output, null_device, pipe, Direction};
use super::wide;

/// Whether commands can run on a terminal here: on a pseudo console, which
/// Windows has from Windows 10 version 1809 on.
pub(crate) fn terminals() -> Result<(), &'static str> {
    if conpty::available() {
        Ok(())
    } else {
        Err("needs a pseudo console (ConPTY), which Windows has from Windows 10 version 1809 on")
    }
}

/// Starts `program args…` (an absolute path) suspended, puts it into a new
/// job, then lets it run: stdout and stderr piped, or the host's own where
/// `stdio` says they are inherited; stdin piped when `stdio` says so, else
/// `NUL`; or, with `stdio.terminal`, on a new pseudo console. Exactly `env`,
/// in `cwd`.
pub(crate) fn spawn_leader(request: &SpawnRequest) -> io::Result<Leader> {
    let SpawnRequest { program, args, env, cwd, stdio, limits, .. } = *request;
    let port = completion_port()?;
    if !batch_arguments_are_safe(program, args) {
        let reason = "a batch file's arguments must not hold cmd's special characters (\" % & | ^ < > ! or a line break): run it with shell: 'cmd'";
        return Err(io::Error::new(io::ErrorKind::InvalidInput, reason));
    }
    // The child's ends are inheritable only for the moment of the spawn, and
    // this package's spawns take turns, so no other command of ours starts
    // holding them, nor does a pseudo console's conhost, which is started
    // when the console is made. (A `CreateProcess` elsewhere in the host at
    // that instant, with every inheritable handle, could still take them:
    // Windows has no way to rule that out.)
    let mut turn = None;
    let streams = match stdio.terminal {
        Some(size) => {
            turn = Some(crate::process::sync::lock(spawning()));
            Streams::terminal(size)?
        }
        None => Streams::pipes(stdio)?,
    };
    let job = new_job(limits)?;

    let mut application = wide(program.as_os_str());
    let mut line = command_line(program, args);
    let mut block = environment_block(env);
    let directory = wide(cwd.as_os_str());

    // SAFETY: zeroed is a valid STARTUPINFOEXW; the fields set below are the
    // ones CreateProcessW reads with these flags.
    let mut startup: STARTUPINFOEXW = unsafe { zeroed() };
    startup.StartupInfo.cb = size_of::<STARTUPINFOEXW>() as u32;
    // On a pseudo console the three are null: the console gives the command
    // its own, where the host's (a pipe, a file) would be taken otherwise.
    startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    let [stdin, stdout, stderr] = streams.child_handles();
    startup.StartupInfo.hStdInput = stdin;
    startup.StartupInfo.hStdOutput = stdout;
    startup.StartupInfo.hStdError = stderr;
    startup.lpAttributeList = streams.attributes.list;
    let mut flags = CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;
    let inherits = streams.console.is_none();
    let turn = turn.unwrap_or_else(|| crate::process::sync::lock(spawning()));
    if inherits {
        // Its own console process group, for CTRL_BREAK (on a pseudo console
        // it would ignore the CTRL_C a typed ^C is).
        flags |= CREATE_NEW_PROCESS_GROUP;
        // A host without a console would give each command a new console window.
        // SAFETY: no arguments; returns the console window or null.
        if unsafe { GetConsoleWindow() }.is_null() {
            flags |= CREATE_NO_WINDOW;
        }
        for handle in streams.child.iter().flatten() {
            // SAFETY: an open handle of ours; only its inherit flag changes.
            if unsafe {
                SetHandleInformation(handle.as_raw_handle() as HANDLE, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT)
            } == 0
            {
                return Err(io::Error::last_os_error());
            }
        }
    }
    // SAFETY: zeroed is a valid PROCESS_INFORMATION for CreateProcessW to fill.
    let mut info: PROCESS_INFORMATION = unsafe { zeroed() };
    // SAFETY: every pointer is to a NUL-terminated UTF-16 buffer that lives to
    // the end of the call (the command line mutable, as CreateProcessW wants);
    // the environment block ends in two NULs; `startup` and its attribute list
    // outlive the call; the inherited handles are open and inheritable.
    let created = unsafe {
        CreateProcessW(
            application.as_mut_ptr(),
            line.as_mut_ptr(),
            null(),
            null(),
            i32::from(inherits),
            flags,
            block.as_mut_ptr().cast(),
            directory.as_ptr(),
            &startup.StartupInfo,
            &mut info,
        )
    };
    let created = if created == 0 { Err(io::Error::last_os_error()) } else { Ok(()) };
    // The child's ends close here (conhost's too): each has its own copies now.
    let Streams { child, conhost, attributes, host, console } = streams;
    drop((child, conhost, attributes, turn));
    created?;
    // SAFETY: CreateProcessW succeeded, so both handles are open and ours.
    let (process, thread) = unsafe {
        (
            OwnedHandle::from_raw_handle(info.hProcess as RawHandle),
            OwnedHandle::from_raw_handle(info.hThread as RawHandle),
        )
    };
    let pid = info.dwProcessId;
    static NEXT_KEY: AtomicU64 = AtomicU64::new(1);
    let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed) as usize;
    // Any failure from here ends the suspended process below.
    let resumed = (|| {
        let (exited, _) = watch::channel(false);
        let (empty, _) = watch::channel(false);
        let child = Child {
            key,
            pid,
            process: process.try_clone()?,
            job: job.try_clone()?,
            exited,
            empty,
            terminated: false,
            observed: Observed::NONE,
            console,
        };
        crate::process::sync::lock(children()).insert(pid, child);
        associate(&job, port, key)?;
        // SAFETY: both handles are open; the process has not run any code yet.
        if unsafe { AssignProcessToJobObject(job.as_raw_handle() as HANDLE, process.as_raw_handle() as HANDLE) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the primary thread's handle, open and suspended once.
        if unsafe { ResumeThread(thread.as_raw_handle() as HANDLE) } == u32::MAX {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    })();
    if let Err(error) = resumed {
        // Nothing may outlive a failed spawn: the suspended process goes.
        // SAFETY: an open process handle; TerminateProcess has no memory effects.
        unsafe { windows_sys::Win32::System::Threading::TerminateProcess(process.as_raw_handle() as HANDLE, 1) };
        crate::process::sync::lock(children()).remove(&pid);
        return Err(error);
    }
    Ok(Leader { pid, ..host })
}

/// This package's spawns, one at a time (see `spawn_leader`).
fn spawning() -> &'static Mutex<()> {
    static SPAWNING: Mutex<()> = Mutex::new(());
    &SPAWNING
}

/// What a command is started with: the ends it gets (until the spawn), the
/// attribute list naming them or its pseudo console, and the host's ends.
struct Streams {
    /// Its stdin, stdout and stderr; none on a pseudo console.
    child: [Option<OwnedHandle>; 3],
    /// Conhost's ends of a pseudo console's pipes, closed after the spawn.
    conhost: Option<[OwnedHandle; 2]>,
    attributes: AttributeList,
    /// The host's ends (its pid is set once it is started).
    host: Leader,
    console: Option<PseudoConsole>,
}

impl Streams {
    /// Pipes, `NUL` or the host's own handles, as `stdio` says; only these
    /// three are inherited.
    fn pipes(stdio: StdioPlan) -> io::Result<Self> {
        let output = |inherited: bool, which| {
            if inherited {
                Ok((None, inherited_output(which)?))
            } else {
                pipe(Direction::FromChild).map(|(host, child)| (Some(host), child))
            }
        };
        let (stdout, stdout_child) = output(stdio.stdout_inherited, STD_OUTPUT_HANDLE)?;
        let (stderr, stderr_child) = output(stdio.stderr_inherited, STD_ERROR_HANDLE)?;
        let (stdin, stdin_child) = if stdio.stdin_piped {
            let (host, child) = pipe(Direction::ToChild)?;
            (Some(host), child)
        } else {
            (None, null_device(Direction::ToChild)?)
        };
        let inherited = [stdin_child.as_raw_handle(), stdout_child.as_raw_handle(), stderr_child.as_raw_handle()];
        Ok(Self {
            child: [Some(stdin_child), Some(stdout_child), Some(stderr_child)],
            conhost: None,
            attributes: AttributeList::handles(&inherited)?,
            host: Leader { pid: 0, stdout, stderr, stdin, terminal: None, terminal_input: None },
            console: None,
        })
    }

    /// A new pseudo console of `size`: the host writes its input and reads
    /// its output through two pipes, whose other ends conhost has.
    fn terminal(size: TerminalSize) -> io::Result<Self> {
        let (input, conhost_input) = pipe(Direction::ToChild)?;
        let (output, conhost_output) = pipe(Direction::FromChild)?;
        let console = PseudoConsole::open(size, &conhost_input, &conhost_output)?;
        Ok(Self {
            child: [None, None, None],
            conhost: Some([conhost_input, conhost_output]),
            attributes: AttributeList::pseudo_console(&console)?,
            host: Leader {
                pid: 0,
                stdout: None,
                stderr: None,
                stdin: None,
                terminal: Some(output),
                terminal_input: Some(input),
            },
            console: Some(console),
        })
    }

    /// The handles the child's startup information names (null for none).
    fn child_handles(&self) -> [HANDLE; 3] {
        self.child.each_ref().map(|end| end.as_ref().map_or(null_mut(), |end| end.as_raw_handle() as HANDLE))
    }
}

/// A process-thread attribute list of one attribute: the only handles a
/// child inherits, or the pseudo console it runs on.
struct AttributeList {
    list: LPPROC_THREAD_ATTRIBUTE_LIST,
    _memory: Vec<u8>,
    /// What the attribute points to, kept as long as the list.
    _value: Box<[RawHandle]>,
}

impl AttributeList {
    /// `PROC_THREAD_ATTRIBUTE_HANDLE_LIST` of `handles`.
    fn handles(handles: &[RawHandle]) -> io::Result<Self> {
        Self::new(PROC_THREAD_ATTRIBUTE_HANDLE_LIST, handles.into(), |handles| {
            (handles.as_ptr().cast(), size_of_val(handles))
        })
    }

    /// `PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE` of `console`, whose value is the
    /// console's handle itself, not a pointer to it.
    fn pseudo_console(console: &PseudoConsole) -> io::Result<Self> {
        Self::new(PROC_THREAD_ATTRIBUTE_PSEUDOCONSOLE, Box::new([]), |_| {
            (console.raw() as *const c_void, size_of::<HPCON>())
        })
    }

    /// A list whose one `attribute` is what `value_of` says of `value` (kept).
    fn new(
        attribute: u32,
        value: Box<[RawHandle]>,
        value_of: impl FnOnce(&[RawHandle]) -> (*const c_void, usize),
    ) -> io::Result<Self> {
        let mut size = 0usize;
        // SAFETY: the documented size query: a null list and a size out pointer.
        unsafe { InitializeProcThreadAttributeList(null_mut(), 1, 0, &mut size) };
        let mut memory = vec![0u8; size];
        let list = memory.as_mut_ptr().cast();
        // SAFETY: `memory` has the size the query asked for.
        if unsafe { InitializeProcThreadAttributeList(list, 1, 0, &mut size) } == 0 {
            return Err(io::Error::last_os_error());
        }
        let (pointer, len) = value_of(&value);
        // SAFETY: an initialised list; what `pointer` points to lives in
        // `Self` as long as the list (or is no pointer at all: a console).
        let updated =
            unsafe { UpdateProcThreadAttribute(list, 0, attribute as usize, pointer, len, null_mut(), null()) };
        let this = Self { list, _memory: memory, _value: value };
        if updated == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(this)
    }
}

impl Drop for AttributeList {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, deleted once.
        unsafe { DeleteProcThreadAttributeList(self.list) };
    }
}
