//! Precise mode: the languages' own indexers (SCIP), run beside the tree-sitter index.
//!
//! - [`indexers`]: which indexer serves which language, how to find it (`PATH`,
//!   `rustup which`, `SCRYER_PRECISE_<LANG>_CMD`) and its command line;
//! - [`run`]: one indexer run in a child process at low CPU priority, with a wall-clock
//!   limit, writing its index into a temporary directory;
//! - [`inputs`]: what one run reads, as a digest, so a run over the same inputs is not
//!   made again (ADR 0055);
//! - [`scip_read`]: the SCIP file read one document at a time (the `scip` crate's types
//!   over protobuf's stream reader), so an index is never held whole in memory;
//! - [`symbol`]: SCIP symbol strings parsed into the `scip` crate's types, without its
//!   parser's cost.
//!
//! What is stored and how it is invalidated is ADR 0018.

pub mod indexers;
pub mod inputs;
pub mod run;
pub mod scip_read;
pub mod symbol;

pub use indexers::{Detection, Indexer, PreciseLanguage, detect};
pub use inputs::inputs_digest;
pub use run::{RunOutcome, run_indexer};
pub use scip_read::{ScipDocument, ScipItem, ScipMetadata, ScipOccurrence, read_scip};

/// `SCRYER_PRECISE`: `auto` (default) runs every indexer found, `off` runs none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreciseMode {
    Auto,
    Off,
}

impl PreciseMode {
    /// From the environment; an unknown value is `auto` with a warning.
    pub fn from_env() -> PreciseMode {
        match std::env::var("SCRYER_PRECISE").as_deref().map(str::trim) {
            Ok("off") | Ok("0") | Ok("false") | Ok("no") => PreciseMode::Off,
            Ok("auto") | Ok("on") | Ok("1") | Ok("") | Err(_) => PreciseMode::Auto,
            Ok(other) => {
                tracing::warn!(
                    value = other,
                    "SCRYER_PRECISE accepts `auto` or `off`; running as `auto`"
                );
                PreciseMode::Auto
            }
        }
    }
}
