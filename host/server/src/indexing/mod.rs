//! Keeping the index current: registered projects and their index runs, the dependency
//! crates they lock, file watching, the in-memory search indexes, and precise (SCIP) data.
//!
//! - `projects.rs`: project registration and index runs (one run per project at a time).
//! - `runs.rs`: the index runs going on, which the dependency worker gives way to.
//! - `deps.rs`: dependency crates indexed in the background after a project's run.
//! - `watcher.rs`: file events under a project root start a new run.
//! - `search_cache.rs`: the in-memory BM25 indexes behind the `search` interface.
//! - `precise/`: precise mode (ADR 0018): SCIP indexers, their scheduler and answers.

pub(crate) mod deps;
pub mod precise;
pub(crate) mod projects;
pub(crate) mod runs;
pub(crate) mod search_cache;
pub(crate) mod watcher;
