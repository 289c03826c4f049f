//! Source files (`source_file`) and the rows stored for each (`symbol`, `ref_site`,
//! `edge`): reading a project's files, writing one index run's files in one transaction
//! (rows numbered within their file, see [`file_rows`]), and a project's counts.

use std::collections::HashMap;

use anyhow::Result;
use turso::{Connection, Value};

use crate::{
    Db, EdgeRow, RefRow, SymbolRow, col, file_rows, in_transaction, int, is_call_site_edge,
    opt_text, row_diff, scopes::ScopeWriter, text,
};

/// A source file as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRow {
    pub id: i64,
    pub path: String,
    pub content_hash: String,
    pub size: i64,
    pub language: String,
    pub parse_errors: bool,
    pub line_count: i64,
}

/// Everything written for one file in one index run.
#[derive(Clone, Debug)]
pub struct FileWrite {
    pub path: String,
    pub content_hash: String,
    pub size: i64,
    pub language: String,
    pub parse_errors: bool,
    pub line_count: i64,
    pub symbols: Vec<SymbolRow>,
    pub references: Vec<RefRow>,
    /// The file's edges. Those at call sites ([`is_call_site_edge`]) are left out when
    /// written: they are read from `references` ([`edges`](crate::edges) module docs).
    pub edges: Vec<EdgeRow>,
}

/// Counts for one project.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    pub files: u32,
    pub parse_failures: u32,
    pub symbols: u32,
    pub references: u32,
}

/// Rows inserted per statement: one multi-row `INSERT` costs far less than as many
/// single-row ones (measured on a 5,300-line file's 2,700 references).
const ROWS_PER_INSERT: usize = 64;

/// Buffers rows of one table and inserts them `ROWS_PER_INSERT` at a time, with one
/// prepared statement for full batches and a one-off one for the rest.
///
/// Its statements say `INSERT OR FAIL`: a multi-row `INSERT` that may abort halfway makes
/// turso copy every page it touches into a statement journal first, so the statement
/// alone can be undone (5 % of the writer's time in a cold monorepo index, the page
/// copies and their bookkeeping). `FAIL` stops at the failing row without undoing the
/// statement's earlier rows, which is the same for us: every write runs in
/// [`crate::in_transaction`], which rolls the whole transaction back on any error.
pub(crate) struct RowInserter {
    /// `INSERT INTO t (a, b) VALUES ` (the placeholders are appended).
    head: String,
    columns: usize,
    pending: Vec<Value>,
    full: Option<turso::Statement>,
}

impl RowInserter {
    /// Inserts into `table`: `id, project_id, file_id`, then its data columns.
    fn new(table: &row_diff::RowTable) -> Self {
        Self::with_head(
            &format!(
                "INSERT OR FAIL INTO {} (id, project_id, file_id, {}) VALUES ",
                table.name, table.columns
            ),
            table.columns.split(',').count() + 3,
        )
    }

    /// Inserts rows of `columns` values with `head` (`INSERT .. VALUES `).
    pub(crate) fn with_head(head: &str, columns: usize) -> Self {
        RowInserter {
            head: head.to_string(),
            columns,
            pending: Vec::with_capacity(columns * ROWS_PER_INSERT),
            full: None,
        }
    }

    fn sql(&self, rows: usize) -> String {
        let row = format!("({})", vec!["?"; self.columns].join(", "));
        format!("{}{}", self.head, vec![row; rows].join(", "))
    }

    /// Queues one row of `file_id`, numbered by `ids` (`data`: the columns after
    /// `project_id, file_id`).
    async fn push(
        &mut self,
        conn: &Connection,
        project_id: i64,
        file_id: i64,
        ids: &mut file_rows::RowIds,
        data: Vec<Value>,
    ) -> Result<()> {
        let id = ids.take()?;
        let head = [id, project_id, file_id].map(Value::Integer);
        self.push_row(conn, head.into_iter().chain(data)).await
    }

