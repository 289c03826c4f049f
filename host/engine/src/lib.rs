//! The index engine: turns a workspace on disk into rows in `scryer-db`.
//!
//! - [`lang`]: the [`lang::Language`] trait, one module per language (Rust, Python,
//!   TypeScript/JavaScript, Go), and [`lang::language_for`] to pick one by file name;
//! - [`rust_lang`]: what a Rust file defines and uses (tree-sitter);
//! - [`indexer`]: walking a project, hashing, parsing in parallel, writing in batches;
//! - [`foreground`]: background indexing waits while agents' calls run;
//! - [`safe_fs`], [`walk`], [`file_limits`]: what of a checkout may be read, and how.

pub mod deps;
pub mod edges;
pub mod file_limits;
pub mod foreground;
pub(crate) mod grammar;
pub mod indexer;
pub mod lang;
pub mod model;
pub mod precise;
pub mod rust_lang;
pub mod safe_fs;
pub mod walk;
