//! The symbols references are written in (`ref_scope`): each distinct enclosing name of
//! a project is stored once, and a reference keeps only its id (`ref_site.scope_id`).
//!
//! The enclosing name (`tokio::runtime::Runtime::block_on`) was half of a reference row:
//! 49 bytes on average, repeated on each of a function's references and again in the
//! call-by-caller index. Stored once (the monorepo corpus: 6.5M references, 461k distinct
//! names) the database is about a third smaller (`docs/learnings/scale.md`, stop 31).
//!
//! The id is a hash of the project and the name, not a counter: a reference row stays a
//! value of its own (an edit's row diff compares rows as they are, `row_diff`), the
//! writer needs no look-up to number a name, and `edges_from` finds a caller's call
//! references by the id it computes. Two names of one project share an id with a
//! probability of about n² / 2⁶⁴ (1.4 × 10⁻⁸ for 461k names); the name stored first
//! would then stand for both.
//!
//! Names no reference uses any more (a renamed function's) stay until the project is
//! forgotten: a few rows per edit, never read (every read goes from a reference to its
//! scope).

use std::collections::HashSet;

use anyhow::Result;
use turso::{Connection, Value};

use crate::files::RowInserter;

/// The id `qualified_name` is stored under in `project_id`: 64-bit FNV-1a over both,
/// kept to 63 bits so it is a positive SQLite integer. Stable across builds: the ids are
/// stored (the test below pins the function).
pub fn scope_id(project_id: i64, qualified_name: &str) -> i64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for b in project_id
        .to_le_bytes()
        .iter()
        .chain(qualified_name.as_bytes())
    {
        h ^= u64::from(*b);
        h = h.wrapping_mul(PRIME);
    }
    (h & i64::MAX as u64) as i64
}

/// Writes the names of one transaction's references, each once.
pub(crate) struct ScopeWriter {
    project_id: i64,
    written: HashSet<i64>,
    rows: RowInserter,
}

impl ScopeWriter {
    pub fn new(project_id: i64) -> Self {
        ScopeWriter {
            project_id,
            written: HashSet::new(),
            rows: RowInserter::with_head(
                "INSERT OR IGNORE INTO ref_scope (id, project_id, qualified_name) VALUES ",
                3,
            ),
        }
    }

    /// The id of `qualified_name`, queueing its row the first time it is seen.
    pub async fn id(&mut self, conn: &Connection, qualified_name: &str) -> Result<i64> {
        let id = scope_id(self.project_id, qualified_name);
        if self.written.insert(id) {
            self.rows
                .push_row(
                    conn,
                    [
                        Value::Integer(id),
                        Value::Integer(self.project_id),
                        Value::Text(qualified_name.to_string()),
                    ],
                )
                .await?;
        }
        Ok(id)
    }

    pub async fn flush(&mut self, conn: &Connection) -> Result<()> {
        self.rows.flush(conn).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_ids_are_pinned_positive_and_differ_by_project_and_name() {
        // Stored ids: changing the function would orphan every stored reference's scope.
        assert_eq!(scope_id(1, "demo::main"), 0x6fd5_a2b1_7430_662a);
        let ids = [
            scope_id(1, "demo::main"),
            scope_id(2, "demo::main"),
            scope_id(1, "demo::mai"),
            scope_id(1, ""),
        ];
        assert!(ids.iter().all(|&id| id >= 0));
        let distinct: HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }
}
