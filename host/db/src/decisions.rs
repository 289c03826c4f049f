//! Architecture decisions recorded through the memory router, kept beside their files.

#[allow(unused_imports)]
use crate::Db;

/// This area's tables, applied at open after the core schema.
pub(crate) const SCHEMA: &[&str] = &[];
