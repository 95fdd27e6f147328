//! The floor for `npm run bench`: what spawning and waiting for a process costs
//! from plain Rust, with none of this package's code. Each iteration is one
//! `std::process::Command::new(program).args(args).status()` (posix_spawn with
//! inherited stdio, then waitpid), timed on its own.
//!
//! Usage: `spawn_floor [iterations] [program [args...]]` (defaults: 200, `/bin/true`).
//! Prints one JSON line: `{"program":…,"args":[…],"iterations":n,"samples_ns":[…],"median_ns":…}`.

use std::process::Command;
use std::time::Instant;

fn main() {
    let mut argv = std::env::args().skip(1);
    let iterations: usize = argv.next().map_or(200, |n| n.parse().expect("iterations must be a number"));
    let program = argv.next().unwrap_or_else(|| "/bin/true".to_owned());
    let args: Vec<String> = argv.collect();

    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let status = Command::new(&program).args(&args).status().expect("spawn failed");
        samples.push(started.elapsed().as_nanos() as u64);
        assert!(status.success(), "{program} exited with {status}");
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
        "{{\"program\":{},\"args\":[{args}],\"iterations\":{iterations},\"samples_ns\":[{samples}],\"median_ns\":{median}}}",
        quote(&program)
    );
}
