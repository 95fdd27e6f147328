//! The pipes of a command's standard streams: named pipes, overlapped on the
//! host's end, as the runtime reads them; `NUL` for a stdin without one; a
//! copy of the host's own handle for an inherited stdout or stderr.

use std::ffi::OsStr;
use std::io;
use std::mem::zeroed;
use std::os::windows::io::{AsRawHandle, BorrowedHandle, FromRawHandle, IntoRawHandle, OwnedHandle, RawHandle};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::net::windows::named_pipe::NamedPipeServer;
use windows_sys::Win32::Foundation::{
    GetLastError, ERROR_PIPE_CONNECTED, GENERIC_READ, GENERIC_WRITE, HANDLE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_FLAG_FIRST_PIPE_INSTANCE, FILE_FLAG_OVERLAPPED, OPEN_EXISTING, PIPE_ACCESS_INBOUND,
    PIPE_ACCESS_OUTBOUND,
};
use windows_sys::Win32::System::Console::{GetStdHandle, STD_HANDLE};
use windows_sys::Win32::System::Pipes::{
    ConnectNamedPipe, CreateNamedPipeW, PIPE_READMODE_BYTE, PIPE_REJECT_REMOTE_CLIENTS, PIPE_TYPE_BYTE, PIPE_WAIT,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

use super::{wide, Fd, PipeReader, PipeWriter};

/// Registers a pipe's host end with the runtime (inside its context).
pub(crate) fn async_reader(fd: Fd) -> io::Result<PipeReader> {
    // SAFETY: a named pipe's server end, opened overlapped, owned and given up here.
    unsafe { NamedPipeServer::from_raw_handle(fd.into_raw_handle()) }
}

/// Registers a pipe's host end with the runtime (inside its context).
pub(crate) fn async_writer(fd: Fd) -> io::Result<PipeWriter> {
    async_reader(fd)
}

/// Which way a pipe's bytes go.
pub(super) enum Direction {
    FromChild,
    ToChild,
}

/// A pipe: the host's end (a named pipe's server, overlapped, for the
/// runtime) and the child's (synchronous).
pub(super) fn pipe(direction: Direction) -> io::Result<(OwnedHandle, OwnedHandle)> {
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

/// `NUL`, opened the way `direction` says: for a child without stdin, or
/// for one inheriting an output the host does not have (inheritable only at
/// the spawn).
pub(super) fn null_device(direction: Direction) -> io::Result<OwnedHandle> {
    let name = wide(OsStr::new("NUL"));
    let access = match direction {
        Direction::FromChild => GENERIC_WRITE,
        Direction::ToChild => GENERIC_READ,
    };
    // SAFETY: a NUL-terminated name.
    let handle = unsafe { CreateFileW(name.as_ptr(), access, 0, null(), OPEN_EXISTING, 0, null_mut()) };
    if handle == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new, open handle, owned from here.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) })
}

/// The host's own standard output or error (`which`) for a child that
/// inherits it: a copy of the handle, inheritable only at the spawn like the
/// others, so the host's own handle is never made inheritable. A host without
/// one (a service, a program without a console) gives the child `NUL`, as
/// `child_process` does.
pub(super) fn inherited_output(which: STD_HANDLE) -> io::Result<OwnedHandle> {
    // SAFETY: no memory effects; returns a handle the host owns, null, or
    // INVALID_HANDLE_VALUE.
    let own = unsafe { GetStdHandle(which) };
    if own.is_null() || own == INVALID_HANDLE_VALUE {
        return null_device(Direction::FromChild);
    }
    // SAFETY: the host's standard handle is open for as long as this call
    // borrows it (the host does not close its own standard handles while a
    // spawn runs); the copy is a new handle owned from here.
    unsafe { BorrowedHandle::borrow_raw(own as RawHandle) }.try_clone_to_owned()
}
