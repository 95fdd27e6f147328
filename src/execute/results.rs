//! The shapes a command's output and result take in JS. They restate the
//! core's `RunResult` and `StreamResult` on purpose: the core has no napi
//! types, and these `#[napi(object)]` structs are what `binding.d.ts` is
//! generated from; `run_result` is the one conversion between them.

use dsh_shell_env_core::error::{SUPERVISOR_LOST, SUPERVISOR_LOST_MESSAGE};
use dsh_shell_env_core::process::{RunResult, StreamResult};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Output produced since the previous `readOutput()`, and each stream's
/// spill file once it started spilling.
#[napi(object)]
pub struct ShellOutputDelta {
    /// New standard output text.
    pub stdout: String,
    /// New standard error text.
    pub stderr: String,
    /// Something was dropped or replaced since the previous read.
    pub lossy: bool,
    /// The file holding the whole of stdout, once it started spilling.
    pub stdout_spill_path: Option<String>,
    /// The file holding the whole of stderr, once it started spilling.
    pub stderr_spill_path: Option<String>,
}

/// One captured stream of a finished command.
#[napi(object)]
pub struct ShellStreamResult {
    /// The last `*MaxBytes` bytes, starting at a character boundary.
    pub text: String,
    /// The stream was longer than `text`.
    pub truncated: bool,
    /// The whole stream (mode 0600, private directory), when it overflowed
    /// and stayed under `spillMaxBytes`. Removed when the execution is
    /// garbage-collected (unless `keepSpillFiles`) or the process exits.
    pub spill_path: Option<String>,
    /// Why the spill file could not be made or written (a full disk, a
    /// quota, its directory removed): the output past `text` is lost.
    /// Absent when nothing failed (passing `spillMaxBytes` is no failure).
    pub spill_error: Option<SpillFailure>,
}

/// A spill file that could not be made or written.
#[napi(object)]
pub struct SpillFailure {
    /// The OS error's name (`'ENOSPC'`, `'EDQUOT'`, `'EIO'`, `'ENOENT'`).
    pub code: String,
    /// What failed, in words.
    pub message: String,
}

/// How a command ended.
#[napi(object)]
pub struct ShellRunResult {
    /// The exit code, or `null` when a signal ended the child.
    #[napi(ts_type = "number | null")]
    pub exit_code: Either<i32, Null>,
    /// The signal that ended the child (`'SIGTERM'`, …), or `null`.
    #[napi(ts_type = "string | null")]
    pub signal: Either<String, Null>,
    /// The timeout killed it.
    pub timed_out: bool,
    /// The abort signal killed it (never together with `timedOut`).
    pub aborted: bool,
    /// Set when the package ended the command for a reason of its own;
    /// `null` otherwise.
    #[napi(ts_type = "Interruption | null")]
    pub interrupted: Either<Interruption, Null>,
    /// The limit whose enforcement ended the command (its process got
    /// SIGXCPU or SIGXFSZ, or the cgroup killed for memory), else `null`.
    #[napi(ts_type = "ShellLimitName | null")]
    pub limit: Either<String, Null>,
    /// Limits the command reached without being ended by them (forks
    /// refused at `processes`, …).
    #[napi(ts_type = "ShellLimitName[]")]
    pub limits_hit: Vec<String>,
    /// Limits the command tampered with, which may not have held (a cgroup
    /// limit whose files a process of the command wrote, that read another
    /// value by the end or capped less than the use seen, or whose watching
    /// reaper the command killed); see `limitMechanisms()`' `tampering`.
    #[napi(ts_type = "ShellLimitName[]")]
    pub limits_tampered: Vec<String>,
    /// Processes of the command still running when it exited, which the
    /// package then ended (a `cmd &` left behind): counted under the
    /// supervisor (Linux), 0 elsewhere; 255 stands for 255 or more.
    pub ended_after_exit: u32,
    /// The timeout in force, or `null` for `onExpiry: 'none'`.
    #[napi(ts_type = "number | null")]
    pub timeout_ms: Either<f64, Null>,
    /// From spawn until the group was gone.
    pub duration_ms: f64,
    /// Standard output.
    pub stdout: ShellStreamResult,
    /// Standard error.
    pub stderr: ShellStreamResult,
}

