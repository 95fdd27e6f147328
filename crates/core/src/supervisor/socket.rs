//! The sockets of the [protocol](super::protocol): a close-on-exec
//! `SOCK_SEQPACKET` pair, and one message sent or received with the
//! descriptors it carries (`SCM_RIGHTS`).

use std::io;
use std::mem::{size_of, size_of_val, MaybeUninit};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr;

/// The most descriptors one message carries.
const MAX_FDS: usize = 4;

/// A connected pair of `SOCK_SEQPACKET` sockets, both close-on-exec.
pub fn pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors socketpair writes.
    let done =
        unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) };
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Sends `bytes` as one message with `fds` attached, never raising SIGPIPE
/// (a peer that is gone is `EPIPE`). `nonblocking` fails with `WouldBlock`
/// instead of waiting for room.
pub fn send(socket: &OwnedFd, bytes: &[u8], fds: &[RawFd], nonblocking: bool) -> io::Result<()> {
    assert!(fds.len() <= MAX_FDS, "at most {MAX_FDS} descriptors a message");
    let mut iov = libc::iovec { iov_base: bytes.as_ptr() as *mut libc::c_void, iov_len: bytes.len() };
    let mut control = Control::new();
    // SAFETY: a zeroed msghdr is valid; its pointers are set below to buffers
    // that outlive the sendmsg call.
    let mut header: libc::msghdr = unsafe { MaybeUninit::zeroed().assume_init() };
    header.msg_iov = &mut iov;
    header.msg_iovlen = 1;
    if !fds.is_empty() {
        control.put(&mut header, fds);
    }
    let flags = libc::MSG_NOSIGNAL | if nonblocking { libc::MSG_DONTWAIT } else { 0 };
    loop {
        // SAFETY: `header` points to live buffers (see above).
        let sent = unsafe { libc::sendmsg(socket.as_raw_fd(), &header, flags) };
        if sent >= 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Receives one message into `buf`, with the descriptors it carries (made
/// close-on-exec). `Ok(None)` is the end: the peer closed its end.
/// `nonblocking` fails with `WouldBlock` when nothing is there.
///
/// A peer that closed with messages of ours unread (a reaper killed with an
/// order still queued) leaves `ECONNRESET` pending, which Linux reports
/// before the messages the peer sent: it is read past here, so that those
/// messages and then the end are what the caller sees.
pub fn receive(socket: RawFd, buf: &mut [u8], nonblocking: bool) -> io::Result<Option<(usize, Vec<OwnedFd>)>> {
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let mut control = Control::new();
    // SAFETY: as in `send`.
    let mut header: libc::msghdr = unsafe { MaybeUninit::zeroed().assume_init() };
    header.msg_iov = &mut iov;
    header.msg_iovlen = 1;
    header.msg_control = control.bytes.as_mut_ptr().cast();
    header.msg_controllen = size_of_val(&control.bytes) as _;
    let flags = libc::MSG_CMSG_CLOEXEC | if nonblocking { libc::MSG_DONTWAIT } else { 0 };
    let read = loop {
        // SAFETY: `header` points to live buffers of the lengths it states.
        let read = unsafe { libc::recvmsg(socket, &mut header, flags) };
        if read >= 0 {
            break read as usize;
        }
        let error = io::Error::last_os_error();
        if !matches!(error.kind(), io::ErrorKind::Interrupted | io::ErrorKind::ConnectionReset) {
            return Err(error);
        }
    };
    let fds = control.take(&header);
    if read == 0 && fds.is_empty() {
        return Ok(None);
    }
    Ok(Some((read, fds)))
}

/// Copies the next message on `socket` into `buf` without taking it (no
/// descriptors come with the messages this is used on), waiting for one
/// unless `nonblocking` (then `WouldBlock`); `None` at the end. A pending
/// `ECONNRESET` is read past, as in [`receive`].
pub fn peek(socket: RawFd, buf: &mut [u8], nonblocking: bool) -> io::Result<Option<usize>> {
    let flags = libc::MSG_PEEK | if nonblocking { libc::MSG_DONTWAIT } else { 0 };
    loop {
        // SAFETY: `buf` is live and writable for its length.
        let read = unsafe { libc::recv(socket, buf.as_mut_ptr().cast(), buf.len(), flags) };
        if read > 0 {
            return Ok(Some(read as usize));
        }
        if read == 0 {
            return Ok(None);
        }
        let error = io::Error::last_os_error();
        if !matches!(error.kind(), io::ErrorKind::Interrupted | io::ErrorKind::ConnectionReset) {
            return Err(error);
        }
    }
}

/// Room for one `SCM_RIGHTS` message of up to [`MAX_FDS`] descriptors, aligned
/// as `cmsghdr` needs.
struct Control {
    bytes: [u64; 8],
}

impl Control {
    fn new() -> Self {
        const { assert!(size_of::<[u64; 8]>() >= size_of::<libc::cmsghdr>() + MAX_FDS * size_of::<RawFd>() + 8) };
        Self { bytes: [0; 8] }
    }

    /// Attaches `fds` to `header`.
    fn put(&mut self, header: &mut libc::msghdr, fds: &[RawFd]) {
        let data_len = size_of_val(fds);
        // SAFETY: CMSG_SPACE/CMSG_LEN are arithmetic; the buffer is large
        // enough for MAX_FDS descriptors (checked in `new`), so CMSG_FIRSTHDR
        // is non-null and CMSG_DATA has room for `fds`.
        unsafe {
            header.msg_control = self.bytes.as_mut_ptr().cast();
            header.msg_controllen = libc::CMSG_SPACE(data_len as u32) as _;
            let cmsg = libc::CMSG_FIRSTHDR(header);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(data_len as u32) as _;
            ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg).cast::<RawFd>(), fds.len());
        }
    }

    /// The descriptors a received `header` carries, now owned by the caller.
    fn take(&self, header: &libc::msghdr) -> Vec<OwnedFd> {
        let mut fds = Vec::new();
        // SAFETY: walks the control messages the kernel wrote into our buffer,
        // within `msg_controllen`; each SCM_RIGHTS payload holds whole
        // descriptors, which are new and ours (close-on-exec by
        // MSG_CMSG_CLOEXEC).
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(header);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                    let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / size_of::<RawFd>();
                    for index in 0..count {
                        fds.push(OwnedFd::from_raw_fd(ptr::read_unaligned(data.add(index))));
                    }
                }
                cmsg = libc::CMSG_NXTHDR(header, cmsg);
            }
        }
        fds
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_message_carries_its_descriptors_and_the_end_reads_as_none() {
        let (host, supervisor) = pair().unwrap();
        let (mut reader, writer) = std::io::pipe().unwrap();
        let writer = OwnedFd::from(writer);
        send(&host, b"hello", &[writer.as_raw_fd()], false).unwrap();
        drop(writer);
        let mut buf = [0; 16];
        let (len, mut fds) = receive(supervisor.as_raw_fd(), &mut buf, false).unwrap().unwrap();
        assert_eq!(&buf[..len], b"hello");
        assert_eq!(fds.len(), 1);
        std::fs::File::from(fds.pop().unwrap()).write_all(b"through").unwrap();
        let mut text = String::new();
        reader.read_to_string(&mut text).unwrap();
        assert_eq!(text, "through");
        assert!(
            matches!(receive(supervisor.as_raw_fd(), &mut buf, true), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
        );
        drop(host);
        assert!(receive(supervisor.as_raw_fd(), &mut buf, false).unwrap().is_none());
    }
}
