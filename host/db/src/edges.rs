//! Graph edges (`calls`, `implements`, `instantiates`, `reexports`) between symbols,
//! written with each file's index rows and read by direction.

#[allow(unused_imports)]
use crate::Db;

/// This area's tables, applied at open after the core schema.
pub(crate) const SCHEMA: &[&str] = &[];
