//! The host's ends of a command's raw pipes handed to JS as descriptors that
//! `net.Socket({ fd })` opens (pipes.js), which then owns and closes them.
//!
//! On Windows a descriptor belongs to one C runtime, and Node's is linked
//! into its executable: a descriptor made by this library's own runtime would
//! name nothing there. So the handle is registered through the host's libuv,
//! `uv_open_osfhandle`, part of libuv's public API that Node exports to
//! addons; it is looked up once in the host executable, then in `libnode.dll`
//! for hosts that embed Node as a library. A host without it cannot take raw
//! pipes: `execute()` and `spawn()` refuse `stdio: 'pipe'` there, before
//! anything starts, with `ERR_SHELL_EXEC_UNSUPPORTED`.

use dsh_shell_env_core::command::StdioRequest;
use dsh_shell_env_core::error::ExecError;

/// `stdio` asks for a raw pipe this host cannot hand to JS: refused before
/// anything starts.
pub(crate) fn check(stdio: &StdioRequest) -> Result<(), ExecError> {
    if stdio.hands_over_pipes() && !available() {
        return Err(ExecError::Unsupported {
            feature: "stdio 'pipe'".into(),
            reason: "needs the host's libuv (uv_open_osfhandle) to give Node the pipe, and this host does not export it; use 'capture' or 'inherit'".into(),
        });
    }
    Ok(())
}

/// A pipe end handed to JS, which closes it from now on.
#[cfg(unix)]
pub(crate) fn hand_over(fd: Option<std::os::fd::OwnedFd>) -> Option<i64> {
    use std::os::fd::IntoRawFd;
    fd.map(|fd| i64::from(fd.into_raw_fd()))
}

/// Any descriptor is Node's on POSIX.
#[cfg(unix)]
fn available() -> bool {
    true
}

/// A pipe end handed to JS as a descriptor of Node's C runtime, which
/// closes it from now on; `None` (the handle closed, so the command sees a
/// broken pipe) if the runtime refuses it.
#[cfg(windows)]
pub(crate) fn hand_over(handle: Option<std::os::windows::io::OwnedHandle>) -> Option<i64> {
    use std::os::windows::io::IntoRawHandle;
    let (handle, open) = (handle?, open_osfhandle()?);
    let raw = handle.into_raw_handle();
    // SAFETY: `open` is libuv's `uv_open_osfhandle` (the signature below);
    // the handle is open and owned here, and the C runtime owns it once the
    // call returns a descriptor.
    let fd = unsafe { open(raw) };
    if fd < 0 {
        // SAFETY: not taken by the runtime, so still owned here; closed once.
        drop(unsafe {
            <std::os::windows::io::OwnedHandle as std::os::windows::io::FromRawHandle>::from_raw_handle(raw)
        });
        return None;
    }
    Some(i64::from(fd))
}

#[cfg(windows)]
fn available() -> bool {
    open_osfhandle().is_some()
}

/// libuv's `int uv_open_osfhandle(uv_os_fd_t os_fd)`; `uv_os_fd_t` is a HANDLE.
#[cfg(windows)]
type OpenOsfHandle = unsafe extern "C" fn(std::os::windows::io::RawHandle) -> std::ffi::c_int;

/// The host's `uv_open_osfhandle`, looked up once.
#[cfg(windows)]
fn open_osfhandle() -> Option<OpenOsfHandle> {
    use std::sync::OnceLock;
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    static FOUND: OnceLock<Option<OpenOsfHandle>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let library: Vec<u16> = "libnode.dll".encode_utf16().chain(Some(0)).collect();
        // SAFETY: null names the host executable; the other is a
        // NUL-terminated name. Neither call loads anything.
        let modules = unsafe { [GetModuleHandleW(std::ptr::null()), GetModuleHandleW(library.as_ptr())] };
        modules.into_iter().filter(|module| !module.is_null()).find_map(|module| {
            // SAFETY: a loaded module and a NUL-terminated symbol name.
            let symbol = unsafe { GetProcAddress(module, c"uv_open_osfhandle".as_ptr().cast()) }?;
            // SAFETY: libuv declares `int uv_open_osfhandle(uv_os_fd_t)` with
            // the C calling convention, which `OpenOsfHandle` spells.
            Some(unsafe { std::mem::transmute::<unsafe extern "system" fn() -> isize, OpenOsfHandle>(symbol) })
        })
    })
}
