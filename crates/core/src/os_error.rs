//! The name and number Node gives an OS error (`error.code`, `error.errno`)
//! for the errors a spawn or a workdir check can meet, so that the same
//! failure reads the same from this package as from `child_process`.
//! Platform code at the bottom of the core: `error` names OS failures with
//! it, and so does the binding.

#[cfg(unix)]
pub use unix::{node_errno, os_error_name};
#[cfg(not(unix))]
pub use windows::{node_errno, os_error_name};

#[cfg(unix)]
mod unix {
    /// The name Node gives an OS error in `error.code` (`ENOENT`, `EACCES`, …),
    /// for the errors a spawn or a workdir check can meet: the errno's own name.
    pub fn os_error_name(code: i32) -> Option<&'static str> {
        Some(match code {
            libc::EPERM => "EPERM",
            libc::ENOENT => "ENOENT",
            libc::EINTR => "EINTR",
            libc::EIO => "EIO",
            libc::E2BIG => "E2BIG",
            libc::ENOEXEC => "ENOEXEC",
            libc::EBADF => "EBADF",
            libc::EAGAIN => "EAGAIN",
            libc::ENOMEM => "ENOMEM",
            libc::EACCES => "EACCES",
            libc::EFAULT => "EFAULT",
            libc::ENOTDIR => "ENOTDIR",
            libc::EISDIR => "EISDIR",
            libc::EINVAL => "EINVAL",
            libc::ENFILE => "ENFILE",
            libc::EMFILE => "EMFILE",
            libc::ETXTBSY => "ETXTBSY",
            libc::ENOSPC => "ENOSPC",
            libc::ENAMETOOLONG => "ENAMETOOLONG",
            libc::ELOOP => "ELOOP",
            libc::ENOSYS => "ENOSYS",
            _ => return None,
        })
    }

    /// The `errno` Node gives an OS error: the negated errno (libuv's numbers
    /// are the system's own here).
    pub fn node_errno(code: i32) -> i32 {
        -code
    }
}

#[cfg(not(unix))]
mod windows {
    /// The Windows errors a spawn or a workdir check can meet, as libuv
    /// translates them: the name Node gives them in `error.code` and libuv's
    /// number, Node's `errno` (not the Windows code: `ENOENT` is -4058).
    const TRANSLATED: &[(&[i32], &str, i32)] = &[
        // ERROR_FILE_NOT_FOUND, ERROR_PATH_NOT_FOUND, ERROR_INVALID_DRIVE,
        // ERROR_INVALID_NAME, ERROR_BAD_PATHNAME, ERROR_MOD_NOT_FOUND
        (&[2, 3, 15, 123, 161, 126], "ENOENT", -4058),
        // ERROR_TOO_MANY_OPEN_FILES
        (&[4], "EMFILE", -4066),
        // ERROR_ACCESS_DENIED
        (&[5], "EPERM", -4048),
        // ERROR_NOT_ENOUGH_MEMORY, ERROR_OUTOFMEMORY
        (&[8, 14], "ENOMEM", -4057),
        // ERROR_INVALID_PARAMETER, ERROR_INVALID_DATA
        (&[87, 13], "EINVAL", -4071),
        // ERROR_DISK_FULL
        (&[112], "ENOSPC", -4055),
        // ERROR_BAD_EXE_FORMAT
        (&[193], "EFTYPE", -4028),
        // ERROR_FILENAME_EXCED_RANGE
        (&[206], "ENAMETOOLONG", -4064),
        // ERROR_DIRECTORY: "the directory name is invalid", a file named as a directory
        (&[267], "ENOTDIR", -4052),
        // ERROR_ELEVATION_REQUIRED, ERROR_NOACCESS
        (&[740, 998], "EACCES", -4092),
    ];

    /// libuv's `UV_UNKNOWN` on Windows: Node's `errno` for an error it has no name for.
    const UNKNOWN_ERRNO: i32 = -4094;

    /// The row of [`TRANSLATED`] that holds `code`.
    fn translated(code: i32) -> Option<&'static (&'static [i32], &'static str, i32)> {
        TRANSLATED.iter().find(|(codes, _, _)| codes.contains(&code))
    }

    /// The name Node gives an OS error in `error.code` (`ENOENT`, `EPERM`, …),
    /// for the errors a spawn or a workdir check can meet: a Windows error code
    /// named as libuv translates it, so the same failure has the same code from
    /// this package as from `child_process` (an unknown code has none).
    pub fn os_error_name(code: i32) -> Option<&'static str> {
        translated(code).map(|(_, name, _)| *name)
    }

    /// The `errno` Node gives an OS error: libuv's number for it (`UV_UNKNOWN`
    /// for a code it has no name for), as `child_process` reports it; 0 for
    /// none (an error the package made, not the OS).
    pub fn node_errno(code: i32) -> i32 {
        match code {
            0 => 0,
            _ => translated(code).map_or(UNKNOWN_ERRNO, |(_, _, errno)| *errno),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn os_errors_are_named_and_numbered_as_node_names_and_numbers_them() {
        assert_eq!((os_error_name(libc::ENOENT), node_errno(libc::ENOENT)), (Some("ENOENT"), -libc::ENOENT));
        assert_eq!(os_error_name(libc::ENOEXEC), Some("ENOEXEC"));
        assert_eq!(os_error_name(-1), None);
    }

    #[cfg(windows)]
    #[test]
    fn os_errors_are_named_and_numbered_as_node_names_and_numbers_them() {
        // ERROR_FILE_NOT_FOUND and ERROR_PATH_NOT_FOUND are both ENOENT, libuv's -4058.
        for code in [2, 3] {
            assert_eq!((os_error_name(code), node_errno(code)), (Some("ENOENT"), -4058));
        }
        assert_eq!((os_error_name(5), node_errno(5)), (Some("EPERM"), -4048));
        // A code libuv has no name for is UV_UNKNOWN; no OS error at all is 0, as on POSIX.
        assert_eq!((os_error_name(1_234_567), node_errno(1_234_567)), (None, -4094));
        assert_eq!(node_errno(0), 0);
    }
}
