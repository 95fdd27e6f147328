//! The plain-Rust core of `@deepseek-ai/dsh-shell-env`: the `DSH_*` key rules,
//! the Harness home, the contributor registry and its per-call snapshots, the
//! child environment pipeline and process control. Nothing here knows about
//! Node; the napi binding converts values and errors at the edge.

pub mod abort;
pub mod command;
pub mod credentials;
pub mod diagnostics;
pub mod environment;
pub mod error;
pub mod home;
pub mod keys;
pub mod launch;
pub mod limits;
pub mod os_error;
pub mod packed;
pub mod process;
pub mod registry;
pub mod snapshot;
pub mod spec_fields;
pub mod supervisor;
#[cfg(test)]
mod test_paths;
pub mod text;
pub mod trust;
pub mod vocabulary;

pub use error::{ExecError, ShellEnvError};
