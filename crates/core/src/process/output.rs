//! Output capture: a bounded tail for the final result, bounded unread text for
//! [`Process::read_output`](super::Process::read_output), a spill file holding the whole stream once it
//! overflows, and a streaming UTF-8 decoder for live output.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::platform::PipeReader;
use super::result::SpillError;
use super::result::{OutputRead, StreamResult};
use super::spill::{SpillFile, SpillPlace};
use super::stream::{OutputLimits, StreamKind};
use super::sync::lock;

/// Receives output as it arrives, decoded to text; a multi-byte character is
/// never split across two calls. Called from a runtime thread: it must not block
/// for long or panic.
///
/// Each chunk comes with an [`OutputReceipt`]: keep it until the chunk has been
/// consumed (for Node, until the JS callback ran), then drop it. While the
/// receipts a process's sink holds add up to [`LIVE_OUTPUT_BUDGET`], reading
/// that process's pipes pauses and the child blocks on a full pipe, so a
/// consumer slower than the child (a busy JS thread) slows the child down
/// instead of queueing its output without bound.
pub type OutputSink = Arc<dyn Fn(StreamKind, &str, OutputReceipt) + Send + Sync>;

/// How much live output (bytes of text) one process may have handed to its
/// sink and not yet had back as dropped [`OutputReceipt`]s.
pub const LIVE_OUTPUT_BUDGET: usize = 1 << 20;

/// Bytes per read from a pipe (the default Linux pipe holds 64 KiB).
pub(super) const READ_CHUNK: usize = 32 * 1024;

/// One stream's captured output.
pub(super) struct Capture {
    kind: StreamKind,
    pid: u32,
    limits: OutputLimits,
    /// The newest `max_bytes` bytes.
    tail: VecDeque<u8>,
    total: u64,
    /// Text not yet read; compacted to `max_bytes` when it doubles.
    unread: String,
    unread_lossy: bool,
    place: SpillPlace,
    spill: Spill,
    /// The spill file's path from its start until it is dropped for good
    /// (outgrown); the result keeps naming it after `finish`.
    spill_path: Option<PathBuf>,
    /// Why the spill file could not be made or written, once that happened.
    spill_error: Option<SpillError>,
}

enum Spill {
    /// No overflow yet: `tail` still holds the whole stream.
    NotNeeded,
    Writing {
        file: File,
        guard: SpillFile,
        written: u64,
    },
    /// Over `spill_max_bytes`, or the file could not be written: deleted.
    Dropped,
}

impl Capture {
    pub(super) fn new(kind: StreamKind, pid: u32, limits: OutputLimits, place: SpillPlace) -> Self {
        Self {
            kind,
            pid,
            limits,
            tail: VecDeque::new(),
            total: 0,
            unread: String::new(),
            unread_lossy: false,
            place,
            spill: Spill::NotNeeded,
            spill_path: None,
            spill_error: None,
        }
    }

    /// Takes in one chunk: the raw `bytes` and their decoded `text`, which had
    /// invalid sequences `replaced`.
    fn push(&mut self, bytes: &[u8], text: &str, replaced: bool) {
        let max = self.limits.max_bytes;
        self.unread.push_str(text);
        self.unread_lossy |= replaced;
        if self.unread.len() > max.saturating_mul(2) {
            keep_text_tail(&mut self.unread, max);
            self.unread_lossy = true;
        }

        self.total += bytes.len() as u64;
        if self.total > max as u64 {
            self.spill(bytes);
        }
        let bytes = &bytes[bytes.len().saturating_sub(max)..];
        self.tail.drain(..(self.tail.len() + bytes.len()).saturating_sub(max));
        self.tail.extend(bytes);
    }

    /// Appends to the spill file, starting it on the first overflow with
    /// everything so far (still all in `tail`).
    fn spill(&mut self, bytes: &[u8]) {
        let limit = self.limits.spill_max_bytes;
        match &mut self.spill {
            Spill::NotNeeded if self.total <= limit => {
                let started = SpillFile::create(self.pid, self.kind, &self.place).and_then(|(guard, mut file)| {
                    let (front, back) = self.tail.as_slices();
                    file.write_all(front)?;
                    file.write_all(back)?;
                    file.write_all(bytes)?;
                    Ok(Spill::Writing { file, guard, written: self.total })
                });
                // A file that cannot be written is no spill at all, and the
                // result says why.
                match started {
                    Ok(spill) => self.spill = spill,
                    Err(error) => {
                        self.spill = Spill::Dropped;
                        self.spill_error = Some(SpillError::from(&error));
                    }
                }
                if let Spill::Writing { guard, .. } = &self.spill {
                    self.spill_path = Some(guard.path().to_owned());
                }
            }
            Spill::NotNeeded => self.spill = Spill::Dropped,
            Spill::Writing { file, written, .. } => {
                *written += bytes.len() as u64;
                // Over `spill_max_bytes` is the caller's own bound (documented,
                // `truncated` without a file); a write that fails is not.
                let failed = if *written > limit { None } else { file.write_all(bytes).err() };
                if *written > limit || failed.is_some() {
                    self.spill = Spill::Dropped;
                    self.spill_path = None;
                    self.spill_error = failed.as_ref().map(SpillError::from);
                }
            }
            Spill::Dropped => {}
        }
    }

