//! The index engine: turns a workspace on disk into rows in `scryer-db`.
//!
//! - [`rust_lang`]: what a Rust file defines and uses (tree-sitter);
//! - [`indexer`]: walking a project, hashing, parsing in parallel, writing in batches.

pub mod indexer;
pub mod model;
pub mod rust_lang;
