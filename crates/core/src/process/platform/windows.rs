//! Windows: each command is started suspended through `CreateProcessW`, put
//! into a Job Object of its own, and only then resumed, so nothing it starts
//! can be outside the job. The job is what "the process group" means here:
//!
//! - a hard kill is `TerminateJobObject`: every process in the job at once;
//! - the graceful first step is `CTRL_BREAK_EVENT` to the command's console
//!   process group (it is started with `CREATE_NEW_PROCESS_GROUP`), which only
//!   reaches it when the host has a console the command shares; elsewhere the
//!   grace just runs out and the job is terminated;
//! - the job is made with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: when the host
//!   dies in any way, Windows closes its handles and so ends every job, which
//!   is what the guardian does on Unix;
//! - one completion port, shared by every job, reports each leader's exit and
//!   each job's last process, read by one thread: no polling.
//!
//! Only the three standard handles are inherited (an explicit handle list),
//! and they are inheritable only for the moment of the spawn, so no other
//! command holds a command's pipe open. The pipes are named pipes, overlapped
//! on the host's end, as the runtime reads them.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{DirBuilder, Metadata, OpenOptions};
use std::io;
use std::mem::{size_of, zeroed};
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, IntoRawHandle, OwnedHandle, RawHandle};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use tokio::net::windows::named_pipe::NamedPipeServer;
use tokio::sync::watch;
use windows_sys::Win32::Foundation::{
    GetLastError, SetHandleInformation, ERROR_PIPE_CONNECTED, GENERIC_READ, GENERIC_WRITE, HANDLE, HANDLE_FLAG_INHERIT,
    INVALID_HANDLE_VALUE, WAIT_OBJECT_0,
};
use windows_sys::Win32::Security::Authorization::{SetNamedSecurityInfoW, SE_FILE_OBJECT};
use windows_sys::Win32::Security::{
    AddAccessAllowedAceEx, GetLengthSid, GetTokenInformation, InitializeAcl, TokenUser, ACCESS_ALLOWED_ACE, ACL,
    ACL_REVISION, CONTAINER_INHERIT_ACE, DACL_SECURITY_INFORMATION, OBJECT_INHERIT_ACE,
    PROTECTED_DACL_SECURITY_INFORMATION, PSID, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_ALL_ACCESS, FILE_FLAG_FIRST_PIPE_INSTANCE, FILE_FLAG_OVERLAPPED, OPEN_EXISTING,
    PIPE_ACCESS_INBOUND, PIPE_ACCESS_OUTBOUND,
};
use windows_sys::Win32::System::Console::{GenerateConsoleCtrlEvent, GetConsoleWindow, CTRL_BREAK_EVENT};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectAssociateCompletionPortInformation,
    JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation, QueryInformationJobObject,
    SetInformationJobObject, TerminateJobObject, JOBOBJECT_ASSOCIATE_COMPLETION_PORT,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_ACTIVE_PROCESS,
    JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION, JOB_OBJECT_LIMIT_JOB_MEMORY, JOB_OBJECT_LIMIT_JOB_TIME,
    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Pipes::{
    ConnectNamedPipe, CreateNamedPipeW, PIPE_READMODE_BYTE, PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE, PIPE_WAIT,
};
use windows_sys::Win32::System::SystemServices::{
    JOB_OBJECT_MSG_ABNORMAL_EXIT_PROCESS, JOB_OBJECT_MSG_ACTIVE_PROCESS_LIMIT, JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO,
    JOB_OBJECT_MSG_END_OF_JOB_TIME, JOB_OBJECT_MSG_EXIT_PROCESS, JOB_OBJECT_MSG_JOB_MEMORY_LIMIT,
};
use windows_sys::Win32::System::Threading::{
    CreateProcessW, DeleteProcThreadAttributeList, GetCurrentProcess, GetExitCodeProcess,
    InitializeProcThreadAttributeList, OpenProcessToken, ResumeThread, UpdateProcThreadAttribute, WaitForSingleObject,
    CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW, CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT,
    EXTENDED_STARTUPINFO_PRESENT, INFINITE, LPPROC_THREAD_ATTRIBUTE_LIST, PROCESS_INFORMATION,
    PROC_THREAD_ATTRIBUTE_HANDLE_LIST, STARTF_USESTDHANDLES, STARTUPINFOEXW,
};
use windows_sys::Win32::System::IO::{CreateIoCompletionPort, GetQueuedCompletionStatus, OVERLAPPED};

