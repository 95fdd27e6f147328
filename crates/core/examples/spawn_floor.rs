//! The floor for `npm run bench`: what starting and waiting for a process
//! costs with nothing in between, the physical floor every row is measured
//! against. Each spawn is one `posix_spawn` (inheriting this process's
//! environment and stdio) and one `waitpid`, called directly: no
//! `std::process::Command` (whose own pipes and checks cost something).
//!
//! Usage:
//! - `spawn_floor [iterations] [program [args...]]`: one thread, one spawn
//!   and wait at a time, each timed on its own (defaults: 200, `/bin/true`);
//! - `spawn_floor --batch B --threads T [iterations] [program [args...]]`:
//!   each iteration starts `B` processes from `T` threads at once (each
//!   thread spawns its share, then waits for it), timed as one wall time;
//! - `spawn_floor --serve [program [args...]]`: the least a design with a
//!   waiting helper process can cost its host. For each byte read on stdin,
//!   one spawn and wait, then one byte written to stdout; ends at EOF. The
//!   bench orders it from Node over its stdio pipes, measuring one order,
//!   spawn, wait and answer as a command through a helper, with nothing
//!   else: no environment, spec, output or containment.
//!
//! Prints one JSON line (not in `--serve`): `{"program":…,"args":[…],"iterations":n,"batch":b,"threads":t,"samples_ns":[…],"median_ns":…}`.
//!
//! POSIX only: the bench leaves the floor out elsewhere.
#![cfg_attr(not(unix), allow(unused))]

use std::ffi::CString;
use std::time::Instant;

#[cfg(not(unix))]
fn main() {
    eprintln!("spawn_floor: posix_spawn is POSIX only");
    std::process::exit(2);
}

#[cfg(unix)]
extern "C" {
    static environ: *const *mut libc::c_char;
}

/// A program and its arguments, ready for `posix_spawn`.
#[cfg(unix)]
struct Program {
    path: CString,
    /// Owns what `argv` points to.
    _words: Vec<CString>,
    argv: Vec<*mut libc::c_char>,
}

// SAFETY: `argv` points into `_words`, owned alongside and never changed.
#[cfg(unix)]
unsafe impl Sync for Program {}

#[cfg(unix)]
impl Program {
    fn new(program: &str, args: &[String]) -> Self {
        let words: Vec<CString> = std::iter::once(program)
            .chain(args.iter().map(String::as_str))
            .map(|word| CString::new(word).expect("no NUL in arguments"))
            .collect();
        let argv =
            words.iter().map(|word| word.as_ptr().cast_mut()).chain(std::iter::once(std::ptr::null_mut())).collect();
        Self { path: CString::new(program).expect("no NUL in the program"), _words: words, argv }
    }

    /// Starts the program; its pid.
    fn spawn(&self) -> libc::pid_t {
        let mut pid = 0;
        // SAFETY: a NUL-terminated path, a null-terminated argv of live
        // strings, and this process's own environment.
        let failed = unsafe {
            libc::posix_spawn(
                &mut pid,
                self.path.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                self.argv.as_ptr(),
                environ,
            )
        };
        assert_eq!(failed, 0, "posix_spawn failed: {}", std::io::Error::from_raw_os_error(failed));
        pid
    }
}

/// Waits for `pid` and checks that it exited with 0.
#[cfg(unix)]
fn wait(pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: waits for a child of this process.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 {
        assert_eq!(std::io::Error::last_os_error().kind(), std::io::ErrorKind::Interrupted, "waitpid failed");
    }
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "pid {pid} ended with status {status}");
}

/// `--serve`: one spawn and wait per byte on stdin, each answered with one byte on stdout.
#[cfg(unix)]
fn serve(program: &Program) {
    use std::io::{Read, Write};
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut order = [0u8; 1];
    while stdin.read(&mut order).is_ok_and(|read| read == 1) {
        wait(program.spawn());
        if stdout.write_all(&order).and_then(|()| stdout.flush()).is_err() {
            return;
        }
    }
}

#[cfg(unix)]
fn main() {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().is_some_and(|first| first == "--serve") {
        let program_name = argv.get(1).cloned().unwrap_or_else(|| "/bin/true".to_owned());
        return serve(&Program::new(&program_name, argv.get(2..).unwrap_or_default()));
    }
    let mut option = |name: &str| {
        let at = argv.iter().position(|arg| arg == name)?;
        let value = argv.get(at + 1).map(|value| value.parse::<usize>().expect("a number after the option"));
        argv.drain(at..(at + 2).min(argv.len()));
        value
    };
    let batch = option("--batch").unwrap_or(1).max(1);
    let threads = option("--threads").unwrap_or(1).clamp(1, batch);
    let mut argv = argv.into_iter();
    let iterations: usize = argv.next().map_or(200, |n| n.parse().expect("iterations must be a number"));
    let program_name = argv.next().unwrap_or_else(|| "/bin/true".to_owned());
    let args: Vec<String> = argv.collect();
    let program = Program::new(&program_name, &args);

    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        if threads == 1 && batch == 1 {
            wait(program.spawn());
        } else {
            std::thread::scope(|scope| {
                for thread in 0..threads {
                    // This thread's share of the batch, the remainder to the first ones.
                    let share = batch / threads + usize::from(thread < batch % threads);
                    let program = &program;
                    scope.spawn(move || {
                        let pids: Vec<libc::pid_t> = (0..share).map(|_| program.spawn()).collect();
                        pids.into_iter().for_each(wait);
                    });
                }
            });
        }
        samples.push(started.elapsed().as_nanos() as u64);
    }

    let mut sorted = samples.clone();
    sorted.sort_unstable();
    let median = match sorted.len() {
        0 => 0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
    };
    let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    let args = args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(",");
    let samples = samples.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    println!(
        "{{\"program\":{},\"args\":[{args}],\"iterations\":{iterations},\"batch\":{batch},\"threads\":{threads},\"samples_ns\":[{samples}],\"median_ns\":{median}}}",
        quote(&program_name)
    );
}
