//! Starting a command: `CreateProcessW` suspended, with only its three
//! standard handles inheritable, then into its job, then resumed.

use std::io;
use std::mem::{size_of, zeroed};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use tokio::sync::watch;
use windows_sys::Win32::Foundation::{SetHandleInformation, HANDLE, HANDLE_FLAG_INHERIT};
use windows_sys::Win32::System::Console::{GetConsoleWindow, STD_ERROR_HANDLE, STD_OUTPUT_HANDLE};
use windows_sys::Win32::System::JobObjects::AssignProcessToJobObject;
use windows_sys::Win32::System::Threading::{
    CreateProcessW, DeleteProcThreadAttributeList, InitializeProcThreadAttributeList, ResumeThread,
    UpdateProcThreadAttribute, CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, CREATE_SUSPENDED,
    CREATE_UNICODE_ENVIRONMENT, EXTENDED_STARTUPINFO_PRESENT, LPPROC_THREAD_ATTRIBUTE_LIST, PROCESS_INFORMATION,
    PROC_THREAD_ATTRIBUTE_HANDLE_LIST, STARTF_USESTDHANDLES, STARTUPINFOEXW,
};

use crate::limits::Observed;
use crate::process::platform::command_line::{batch_arguments_are_safe, command_line, environment_block};
use crate::process::platform::{Leader, SpawnRequest};

use super::job::{associate, children, completion_port, new_job, Child};
use super::pipes::{inherited_output, null_device, pipe, Direction};
use super::wide;

/// Commands cannot run on a terminal here yet (ConPTY is not wired).
pub(crate) const TERMINALS: bool = false;

/// Starts `program args…` (an absolute path) suspended, puts it into a new
/// job, then lets it run: stdout and stderr piped, or the host's own where
/// `stdio` says they are inherited; stdin piped when `stdio` says so, else
/// `NUL`; exactly `env`, in `cwd`.
pub(crate) fn spawn_leader(request: &SpawnRequest) -> io::Result<Leader> {
    let SpawnRequest { program, args, env, cwd, stdio, limits, .. } = *request;
    let port = completion_port()?;
    if !batch_arguments_are_safe(program, args) {
        let reason = "a batch file's arguments must not hold cmd's special characters (\" % & | ^ < > ! or a line break): run it with shell: 'cmd'";
        return Err(io::Error::new(io::ErrorKind::InvalidInput, reason));
    }
    let output = |inherited: bool, which| {
        if inherited {
            Ok((None, inherited_output(which)?))
        } else {
            pipe(Direction::FromChild).map(|(host, child)| (Some(host), child))
        }
    };
    let (stdout_host, stdout_child) = output(stdio.stdout_inherited, STD_OUTPUT_HANDLE)?;
    let (stderr_host, stderr_child) = output(stdio.stderr_inherited, STD_ERROR_HANDLE)?;
    let (stdin_host, stdin_child) = if stdio.stdin_piped {
        let (host, child) = pipe(Direction::ToChild)?;
        (Some(host), child)
    } else {
        (None, null_device(Direction::ToChild)?)
    };
    let job = new_job(limits)?;

    let mut application = wide(program.as_os_str());
    let mut line = command_line(program, args);
    let mut block = environment_block(env);
    let directory = wide(cwd.as_os_str());
    let inherited = [stdin_child.as_raw_handle(), stdout_child.as_raw_handle(), stderr_child.as_raw_handle()];
    let attributes = HandleList::new(&inherited)?;

    // SAFETY: zeroed is a valid STARTUPINFOEXW; the fields set below are the
    // ones CreateProcessW reads with these flags.
    let mut startup: STARTUPINFOEXW = unsafe { zeroed() };
    startup.StartupInfo.cb = size_of::<STARTUPINFOEXW>() as u32;
    startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    startup.StartupInfo.hStdInput = inherited[0] as HANDLE;
    startup.StartupInfo.hStdOutput = inherited[1] as HANDLE;
    startup.StartupInfo.hStdError = inherited[2] as HANDLE;
    startup.lpAttributeList = attributes.list;
    let mut flags =
        CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT;
    // A host without a console would give each command a new console window.
    // SAFETY: no arguments; returns the console window or null.
    if unsafe { GetConsoleWindow() }.is_null() {
        flags |= CREATE_NO_WINDOW;
    }
    // SAFETY: zeroed is a valid PROCESS_INFORMATION for CreateProcessW to fill.
    let mut info: PROCESS_INFORMATION = unsafe { zeroed() };
    // The child's ends are inheritable only for the moment of the spawn, and
    // this package's spawns take turns, so no other command of ours starts
    // holding them. (A `CreateProcess` elsewhere in the host at that instant,
    // with every inheritable handle, could still take them: Windows has no
    // way to rule that out.)
    let turn = crate::process::sync::lock(spawning());
    for handle in inherited {
        // SAFETY: an open handle of ours; only its inherit flag changes.
        if unsafe { SetHandleInformation(handle as HANDLE, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT) } == 0 {
            return Err(io::Error::last_os_error());
        }
    }
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
            1,
            flags,
            block.as_mut_ptr().cast(),
            directory.as_ptr(),
            &startup.StartupInfo,
            &mut info,
        )
    };
    let created = if created == 0 { Err(io::Error::last_os_error()) } else { Ok(()) };
    // The child's ends close here: the child has its own copies now.
    drop((attributes, stdin_child, stdout_child, stderr_child, turn));
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
    Ok(Leader { pid, stdout: stdout_host, stderr: stderr_host, stdin: stdin_host, terminal: None })
}

/// This package's spawns, one at a time (see `spawn_leader`).
fn spawning() -> &'static Mutex<()> {
    static SPAWNING: Mutex<()> = Mutex::new(());
    &SPAWNING
}

/// A process-thread attribute list naming the only handles a child inherits.
struct HandleList {
    list: LPPROC_THREAD_ATTRIBUTE_LIST,
    _memory: Vec<u8>,
    _handles: Box<[RawHandle]>,
}

impl HandleList {
    fn new(handles: &[RawHandle]) -> io::Result<Self> {
        let mut size = 0usize;
        // SAFETY: the documented size query: a null list and a size out pointer.
        unsafe { InitializeProcThreadAttributeList(null_mut(), 1, 0, &mut size) };
        let mut memory = vec![0u8; size];
        let list = memory.as_mut_ptr().cast();
        // SAFETY: `memory` has the size the query asked for.
        if unsafe { InitializeProcThreadAttributeList(list, 1, 0, &mut size) } == 0 {
            return Err(io::Error::last_os_error());
        }
        let handles: Box<[RawHandle]> = handles.into();
        // SAFETY: an initialised list; the handle array lives in `Self` as long as the list.
        let updated = unsafe {
            UpdateProcThreadAttribute(
                list,
                0,
                PROC_THREAD_ATTRIBUTE_HANDLE_LIST as usize,
                handles.as_ptr().cast(),
                std::mem::size_of_val(&*handles),
                null_mut(),
                null(),
            )
        };
        let this = Self { list, _memory: memory, _handles: handles };
        if updated == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(this)
    }
}

impl Drop for HandleList {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, deleted once.
        unsafe { DeleteProcThreadAttributeList(self.list) };
    }
}