use super::command_line::{batch_arguments_are_safe, command_line, environment_block};
use super::StdioPlan;
use crate::limits::{Limits, Observed};
use crate::process::exit::{Exit, Signal};

/// An owned handle: a pipe end.
pub(crate) type Fd = OwnedHandle;

/// The host's end of a child's output pipe, registered with the runtime.
pub(crate) type PipeReader = NamedPipeServer;

/// The host's end of a child's input pipe, registered with the runtime.
pub(crate) type PipeWriter = NamedPipeServer;

/// The OS errors program lookup and the workdir check report:
/// `ERROR_FILE_NOT_FOUND`.
pub(crate) const NOT_FOUND: i32 = 2;
/// A file found but not executable: `ERROR_ACCESS_DENIED`.
pub(crate) const DENIED: i32 = 5;
/// A workdir that is not a directory: `ERROR_DIRECTORY`.
pub(crate) const NOT_A_DIRECTORY: i32 = 267;

/// The name Node gives an OS error in `error.code` (`ENOENT`, `EPERM`, …),
/// for the errors a spawn or a workdir check can meet: a Windows error code
/// named as libuv translates it, so the same failure has the same code from
/// this package as from `child_process` (an unknown code has none).
pub fn os_error_name(code: i32) -> Option<&'static str> {
    Some(match code {
        // ERROR_FILE_NOT_FOUND, ERROR_PATH_NOT_FOUND, ERROR_INVALID_DRIVE,
        // ERROR_INVALID_NAME, ERROR_BAD_PATHNAME, ERROR_MOD_NOT_FOUND
        2 | 3 | 15 | 123 | 161 | 126 => "ENOENT",
        // ERROR_TOO_MANY_OPEN_FILES
        4 => "EMFILE",
        // ERROR_ACCESS_DENIED
        5 => "EPERM",
        // ERROR_NOT_ENOUGH_MEMORY, ERROR_OUTOFMEMORY
        8 | 14 => "ENOMEM",
        // ERROR_INVALID_PARAMETER, ERROR_INVALID_DATA
        87 | 13 => "EINVAL",
        // ERROR_DISK_FULL
        112 => "ENOSPC",
        // ERROR_BAD_EXE_FORMAT
        193 => "EFTYPE",
        // ERROR_FILENAME_EXCED_RANGE
        206 => "ENAMETOOLONG",
        // ERROR_DIRECTORY: "the directory name is invalid", a file named as a directory
        267 => "ENOTDIR",
        // ERROR_ELEVATION_REQUIRED, ERROR_NOACCESS
        740 | 998 => "EACCES",
        _ => return None,
    })
}

/// Process control works here.
pub(crate) fn supported() -> io::Result<()> {
    Ok(())
}

/// The exit code a job terminated by this package gives its processes
/// ("DSHK", one no program is likely to exit with); the result reports it as
/// `SIGKILL`, as Node does for a child it killed.
const KILLED_EXIT_CODE: u32 = 0x4453_484B;

/// A child that leads its own job, with the host's ends of its pipes.
pub(crate) struct Leader {
    /// Its process id, which also names its job here.
    pub(crate) pid: u32,
    /// The read end of its stdout (never inherited here).
    pub(crate) stdout: Option<Fd>,
    /// The read end of its stderr (never inherited here).
    pub(crate) stderr: Option<Fd>,
    /// The write end of its stdin, when it reads from a pipe (else `NUL`).
    pub(crate) stdin: Option<Fd>,
    /// Never a terminal here (see `spawn_leader`).
    pub(crate) terminal: Option<Fd>,
}

/// What is known of one command: its process, its job, and what the
/// completion port said.
struct Child {
    /// The completion key of its job: unique for the host's life, unlike the
    /// pid, which Windows may give the next command once this one is reaped
    /// while the old job's last messages are still queued.
    key: usize,
    /// The leader's pid.
    pid: u32,
    process: OwnedHandle,
    job: OwnedHandle,
    /// The leader's exit, once the completion port reported it.
    exited: watch::Sender<bool>,
    /// The job's last process is gone (`ACTIVE_PROCESS_ZERO`).
    empty: watch::Sender<bool>,
    /// This package terminated the job: the leader's exit is a kill.
    terminated: bool,
    /// What the job's limits did, as the completion port said.
    observed: Observed,
}

