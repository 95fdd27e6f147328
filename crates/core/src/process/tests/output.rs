//! Output capture: the bounded tail, offset reads and deltas that consume
//! nothing, live output that never splits a character and pauses while its
//! receipts are held, and endless output in flat memory.

use std::fs;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{limits, read_until, run, sh, SPILL_DIR};
use crate::process::{spawn, OutputDelta, Status, StreamKind, LIVE_OUTPUT_BUDGET};

#[tokio::test(flavor = "multi_thread")]
async fn offset_reads_do_not_consume_and_say_when_the_offset_slid_out_of_the_tail() {
    let mut spec = sh("printf 'abc\\303'; sleep 0.2; printf '\\251xyz'");
    spec.stdout = limits(5, 1 << 20);
    let process = spawn(spec).unwrap();
    let first = loop {
        let read = process.read_from(StreamKind::Stdout, 0);
        if read.next_offset > 0 {
            break read;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    // The first byte of `é` waits for the rest of it.
    assert_eq!((first.text.as_str(), first.next_offset, first.lossy), ("abc", 3, false));
    process.wait().await;
    // Eight bytes, five kept: the tail is `éxyz` (2 + 3 bytes).
    let from_first = process.read_from(StreamKind::Stdout, first.next_offset);
    assert_eq!((from_first.text.as_str(), from_first.next_offset, from_first.lossy), ("\u{e9}xyz", 8, false));
    let from_start = process.read_from(StreamKind::Stdout, 0);
    assert_eq!((from_start.text.as_str(), from_start.lossy), ("\u{e9}xyz", true));
    assert!(from_start.spill_path.is_some(), "the whole stream is in the spill file");
    assert_eq!(process.read_from(StreamKind::Stdout, 8).text, "", "nothing new at the end");
    assert_eq!(process.read_from(StreamKind::Stdout, 0), from_start, "reads consume nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn output_within_the_cap_is_not_spilled() {
    let mut spec = sh("printf 0123456789");
    spec.stdout = limits(10, 1 << 20);
    let result = run(spec).await;
    assert_eq!(result.stdout.text, "0123456789");
    assert!(!result.stdout.truncated && result.stdout.spill_path.is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn read_output_returns_deltas() {
    let mut spec = sh("echo one; echo e1 >&2; sleep 0.3; echo two; printf '\\377'");
    spec.stdout = limits(1000, 0);
    let process = spawn(spec).unwrap();
    let first = read_until(&process, "one\n").await;
    assert_eq!(first, "one\n");
    let result = process.wait().await;
    let rest = process.read_output();
    assert_eq!(rest.stdout, "two\n\u{FFFD}");
    assert!(rest.lossy, "an invalid byte was replaced");
    assert_eq!(process.read_output(), OutputDelta::default());
    assert_eq!(result.stderr.text, "e1\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn unread_output_is_capped_keeping_the_tail() {
    let _spill_dir = SPILL_DIR.read().await;
    let mut spec = sh("head -c 100000 /dev/zero | tr '\\0' x; echo END");
    spec.stdout = limits(100, 1 << 20);
    let process = spawn(spec).unwrap();
    process.wait().await;
    let delta = process.read_output();
    assert!(delta.stdout.len() == 100 && delta.stdout.ends_with("xxEND\n"), "{}", delta.stdout);
    assert!(delta.lossy);
}

#[tokio::test(flavor = "multi_thread")]
async fn live_output_never_splits_a_character() {
    let chunks = Arc::new(Mutex::new(Vec::new()));
    let mut spec = sh("yes 'é😀ü' | head -n 40000; echo done >&2");
    spec.stdout = limits(1000, 0);
    let sink = Arc::clone(&chunks);
    spec.on_output =
        Some(Arc::new(move |kind, text: &str, _receipt| sink.lock().unwrap().push((kind, text.to_owned()))));
    let result = run(spec).await;
    let chunks = chunks.lock().unwrap();
    let stdout: String = chunks.iter().filter(|(k, _)| *k == StreamKind::Stdout).map(|(_, t)| t.as_str()).collect();
    let stderr: String = chunks.iter().filter(|(k, _)| *k == StreamKind::Stderr).map(|(_, t)| t.as_str()).collect();
    assert_eq!(stdout, "é😀ü\n".repeat(40_000));
    assert_eq!(stderr, "done\n");
    assert!(chunks.len() > 2, "expected several chunks");
    assert!(result.stdout.text.ends_with("é😀ü\n") && !result.stdout.text.contains('\u{FFFD}'));
}

#[tokio::test(flavor = "multi_thread")]
async fn held_receipts_pause_reading_until_dropped() {
    // A consumer that keeps every receipt: live output stops at the budget and
    // the child blocks on its full pipe instead of being queued without bound.
    let held = Arc::new(Mutex::new(Vec::new()));
    let delivered = Arc::new(Mutex::new(0usize));
    let mut spec = sh("head -c 8388608 /dev/zero; echo done >&2");
    spec.stdout = limits(1000, 0);
    let (sink_held, sink_delivered) = (Arc::clone(&held), Arc::clone(&delivered));
    spec.on_output = Some(Arc::new(move |_kind, text: &str, receipt| {
        *sink_delivered.lock().unwrap() += text.len();
        sink_held.lock().unwrap().push(receipt);
    }));
    let process = spawn(spec).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let paused_at = *delivered.lock().unwrap();
    assert!(paused_at <= LIVE_OUTPUT_BUDGET, "delivered {paused_at} bytes past the budget");
    assert!(paused_at > LIVE_OUTPUT_BUDGET / 2, "delivered only {paused_at} bytes");
    assert_eq!(process.state().status, Status::Running, "the writer waits for the consumer");
    // Consuming (dropping receipts) as they come lets it finish.
    let drain = {
        let held = Arc::clone(&held);
        tokio::spawn(async move {
            loop {
                held.lock().unwrap().clear();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    let result = process.wait().await;
    drain.abort();
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(*delivered.lock().unwrap(), (8 << 20) + "done\n".len(), "every byte of both streams, once");
    assert_eq!(result.stderr.text, "done\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn keeps_up_with_endless_output_in_flat_memory() {
    fn rss_kib() -> u64 {
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("VmRSS: 0 kB");
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let _spill_dir = SPILL_DIR.read().await;
    let before = rss_kib();
    let result = run(sh("head -c 268435456 /dev/zero")).await;
    assert_eq!(result.exit_code, Some(0));
    assert!(result.stdout.truncated && result.stdout.spill_path.is_none());
    assert_eq!(result.stdout.text.len(), 64_000);
    assert!(rss_kib().saturating_sub(before) < 64 * 1024, "memory grew with the output");
}
