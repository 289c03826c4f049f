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
//! references by the id it computes.
//!
//! The id keeps the names of one prefix together (ADR 0051): its top 20 bits hash the
//! name's prefix (`a::b::T` of `a::b::T::m`, `pkg.mod` of `pkg.mod.f`), its low 43 bits
//! the project and the whole name. `ref_scope` is ordered by id, so a file's enclosing
//! names sit on a few pages instead of one page each: the writer touches 77 % fewer of
//! them per file, and reading a name's usages with their enclosing names 36 % fewer
//! (the monorepo: 4,435 pages against 19,019 for a sample of 834 files; 3,379 against
//! 5,271 for `into`'s 17,078 usages). Two names share an id only if their low 43 bits
//! do and their prefixes' top bits do too: for the monorepo's 461k names, under 64,538
//! prefixes, a chance of about 1.4 × 10⁻⁵ that any two do, nearly all of it from the
//! 124M pairs of names under a shared prefix (the largest holds 3,440). The name stored
//! first would then stand for both.
//!
//! Names no reference uses any more (a renamed function's) stay until the project is
//! forgotten: a few rows per edit, never read (every read goes from a reference to its
//! scope).

use std::collections::HashSet;

use anyhow::Result;
use turso::{Connection, Value};

use crate::files::RowInserter;

/// The id `qualified_name` is stored under in `project_id`: the top 20 of its 63 bits
/// from its prefix ([`prefix`]), the low 43 from the project and the whole name, each
/// from a 64-bit FNV-1a; positive, so a SQLite integer. Stable across builds: the ids are stored
/// (the test below pins the function; a change needs a new layout version, `schema`).
pub fn scope_id(project_id: i64, qualified_name: &str) -> i64 {
    const NAME_BITS: u32 = 43;
    // Folded: FNV-1a's top bits barely change with a prefix's last byte.
    let folded = {
        let h = fnv1a(project_id, prefix(qualified_name));
        h ^ (h >> 32)
    };
    let group = folded & ((1 << (63 - NAME_BITS)) - 1);
    let name = fnv1a(project_id, qualified_name) & ((1 << NAME_BITS) - 1);
    ((group << NAME_BITS) | name) as i64
}

/// A qualified name without its last segment, after the last `::`, `.`, `/` or `#`: the
/// module or type it is written in, in every language we index. A name of one segment
/// is its own prefix.
fn prefix(qualified_name: &str) -> &str {
    let at = ["::", ".", "/", "#"]
        .iter()
        .filter_map(|sep| qualified_name.rfind(sep))
        .max();
    match at {
        Some(i) => &qualified_name[..i],
        None => qualified_name,
    }
}

/// 64-bit FNV-1a over the project id's little-endian bytes, then `text`.
fn fnv1a(project_id: i64, text: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for b in project_id.to_le_bytes().iter().chain(text.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(PRIME);
    }
    h
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
        assert_eq!(scope_id(1, "demo::main"), PINNED);
        let ids = [
            scope_id(1, "demo::main"),
            scope_id(2, "demo::main"),
            scope_id(1, "demo::mai"),
            scope_id(1, ""),
            scope_id(i64::MAX, "x"),
        ];
        assert!(ids.iter().all(|&id| id >= 0));
        let distinct: HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }

    const PINNED: i64 = 0x6eca_cab1_7430_662a;

    /// The names of one prefix share the id's top bits, so they sit together in
    /// `ref_scope`; the names of another prefix do not.
    #[test]
    fn the_names_of_one_prefix_get_ids_side_by_side() {
        let top = |name: &str| scope_id(7, name) >> 43;
        assert_eq!(top("a::b::T::new"), top("a::b::T::len"));
        assert_eq!(top("pkg.mod.f"), top("pkg.mod.g"));
        assert_eq!(top("src/x.ts#f"), top("src/x.ts#g"));
        assert_ne!(top("a::b::T::new"), top("a::b::U::new"));
        assert_ne!(scope_id(7, "a::b::T::new"), scope_id(7, "a::b::T::len"));
        assert_eq!(prefix("a::b::T::new"), "a::b::T");
        assert_eq!(prefix("pkg.mod.C.m"), "pkg.mod.C");
        assert_eq!(prefix("main"), "main");
        assert_eq!(prefix("a.b::c"), "a.b");
    }
}