/// Every command not yet reaped, by leader pid.
fn children() -> &'static Mutex<HashMap<u32, Child>> {
    static CHILDREN: OnceLock<Mutex<HashMap<u32, Child>>> = OnceLock::new();
    CHILDREN.get_or_init(Default::default)
}

fn with_child<T>(pid: u32, f: impl FnOnce(&mut Child) -> T) -> Option<T> {
    crate::process::sync::lock(children()).get_mut(&pid).map(f)
}

/// Commands cannot run on a terminal here yet (ConPTY is not wired).
pub(crate) const TERMINALS: bool = false;

/// Starts `program args…` (an absolute path) suspended, puts it into a new
/// job, then lets it run: stdout and stderr piped (inheriting them is not
/// supported yet), stdin piped when `stdio` says so, else `NUL`; exactly
/// `env`, in `cwd`.
pub(crate) fn spawn_leader(
    program: &Path,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    stdio: StdioPlan,
    limits: &Limits,
) -> io::Result<Leader> {
    if stdio.stdout_inherited || stdio.stderr_inherited {
        // The host's own console handles are not passed through yet.
        let reason = "an inherited stdout or stderr is not supported on Windows yet: use a pipe or capture";
        return Err(io::Error::new(io::ErrorKind::Unsupported, reason));
    }
    let port = completion_port()?;
    if !batch_arguments_are_safe(program, args) {
        let reason = "a batch file's arguments must not hold cmd's special characters (\" % & | ^ < > ! or a line break): run it with shell: 'cmd'";
        return Err(io::Error::new(io::ErrorKind::InvalidInput, reason));
    }
    let (stdout_host, stdout_child) = pipe(Direction::FromChild)?;
    let (stderr_host, stderr_child) = pipe(Direction::FromChild)?;
    let (stdin_host, stdin_child) = if stdio.stdin_piped {
        let (host, child) = pipe(Direction::ToChild)?;
        (Some(host), child)
    } else {
        (None, null_device()?)
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
    Ok(Leader { pid, stdout: Some(stdout_host), stderr: Some(stderr_host), stdin: stdin_host, terminal: None })
}

/// Signals the command's job: `Term` is CTRL_BREAK to its console process
/// group (where the host has a console to share), `Kill` ends every process
/// in the job.
pub(crate) fn signal_group(pid: u32, signal: Signal) {
    match signal {
        Signal::Term => {
            // After the leader's exit, only a job with processes left gets it.
            let leader_exited = with_child(pid, |child| {
                // SAFETY: an open handle (closed only by `reap`); no memory effects.
                unsafe { WaitForSingleObject(child.process.as_raw_handle() as HANDLE, 0) == WAIT_OBJECT_0 }
            });
            if leader_exited == Some(true) && !group_has_live_members(pid) {
                return;
            }
            // SAFETY: no memory effects; the event goes to the console process
            // group `pid` (our command's, made with CREATE_NEW_PROCESS_GROUP),
            // and the call fails when this host has no console it shares.
            unsafe { GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, pid) };
        }
        Signal::Kill => {
            with_child(pid, |child| {
                // Only a leader still running dies of this kill; one that had
                // exited keeps its own code.
                // SAFETY: open handles (closed only by `reap`); no memory effects.
                unsafe {
                    child.terminated |=
                        WaitForSingleObject(child.process.as_raw_handle() as HANDLE, 0) != WAIT_OBJECT_0;
                    TerminateJobObject(child.job.as_raw_handle() as HANDLE, KILLED_EXIT_CODE);
                }
            });
        }
    }
}

/// Waits for one child's exit, as the completion port reports it.
pub(crate) enum ExitWatch {
    /// Turns `true` when the leader has exited.
    Port { pid: u32, exited: watch::Receiver<bool> },
}

