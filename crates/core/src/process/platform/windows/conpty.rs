//! Pseudo consoles (ConPTY): what a command on a terminal runs in. Windows
//! 10 version 1809 brought them; their functions are looked up when first
//! needed rather than imported, so the addon still loads on an older Windows,
//! where a terminal is refused instead ([`available`]).
//!
//! A pseudo console is a conhost process the host starts. It reads the
//! command's input from one pipe and writes what the command's console shows,
//! as VT sequences, to another. Conhost holds the output pipe open until the
//! pseudo console is closed, so closing it is what ends a terminal's output:
//! the leader's exit does that (the terminal's hang-up, see `job.rs`).

use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::sync::OnceLock;

use windows_sys::core::HRESULT;
use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::Console::{COORD, HPCON};
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};

use crate::process::terminal::TerminalSize;

use super::wide;

type Create = unsafe extern "system" fn(COORD, HANDLE, HANDLE, u32, *mut HPCON) -> HRESULT;
type Close = unsafe extern "system" fn(HPCON);

/// kernel32's pseudo console functions.
struct Api {
    create: Create,
    close: Close,
}

/// The functions, where this Windows has them.
fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        let kernel32 = wide("kernel32.dll".as_ref());
        // SAFETY: kernel32 is loaded in every process; the names are
        // NUL-terminated; nothing found is called here.
        let (create, close) = unsafe {
            let module = GetModuleHandleW(kernel32.as_ptr());
            if module.is_null() {
                return None;
            }
            (
                GetProcAddress(module, c"CreatePseudoConsole".as_ptr().cast())?,
                GetProcAddress(module, c"ClosePseudoConsole".as_ptr().cast())?,
            )
        };
        // SAFETY: these exports have these signatures (consoleapi.h); a
        // function pointer is transmuted to another of the same size.
        unsafe {
            Some(Api {
                create: std::mem::transmute::<unsafe extern "system" fn() -> isize, Create>(create),
                close: std::mem::transmute::<unsafe extern "system" fn() -> isize, Close>(close),
            })
        }
    })
    .as_ref()
}

/// Whether this Windows has pseudo consoles (10 version 1809 and later).
pub(super) fn available() -> bool {
    api().is_some()
}

/// An open pseudo console. Dropping it closes it, on a thread of its own:
/// `ClosePseudoConsole` waits for conhost to end, which before Windows 11
/// 24H2 waits until its last output has been read.
pub(super) struct PseudoConsole(HPCON);

impl PseudoConsole {
    /// A pseudo console of `size` that reads the command's input from `input`
    /// and writes its output to `output`: the synchronous ends of two pipes,
    /// which conhost takes copies of, so the caller may close its own.
    pub(super) fn open(size: TerminalSize, input: &OwnedHandle, output: &OwnedHandle) -> io::Result<Self> {
        let api = api().ok_or(io::ErrorKind::Unsupported)?;
        let cells = |count: u16| {
            i16::try_from(count).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "a pseudo console has at most 32767 rows and columns")
            })
        };
        let size = COORD { X: cells(size.cols)?, Y: cells(size.rows)? };
        let mut console: HPCON = 0;
        // SAFETY: two open pipe handles, borrowed for the call; `console` is
        // a valid out pointer.
        let result = unsafe {
            (api.create)(size, input.as_raw_handle() as HANDLE, output.as_raw_handle() as HANDLE, 0, &mut console)
        };
        if result < 0 {
            return Err(hresult_error(result));
        }
        Ok(Self(console))
    }

    /// The value of the process attribute that starts a command on it.
    pub(super) fn raw(&self) -> HPCON {
        self.0
    }
}

impl Drop for PseudoConsole {
    fn drop(&mut self) {
        let console = self.0;
        let Some(api) = api() else { return };
        let close = api.close;
        // SAFETY: an open pseudo console, closed once, on that thread.
        let closing = std::thread::Builder::new()
            .name("dsh-conpty-close".into())
            .stack_size(64 * 1024)
            .spawn(move || unsafe { close(console) });
        // With no thread to spare the console stays open rather than be
        // closed here, where the wait could stall the caller (the JS thread,
        // after a failed spawn): its conhost then ends with the host.
        drop(closing);
    }
}

/// An `HRESULT` failure as an OS error: a Win32 error wrapped in one
/// (`HRESULT_FROM_WIN32`) as that error, any other as its number.
fn hresult_error(result: HRESULT) -> io::Error {
    let bits = result as u32;
    if bits & 0xFFFF_0000 == 0x8007_0000 {
        io::Error::from_raw_os_error((bits & 0xFFFF) as i32)
    } else {
        io::Error::other(format!("CreatePseudoConsole failed ({bits:#010x})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_creation_reads_as_the_win32_error_it_wraps_or_names_its_hresult() {
        // HRESULT_FROM_WIN32 of ERROR_ACCESS_DENIED and of ERROR_INVALID_PARAMETER (E_INVALIDARG).
        assert_eq!(hresult_error(0x8007_0005_u32 as HRESULT).raw_os_error(), Some(5));
        let other = hresult_error(0x8007_0057_u32 as HRESULT);
        assert_eq!(other.raw_os_error(), Some(0x57));
        // E_FAIL wraps no Win32 error.
        let unwrapped = hresult_error(0x8000_4005_u32 as HRESULT);
        assert_eq!(unwrapped.raw_os_error(), None);
        assert!(unwrapped.to_string().contains("0x80004005"), "{unwrapped}");
    }

    #[test]
    fn this_windows_has_pseudo_consoles() {
        // Windows 10 1809 and later, and wine 8: every machine the tests run on.
        assert!(available());
    }
}
