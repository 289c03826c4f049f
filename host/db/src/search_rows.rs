//! Symbol reads for the in-memory search index: the whole corpus of a project, streamed
//! (the index keeps none of it), and the rows of a page of hits by id.

use anyhow::Result;
use turso::Value;

use crate::{Db, SYMBOL_COLUMNS, SymbolRow, col, file_rows, int, symbol_from, text};

/// The searchable text of one definition, with the id of its row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchRow {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub qualified_name: String,
    pub signature: String,
    pub docstring: Option<String>,
}

/// A [`SearchRow`] from `id, name, kind, qualified_name, signature, docstring`.
fn search_row(row: &turso::Row) -> Result<SearchRow> {
    Ok(SearchRow {
        id: int(col(row, 0)?).unwrap_or_default(),
        name: text(col(row, 1)?).unwrap_or_default(),
        kind: text(col(row, 2)?).unwrap_or_default(),
        qualified_name: text(col(row, 3)?).unwrap_or_default(),
        signature: text(col(row, 4)?).unwrap_or_default(),
        docstring: text(col(row, 5)?),
    })
}

/// Most ids bound in one `IN (...)` lookup.
const IDS_PER_QUERY: usize = 500;

impl Db {
    /// Every definition of an index project (a user's project or a dependency crate's),
    /// by file then line, paths relative to its root. Empty for an unknown or unindexed
    /// project.
    pub async fn all_symbols(&self, project_id: i64) -> Result<Vec<SymbolRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                format!(
                    "SELECT {SYMBOL_COLUMNS} FROM symbol s JOIN source_file f ON f.id = s.file_id \
                     WHERE s.project_id = ?1 ORDER BY f.path, s.start_line, s.end_line DESC"
                ),
                (project_id,),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(symbol_from(&row)?);
        }
        Ok(out)
    }

    /// Calls `each` with the searchable text of every definition of a project, without
    /// holding them (a dependency like `linux-raw-sys` has ~370,000), by row id: files in
    /// the order they were indexed, each in source order (a search index breaks score
    /// ties by the order documents were added). Returns how many there were; stops at the
    /// first error `each` returns.
    ///
    /// A file's rows are one range of row ids (`file_rows`), so the project's rows lie
    /// in the range of its first to its last file's, read straight off the table in id
    /// order, other projects' rows within it skipped. Through the `(project_id, name)`
    /// index, turso looked up every row and sorted them: the monorepo's 741k rows in
    /// 2.6–3.3 s, against 0.47–0.62 s by range (docs/learnings/scale.md, stop 36).
    pub async fn each_search_row(
        &self,
        project_id: i64,
        mut each: impl FnMut(SearchRow) -> Result<()>,
    ) -> Result<u64> {
        let conn = self.reader().await?;
        let mut files = conn
            .query_cached(
                "SELECT min(id), max(id) FROM source_file WHERE project_id = ?1",
                (project_id,),
            )
            .await?;
        let bounds = match files.next().await? {
            Some(row) => (int(col(&row, 0)?), int(col(&row, 1)?)),
            None => (None, None),
        };
        drop(files);
        let (Some(first), Some(last)) = bounds else {
            return Ok(0);
        };
        let (start, _) = file_rows::range(first)?;
        let (_, end) = file_rows::range(last)?;
        // `+project_id`: compared on each row, so turso reads the id range of the table
        // rather than the name index.
        let mut rows = conn
            .query_cached(
                "SELECT id, name, kind, qualified_name, signature, docstring FROM symbol \
                 WHERE id >= ?2 AND id < ?3 AND +project_id = ?1 ORDER BY id",
                (project_id, start, end),
            )
            .await?;
        let mut n = 0u64;
        while let Some(row) = rows.next().await? {
            each(search_row(&row)?)?;
            n += 1;
        }
        Ok(n)
    }

    /// Calls `each` with the searchable text of the current definitions of the files at
    /// `paths` (project-relative; absent ones are skipped), by row id as
    /// [`Db::each_search_row`] gives them: what an index of a project's edited files holds.
    /// Returns the files' ids.
    pub async fn each_search_row_in(
        &self,
        project_id: i64,
        paths: &[String],
        mut each: impl FnMut(SearchRow) -> Result<()>,
    ) -> Result<Vec<i64>> {
        let conn = self.reader().await?;
        let mut ids = Vec::with_capacity(paths.len());
        for path in paths {
            let mut rows = conn
                .query_cached(
                    "SELECT id FROM source_file WHERE project_id = ?1 AND path = ?2",
                    (project_id, path.as_str()),
                )
                .await?;
            if let Some(row) = rows.next().await?
                && let Some(id) = int(col(&row, 0)?)
            {
                ids.push(id);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        for &file_id in &ids {
            let (start, end) = file_rows::range(file_id)?;
            let mut rows = conn
                .query_cached(
                    format!(
                        "SELECT id, name, kind, qualified_name, signature, docstring FROM symbol \
                         WHERE {} ORDER BY id",
                        file_rows::in_file("id")
                    ),
                    (start, end),
                )
                .await?;
            while let Some(row) = rows.next().await? {
                each(search_row(&row)?)?;
            }
        }
        Ok(ids)
    }

    /// The definitions with these row ids, paired with their id, in no particular
    /// order; ids with no row (deleted since) are left out.
    pub async fn symbols_by_ids(&self, ids: &[i64]) -> Result<Vec<(i64, SymbolRow)>> {
        let conn = self.reader().await?;
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IDS_PER_QUERY) {
            let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("?{i}")).collect();
            let mut rows = conn
                .query(
                    format!(
                        "SELECT {SYMBOL_COLUMNS}, s.id FROM symbol s JOIN source_file f ON f.id = s.file_id \
                         WHERE s.id IN ({})",
                        marks.join(", ")
                    ),
                    chunk.iter().map(|&id| Value::Integer(id)).collect::<Vec<_>>(),
                )
                .await?;
            while let Some(row) = rows.next().await? {
                let id = int(col(&row, 11)?).unwrap_or_default();
                out.push((id, symbol_from(&row)?));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Db, FileWrite, SymbolRow};

    fn sym(name: &str, line: u32) -> SymbolRow {
        SymbolRow {
            name: name.into(),
            kind: "function".into(),
            qualified_name: format!("demo::{name}"),
            owner: None,
            signature: format!("fn {name}()"),
            docstring: Some(format!("Docs of {name}.")),
            start_line: line,
            end_line: line + 1,
            name_line: line,
            name_column: 4,
            file_path: String::new(),
        }
    }

    fn file(path: &str, symbols: Vec<SymbolRow>) -> FileWrite {
        FileWrite {
            path: path.into(),
            content_hash: "h".into(),
            size: 1,
            language: "rust".into(),
            parse_errors: false,
            line_count: 10,
            symbols,
            references: vec![],
            edges: vec![],
        }
    }

    async fn two_projects() -> (tempfile::TempDir, Db, i64, i64) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let a = db.register_project("/x/a", None).await.unwrap();
        let b = db.register_project("/x/b", None).await.unwrap();
        db.write_files(
            a.id,
            &[
                file("src/z.rs", vec![sym("late", 1)]),
                file("src/a.rs", vec![sym("second", 9), sym("first", 2)]),
            ],
            &[],
        )
        .await
        .unwrap();
        db.write_files(b.id, &[file("src/lib.rs", vec![sym("other", 1)])], &[])
            .await
            .unwrap();
        (dir, db, a.id, b.id)
    }

    #[tokio::test]
    async fn all_symbols_reads_one_project_by_file_then_line() {
        let (_dir, db, a, _) = two_projects().await;
        let got = db.all_symbols(a).await.unwrap();
        let seen: Vec<(&str, &str)> = got
            .iter()
            .map(|s| (s.file_path.as_str(), s.name.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("src/a.rs", "first"),
                ("src/a.rs", "second"),
                ("src/z.rs", "late")
            ]
        );
        assert_eq!(got[0].docstring.as_deref(), Some("Docs of first."));
        assert!(db.all_symbols(9_999).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn search_rows_stream_and_ids_find_their_rows() {
        let (_dir, db, a, b) = two_projects().await;
        let mut rows = Vec::new();
        let n = db
            .each_search_row(a, |r| {
                rows.push(r);
                Ok(())
            })
            .await
            .unwrap();
        assert_eq!(n, 3);
        // By row id: files as written, each in source order as given.
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["late", "second", "first"]);
        let late = rows.iter().find(|r| r.name == "late").unwrap();
        assert_eq!(
            (late.kind.as_str(), late.qualified_name.as_str()),
            ("function", "demo::late")
        );
        assert_eq!(late.signature, "fn late()");
        assert_eq!(late.docstring.as_deref(), Some("Docs of late."));

        // An error from the callback stops the read and comes back.
        let mut calls = 0;
        let err = db
            .each_search_row(a, |_| {
                calls += 1;
                anyhow::bail!("enough")
            })
            .await
            .unwrap_err();
        assert_eq!((calls, err.to_string().as_str()), (1, "enough"));

        let other = {
            let mut id = 0;
            db.each_search_row(b, |r| {
                id = r.id;
                Ok(())
            })
            .await
            .unwrap();
            id
        };
        // A file of `a` written after `b`'s: `a`'s id range now holds `b`'s rows, which
        // are skipped; an unknown project has none.
        db.write_files(a, &[file("src/y.rs", vec![sym("later", 3)])], &[])
            .await
            .unwrap();
        let mut again = Vec::new();
        db.each_search_row(a, |r| {
            again.push((r.id, r.name));
            Ok(())
        })
        .await
        .unwrap();
        let names: Vec<&str> = again.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["late", "second", "first", "later"]);
        assert!(again.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(again.iter().all(|(id, _)| *id != other));
        assert_eq!(db.each_search_row(9_999, |_| Ok(())).await.unwrap(), 0);

        let mut found = db.symbols_by_ids(&[late.id, other, 987_654]).await.unwrap();
        found.sort_by_key(|(id, _)| *id);
        assert_eq!(found.len(), 2);
        let by_id: std::collections::HashMap<i64, SymbolRow> = found.into_iter().collect();
        assert_eq!(by_id[&late.id].file_path, "src/z.rs");
        assert_eq!(by_id[&other].name, "other");
        // Many ids are looked up in chunks.
        let many: Vec<i64> = (0..1_200)
            .map(|i| late.id + 10_000 + i)
            .chain([late.id])
            .collect();
        assert_eq!(db.symbols_by_ids(&many).await.unwrap().len(), 1);
    }
}
