//! The two captured output streams, and how much of each is kept.

/// How much of one output stream is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Bytes kept in memory: the tail of the stream, and the cap on text not yet
    /// taken by [`Process::read_output`](super::Process::read_output).
    pub max_bytes: usize,
    /// The largest spill file; a stream that outgrows it loses its spill file.
    pub spill_max_bytes: u64,
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self { max_bytes: 64_000, spill_max_bytes: 64 * 1024 * 1024 }
    }
}

/// One of the two captured output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StreamKind {
    /// The child's standard output.
    Stdout,
    /// The child's standard error.
    Stderr,
}

impl StreamKind {
    /// `"stdout"` or `"stderr"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
        }
    }
}
