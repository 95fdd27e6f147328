//! Ownership and access: private directories by a protected ACL that
//! grants this process's user alone.

use std::fs::{DirBuilder, Metadata, OpenOptions};
use std::io;
use std::mem::size_of;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::path::Path;
use std::ptr::{null, null_mut};

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::Security::Authorization::{SetNamedSecurityInfoW, SE_FILE_OBJECT};
use windows_sys::Win32::Security::{
    AddAccessAllowedAceEx, GetLengthSid, GetTokenInformation, InitializeAcl, TokenUser, ACCESS_ALLOWED_ACE, ACL,
    ACL_REVISION, CONTAINER_INHERIT_ACE, DACL_SECURITY_INFORMATION, OBJECT_INHERIT_ACE,
    PROTECTED_DACL_SECURITY_INFORMATION, PSID, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::FILE_ALL_ACCESS;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

use super::wide;

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

/// Nothing to add: opening a file never waits on Windows, where pipes live
/// in a namespace of their own.
pub(crate) fn never_blocking_open(_options: &mut OpenOptions) {}

/// What a file that is neither a regular file, a directory nor a symlink is.
pub(crate) fn special_file_kind(_kind: &std::fs::FileType) -> &'static str {
    "a special file"
}

/// Unknown here without reading ACLs: stale spill directories are not swept.
pub(crate) fn owned_by_this_user(_meta: &Metadata) -> bool {
    false
}
