//! Signals read from a signalfd, so that neither the supervisor nor a reaper
//! installs a handler.

use std::io;
use std::mem::{size_of, MaybeUninit};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr;

/// Blocks `signals` and returns a non-blocking, close-on-exec signalfd that
/// reads them.
pub(crate) fn watch(signals: &[libc::c_int]) -> io::Result<OwnedFd> {
    let set = set_of(signals);
    // SAFETY: `set` is an initialised set; the old mask is not wanted.
    unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, ptr::null_mut()) };
    // SAFETY: a new descriptor for the blocked set.
    let fd = unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just created, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The next pending signal, if any.
pub(crate) fn next(signal_fd: &OwnedFd) -> Option<libc::c_int> {
    let mut info = MaybeUninit::<libc::signalfd_siginfo>::zeroed();
    let size = size_of::<libc::signalfd_siginfo>();
    // SAFETY: reads at most one siginfo into a buffer of that size.
    let read = unsafe { libc::read(signal_fd.as_raw_fd(), info.as_mut_ptr().cast(), size) };
    // SAFETY: zeroed, then filled by a complete read.
    (read == size as isize).then(|| unsafe { info.assume_init() }.ssi_signo as libc::c_int)
}

fn set_of(signals: &[libc::c_int]) -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set; sigaddset only adds to it.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for &signal in signals {
            libc::sigaddset(set.as_mut_ptr(), signal);
        }
        set.assume_init()
    }
}
