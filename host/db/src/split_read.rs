//! A large read by name, split in id ranges read on two connections at once.
//!
//! The first read of a common name's rows in a process is paid in page reads: `new`'s
//! 7,531 definitions on the 7.17M-line monorepo sit on about as many pages of `symbol`,
//! and reading them cold took 37-47 ms on one connection. The ids come off the name
//! index alone (1.4 ms), so the rows can be cut into id ranges of equal row counts and
//! each range read on its own pooled connection, on its own tokio worker: 24-34 ms for
//! the same rows on 2 cores (docs/learnings/scale.md, stop 35). A read of fewer rows
//! than [`SPLIT_READ_MIN_ROWS`] is one query, as before.
//!
//! Architecture invariant: a split read returns the rows the one query returns (the
//! ranges cover every id once); callers sort them as they did.

use anyhow::{Context, Result};
use turso::{Row, Value};

use crate::{Db, col, int};

/// Fewer rows than this are read by one query: below it the second connection's
/// start-up costs more than the page reads it takes over.
pub const SPLIT_READ_MIN_ROWS: usize = 2_000;

/// How many id ranges a large read is cut into: one per core of the machines we
/// measure on.
const SPLIT_READ_PARTS: usize = 2;

/// One by-name read: the ids it selects and the rows it returns, over the same table.
pub(crate) struct SplitRead<'a> {
    /// `SELECT <alias>.id FROM … WHERE …`: answered from an index alone.
    pub ids_sql: String,
    /// `SELECT … WHERE …`, to which ` AND <id_column> >= ?N AND <id_column> < ?N+1` is
    /// appended for a range.
    pub rows_sql: String,
    /// The id column of the table whose rows are read (`s.id`).
    pub id_column: &'a str,
    /// The parameters both statements take.
    pub params: Vec<Value>,
}

impl Db {
    /// The rows of `read`, each turned into a `T` by `parse`, in no particular order:
    /// one query for a few rows, [`SPLIT_READ_PARTS`] concurrent id ranges for many.
    pub(crate) async fn split_read<T, F>(&self, read: SplitRead<'_>, parse: F) -> Result<Vec<T>>
    where
        T: Send + 'static,
        F: Fn(&Row) -> Result<T> + Clone + Send + Sync + 'static,
    {
        let conn = self.reader().await?;
        let mut ids = Vec::new();
        let mut rows = conn
            .query_cached(&read.ids_sql, read.params.clone())
            .await?;
        while let Some(row) = rows.next().await? {
            if let Some(id) = int(col(&row, 0)?) {
                ids.push(id);
            }
        }
        drop(rows);
        if ids.len() < SPLIT_READ_MIN_ROWS {
            let rows = conn.query_cached(&read.rows_sql, read.params).await?;
            return collect(rows, &parse).await;
        }
        drop(conn);
        ids.sort_unstable();
        let n = read.params.len();
        let sql = format!(
            "{} AND {id} >= ?{} AND {id} < ?{}",
            read.rows_sql,
            n + 1,
            n + 2,
            id = read.id_column
        );
        let mut parts = Vec::with_capacity(SPLIT_READ_PARTS);
        for k in 0..SPLIT_READ_PARTS {
            let low = ids[k * ids.len() / SPLIT_READ_PARTS];
            let high = match ids.get((k + 1) * ids.len() / SPLIT_READ_PARTS) {
                Some(&id) if k + 1 < SPLIT_READ_PARTS => id,
                _ => i64::MAX,
            };
            let mut params = read.params.clone();
            params.extend([Value::Integer(low), Value::Integer(high)]);
            let (db, sql, parse) = (self.clone(), sql.clone(), parse.clone());
            parts.push(tokio::spawn(async move {
                let conn = db.reader().await?;
                let rows = conn.query_cached(&sql, params).await?;
                collect(rows, &parse).await
            }));
        }
        let mut out = Vec::with_capacity(ids.len());
        for part in parts {
            out.extend(part.await.context("a part of a split read stopped")??);
        }
        Ok(out)
    }
}

async fn collect<T>(mut rows: turso::Rows, parse: &impl Fn(&Row) -> Result<T>) -> Result<Vec<T>> {
    let mut out = Vec::new();
    while let Some(row) = rows.next().await? {
        out.push(parse(&row)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows::*;
    use crate::{RefRow, SymbolRow};

    /// Rows written in several files, on both sides of the split, with another name and
    /// another project beside them: a split read returns exactly what one query does.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_split_read_returns_every_row_once_in_the_same_order_as_one_query() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db.register_project("/work/a", Some("a")).await.unwrap();
        let other = db.register_project("/work/b", Some("b")).await.unwrap();
        let per_file = SPLIT_READ_MIN_ROWS / 3 + 7;
        let files: Vec<_> = (0..4)
            .map(|f| {
                let symbols: Vec<SymbolRow> = (0..per_file as u32)
                    .flat_map(|l| [sym("new", l + 1), sym("other", l + 1)])
                    .collect();
                let refs: Vec<RefRow> = (0..per_file as u32)
                    .flat_map(|l| [reference("new", l + 1), reference("len", l + 1)])
                    .collect();
                // Written out of path order: reads sort by path.
                write(&format!("src/f{}.rs", 3 - f), &f.to_string(), symbols, refs)
            })
            .collect();
        db.write_files(p.id, &files, &[]).await.unwrap();
        db.write_files(other.id, &files[..1], &[]).await.unwrap();

        let symbols = db.symbols_by_name(p.id, "new").await.unwrap();
        assert!(symbols.len() >= SPLIT_READ_MIN_ROWS, "the read is split");
        assert_eq!(symbols.len(), 4 * per_file);
        assert!(symbols.iter().all(|s| s.name == "new"));
        let order: Vec<(String, u32)> = symbols
            .iter()
            .map(|s| (s.file_path.clone(), s.start_line))
            .collect();
        let mut sorted = order.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(order, sorted, "in file then line order, each row once");

        let refs = db.references_to_name(p.id, "new").await.unwrap();
        assert_eq!(refs.len(), 4 * per_file);
        assert!(
            refs.iter()
                .all(|r| r.name == "new" && r.enclosing_symbol == "demo::main")
        );
        let mut lines: Vec<(String, u32)> =
            refs.iter().map(|r| (r.file_path.clone(), r.line)).collect();
        lines.dedup();
        assert_eq!(lines.len(), refs.len(), "each row once");
        // Below the threshold one query answers, with the same rows.
        let small = db.symbols_by_name(other.id, "new").await.unwrap();
        assert_eq!(small.len(), per_file);
        assert_eq!(
            small[..],
            symbols[3 * per_file..],
            "f3.rs is written first in both"
        );
    }
}