/// A captured stream's text from a whole-stream byte offset on
/// (`readFrom()`).
#[napi(object, object_from_js = false)]
pub struct ShellOutputRead {
    /// The text from the offset; the whole tail kept in memory when `lossy`.
    pub text: String,
    /// Where the next read starts.
    pub next_offset: f64,
    /// The offset slid out of the tail kept in memory.
    pub lossy: bool,
    /// The file holding the whole stream, once it spilled and while it is whole.
    pub spill_path: Option<String>,
}

/// The host's ends of a command's raw pipes, as descriptor numbers.
#[napi(object, object_from_js = false)]
pub struct RawPipes {
    /// Write end of the command's stdin.
    pub stdin: Option<i64>,
    /// Read end of its stdout.
    pub stdout: Option<i64>,
    /// Read end of its stderr.
    pub stderr: Option<i64>,
    /// The terminal it runs on, with `stdio.terminal`.
    pub terminal: Option<RawTerminal>,
}

/// The host's side of a command on a pseudo-terminal (Windows: a pseudo
/// console).
#[napi(object, object_from_js = false)]
pub struct RawTerminal {
    /// The master, read by the caller, who closes it (Windows: the read end
    /// of the pseudo console's output pipe).
    pub fd: i64,
    /// The write end of a pipe whose bytes reach the terminal as its input
    /// (never blocking the caller's thread), closed by the caller.
    pub input: i64,
    /// The command's own pid: its session's and first process group's id
    /// (Windows: its job's leader).
    pub pid: u32,
}

/// Why the package ended a command for a reason of its own.
#[napi(object)]
pub struct Interruption {
    /// `'ERR_SHELL_EXEC_SUPERVISOR_LOST'`: the package's supervisor died
    /// while the command ran (a command can signal any process of its user),
    /// so the command was killed; the next command starts a new supervisor.
    #[napi(ts_type = "'ERR_SHELL_EXEC_SUPERVISOR_LOST'")]
    pub code: String,
    /// What happened, in words.
    pub message: String,
}

pub(super) fn run_result(result: &RunResult) -> ShellRunResult {
    let stream = |output: &StreamResult| ShellStreamResult {
        text: output.text.clone(),
        truncated: output.truncated,
        spill_path: output.spill_path.as_ref().map(|path| path.to_string_lossy().into_owned()),
        spill_error: output
            .spill_error
            .as_ref()
            .map(|failure| SpillFailure { code: failure.code.into(), message: failure.message.clone() }),
    };
    ShellRunResult {
        exit_code: result.exit_code.map_or(Either::B(Null), Either::A),
        signal: result.signal.map_or(Either::B(Null), |signal| Either::A(signal.to_string())),
        timed_out: result.timed_out,
        aborted: result.aborted,
        interrupted: if result.supervisor_lost {
            Either::A(Interruption { code: SUPERVISOR_LOST.into(), message: SUPERVISOR_LOST_MESSAGE.into() })
        } else {
            Either::B(Null)
        },
        limit: result.limit.map_or(Either::B(Null), |limit| Either::A(limit.as_str().into())),
        limits_hit: result.limits_hit.iter().map(|limit| limit.as_str().into()).collect(),
        limits_tampered: result.limits_tampered.iter().map(|limit| limit.as_str().into()).collect(),
        ended_after_exit: result.ended_after_exit,
        timeout_ms: result.timeout_ms.map_or(Either::B(Null), |ms| Either::A(ms as f64)),
        duration_ms: result.duration.as_secs_f64() * 1000.0,
        stdout: stream(&result.stdout),
        stderr: stream(&result.stderr),
    }
}