    /// Queues one row (every column, in order).
    pub(crate) async fn push_row(
        &mut self,
        conn: &Connection,
        row: impl IntoIterator<Item = Value>,
    ) -> Result<()> {
        let before = self.pending.len();
        self.pending.extend(row);
        debug_assert_eq!(self.pending.len() - before, self.columns);
        if self.pending.len() == self.columns * ROWS_PER_INSERT {
            if self.full.is_none() {
                self.full = Some(conn.prepare(&self.sql(ROWS_PER_INSERT)).await?);
            }
            let batch = std::mem::take(&mut self.pending);
            if let Some(stmt) = self.full.as_mut() {
                stmt.execute(batch).await?;
            }
        }
        Ok(())
    }

    pub(crate) async fn flush(&mut self, conn: &Connection) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let rows = self.pending.len() / self.columns;
        let batch = std::mem::take(&mut self.pending);
        conn.execute(&self.sql(rows), batch).await?;
        Ok(())
    }
}

const FILE_COLUMNS: &str = "id, path, content_hash, size, language, parse_errors, line_count";

fn file_from(row: &turso::Row) -> Result<FileRow> {
    Ok(FileRow {
        id: int(col(row, 0)?).unwrap_or_default(),
        path: text(col(row, 1)?).unwrap_or_default(),
        content_hash: text(col(row, 2)?).unwrap_or_default(),
        size: int(col(row, 3)?).unwrap_or_default(),
        language: text(col(row, 4)?).unwrap_or_default(),
        parse_errors: int(col(row, 5)?).unwrap_or(0) != 0,
        line_count: int(col(row, 6)?).unwrap_or_default(),
    })
}