impl ExitWatch {
    /// Watches `pid`, which must be an unreaped command of ours.
    pub(crate) fn new(pid: u32) -> io::Result<Self> {
        let exited = with_child(pid, |child| child.exited.subscribe())
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "not a command of this process"))?;
        Ok(Self::Port { pid, exited })
    }

    /// Never called: there is no supervisor here.
    pub(crate) fn from_link(_link: Fd, _reported: Option<Exit>) -> io::Result<Self> {
        Err(io::ErrorKind::Unsupported.into())
    }

    /// Resolves once the leader has exited. Cancel safe.
    pub(crate) async fn exited(&mut self) -> Exit {
        match self {
            Self::Port { pid, exited } => {
                let pid = *pid;
                loop {
                    tokio::select! {
                        // An error: the entry is gone, and so is the process.
                        _ = exited.wait_for(|exited| *exited) => break,
                        // Windows does not promise to deliver every job message:
                        // the process itself is asked too, now and then.
                        () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {
                            if !matches!(poll_exit(pid), Ok(None)) {
                                break;
                            }
                        }
                    }
                }
                // The process object is signalled at the message or right after it.
                tokio::task::spawn_blocking(move || wait_exit(pid)).await.unwrap_or(Exit::UNKNOWN)
            }
        }
    }
}

/// Whether `pid` has exited: `None` while it runs.
pub(crate) fn poll_exit(pid: u32) -> io::Result<Option<Exit>> {
    wait(pid, 0)
}

/// Blocks until `pid` has exited.
pub(crate) fn wait_exit(pid: u32) -> Exit {
    wait(pid, INFINITE).ok().flatten().unwrap_or(Exit::UNKNOWN)
}

fn wait(pid: u32, millis: u32) -> io::Result<Option<Exit>> {
    let Some((process, terminated)) =
        with_child(pid, |child| (child.process.as_raw_handle() as HANDLE, child.terminated))
    else {
        return Ok(Some(Exit::UNKNOWN));
    };
    // SAFETY: the handle stays open until `reap`, which only the driver that
    // waits here calls, after this returns (the group's lock orders every
    // signal before the reap too).
    if unsafe { WaitForSingleObject(process, millis) } != WAIT_OBJECT_0 {
        return Ok(None);
    }
    let mut code = 0u32;
    // SAFETY: as above; `code` is a valid out pointer.
    if unsafe { GetExitCodeProcess(process, &mut code) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let (terminated, observed) = with_child(pid, |child| (terminated || child.terminated, child.observed))
        .unwrap_or((terminated, Observed::NONE));
    Ok(Some(if terminated && code == KILLED_EXIT_CODE {
        Exit { code: None, signal: Some("SIGKILL"), observed, ..Exit::UNKNOWN }
    } else {
        // Exit codes are unsigned here; a crash's NTSTATUS (0xC0000005) reads
        // as negative (-1073741819), where Node shows it unsigned.
        Exit { code: Some(code as i32), signal: None, observed, ..Exit::UNKNOWN }
    }))
}

/// Forgets `pid`: closes its process handle and its job, whose processes have
/// all been dealt with (closing the job would end any left).
pub(crate) fn reap(pid: u32) {
    crate::process::sync::lock(children()).remove(&pid);
}

/// Whether a process of `pid`'s job other than the exited leader still runs.
pub(crate) fn group_has_live_members(pid: u32) -> bool {
    let Some(job) = with_child(pid, |child| child.job.as_raw_handle() as HANDLE) else { return false };
    // SAFETY: zeroed is a valid out structure of the size passed.
    let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { zeroed() };
    // SAFETY: an open job handle (closed only by `reap`, which the driver
    // calls after every other use); `info` is writable for its size.
    let queried = unsafe {
        QueryInformationJobObject(
            job,
            JobObjectBasicAccountingInformation,
            (&mut info as *mut JOBOBJECT_BASIC_ACCOUNTING_INFORMATION).cast(),
            size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
            null_mut(),
        )
    };
    queried != 0 && info.ActiveProcesses > 0
}

/// Resolves once the job of `pid` has no process left, as its completion
/// port reports (at once when it is unknown or already empty).
pub(crate) async fn group_may_be_empty(pid: u32) {
    let Some(mut empty) = with_child(pid, |child| child.empty.subscribe()) else { return };
    // An error means the entry was reaped: nothing left to wait for.
    let _ = empty.wait_for(|empty| *empty).await;
}

/// Registers a pipe's host end with the runtime (inside its context).
pub(crate) fn async_reader(fd: Fd) -> io::Result<PipeReader> {
    // SAFETY: a named pipe's server end, opened overlapped, owned and given up here.
    unsafe { NamedPipeServer::from_raw_handle(fd.into_raw_handle()) }
}

/// Registers a pipe's host end with the runtime (inside its context).
pub(crate) fn async_writer(fd: Fd) -> io::Result<PipeWriter> {
    async_reader(fd)
}

/// Runs `hook` when the host exits in order (the C runtime's `atexit`).
pub(crate) fn at_host_exit(hook: extern "C" fn()) {
    extern "C" {
        fn atexit(hook: extern "C" fn()) -> i32;
    }
    // SAFETY: registers a plain `extern "C" fn`; failure only means no hook
    // (the jobs still end when the host's handles close).
    unsafe { atexit(hook) };
}

/// Not needed: there is no reaper here.
pub(crate) fn loaded_from() -> Option<PathBuf> {
    None
}

/// Windows has no execute permission to check beyond being a regular file.
pub(crate) fn may_execute(_path: &Path) -> Result<(), i32> {
    Ok(())
}

/// Nothing to set before the directory exists: see [`restrict_to_owner`].
pub(crate) fn owner_only_dir(_builder: &mut DirBuilder) {}

/// The file inherits its directory's ACL (see [`restrict_to_owner`]).
pub(crate) fn owner_only_file(_options: &mut OpenOptions) {}

/// Makes the directory `path` this user's alone: a protected DACL (nothing
/// inherited from the parent) with one entry, full control for this
/// process's user, inherited by every file and directory made in it.
pub(crate) fn restrict_to_owner(path: &Path) -> io::Result<()> {
    let user = ProcessUser::of_this_process()?;
    let sid = user.sid();
    // SAFETY: `sid` points into `user`, a valid TOKEN_USER, for this scope.
    let sid_len = unsafe { GetLengthSid(sid) } as usize;
    let size = size_of::<ACL>() + size_of::<ACCESS_ALLOWED_ACE>() - size_of::<u32>() + sid_len;
    // u32-aligned, as an ACL must be.
    let mut memory = vec![0u32; size.div_ceil(4)];
    let acl = memory.as_mut_ptr().cast::<ACL>();
    // SAFETY: `acl` is writable for `size` bytes; the SID is valid (above).
    let built = unsafe {
        InitializeAcl(acl, size as u32, ACL_REVISION) != 0
            && AddAccessAllowedAceEx(
                acl,
                ACL_REVISION,
                OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE,
                FILE_ALL_ACCESS,
                sid,
            ) != 0
    };
    if !built {
        return Err(io::Error::last_os_error());
    }
    let name = wide(path.as_os_str());
    // SAFETY: a NUL-terminated path; the ACL is built and outlives the call.
    let status = unsafe {
        SetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
            null_mut(),
            null_mut(),
            acl,
            null(),
        )
    };
    if status != 0 {
        return Err(io::Error::from_raw_os_error(status as i32));
    }
    Ok(())
}

