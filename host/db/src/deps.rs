//! Dependency crates: the crates each project locks, and the shared index of their
//! sources (one entry per crate name and version, reused by every project).

#[allow(unused_imports)]
use crate::Db;

/// This area's tables, applied at open after the core schema.
pub(crate) const SCHEMA: &[&str] = &[];