    /// The unread text, whether any of it was dropped or replaced, and the
    /// spill file holding the whole stream, once there is one.
    pub(super) fn take_unread(&mut self) -> (String, bool, Option<PathBuf>) {
        if self.unread.len() > self.limits.max_bytes {
            keep_text_tail(&mut self.unread, self.limits.max_bytes);
            self.unread_lossy = true;
        }
        let lossy = std::mem::take(&mut self.unread_lossy);
        (std::mem::take(&mut self.unread), lossy, self.spill_path.clone())
    }

    /// The text from whole-stream byte `from` on, within the tail kept in
    /// memory; the whole tail, marked lossy, when `from` slid out of it. Reads
    /// nothing (the next caller's offset stays its own): offsets are the
    /// caller's cursor, and any number of readers may read independently.
    pub(super) fn read_from(&self, from: u64) -> OutputRead {
        let start = self.total - self.tail.len() as u64;
        let (skip, lossy) = if from >= start { ((from.min(self.total) - start) as usize, false) } else { (0, true) };
        let (front, back) = self.tail.as_slices();
        let mut bytes = Vec::with_capacity(self.tail.len() - skip);
        if skip < front.len() {
            bytes.extend_from_slice(&front[skip..]);
            bytes.extend_from_slice(back);
        } else {
            bytes.extend_from_slice(&back[skip - front.len()..]);
        }
        // A character still arriving is left for the next read; one cut at the
        // front by the tail becomes U+FFFD.
        let incomplete = incomplete_suffix(&bytes);
        bytes.truncate(bytes.len() - incomplete);
        OutputRead {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            next_offset: self.total - incomplete as u64,
            lossy,
            spill_path: self.spill_path.clone(),
        }
    }

    /// The final result of the stream. Unread text stays for `read_output`,
    /// and the tail for `read_from`.
    pub(super) fn finish(&mut self) -> StreamResult {
        let max = self.limits.max_bytes;
        let mut tail = &*self.tail.make_contiguous();
        // Cut forward past the rest of a character split by the cut.
        if self.total > tail.len() as u64 {
            let split = tail.iter().take(3).take_while(|&&b| is_continuation(b)).count();
            tail = &tail[split..];
        }
        let text = String::from_utf8_lossy(tail).into_owned();
        // Closing the file here; the guard deletes it with the last result.
        let guard = match std::mem::replace(&mut self.spill, Spill::Dropped) {
            Spill::Writing { guard, .. } => Some(guard),
            Spill::NotNeeded | Spill::Dropped => None,
        };
        StreamResult {
            text,
            truncated: self.total > max as u64,
            spill_path: guard.as_ref().map(|g| g.path().to_owned()),
            spill_error: self.spill_error.clone(),
            _spill: guard,
        }
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// How many bytes at the end of `bytes` begin a UTF-8 character not yet complete.
fn incomplete_suffix(bytes: &[u8]) -> usize {
    // The last byte that starts a character, within the last four.
    let Some(back) = bytes.iter().rev().take(4).position(|&byte| !is_continuation(byte)) else { return 0 };
    let start = bytes.len() - 1 - back;
    let needed = match bytes[start] {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    };
    let have = bytes.len() - start;
    if have < needed {
        have
    } else {
        0
    }
}

/// Keeps the last `max` bytes of `text`, cut forward to a character boundary.
fn keep_text_tail(text: &mut String, max: usize) {
    let mut cut = text.len().saturating_sub(max);
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text.drain(..cut);
}

/// Decodes a byte stream chunk by chunk, carrying an incomplete character over
/// to the next chunk; invalid sequences become U+FFFD as in `from_utf8_lossy`.
#[derive(Default)]
pub(super) struct Utf8Decoder {
    carry: Vec<u8>,
}

impl Utf8Decoder {
    /// Appends the text of `bytes` to `out`; returns whether anything was replaced.
    pub(super) fn decode(&mut self, bytes: &[u8], out: &mut String) -> bool {
        let joined;
        let input = if self.carry.is_empty() {
            bytes
        } else {
            self.carry.extend_from_slice(bytes);
            joined = std::mem::take(&mut self.carry);
            &joined[..]
        };
        // Most output is valid UTF-8: the validator is several times faster
        // than walking lossy chunks (which showed in throughput profiles).
        if let Ok(text) = std::str::from_utf8(input) {
            out.push_str(text);
            return false;
        }
        let mut replaced = false;
        let mut chunks = input.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            out.push_str(chunk.valid());
            let invalid = chunk.invalid();
            if invalid.is_empty() {
                continue;
            }
            // Only the very end can be the start of a character still to come.
            let incomplete =
                chunks.peek().is_none() && std::str::from_utf8(invalid).is_err_and(|e| e.error_len().is_none());
            if incomplete {
                self.carry.extend_from_slice(invalid);
            } else {
                out.push(char::REPLACEMENT_CHARACTER);
                replaced = true;
            }
        }
        replaced
    }

    /// Ends the stream: a carried incomplete character becomes U+FFFD.
    pub(super) fn finish(&mut self, out: &mut String) -> bool {
        if self.carry.is_empty() {
            return false;
        }
        self.carry.clear();
        out.push(char::REPLACEMENT_CHARACTER);
        true
    }
}

/// One chunk's share of its process's [`LIVE_OUTPUT_BUDGET`]; dropping it
/// gives the share back (see [`OutputSink`]).
#[derive(Debug)]
pub struct OutputReceipt {
    _permit: OwnedSemaphorePermit,
}

/// A process's sink and the budget its receipts draw from; both streams share it.
#[derive(Clone)]
pub(super) struct LiveOutput {
    sink: OutputSink,
    budget: Arc<Semaphore>,
}

impl LiveOutput {
    pub(super) fn new(sink: OutputSink) -> Self {
        Self { sink, budget: Arc::new(Semaphore::new(LIVE_OUTPUT_BUDGET)) }
    }

