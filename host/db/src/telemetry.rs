//! Measured usage: one row per tool call (never arguments or answers).

#[allow(unused_imports)]
use crate::Db;

/// This area's tables, applied at open after the core schema.
pub(crate) const SCHEMA: &[&str] = &[];
