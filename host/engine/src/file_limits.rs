//! Limits on what the host reads from a checkout: every read of a project's files (or a
//! dependency crate's) is capped by one of these, in one place.

/// Largest source file indexed; a larger one is named "too large" in the index facts and
/// not parsed (generated tables, not code anyone navigates).
pub const MAX_SOURCE_BYTES: u64 = 4 << 20;
/// Largest manifest (`Cargo.toml`, `go.mod`), ignore file (`.gitignore`, `.ignore`,
/// `.git/info/exclude`) or Markdown document read.
pub const MAX_TEXT_BYTES: u64 = 1 << 20;
/// Largest `Cargo.lock` read (a large workspace's lock file is a few MiB).
pub const MAX_LOCKFILE_BYTES: u64 = 32 << 20;
