//! Property tests over the core's public API, complementing the unit-level
//! properties next to each module: the key rule near its boundaries, PATH
//! assembly in contributor-name order, the environment pipeline against a
//! small reference model and its stated invariants (on both platforms' rules),
//! registry operation sequences against a model, and home resolution.
//!
//! One test crate; each module holds the properties of one part, and
//! `oracles` (shared with the fuzz targets) the rules and the invariant checks
//! both call.

mod environment;
mod home;
mod keys;
#[path = "../oracles/mod.rs"]
mod oracles;
mod path_assembly;
mod registry;

/// The root absolute fixtures hang from: `/`, or a drive on Windows.
const ROOT: &str = if cfg!(windows) { r"C:\" } else { "/" };

/// `rest` (`/`-separated) below [`ROOT`], in the platform's spelling.
fn absolute(rest: &str) -> String {
    format!("{ROOT}{}", rest.replace('/', std::path::MAIN_SEPARATOR_STR))
}
