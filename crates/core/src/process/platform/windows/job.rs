//! Jobs: every command's Job Object, with its limits, and the one
//! completion port that reports each leader's exit and each job's last
//! process; signals, exits and reaping by leader pid.

use std::collections::HashMap;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::ptr::{null, null_mut};
use std::sync::{Mutex, OnceLock};

use tokio::sync::watch;
use windows_sys::Win32::Foundation::{HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0};
use windows_sys::Win32::System::Console::{GenerateConsoleCtrlEvent, CTRL_BREAK_EVENT};
use windows_sys::Win32::System::JobObjects::{
    CreateJobObjectW, JobObjectAssociateCompletionPortInformation, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
    JOBOBJECT_ASSOCIATE_COMPLETION_PORT, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JOB_OBJECT_LIMIT_ACTIVE_PROCESS, JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION, JOB_OBJECT_LIMIT_JOB_MEMORY,
    JOB_OBJECT_LIMIT_JOB_TIME, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::SystemServices::{
    JOB_OBJECT_MSG_ABNORMAL_EXIT_PROCESS, JOB_OBJECT_MSG_ACTIVE_PROCESS_LIMIT, JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO,
    JOB_OBJECT_MSG_END_OF_JOB_TIME, JOB_OBJECT_MSG_EXIT_PROCESS, JOB_OBJECT_MSG_JOB_MEMORY_LIMIT,
};
use windows_sys::Win32::System::Threading::{GetExitCodeProcess, WaitForSingleObject, INFINITE};
use windows_sys::Win32::System::IO::{CreateIoCompletionPort, GetQueuedCompletionStatus, OVERLAPPED};

use crate::limits::{Limits, Observed};
use crate::process::exit::{Exit, Signal};

use super::conpty::PseudoConsole;

/// The exit code a job terminated by this package gives its processes
/// ("DSHK", one no program is likely to exit with); the result reports it as
/// `SIGKILL`, as Node does for a child it killed.
const KILLED_EXIT_CODE: u32 = 0x4453_484B;

/// What is known of one command: its process, its job, and what the
/// completion port said.
pub(super) struct Child {
    /// The completion key of its job: unique for the host's life, unlike the
    /// pid, which Windows may give the next command once this one is reaped
    /// while the old job's last messages are still queued.
    pub(super) key: usize,
    /// The leader's pid.
    pub(super) pid: u32,
    pub(super) process: OwnedHandle,
    pub(super) job: OwnedHandle,
    /// The leader's exit, once the completion port reported it.
    pub(super) exited: watch::Sender<bool>,
    /// The job's last process is gone (`ACTIVE_PROCESS_ZERO`).
    pub(super) empty: watch::Sender<bool>,
    /// This package terminated the job: the leader's exit is a kill.
    pub(super) terminated: bool,
    /// What the job's limits did, as the completion port said.
    pub(super) observed: Observed,
    /// The pseudo console it runs on, until it is hung up.
    pub(super) console: Option<PseudoConsole>,
}

impl Child {
    /// Closes its pseudo console, if it has one still: the terminal's
    /// hang-up. Conhost sends its clients `CTRL_CLOSE_EVENT` and ends, and
    /// with it the output pipe: the host reads the terminal's last output
    /// up to its end. Done at the leader's exit, and as the graceful first
    /// step of ending a command on a terminal.
    fn hang_up(&mut self) {
        drop(self.console.take());
    }
}

/// Every command not yet reaped, by leader pid.
pub(super) fn children() -> &'static Mutex<HashMap<u32, Child>> {
    static CHILDREN: OnceLock<Mutex<HashMap<u32, Child>>> = OnceLock::new();
    CHILDREN.get_or_init(Default::default)
}

fn with_child<T>(pid: u32, f: impl FnOnce(&mut Child) -> T) -> Option<T> {
    crate::process::sync::lock(children()).get_mut(&pid).map(f)
}

/// Signals the command's job: `Term` is CTRL_BREAK to its console process
/// group (where the host has a console to share), `Kill` ends every process
/// in the job.
pub(crate) fn signal_group(pid: u32, signal: Signal) {
    match signal {
        Signal::Term => {
            // A terminal's processes share no console with the host: they
            // hear of its hang-up instead.
            let hung_up = with_child(pid, |child| {
                let on_terminal = child.console.is_some();
                child.hang_up();
                on_terminal
            });
            if hung_up == Some(true) {
                return;
            }
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
    pub(crate) fn from_link(_link: super::super::supervisor::Link) -> io::Result<Self> {
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
    // Where the port's message was lost, the terminal is hung up here.
    let (terminated, observed) = with_child(pid, |child| {
        child.hang_up();
        (terminated || child.terminated, child.observed)
    })
    .unwrap_or((terminated, Observed::NONE));
    Ok(Some(if terminated && code == KILLED_EXIT_CODE {
        Exit { code: None, signal: Some("SIGKILL"), observed, ..Exit::UNKNOWN }
    } else {
        // Exit codes are unsigned here; a crash's NTSTATUS (0xC0000005) reads
        // as negative (-1073741819), where Node shows it unsigned.
        Exit { code: Some(code as i32), signal: None, observed, ..Exit::UNKNOWN }
    }))
}

/// Forgets `pid`: closes its process handle, its job, whose processes have
/// all been dealt with (closing the job would end any left), and its pseudo
/// console, if it still had one.
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

/// The completion port every job reports to, and the thread reading it.
pub(super) fn completion_port() -> io::Result<HANDLE> {
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
                child.hang_up();
                child.exited.send_replace(true);
            }
            JOB_OBJECT_MSG_ACTIVE_PROCESS_ZERO => {
                // The leader is gone too.
                child.hang_up();
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
pub(super) fn new_job(limits: &Limits) -> io::Result<OwnedHandle> {
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
pub(super) fn associate(job: &OwnedHandle, port: HANDLE, key: usize) -> io::Result<()> {
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