/// This process's user, as its token reports it.
struct ProcessUser(Vec<u64>);

impl ProcessUser {
    fn of_this_process() -> io::Result<Self> {
        let mut token = null_mut();
        // SAFETY: the pseudo-handle of this process; `token` is a valid out pointer.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new, open handle, owned from here.
        let token = unsafe { OwnedHandle::from_raw_handle(token as RawHandle) };
        let mut needed = 0u32;
        // SAFETY: the documented size query: no buffer, a size out pointer.
        unsafe { GetTokenInformation(token.as_raw_handle() as HANDLE, TokenUser, null_mut(), 0, &mut needed) };
        // u64-aligned, more than a TOKEN_USER needs.
        let mut buffer = vec![0u64; (needed as usize).div_ceil(8)];
        // SAFETY: `buffer` is writable for `needed` bytes.
        let read = unsafe {
            GetTokenInformation(
                token.as_raw_handle() as HANDLE,
                TokenUser,
                buffer.as_mut_ptr().cast(),
                needed,
                &mut needed,
            )
        };
        if read == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(buffer))
    }

    /// The user's SID, pointing into this buffer.
    fn sid(&self) -> PSID {
        // SAFETY: GetTokenInformation(TokenUser) filled the buffer with a
        // TOKEN_USER, whose SID pointer points into the same buffer.
        unsafe { (*self.0.as_ptr().cast::<TOKEN_USER>()).User.Sid }
    }
}

/// Unknown here without reading ACLs: stale spill directories are not swept.
pub(crate) fn owned_by_this_user(_meta: &Metadata) -> bool {
    false
}

