//! Spill files: the whole stream past the tail, their limit and permissions,
//! their life with their result (or kept in a given base until removed), the
//! spill directory's removal and its sweep of dead hosts' directories.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{eventually, limits, run, sh, TestDir, SPILL_DIR};
use crate::process::{remove_spill_dir, remove_spill_file, spawn, spill, KillReason, SpillPlace, StreamKind};

fn spill_files_of(pid: u32) -> Vec<PathBuf> {
    let suffix = format!("-{pid}.stdout");
    let mut found = Vec::new();
    for dir in fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        if !dir.file_name().to_string_lossy().starts_with(&format!("dsh-shell-env-{}-", std::process::id())) {
            continue;
        }
        for file in fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            if file.file_name().to_string_lossy().ends_with(&suffix) {
                found.push(file.path());
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn keeps_the_tail_cut_at_a_character_and_spills_everything() {
    let _spill_dir = SPILL_DIR.read().await;
    // Three 4-byte emoji and a newline: the last 10 bytes start inside one.
    let mut spec = sh(r"printf '\360\237\230\200\360\237\230\200\360\237\230\200\n'");
    spec.stdout = limits(10, 1 << 20);
    let process = spawn(spec).unwrap();
    let result = process.wait().await;
    assert_eq!(result.stdout.text, "😀😀\n");
    assert!(result.stdout.truncated);
    let spill = result.stdout.spill_path.clone().expect("spilled");
    assert_eq!(fs::read_to_string(&spill).unwrap(), "😀😀😀\n");
    assert_eq!(fs::metadata(&spill).unwrap().permissions().mode() & 0o777, 0o600);
    let dir = spill.parent().unwrap();
    assert_eq!(fs::metadata(dir).unwrap().permissions().mode() & 0o777, 0o700);
    assert!(dir.file_name().unwrap().to_string_lossy().starts_with("dsh-shell-env-"));
    assert!(result.stderr.spill_path.is_none() && !result.stderr.truncated);

    // The file lives as long as the last handle on the process or its result.
    drop(process);
    assert!(spill.exists());
    drop(result);
    let deadline = Instant::now() + Duration::from_secs(5);
    while spill.exists() {
        assert!(Instant::now() < deadline, "spill file outlived its result");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn spill_holds_a_long_stream_in_full() {
    let _spill_dir = SPILL_DIR.read().await;
    let mut spec = sh("i=0; while [ $i -lt 3000 ]; do echo \"line $i\"; i=$((i+1)); done");
    spec.stdout = limits(1000, 1 << 20);
    let result = run(spec).await;
    let expected: String = (0..3000).map(|i| format!("line {i}\n")).collect();
    assert!(result.stdout.truncated);
    assert_eq!(fs::read_to_string(result.stdout.spill_path.as_ref().unwrap()).unwrap(), expected);
    assert!(expected.ends_with(&result.stdout.text) && result.stdout.text.len() <= 1000);
}

#[tokio::test(flavor = "multi_thread")]
async fn spill_over_its_limit_is_deleted() {
    let _spill_dir = SPILL_DIR.read().await;
    let mut spec = sh("head -c 50000 /dev/zero | tr '\\0' a; echo; echo err >&2");
    spec.stdout = limits(100, 10_000);
    let process = spawn(spec).unwrap();
    let result = process.wait().await;
    assert!(result.stdout.truncated && result.stdout.spill_path.is_none());
    assert_eq!(result.stdout.text.len(), 100);
    assert!(result.stdout.text.ends_with("aaa\n"));
    assert!(spill_files_of(process.pid()).is_empty());
    assert_eq!(result.stderr.text, "err\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn remove_spill_dir_removes_files_and_spilling_resumes() {
    let _spill_dir = SPILL_DIR.write().await;
    let mut spec = sh("printf 0123456789");
    spec.stdout = limits(5, 1 << 20);
    let result = run(spec).await;
    let spill = result.stdout.spill_path.clone().unwrap();
    assert!(spill.exists());
    remove_spill_dir();
    assert!(!spill.exists() && !spill.parent().unwrap().exists());

    let mut spec = sh("printf 0123456789");
    spec.stdout = limits(5, 1 << 20);
    let again = run(spec).await;
    assert_eq!(fs::read_to_string(again.stdout.spill_path.as_ref().unwrap()).unwrap(), "0123456789");
}

#[tokio::test(flavor = "multi_thread")]
async fn kept_spill_files_go_in_their_base_outlive_their_result_and_are_removed_on_request() {
    let _spill_dir = SPILL_DIR.read().await;
    let base = TestDir::new();
    let mut spec = sh("printf 0123456789");
    spec.stdout = limits(5, 1 << 20);
    spec.spill = SpillPlace { base: Some(base.0.clone()), keep: true };
    let result = run(spec).await;
    let spill = result.stdout.spill_path.clone().unwrap();
    assert_eq!(spill.parent().and_then(Path::parent), Some(base.0.as_path()));
    drop(result);
    assert_eq!(fs::read_to_string(&spill).unwrap(), "0123456789", "kept past its result");

    let stranger = base.file("not-a-spill-file", "", 0o644);
    assert!(!remove_spill_file(&stranger), "only this process's spill files");
    assert!(stranger.exists());
    assert!(remove_spill_file(&spill));
    assert!(!spill.exists() && spill.parent().unwrap().exists(), "the directory stays for the next spill files");
    assert!(!remove_spill_file(&spill));
}

#[test]
fn a_new_spill_directory_sweeps_those_of_dead_hosts_in_its_base_judged_by_their_lock_not_their_pid_in_the_background() {
    let _spill_dir = SPILL_DIR.blocking_read();
    let base = TestDir::new();
    let spill_dir = |pid: u32, random: &str| base.0.join(format!("dsh-shell-env-{pid}-{random}"));
    let with_lock = |dir: &Path| {
        fs::create_dir(dir).unwrap();
        fs::write(dir.join("0-1.stdout"), "output").unwrap();
        fs::File::create(dir.join("lock")).unwrap()
    };
    // A dead host: its lock file is there, nobody holds it.
    let dead = spill_dir(std::process::id(), "00112233445566ff");
    drop(with_lock(&dead));
    // A live host whose pid means nothing here (another pid namespace), and
    // one whose pid is someone else's: each holds its lock.
    let elsewhere = spill_dir(u32::MAX / 2, "00112233445566aa");
    let held = with_lock(&elsewhere);
    held.lock().unwrap();
    let reused = spill_dir(1, "00112233445566bb");
    let held_too = with_lock(&reused);
    held_too.lock().unwrap();
    // Without a lock file (an older version's) or not a spill directory: left alone.
    let unlocked = spill_dir(u32::MAX / 2, "00112233445566cc");
    fs::create_dir(&unlocked).unwrap();
    let other = base.0.join("dsh-shell-env-notes");
    fs::create_dir(&other).unwrap();
    // A lock that is a FIFO (an open for reading would wait for a writer) or
    // a symlink to one, as a command could plant: never opened, left alone.
    let fifo = base.0.join("fifo");
    let mkfifo = |path: &Path| {
        let path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    };
    mkfifo(&fifo);
    let fifo_lock = spill_dir(u32::MAX / 2, "00112233445566dd");
    fs::create_dir(&fifo_lock).unwrap();
    mkfifo(&fifo_lock.join("lock"));
    let linked_lock = spill_dir(u32::MAX / 2, "00112233445566ee");
    fs::create_dir(&linked_lock).unwrap();
    std::os::unix::fs::symlink(&fifo, linked_lock.join("lock")).unwrap();

    let place = SpillPlace { base: Some(base.0.clone()), keep: false };
    let (file, _) = spill::SpillFile::create(1, StreamKind::Stdout, &place).unwrap();
    // The sweep runs on a thread of its own: nothing waits for it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while dead.exists() {
        assert!(Instant::now() < deadline, "a dead host's directory goes");
        std::thread::sleep(Duration::from_millis(5));
    }
    for stays in [&elsewhere, &reused, &unlocked, &other, &fifo_lock, &linked_lock] {
        assert!(stays.exists(), "{} stays", stays.display());
    }
    // This process's own directory is locked too: another sweep leaves it.
    let own = file.path().parent().unwrap().to_owned();
    let (again, _) =
        spill::SpillFile::create(1, StreamKind::Stderr, &SpillPlace { base: Some(base.0.clone()), keep: false })
            .unwrap();
    assert_eq!(again.path().parent(), Some(own.as_path()));
    drop((file, again, held, held_too));
}

#[tokio::test(flavor = "multi_thread")]
async fn read_output_names_a_spill_file_from_the_moment_it_starts() {
    let _spill_dir = SPILL_DIR.read().await;
    let mut spec = sh("seq 1 100; sleep 30");
    spec.stdout = limits(10, 1 << 20);
    let process = spawn(spec).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let spill = loop {
        let delta = process.read_output();
        if let Some(path) = delta.stdout_spill {
            assert!(delta.stderr_spill.is_none());
            break path;
        }
        assert!(Instant::now() < deadline, "no spill path while the process runs");
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(spill.exists());
    assert!(process.kill(KillReason::Requested));
    let result = process.wait().await;
    assert_eq!(result.stdout.spill_path.as_ref(), Some(&spill));
    assert_eq!(process.read_output().stdout_spill, Some(spill), "still named after the exit");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spill_file_goes_with_its_result_and_the_directory_stays_for_the_next() {
    let _spill_dir = SPILL_DIR.write().await;
    let spilled = || async {
        let mut spec = sh("printf 0123456789");
        spec.stdout = limits(5, 1 << 20);
        run(spec).await
    };
    let (first, second) = (spilled().await, spilled().await);
    let (first_file, second_file) =
        (first.stdout.spill_path.clone().unwrap(), second.stdout.spill_path.clone().unwrap());
    let dir = first_file.parent().unwrap().to_owned();
    assert_eq!(second_file.parent(), Some(dir.as_path()));

    // The supervising task may hold a result a moment after publishing it.
    drop(first);
    eventually(|| !first_file.exists(), "the first spill file to go").await;
    assert!(second_file.exists(), "the other file keeps the directory");
    drop(second);
    eventually(|| !second_file.exists(), "the second spill file to go").await;
    assert!(dir.exists(), "the directory stays, locked, until the host ends");

    let again = spilled().await;
    assert_eq!(fs::read_to_string(again.stdout.spill_path.as_ref().unwrap()).unwrap(), "0123456789");
}