    /// Hands `text` to the sink once the budget has room for it. Waiting here
    /// is what pauses reading: the caller reads its pipe again only after this.
    async fn deliver(&self, kind: StreamKind, text: &str) {
        // A chunk is at most a few times READ_CHUNK, far below the budget; the
        // clamp only guarantees the wait can end.
        let share = text.len().clamp(1, LIVE_OUTPUT_BUDGET) as u32;
        // The semaphore is never closed, so this cannot fail.
        let Ok(permit) = Arc::clone(&self.budget).acquire_many_owned(share).await else { return };
        (self.sink)(kind, text, OutputReceipt { _permit: permit });
    }
}

/// Decodes one chunk of a stream (empty: its end) into `text` and takes both
/// into `capture`.
pub(super) fn take_chunk(capture: &Mutex<Capture>, decoder: &mut Utf8Decoder, bytes: &[u8], text: &mut String) {
    text.clear();
    let replaced = if bytes.is_empty() { decoder.finish(text) } else { decoder.decode(bytes, text) };
    lock(capture).push(bytes, text, replaced);
}

/// One pipe still to be read, and its decoder (which may carry part of a
/// character from reads made before the pipe came here).
pub(super) type OpenStream = (PipeReader, Utf8Decoder);

/// Reads one pipe to its end into `capture` (the `kind` stream's), feeding
/// `live` as it goes. `None`: the stream has already ended.
pub(super) async fn read_stream(
    capture: &Mutex<Capture>,
    kind: StreamKind,
    stream: Option<OpenStream>,
    live: Option<LiveOutput>,
) {
    use tokio::io::AsyncReadExt;

    let Some((mut pipe, mut decoder)) = stream else { return };
    let mut buf = vec![0; READ_CHUNK];
    let mut text = String::new();
    loop {
        let bytes = match pipe.read(&mut buf).await {
            Ok(n) if n > 0 => &buf[..n],
            // End of file, or a read error that ends the stream just the same.
            _ => &[][..],
        };
        take_chunk(capture, &mut decoder, bytes, &mut text);
        if let (Some(live), false) = (&live, text.is_empty()) {
            live.deliver(kind, &text).await;
        }
        if bytes.is_empty() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(bytes: &[u8], size: usize) -> (Vec<String>, bool) {
        let mut decoder = Utf8Decoder::default();
        let mut pieces = Vec::new();
        let mut replaced = false;
        for chunk in bytes.chunks(size) {
            let mut out = String::new();
            replaced |= decoder.decode(chunk, &mut out);
            pieces.push(out);
        }
        let mut out = String::new();
        replaced |= decoder.finish(&mut out);
        pieces.push(out);
        (pieces, replaced)
    }

    #[test]
    fn decoder_matches_lossy_decoding_for_any_chunking() {
        let samples: [&[u8]; 5] = [
            "héllo wörld — ✓ 😀 end".as_bytes(),
            b"\xff\xfeabc\xc3",
            b"a\xf0\x9f\x98\x80\xf0\x9f\x98b\xe2\x82",
            b"\xed\xa0\x80 surrogate \xc0\xaf overlong",
            b"",
        ];
        for bytes in samples {
            for size in 1..=bytes.len().max(1) {
                let (pieces, replaced) = decode_in_pieces(bytes, size);
                let expected = String::from_utf8_lossy(bytes);
                assert_eq!(pieces.concat(), expected, "{bytes:?} in pieces of {size}");
                assert_eq!(replaced, expected.contains('\u{FFFD}'), "{bytes:?} in pieces of {size}");
            }
        }
    }

    #[test]
    fn text_tail_is_cut_forward() {
        let mut text = "aé😀b".to_owned();
        keep_text_tail(&mut text, 4);
        assert_eq!(text, "b");
        let mut text = "aé😀b".to_owned();
        keep_text_tail(&mut text, 5);
        assert_eq!(text, "😀b");
    }
}