/// Nothing to do at the host's death: each job is made kill-on-close.
pub(crate) mod guardian {
    /// Nothing to hear of: the job ends with the host's handles.
    pub(crate) fn started(_pgid: u32, _live: &[u32]) {}

    /// Nothing to hear of.
    pub(crate) fn ending(_pgid: u32, _live: &[u32]) {}

    /// Nothing to dismiss.
    pub(crate) fn dismiss() {}
}

/// This package's spawns, one at a time (see `spawn_leader`).
fn spawning() -> &'static Mutex<()> {
    static SPAWNING: Mutex<()> = Mutex::new(());
    &SPAWNING
}

/// The completion port every job reports to, and the thread reading it.
fn completion_port() -> io::Result<HANDLE> {
    static PORT: OnceLock<Result<usize, i32>> = OnceLock::new();
    let port = PORT.get_or_init(|| {
        // SAFETY: makes a new port; no memory effects.
        let port = unsafe { CreateIoCompletionPort(INVALID_HANDLE_VALUE, null_mut(), 0, 1) };
        if port.is_null() {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        let address = port as usize;
        std::thread::Builder::new()
            .name("dsh-job-port".into())
            .stack_size(64 * 1024)
            .spawn(move || read_port(address as HANDLE))
            .map_err(|error| error.raw_os_error().unwrap_or(0))?;
        Ok(address)
    });
    port.map(|address| address as HANDLE).map_err(io::Error::from_raw_os_error)
}

/// Reads the port for good: a leader's exit wakes its watchers, and a job's
/// last process (`ACTIVE_PROCESS_ZERO`) wakes whoever waits for the job to
/// empty ([`group_may_be_empty`]).
fn read_port(port: HANDLE) {
    loop {
        let (mut message, mut key, mut overlapped) = (0u32, 0usize, null_mut::<OVERLAPPED>());
        // SAFETY: the port lives for the process; the out pointers are valid.
        if unsafe { GetQueuedCompletionStatus(port, &mut message, &mut key, &mut overlapped, INFINITE) } == 0 {
            continue;
        }
        // For process messages the "overlapped" value is the process id.
        let process = overlapped as usize as u32;
        let mut children = crate::process::sync::lock(children());
        // A job already reaped has no entry: its late messages are dropped.
        let Some(child) = children.values_mut().find(|child| child.key == key) else { continue };
        match message {
            JOB_OBJECT_MSG_EXIT_PROCESS | JOB_OBJECT_MSG_ABNORMAL_EXIT_PROCESS if process == child.pid => {
                child.exited.send_replace(true);
            }
            JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO => {
                // The leader is gone too.
                child.exited.send_replace(true);
                child.empty.send_replace(true);
            }
            // Windows ends every process of the job (its default end-of-time action).
            JOB_OBJECT_MSG_END_OF_JOB_TIME => child.observed.cpu_ended = true,
            JOB_OBJECT_MSG_ACTIVE_PROCESS_LIMIT => child.observed.forks_refused = true,
            JOB_OBJECT_MSG_JOB_MEMORY_LIMIT => child.observed.memory_refused = true,
            _ => {}
        }
    }
}

/// A new job whose processes all end when its last handle closes (the host's
/// death included), that a crash inside it does not hold up, and that holds
/// `limits`: memory (`JobMemoryLimit`, all its processes together), processes
/// at once (`ActiveProcessLimit`) and user CPU time (`PerJobUserTimeLimit`,
/// after which Windows ends every process of the job). The others are refused
/// before this (`crate::limits::mechanism`).
fn new_job(limits: &Limits) -> io::Result<OwnedHandle> {
    // SAFETY: an anonymous job with default security; no memory effects.
    let job = unsafe { CreateJobObjectW(null(), null()) };
    if job.is_null() {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new, open handle, owned from here.
    let job = unsafe { OwnedHandle::from_raw_handle(job as RawHandle) };
    // SAFETY: zeroed is a valid limit structure; only the fields named below are set.
    let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { zeroed() };
    info.BasicLimitInformation.LimitFlags =
        JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
    if let Some(bytes) = limits.memory_bytes {
        info.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_MEMORY;
        info.JobMemoryLimit = usize::try_from(bytes).unwrap_or(usize::MAX);
    }
    if let Some(processes) = limits.processes {
        info.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
        info.BasicLimitInformation.ActiveProcessLimit = u32::try_from(processes).unwrap_or(u32::MAX);
    }
    if let Some(seconds) = limits.cpu_seconds {
        info.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_TIME;
        // In units of 100 ns.
        info.BasicLimitInformation.PerJobUserTimeLimit =
            i64::try_from(seconds.saturating_mul(10_000_000)).unwrap_or(i64::MAX);
    }
    set_job_information(&job, JobObjectExtendedLimitInformation, &info)?;
    Ok(job)
}

/// Has `job` report to `port` under `key`.
fn associate(job: &OwnedHandle, port: HANDLE, key: usize) -> io::Result<()> {
    let association = JOBOBJECT_ASSOCIATE_COMPLETION_PORT { CompletionKey: key as *mut _, CompletionPort: port };
    set_job_information(job, JobObjectAssociateCompletionPortInformation, &association)
}

/// `SetInformationJobObject` of `job` with `info`, the structure `class` names.
fn set_job_information<T>(
    job: &OwnedHandle,
    class: windows_sys::Win32::System::JobObjects::JOBOBJECTINFOCLASS,
    info: &T,
) -> io::Result<()> {
    // SAFETY: an open job; `info` is the structure `class` names (each caller
    // pairs them), readable for its size.
    let set = unsafe {
        SetInformationJobObject(job.as_raw_handle() as HANDLE, class, (info as *const T).cast(), size_of::<T>() as u32)
    };
    if set == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Which way a pipe's bytes go.
enum Direction {
    FromChild,
    ToChild,
}

/// A pipe: the host's end (a named pipe's server, overlapped, for the
/// runtime) and the child's (synchronous).
fn pipe(direction: Direction) -> io::Result<(OwnedHandle, OwnedHandle)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = format!(r"\\.\pipe\dsh-shell-env-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let name = wide(OsStr::new(&name));
    let (host_access, child_access) = match direction {
        Direction::FromChild => (PIPE_ACCESS_INBOUND, GENERIC_WRITE),
        Direction::ToChild => (PIPE_ACCESS_OUTBOUND, GENERIC_READ),
    };
    // SAFETY: a NUL-terminated name; the first instance, so no other process
    // can have made a pipe of that name to intercept the child's end.
    let host = unsafe {
        CreateNamedPipeW(
            name.as_ptr(),
            host_access | FILE_FLAG_FIRST_PIPE_INSTANCE | FILE_FLAG_OVERLAPPED,
            PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
            1,
            64 * 1024,
            64 * 1024,
            0,
            null(),
        )
    };
    if host == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new, open handle, owned from here.
    let host = unsafe { OwnedHandle::from_raw_handle(host as RawHandle) };
    // Not inheritable yet: see `spawn_leader`.
    // SAFETY: a NUL-terminated name of the pipe made above.
    let child = unsafe { CreateFileW(name.as_ptr(), child_access, 0, null(), OPEN_EXISTING, 0, null_mut()) };
    if child == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new, open handle, owned from here.
    let child = unsafe { OwnedHandle::from_raw_handle(child as RawHandle) };
    // The client is connected already; an overlapped connect would only
    // report that (ERROR_PIPE_CONNECTED) or pend.
    // SAFETY: zeroed is a valid OVERLAPPED with no event.
    let mut overlapped: OVERLAPPED = unsafe { zeroed() };
    // SAFETY: an open server handle; `overlapped` outlives the call, which
    // cannot pend with a client already connected.
    let connected = unsafe { ConnectNamedPipe(host.as_raw_handle() as HANDLE, &mut overlapped) };
    // SAFETY: no arguments.
    if connected == 0 && unsafe { GetLastError() } != ERROR_PIPE_CONNECTED {
        return Err(io::Error::last_os_error());
    }
    Ok((host, child))
}

/// `NUL`, for a child without stdin (inheritable only at the spawn).
fn null_device() -> io::Result<OwnedHandle> {
    let name = wide(OsStr::new("NUL"));
    // SAFETY: a NUL-terminated name.
    let handle = unsafe { CreateFileW(name.as_ptr(), GENERIC_READ, 0, null(), OPEN_EXISTING, 0, null_mut()) };
    if handle == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new, open handle, owned from here.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) })
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

/// `text` as a NUL-terminated UTF-16 string.
fn wide(text: &OsStr) -> Vec<u16> {
    text.encode_wide().chain(Some(0)).collect()
}