impl Db {
    /// Every indexed file of a project, by relative path.
    pub async fn files(&self, project_id: i64) -> Result<HashMap<String, FileRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                format!("SELECT {FILE_COLUMNS} FROM source_file WHERE project_id = ?1"),
                (project_id,),
            )
            .await?;
        let mut out = HashMap::new();
        while let Some(row) = rows.next().await? {
            let f = file_from(&row)?;
            out.insert(f.path.clone(), f);
        }
        Ok(out)
    }

    pub async fn file(&self, project_id: i64, path: &str) -> Result<Option<FileRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                format!(
                    "SELECT {FILE_COLUMNS} FROM source_file WHERE project_id = ?1 AND path = ?2"
                ),
                (project_id, path),
            )
            .await?;
        match rows.next().await? {
            Some(row) => Ok(Some(file_from(&row)?)),
            None => Ok(None),
        }
    }

    /// Replaces the stored index of each file in `writes` and removes the files in
    /// `removed`, all in one transaction.
    pub async fn write_files(
        &self,
        project_id: i64,
        writes: &[FileWrite],
        removed: &[String],
    ) -> Result<()> {
        let conn = self.connect().await?;
        in_transaction(&conn, async |conn| {
            Self::write_files_in(conn, project_id, writes, removed).await
        })
        .await
    }

    async fn write_files_in(
        conn: &Connection,
        project_id: i64,
        writes: &[FileWrite],
        removed: &[String],
    ) -> Result<()> {
        // The project's records of names defined thousands of times go first: they are
        // written again only at the end of a full run (`dense`).
        crate::dense::drop_records(conn, project_id).await?;
        let stored = Self::remove_and_find(conn, project_id, writes, removed).await?;
        let mut ins_file = conn
            .prepare(
                "INSERT INTO source_file (project_id, path, content_hash, size, language, parse_errors, \
                 line_count, symbol_count, ref_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )
            .await?;
        let mut upd_file = conn
            .prepare(
                "UPDATE source_file SET content_hash = ?1, size = ?2, language = ?3, parse_errors = ?4, \
                 line_count = ?5, symbol_count = ?7, ref_count = ?8 WHERE id = ?6",
            )
            .await?;
        let mut ins_sym = RowInserter::new(&row_diff::SYMBOL_ROWS);
        let mut ins_ref = RowInserter::new(&row_diff::REF_ROWS);
        let mut ins_edge = RowInserter::new(&row_diff::EDGE_ROWS);
        let mut scopes = ScopeWriter::new(project_id);
        for w in writes {
            let previous = stored.get(w.path.as_str()).copied();
            // The file's rows once written: every symbol and reference in `w` is one row
            // (reconciling keeps the unchanged ones and replaces the rest).
            let counts = (w.symbols.len() as i64, w.references.len() as i64);
            let file_id = match previous {
                Some(id) => {
                    upd_file
                        .execute((
                            w.content_hash.as_str(),
                            w.size,
                            w.language.as_str(),
                            i64::from(w.parse_errors),
                            w.line_count,
                            id,
                            counts.0,
                            counts.1,
                        ))
                        .await?;
                    id
                }
                None => {
                    ins_file
                        .execute((
                            project_id,
                            w.path.as_str(),
                            w.content_hash.as_str(),
                            w.size,
                            w.language.as_str(),
                            i64::from(w.parse_errors),
                            w.line_count,
                            counts.0,
                            counts.1,
                        ))
                        .await?;
                    conn.last_insert_rowid()
                }
            };
            let (mut symbols, mut references, mut edges) = row_values(conn, &mut scopes, w).await?;
            let next = match previous {
                Some(id) => {
                    row_diff::reconcile_file(conn, id, &mut symbols, &mut references, &mut edges)
                        .await?
                }
                None => Default::default(),
            };
            for (ins, rows, next) in [
                (&mut ins_sym, symbols, next.symbol),
                (&mut ins_ref, references, next.reference),
                (&mut ins_edge, edges, next.edge),
            ] {
                let mut ids = file_rows::RowIds::after(file_id, next)?;
                for row in rows {
                    ins.push(conn, project_id, file_id, &mut ids, row).await?;
                }
            }
        }
        ins_sym.flush(conn).await?;
        ins_ref.flush(conn).await?;
        ins_edge.flush(conn).await?;
        scopes.flush(conn).await?;
        Ok(())
    }

    /// Deletes the `removed` files that are stored (their rows of every table, then the
    /// file); the ids of the `writes` already stored, by path.
    async fn remove_and_find<'w>(
        conn: &Connection,
        project_id: i64,
        writes: &'w [FileWrite],
        removed: &'w [String],
    ) -> Result<HashMap<&'w str, i64>> {
        let mut find = conn
            .prepare("SELECT id FROM source_file WHERE project_id = ?1 AND path = ?2")
            .await?;
        let mut del_rows = Vec::new();
        for table in row_diff::FILE_ROW_TABLES {
            del_rows.push(
                conn.prepare(&format!(
                    "DELETE FROM {} WHERE {}",
                    table.name,
                    file_rows::in_file("id")
                ))
                .await?,
            );
        }
        let mut del_file = conn
            .prepare("DELETE FROM source_file WHERE id = ?1")
            .await?;
        let mut stored: HashMap<&str, i64> = HashMap::new();
        let paths = writes
            .iter()
            .map(|w| (w.path.as_str(), false))
            .chain(removed.iter().map(|p| (p.as_str(), true)));
        for (path, gone) in paths {
            let mut rows = find.query((project_id, path)).await?;
            let existing = match rows.next().await? {
                Some(row) => int(col(&row, 0)?),
                None => None,
            };
            drop(rows);
            find.reset()?;
            match existing {
                Some(id) if gone => {
                    let range = file_rows::range(id)?;
                    for del in &mut del_rows {
                        del.execute(range).await?;
                    }
                    del_file.execute((id,)).await?;
                }
                Some(id) => {
                    stored.insert(path, id);
                }
                None => {}
            }
        }
        Ok(stored)
    }

    /// Every file of a project: id → relative path.
    pub async fn file_paths(&self, project_id: i64) -> Result<HashMap<i64, String>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT id, path FROM source_file WHERE project_id = ?1",
                (project_id,),
            )
            .await?;
        let mut out = HashMap::new();
        while let Some(row) = rows.next().await? {
            out.insert(
                int(col(&row, 0)?).unwrap_or(0),
                text(col(&row, 1)?).unwrap_or_default(),
            );
        }
        Ok(out)
    }

    /// A project's counts: a sum over its files' rows in `source_file` (each file keeps
    /// its row counts), not a scan of every symbol and reference (on the 7.17M-line
    /// monorepo 6 ms instead of 290). A file written without counts (none is, since
    /// schema 9) makes it count the rows themselves.
    pub async fn facts(&self, project_id: i64) -> Result<Facts> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT COUNT(*), SUM(parse_errors != 0), SUM(symbol_count), SUM(ref_count), \
                 COUNT(symbol_count), COUNT(ref_count) FROM source_file WHERE project_id = ?1",
                (project_id,),
            )
            .await?;
        let Some(row) = rows.next().await? else {
            anyhow::bail!("no counts for project {project_id}");
        };
        let n = |i: usize| anyhow::Ok(int(col(&row, i)?).unwrap_or(0));
        let files = n(0)?;
        let mut facts = Facts {
            files: files as u32,
            parse_failures: n(1)? as u32,
            symbols: n(2)? as u32,
            references: n(3)? as u32,
        };
        drop(rows);
        if n(4)? < files || n(5)? < files {
            let count = async |sql: &str| {
                let mut rows = conn.query_cached(sql, (project_id,)).await?;
                let n = match rows.next().await? {
                    Some(row) => int(col(&row, 0)?).unwrap_or(0),
                    None => 0,
                };
                anyhow::Ok(n as u32)
            };
            facts.symbols = count("SELECT COUNT(*) FROM symbol WHERE project_id = ?1").await?;
            facts.references = count("SELECT COUNT(*) FROM ref_site WHERE project_id = ?1").await?;
        }
        Ok(facts)
    }
}

