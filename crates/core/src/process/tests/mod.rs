//! Process control against real processes: on POSIX (`/bin/sh`, `sleep`,
//! …) one module per behaviour, sharing the helpers of `posix`; on Windows
//! (`cmd.exe`, and this test binary started again as a child) `windows`.

// Some helpers and imports serve only the Linux-only tests (the supervisor's reapers).
#![cfg_attr(not(target_os = "linux"), allow(dead_code, unused_imports))]

#[cfg(unix)]
mod posix;
#[cfg(unix)]
use posix::*;

#[cfg(target_os = "linux")]
mod descendants_outside_the_group;
#[cfg(unix)]
mod exits;
#[cfg(unix)]
mod groups;
#[cfg(unix)]
mod kill;
#[cfg(unix)]
mod output;
#[cfg(unix)]
mod spill;
#[cfg(unix)]
mod starting;
#[cfg(unix)]
mod stdio;

#[cfg(windows)]
mod windows;
