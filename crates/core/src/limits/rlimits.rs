//! The resource limits (`setrlimit`) a command's processes start with.
//!
//! Each limit is set soft and hard, so the command cannot raise it again;
//! never above the hard limit it would have had anyway (raising that takes
//! privilege), so asking for more than the host allows gives what it allows.

use std::io;

use super::Limits;

/// One `setrlimit` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResourceLimit {
    /// `RLIMIT_CPU`, …
    resource: libc::c_int,
    soft: libc::rlim_t,
    hard: libc::rlim_t,
}

/// The `setrlimit` calls for `limits`: CPU, file size, open files, and memory
/// as `RLIMIT_DATA` unless a cgroup holds it (`memory_in_cgroup`); with any
/// limit at all, no core files either. CPU gets one second of hard limit
/// above the soft one, so a process first gets SIGXCPU, as the kernel's
/// convention is, and SIGKILL only if it carries on.
pub(crate) fn resource_limits(limits: &Limits, memory_in_cgroup: bool) -> Vec<ResourceLimit> {
    let mut calls = Vec::new();
    let mut set = |resource, soft: u64, hard: u64| {
        calls.push(ResourceLimit {
            resource: resource as libc::c_int,
            soft: soft as libc::rlim_t,
            hard: hard as libc::rlim_t,
        })
    };
    if let Some(seconds) = limits.cpu_seconds {
        set(libc::RLIMIT_CPU, seconds, seconds.saturating_add(1));
    }
    if let Some(bytes) = limits.file_bytes {
        set(libc::RLIMIT_FSIZE, bytes, bytes);
    }
    if let Some(files) = limits.open_files {
        set(libc::RLIMIT_NOFILE, files, files);
    }
    if let Some(bytes) = limits.memory_bytes.filter(|_| !memory_in_cgroup) {
        set(libc::RLIMIT_DATA, bytes, bytes);
    }
    if limits.any() {
        set(libc::RLIMIT_CORE, 0, 0);
    }
    calls
}

/// Makes `calls` on this process, and gives SIGXCPU and SIGXFSZ their
/// default action, through which the kernel enforces CPU and file size (an
/// inherited ignore, as Node sets for SIGXFSZ, would leave a write failing
/// with EFBIG and the command running). Only `getrlimit`, `setrlimit` and
/// `signal`: safe between `fork` and `exec`.
pub(crate) fn apply(calls: &[ResourceLimit]) -> io::Result<()> {
    if !calls.is_empty() {
        // SAFETY: resets two signal actions of this process.
        unsafe {
            libc::signal(libc::SIGXCPU, libc::SIG_DFL);
            libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
        }
    }
    for call in calls {
        let mut current = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit fills a valid rlimit; setrlimit reads one. Both
        // only touch this process's limits.
        unsafe {
            if libc::getrlimit(call.resource as _, &mut current) != 0 {
                return Err(io::Error::last_os_error());
            }
            let hard = call.hard.min(current.rlim_max);
            let wanted = libc::rlimit { rlim_cur: call.soft.min(hard), rlim_max: hard };
            if libc::setrlimit(call.resource as _, &wanted) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_limit_is_one_call_and_memory_goes_to_a_cgroup_when_there_is_one() {
        let limits = Limits {
            memory_bytes: Some(1 << 30),
            cpu_seconds: Some(30),
            file_bytes: Some(1 << 20),
            open_files: Some(64),
            processes: None,
        };
        let resources = |memory_in_cgroup| {
            resource_limits(&limits, memory_in_cgroup).iter().map(|call| call.resource).collect::<Vec<_>>()
        };
        let cpu = libc::RLIMIT_CPU as libc::c_int;
        let core = libc::RLIMIT_CORE as libc::c_int;
        let data = libc::RLIMIT_DATA as libc::c_int;
        assert!(resources(false).contains(&data) && !resources(true).contains(&data));
        assert_eq!(resources(true).len(), 4);
        let cpu_call = resource_limits(&limits, true).into_iter().find(|call| call.resource == cpu).unwrap();
        assert_eq!((cpu_call.soft, cpu_call.hard), (30, 31));
        assert!(resources(true).contains(&core));
        assert!(resource_limits(&Limits::default(), false).is_empty());
    }
}