/// A file's symbol, reference and edge rows as column values, in the tables' column
/// order (edges written at call sites are not stored: calls are references).
type RowValues = (Vec<Vec<Value>>, Vec<Vec<Value>>, Vec<Vec<Value>>);

/// A reference's enclosing name is written as its id in `ref_scope` (`scopes`).
async fn row_values(
    conn: &Connection,
    scopes: &mut ScopeWriter,
    w: &FileWrite,
) -> Result<RowValues> {
    let symbols = w
        .symbols
        .iter()
        .map(|s| {
            vec![
                Value::Text(s.name.clone()),
                Value::Text(s.kind.clone()),
                Value::Text(s.qualified_name.clone()),
                opt_text(s.owner.clone()),
                Value::Text(s.signature.clone()),
                opt_text(s.docstring.clone()),
                Value::Integer(i64::from(s.start_line)),
                Value::Integer(i64::from(s.end_line)),
                Value::Integer(i64::from(s.name_line)),
                Value::Integer(i64::from(s.name_column)),
            ]
        })
        .collect();
    let mut references = Vec::with_capacity(w.references.len());
    for r in &w.references {
        references.push(vec![
            Value::Text(r.name.clone()),
            crate::ref_kinds::stored(&r.kind),
            Value::Integer(i64::from(r.line)),
            Value::Integer(i64::from(r.column)),
            opt_text(r.qualifier.clone()),
            Value::Integer(scopes.id(conn, &r.enclosing_symbol).await?),
        ]);
    }
    let edges = w
        .edges
        .iter()
        .filter(|e| !is_call_site_edge(&e.site_kind))
        .map(|e| {
            vec![
                Value::Text(e.kind.clone()),
                Value::Text(e.from_symbol.clone()),
                Value::Text(e.to_name.clone()),
                opt_text(e.to_qualifier.clone()),
                Value::Text(e.site_kind.clone()),
                Value::Integer(i64::from(e.line)),
                Value::Integer(i64::from(e.column)),
            ]
        })
        .collect();
    Ok((symbols, references, edges))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows::*;

    #[tokio::test]
    async fn a_files_rows_stay_in_its_id_range_through_edits_rewrites_and_removal() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db.register_project("/work/a", Some("a")).await.unwrap();
        let refs = |names: &[&str]| -> Vec<RefRow> {
            (1..)
                .zip(names)
                .map(|(line, n)| reference(n, line))
                .collect()
        };
        let in_range = |rows: &[(i64, i64)]| {
            rows.iter().all(|&(id, file)| {
                let (start, end) = file_rows::range(file).unwrap();
                (start..end).contains(&id)
            })
        };
        let edges = |line: u32| {
            vec![EdgeRow {
                kind: "calls".into(),
                from_symbol: "demo::main".into(),
                to_name: "go".into(),
                to_qualifier: None,
                site_kind: "call".into(),
                line,
                column: 5,
                file_path: String::new(),
            }]
        };
        let mut a = write(
            "src/a.rs",
            "a1",
            vec![sym("main", 1)],
            refs(&["x", "y", "z"]),
        );
        a.edges = edges(2);
        let b = write("src/b.rs", "b1", vec![sym("b", 1)], refs(&["x"]));
        db.write_files(p.id, &[a, b], &[]).await.unwrap();
        for table in ["symbol", "ref_site", "edge"] {
            assert!(in_range(&row_ids(&db, table).await), "{table}");
        }
        let before = row_ids(&db, "ref_site").await;
        assert_eq!(before.len(), 4);

        // An edit keeps the unchanged rows (same ids) and numbers the new one past them.
        let mut a = write(
            "src/a.rs",
            "a2",
            vec![sym("main", 1)],
            refs(&["x", "y", "z", "w"]),
        );
        a.edges = edges(2);
        db.write_files(p.id, &[a], &[]).await.unwrap();
        let after = row_ids(&db, "ref_site").await;
        assert!(in_range(&after));
        assert_eq!(after.len(), 5);
        assert!(
            before.iter().all(|r| after.contains(r)),
            "kept rows kept their ids"
        );
        let a_file = before[0].1;
        let newest = after.iter().filter(|r| r.1 == a_file).map(|r| r.0).max();
        assert_eq!(newest, Some(file_rows::range(a_file).unwrap().0 + 3));

        // A rewrite replaces them all; the outline reads the file's range only.
        let a = write("src/a.rs", "a3", vec![sym("other", 4)], refs(&["q", "r"]));
        db.write_files(p.id, &[a], &[]).await.unwrap();
        assert!(in_range(&row_ids(&db, "ref_site").await));
        let names = |rows: Vec<SymbolRow>| rows.into_iter().map(|s| s.name).collect::<Vec<_>>();
        let outline = db.file_symbols(p.id, "src/a.rs").await.unwrap().unwrap();
        assert_eq!(names(outline), ["other"]);
        let outline = db.file_symbols(p.id, "src/b.rs").await.unwrap().unwrap();
        assert_eq!(names(outline), ["b"]);

        // Removing a file removes its rows and nobody else's.
        db.write_files(p.id, &[], &["src/a.rs".into()])
            .await
            .unwrap();
        for table in ["symbol", "ref_site", "edge"] {
            let left = row_ids(&db, table).await;
            assert!(left.iter().all(|r| r.1 != a_file), "{table}: {left:?}");
        }
        assert_eq!(row_ids(&db, "ref_site").await.len(), 1);
        assert_eq!(row_ids(&db, "symbol").await.len(), 1);
    }

    #[tokio::test]
    async fn by_file_statements_read_a_range_of_row_ids_not_the_whole_table() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let conn = db.connect().await.unwrap();
        for table in row_diff::FILE_ROW_TABLES {
            let name = table.name;
            for sql in [
                format!("SELECT id FROM {name} WHERE {}", file_rows::in_file("id")),
                format!(
                    "SELECT s.id FROM {name} s JOIN source_file f ON f.id = s.file_id WHERE {}",
                    file_rows::in_file("s.id")
                ),
                format!("DELETE FROM {name} WHERE {}", file_rows::in_file("id")),
                format!(
                    "UPDATE {name} SET file_id = file_id + 1 WHERE {}",
                    file_rows::in_file("id")
                ),
            ] {
                // The program seeks to the range's start and stops at its end; a whole
                // table read would start with `Rewind` instead.
                let mut rows = conn
                    .query(&format!("EXPLAIN {sql}"), (1_i64, 2_i64))
                    .await
                    .unwrap();
                let mut ops = Vec::new();
                while let Some(row) = rows.next().await.unwrap() {
                    if let Ok(Value::Text(op)) = row.get_value(1) {
                        ops.push(op);
                    }
                }
                assert!(
                    ops.iter().any(|o| o == "SeekGE") && !ops.iter().any(|o| o == "Rewind"),
                    "{sql}: {ops:?}"
                );
            }
        }
    }

    /// `INSERT OR FAIL` keeps a failed statement's earlier rows: the transaction around
    /// the write is what takes them back, with every other file of the write.
    #[tokio::test]
    async fn a_write_that_fails_halfway_leaves_nothing_of_itself() {
        let (_dir, db, p) = crate::test_rows::demo_project().await;
        let kept = write(
            "src/a.rs",
            "ha",
            vec![sym("alpha", 1)],
            vec![reference("alpha", 2)],
        );
        db.write_files(p.id, &[kept], &[]).await.unwrap();
        let before = (
            db.facts(p.id).await.unwrap(),
            row_ids(&db, "ref_site").await,
        );
        let a = db.files(p.id).await.unwrap()["src/a.rs"].id;
        // A stray row in the middle of the next file's id range: its 100 references go
        // in two statements, and the second one meets the row.
        let conn = db.connect().await.unwrap();
        conn.execute(
            "INSERT INTO ref_site (id, project_id, file_id, name, kind, line, col, scope_id) \
             VALUES (?1, ?2, ?3, 'stray', 0, 1, 1, 0)",
            (file_rows::range(a + 1).unwrap().0 + 70, p.id, a + 1),
        )
        .await
        .unwrap();
        let stray = row_ids(&db, "ref_site").await;
        let refs = (0..100).map(|i| reference("beta", i + 1)).collect();
        let failing = [
            write("src/b.rs", "hb", vec![sym("beta", 1)], refs),
            write("src/c.rs", "hc", vec![sym("gamma", 1)], vec![]),
        ];
        let err = db.write_files(p.id, &failing, &[]).await.unwrap_err();
        assert!(format!("{err:#}").contains("UNIQUE"), "{err:#}");
        assert_eq!(db.facts(p.id).await.unwrap(), before.0);
        assert_eq!(row_ids(&db, "ref_site").await, stray);
        assert!(
            db.references_to_name(p.id, "beta")
                .await
                .unwrap()
                .is_empty()
        );
        let files = db.files(p.id).await.unwrap();
        assert_eq!(files.keys().collect::<Vec<_>>(), ["src/a.rs"]);
        // The database still takes writes.
        conn.execute("DELETE FROM ref_site WHERE name = 'stray'", ())
            .await
            .unwrap();
        db.write_files(p.id, &failing, &[]).await.unwrap();
        assert_eq!(
            db.references_to_name(p.id, "beta").await.unwrap().len(),
            100
        );
    }

    #[tokio::test]
    async fn a_file_round_trips_and_rewriting_replaces_it() {
        let (_dir, db, p) = crate::test_rows::demo_project().await;
        assert_eq!(p.slug, "demo");
        assert!(!p.index_complete);
        db.write_files(
            p.id,
            &[write(
                "src/lib.rs",
                "h1",
                vec![sym("alpha", 1), sym("beta", 5)],
                vec![reference("alpha", 9)],
            )],
            &[],
        )
        .await
        .unwrap();
        let got = db.symbols_by_name(p.id, "alpha").await.unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].file_path, "src/lib.rs");
        assert_eq!(got[0].qualified_name, "demo::alpha");
        let refs = db.references_to_name(p.id, "alpha").await.unwrap();
        assert_eq!(
            (refs[0].line, refs[0].column, refs[0].file_path.as_str()),
            (9, 5, "src/lib.rs")
        );

        // Re-index the file with different content: old rows go, new rows stay.
        db.write_files(
            p.id,
            &[write("src/lib.rs", "h2", vec![sym("gamma", 1)], vec![])],
            &[],
        )
        .await
        .unwrap();
        assert!(db.symbols_by_name(p.id, "alpha").await.unwrap().is_empty());
        assert!(
            db.references_to_name(p.id, "alpha")
                .await
                .unwrap()
                .is_empty()
        );
        let files = db.files(p.id).await.unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files["src/lib.rs"].content_hash, "h2");
        assert_eq!(
            db.facts(p.id).await.unwrap(),
            Facts {
                files: 1,
                parse_failures: 0,
                symbols: 1,
                references: 0
            }
        );

        db.write_files(p.id, &[], &["src/lib.rs".into()])
            .await
            .unwrap();
        assert_eq!(db.facts(p.id).await.unwrap(), Facts::default());
    }

    /// (id, line) of `path`'s references, by line.
    async fn ref_ids(db: &Db, path: &str) -> Vec<(i64, i64)> {
        let sql = "SELECT r.id, r.line FROM ref_site r JOIN source_file f ON f.id = r.file_id \
                   WHERE f.path = ?1 ORDER BY r.line, r.id";
        int_pairs(db, sql, (path,)).await
    }

    #[tokio::test]
    async fn a_rewrite_keeps_unchanged_rows_and_replaces_only_the_difference() {
        let (_dir, db, p) = crate::test_rows::demo_project().await;
        let refs = |lines: &[u32]| lines.iter().map(|&l| reference("a", l)).collect();
        // Twins on line 3 (the same name twice), one use on 7, three further down.
        let file = |hash, lines: &[u32]| write("src/lib.rs", hash, vec![sym("a", 1)], refs(lines));
        db.write_files(p.id, &[file("h1", &[3, 3, 7, 20, 21, 22])], &[])
            .await
            .unwrap();
        // Another file written later holds the highest row ids, so a row inserted again
        // gets a new id instead of reusing a freed one.
        let other = write("src/other.rs", "o", vec![], refs(&[1]));
        db.write_files(p.id, &[other], &[]).await.unwrap();
        let before = ref_ids(&db, "src/lib.rs").await;

        // One twin goes, 7 moves to 8, 9 is new; 20-22 stay.
        db.write_files(p.id, &[file("h2", &[3, 8, 9, 20, 21, 22])], &[])
            .await
            .unwrap();
        let after = ref_ids(&db, "src/lib.rs").await;
        let lines: Vec<i64> = after.iter().map(|(_, l)| *l).collect();
        assert_eq!(lines, [3, 8, 9, 20, 21, 22]);
        // Unchanged rows kept their ids; changed ones are new.
        assert!(before.contains(&after[0]), "{before:?} -> {after:?}");
        assert_eq!(after[3..], before[3..]);
        assert!(!before.iter().any(|(id, _)| *id == after[1].0));
        assert_eq!(db.references_to_name(p.id, "a").await.unwrap().len(), 7);
        assert_eq!(
            db.files(p.id).await.unwrap()["src/lib.rs"].content_hash,
            "h2"
        );
        assert_eq!(db.symbols_by_name(p.id, "a").await.unwrap().len(), 1);

        // Every line moved (a line added at the top): the rows are shifted in place,
        // keeping their ids, none stale.
        db.write_files(p.id, &[file("h3", &[4, 9, 10, 21, 22, 23])], &[])
            .await
            .unwrap();
        let moved = ref_ids(&db, "src/lib.rs").await;
        let lines: Vec<i64> = moved.iter().map(|(_, l)| *l).collect();
        assert_eq!(lines, [4, 9, 10, 21, 22, 23]);
        let ids = |rows: &[(i64, i64)]| rows.iter().map(|r| r.0).collect::<Vec<_>>();
        assert_eq!(ids(&moved), ids(&after));
        assert_eq!(db.references_to_name(p.id, "a").await.unwrap().len(), 7);
        // The kept per-file counts still add up to the rows after every rewrite.
        assert_eq!(facts_and_rows(&db, p.id).await, ((1, 7), (1, 7)));
    }

    /// A project's (symbols, references) as `facts` sums them, and as counted row by row.
    async fn facts_and_rows(db: &Db, project_id: i64) -> ((i64, i64), (i64, i64)) {
        let f = db.facts(project_id).await.unwrap();
        let conn = db.connect().await.unwrap();
        let mut counted = Vec::new();
        for table in ["symbol", "ref_site"] {
            let sql = format!("SELECT COUNT(*) FROM {table} WHERE project_id = ?1");
            let mut rows = conn.query(&sql, (project_id,)).await.unwrap();
            let row = rows.next().await.unwrap().unwrap();
            counted.push(int(row.get_value(0).unwrap()).unwrap());
        }
        (
            (i64::from(f.symbols), i64::from(f.references)),
            (counted[0], counted[1]),
        )
    }

    #[tokio::test]
    async fn lines_inserted_inside_a_symbol_move_its_end_and_the_rows_below() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db.register_project("/work/demo", None).await.unwrap();
        let outer = |end| SymbolRow {
            end_line: end,
            ..sym("outer", 1)
        };
        let refs = |lines: &[(&str, u32)]| lines.iter().map(|&(n, l)| reference(n, l)).collect();
        let before = write(
            "src/lib.rs",
            "h1",
            vec![outer(10), sym("below", 12)],
            refs(&[("b", 2), ("c", 5), ("d", 8), ("e", 13)]),
        );
        db.write_files(p.id, &[before], &[]).await.unwrap();
        let ids_before = ref_ids(&db, "src/lib.rs").await;
        // Two lines inserted after line 5, one of them a new use of `x`.
        let after = write(
            "src/lib.rs",
            "h2",
            vec![outer(12), sym("below", 14)],
            refs(&[("b", 2), ("c", 5), ("x", 6), ("d", 10), ("e", 15)]),
        );
        db.write_files(p.id, &[after], &[]).await.unwrap();

        let spans = |name: &'static str| {
            let db = db.clone();
            async move {
                let s = &db.symbols_by_name(p.id, name).await.unwrap()[0];
                (s.start_line, s.end_line, s.name_line)
            }
        };
        assert_eq!(spans("outer").await, (1, 12, 1));
        assert_eq!(spans("below").await, (14, 16, 14));
        let ids_after = ref_ids(&db, "src/lib.rs").await;
        let lines: Vec<i64> = ids_after.iter().map(|r| r.1).collect();
        assert_eq!(lines, [2, 5, 6, 10, 15]);
        // Only the new use is a new row; the others were shifted where they stand.
        let ids = |rows: &[(i64, i64)]| rows.iter().map(|r| r.0).collect::<Vec<_>>();
        assert_eq!(
            ids(&ids_before),
            ids(&[&ids_after[..2], &ids_after[3..]].concat())
        );
        assert!(!ids_before.iter().any(|r| r.0 == ids_after[2].0));
    }
}
