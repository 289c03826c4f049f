//! Reads of definitions (`symbol`) and usage sites (`ref_site`): by name, by
//! qualified name, by file, by kind, and the files that name something.

use anyhow::Result;

use crate::file_spans::FileSpans;
use crate::split_read::SplitRead;
use crate::{Db, col, file_rows, int, ref_kinds, text};

/// A definition as stored.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SymbolRow {
    pub name: String,
    pub kind: String,
    pub qualified_name: String,
    pub owner: Option<String>,
    pub signature: String,
    pub docstring: Option<String>,
    pub start_line: u32,
    pub end_line: u32,
    pub name_line: u32,
    pub name_column: u32,
    /// Filled on reads: the file's path relative to the project root.
    pub file_path: String,
}

/// A usage site as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefRow {
    pub name: String,
    pub kind: String,
    pub line: u32,
    pub column: u32,
    pub qualifier: Option<String>,
    pub enclosing_symbol: String,
    /// Filled on reads.
    pub file_path: String,
}

pub(crate) const SYMBOL_COLUMNS: &str = "s.name, s.kind, s.qualified_name, s.owner, s.signature, s.docstring, \
     s.start_line, s.end_line, s.name_line, s.name_column, f.path";

/// Symbol rows in file, then line order. Sorted here: turso's ORDER BY over the join
/// costs more than the query itself.
async fn symbols_in_file_order(mut rows: turso::Rows) -> Result<Vec<SymbolRow>> {
    let mut out = Vec::new();
    while let Some(row) = rows.next().await? {
        out.push(symbol_from(&row)?);
    }
    sort_symbols(&mut out);
    Ok(out)
}

fn sort_symbols(rows: &mut [SymbolRow]) {
    rows.sort_by(|a, b| (&a.file_path, a.start_line).cmp(&(&b.file_path, b.start_line)));
}

pub(crate) fn symbol_from(row: &turso::Row) -> Result<SymbolRow> {
    Ok(SymbolRow {
        name: text(col(row, 0)?).unwrap_or_default(),
        kind: text(col(row, 1)?).unwrap_or_default(),
        qualified_name: text(col(row, 2)?).unwrap_or_default(),
        owner: text(col(row, 3)?),
        signature: text(col(row, 4)?).unwrap_or_default(),
        docstring: text(col(row, 5)?),
        start_line: int(col(row, 6)?).unwrap_or(0) as u32,
        end_line: int(col(row, 7)?).unwrap_or(0) as u32,
        name_line: int(col(row, 8)?).unwrap_or(0) as u32,
        name_column: int(col(row, 9)?).unwrap_or(0) as u32,
        file_path: text(col(row, 10)?).unwrap_or_default(),
    })
}

impl Db {
    /// A name's definitions in file, then line order: its record when it has one
    /// (`dense`), else its rows.
    pub async fn symbols_by_name(&self, project_id: i64, name: &str) -> Result<Vec<SymbolRow>> {
        if let Some(rows) = self.dense_definitions(project_id, name).await? {
            return Ok(rows);
        }
        self.symbols_row_by_row(project_id, name).await
    }

    /// [`Db::symbols_by_name`] from the rows. A common name's are read on two connections
    /// at once (`split_read`).
    pub(crate) async fn symbols_row_by_row(
        &self,
        project_id: i64,
        name: &str,
    ) -> Result<Vec<SymbolRow>> {
        let read = SplitRead {
            ids_sql: "SELECT s.id FROM symbol s WHERE s.project_id = ?1 AND s.name = ?2".into(),
            rows_sql: format!(
                "SELECT {SYMBOL_COLUMNS} FROM symbol s JOIN source_file f ON f.id = s.file_id \
                 WHERE s.project_id = ?1 AND s.name = ?2"
            ),
            id_column: "s.id",
            params: vec![project_id.into(), name.into()],
        };
        let mut out = self.split_read(read, symbol_from).await?;
        sort_symbols(&mut out);
        Ok(out)
    }

    /// Definitions named `name` whose qualified name is `qualified` or ends with
    /// `::qualified`, in [`Db::symbols_by_name`]'s order. The match is made in the query,
    /// so the other same-named definitions (hundreds for `new` or `fmt`) are never
    /// turned into rows: a call hierarchy asks this for every caller it meets.
    pub async fn symbols_by_qualified_name(
        &self,
        project_id: i64,
        name: &str,
        qualified: &str,
    ) -> Result<Vec<SymbolRow>> {
        let suffix = format!("::{qualified}");
        let suffix_chars = suffix.chars().count() as i64;
        let conn = self.reader().await?;
        let rows = conn
            .query_cached(
                format!(
                    "SELECT {SYMBOL_COLUMNS} FROM symbol s JOIN source_file f ON f.id = s.file_id \
                     WHERE s.project_id = ?1 AND s.name = ?2 \
                     AND (s.qualified_name = ?3 OR substr(s.qualified_name, -?4) = ?5)"
                ),
                (project_id, name, qualified, suffix_chars, suffix.as_str()),
            )
            .await?;
        symbols_in_file_order(rows).await
    }

    /// Definitions in one file in source order; `None` when the file is not indexed.
    pub async fn file_symbols(
        &self,
        project_id: i64,
        path: &str,
    ) -> Result<Option<Vec<SymbolRow>>> {
        let Some(file) = self.file(project_id, path).await? else {
            return Ok(None);
        };
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                format!(
                    "SELECT {SYMBOL_COLUMNS} FROM symbol s JOIN source_file f ON f.id = s.file_id \
                     WHERE {} ORDER BY s.start_line, s.end_line DESC",
                    file_rows::in_file("s.id")
                ),
                file_rows::range(file.id)?,
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(symbol_from(&row)?);
        }
        Ok(Some(out))
    }

    pub async fn references_to_name(&self, project_id: i64, name: &str) -> Result<Vec<RefRow>> {
        self.ref_rows(project_id, name, None).await
    }

    /// `name`'s usage rows whose kind is one of `kinds` (none when `kinds` is empty).
    pub async fn references_of_kinds(
        &self,
        project_id: i64,
        name: &str,
        kinds: &[String],
    ) -> Result<Vec<RefRow>> {
        if kinds.is_empty() {
            return Ok(Vec::new());
        }
        self.ref_rows(project_id, name, Some(kinds)).await
    }

    async fn ref_rows(
        &self,
        project_id: i64,
        name: &str,
        kinds: Option<&[String]>,
    ) -> Result<Vec<RefRow>> {
        let mut params: Vec<turso::Value> = vec![project_id.into(), name.into()];
        let kind_filter = match kinds {
            Some(kinds) => {
                let marks: Vec<String> = (0..kinds.len()).map(|i| format!("?{}", i + 3)).collect();
                params.extend(kinds.iter().map(|k| ref_kinds::stored(k)));
                format!(" AND r.kind IN ({})", marks.join(", "))
            }
            None => String::new(),
        };
        // A common name's rows are read on two connections at once (`split_read`).
        let read = SplitRead {
            ids_sql: format!(
                "SELECT r.id FROM ref_site r WHERE r.project_id = ?1 AND r.name = ?2{kind_filter}"
            ),
            rows_sql: ref_rows_sql(&kind_filter),
            id_column: "r.id",
            params,
        };
        let name = name.to_string();
        let mut out = self
            .split_read(read, move |row| ref_from(&name, row))
            .await?;
        sort_refs(&mut out);
        Ok(out)
    }

    /// `name`'s usage rows in the files `files`, ordered by file then line: a window
    /// of a common name's rows read without reading the rest (`uses_per_file` says which
    /// files hold it). One index range scan per span of files.
    pub async fn references_in_files(
        &self,
        project_id: i64,
        name: &str,
        files: &FileSpans,
    ) -> Result<Vec<RefRow>> {
        self.references_in_files_of_kinds(project_id, name, files, None)
            .await
    }

    /// [`Db::references_in_files`], of the kinds `kinds` alone when given.
    pub async fn references_in_files_of_kinds(
        &self,
        project_id: i64,
        name: &str,
        files: &FileSpans,
        kinds: Option<&[String]>,
    ) -> Result<Vec<RefRow>> {
        if kinds.is_some_and(|k| k.is_empty()) || files.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.reader().await?;
        let stored: Vec<turso::Value> = kinds
            .unwrap_or_default()
            .iter()
            .map(|k| ref_kinds::stored(k))
            .collect();
        let mut filter = " AND r.file_id >= ?3 AND r.file_id <= ?4".to_string();
        if kinds.is_some() {
            let marks: Vec<String> = (0..stored.len()).map(|i| format!("?{}", i + 5)).collect();
            filter.push_str(&format!(" AND r.kind IN ({})", marks.join(", ")));
        }
        let mut stmt = conn.prepare(&ref_rows_sql(&filter)).await?;
        let mut out = Vec::new();
        for &(first, last) in files.spans() {
            let mut params: Vec<turso::Value> =
                vec![project_id.into(), name.into(), first.into(), last.into()];
            params.extend(stored.iter().cloned());
            let mut rows = stmt.query(params).await?;
            while let Some(row) = rows.next().await? {
                if files.keeps(int(col(&row, REF_FILE_ID_COLUMN)?).unwrap_or(0)) {
                    out.push(ref_from(name, &row)?);
                }
            }
            drop(rows);
            stmt.reset()?;
        }
        sort_refs(&mut out);
        Ok(out)
    }

    /// The files that use `name`, by file id, with how many of its usage rows each
    /// holds and how many of those are calls (the call edges' share,
    /// [`Db::call_edges_in_files`]). Read off the index alone (see
    /// `ref_site_by_name_file_kind`): on the 7.17M-line monorepo, `new`'s 102,528 rows in
    /// 8,244 files take 12 ms, against 250 ms for the rows.
    ///
    /// A name defined thousands of times has them in a record, in path order
    /// ([`Db::dense_uses`]).
    pub async fn uses_per_file(&self, project_id: i64, name: &str) -> Result<Vec<NameUses>> {
        let conn = self.reader().await?;
        // Grouped in the query: 9,070 (file, kind) rows for `new` instead of 102,528 rows
        // (12 ms against 18).
        let mut rows = conn
            .query_cached(
                "SELECT file_id, kind, COUNT(*) FROM ref_site WHERE project_id = ?1 AND name = ?2 \
                 GROUP BY file_id, kind",
                (project_id, name),
            )
            .await?;
        // By file id; not left to the query's group order, which SQL does not promise.
        let mut out: std::collections::BTreeMap<i64, NameUses> = Default::default();
        while let Some(row) = rows.next().await? {
            let file_id = int(col(&row, 0)?).unwrap_or(0);
            let kind = col(&row, 1)?;
            let call = ref_kinds::is_call(&kind);
            let n = u32::try_from(int(col(&row, 2)?).unwrap_or(0)).unwrap_or(u32::MAX);
            let uses = out.entry(file_id).or_insert(NameUses {
                file_id,
                rows: 0,
                calls: 0,
                kinds: 0,
            });
            uses.kinds |= ref_kinds::bit_of(&kind);
            uses.rows += n;
            if call {
                uses.calls += n;
            }
        }
        Ok(out.into_values().collect())
    }
}

impl Db {
    /// How many of `name`'s rows of the kinds `kinds` each file holds, by file id, read
    /// off the name index alone (`ref_site_by_name_file_kind`): which files a window of
    /// those rows needs. `fmt`'s 9,879 `use` and `implements` rows on the monorepo, of
    /// 37,069, are counted without reading one.
    pub async fn kinds_per_file(
        &self,
        project_id: i64,
        name: &str,
        kinds: &[String],
    ) -> Result<Vec<(i64, u32)>> {
        if kinds.is_empty() {
            return Ok(Vec::new());
        }
        let marks: Vec<String> = (0..kinds.len()).map(|i| format!("?{}", i + 3)).collect();
        let mut params: Vec<turso::Value> = vec![project_id.into(), name.into()];
        params.extend(kinds.iter().map(|k| ref_kinds::stored(k)));
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                &format!(
                    "SELECT file_id, COUNT(*) FROM ref_site WHERE project_id = ?1 AND name = ?2 \
                     AND kind IN ({}) GROUP BY file_id",
                    marks.join(", ")
                ),
                params,
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            let n = u32::try_from(int(col(&row, 1)?).unwrap_or(0)).unwrap_or(u32::MAX);
            out.push((int(col(&row, 0)?).unwrap_or(0), n));
        }
        out.sort_unstable();
        Ok(out)
    }
}

/// One file's share of a name's usage rows ([`Db::uses_per_file`]). Kept in records
/// field by field (`dense.rs`: change the record layout with the fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NameUses {
    pub file_id: i64,
    /// Usage rows of the name in the file.
    pub rows: u32,
    /// Of them, calls (`call`, `method_call`): the call edges a graph read makes of them.
    pub calls: u32,
    /// The kinds among them, as [`kind_bits`](crate::kind_bits) sets them: a read of
    /// rare kinds (`use`, `implements`) goes to the files holding them alone.
    pub kinds: u64,
}

/// The usage-row query, with `filter` appended to its `WHERE` (`?1` project, `?2` name).
/// The column of [`ref_rows_sql`]'s rows holding the file id.
const REF_FILE_ID_COLUMN: usize = 6;

fn ref_rows_sql(filter: &str) -> String {
    format!(
        "SELECT r.kind, r.line, r.col, r.qualifier, s.qualified_name, f.path, r.file_id \
         FROM ref_site r JOIN source_file f ON f.id = r.file_id \
         LEFT JOIN ref_scope s ON s.id = r.scope_id WHERE r.project_id = ?1 AND r.name = ?2{filter}"
    )
}

fn ref_from(name: &str, row: &turso::Row) -> Result<RefRow> {
    Ok(RefRow {
        name: name.to_string(),
        kind: ref_kinds::read(&col(row, 0)?),
        line: int(col(row, 1)?).unwrap_or(0) as u32,
        column: int(col(row, 2)?).unwrap_or(0) as u32,
        qualifier: text(col(row, 3)?),
        enclosing_symbol: text(col(row, 4)?).unwrap_or_default(),
        file_path: text(col(row, 5)?).unwrap_or_default(),
    })
}

/// By file, line and column. Sorted here, not by SQL: turso's ORDER BY over the join
/// took 35-45 % of the query (tokio, a name with 654 rows: 1.1 ms against 0.75 ms).
fn sort_refs(rows: &mut [RefRow]) {
    rows.sort_by(|a, b| (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows::*;

    #[tokio::test]
    async fn narrow_name_reads_filter_by_kind_or_file_and_count_each_file_once_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db.register_project("/work/a", Some("a")).await.unwrap();
        let other = db.register_project("/work/b", Some("b")).await.unwrap();
        let of_kind = |name: &str, kind: &str, line: u32| RefRow {
            kind: kind.into(),
            ..reference(name, line)
        };
        // Written out of path and line order: reads sort by (file, line, column).
        let files = [
            write(
                "src/z.rs",
                "z",
                vec![],
                vec![of_kind("Shape", "call", 9), of_kind("Shape", "use", 1)],
            ),
            write(
                "src/a.rs",
                "a",
                vec![],
                vec![
                    of_kind("Shape", "implements", 4),
                    of_kind("Shape", "use", 2),
                ],
            ),
            write("src/m.rs", "m", vec![], vec![of_kind("shape", "call", 3)]),
        ];
        db.write_files(p.id, &files, &[]).await.unwrap();
        db.write_files(
            other.id,
            &[write(
                "src/q.rs",
                "q",
                vec![],
                vec![of_kind("Shape", "use", 1)],
            )],
            &[],
        )
        .await
        .unwrap();

        let all = db.references_to_name(p.id, "Shape").await.unwrap();
        let at = |rows: &[RefRow]| -> Vec<(String, u32, String)> {
            rows.iter()
                .map(|r| (r.file_path.clone(), r.line, r.kind.clone()))
                .collect()
        };
        let row = |f: &str, l: u32, k: &str| (f.to_string(), l, k.to_string());
        assert_eq!(
            at(&all),
            [
                row("src/a.rs", 2, "use"),
                row("src/a.rs", 4, "implements"),
                row("src/z.rs", 1, "use"),
                row("src/z.rs", 9, "call")
            ]
        );
        let kinds = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let scope = db
            .references_of_kinds(p.id, "Shape", &kinds(&["use", "implements"]))
            .await
            .unwrap();
        assert_eq!(
            at(&scope),
            [
                row("src/a.rs", 2, "use"),
                row("src/a.rs", 4, "implements"),
                row("src/z.rs", 1, "use")
            ]
        );
        assert!(
            db.references_of_kinds(p.id, "Shape", &[])
                .await
                .unwrap()
                .is_empty()
        );
        assert!(
            db.references_of_kinds(p.id, "Shape", &kinds(&["nonsense"]))
                .await
                .unwrap()
                .is_empty()
        );

        // Each file once with its row count, mapped by the project's own paths; names
        // are exact (case).
        let paths = db.file_paths(p.id).await.unwrap();
        let named = |uses: Vec<NameUses>| -> Vec<(String, u32)> {
            let mut v: Vec<(String, u32)> = uses
                .iter()
                .map(|u| (paths[&u.file_id].clone(), u.rows))
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            named(db.uses_per_file(p.id, "Shape").await.unwrap()),
            [("src/a.rs".to_string(), 2), ("src/z.rs".to_string(), 2)]
        );
        assert_eq!(
            named(db.uses_per_file(p.id, "shape").await.unwrap()),
            [("src/m.rs".to_string(), 1)]
        );
        // A window's files read alone: the same rows, in the same order, as the whole.
        let z = paths
            .iter()
            .find(|(_, p)| *p == "src/z.rs")
            .map(|(id, _)| *id);
        assert_eq!(
            at(&db
                .references_in_files(p.id, "Shape", &FileSpans::each(&[z.unwrap()]))
                .await
                .unwrap()),
            at(&all[2..])
        );
        let ids: Vec<i64> = paths.keys().copied().collect();
        assert_eq!(
            at(&db
                .references_in_files(p.id, "Shape", &FileSpans::each(&ids))
                .await
                .unwrap()),
            at(&all)
        );
        // One span over every file holding the name: the same rows.
        let uses = db.uses_per_file(p.id, "Shape").await.unwrap();
        let holding: Vec<(i64, usize)> =
            uses.iter().map(|u| (u.file_id, u.rows as usize)).collect();
        let one = FileSpans::among_uses(&ids, &uses);
        assert_eq!(one, FileSpans::among(&ids, holding.clone()));
        assert_eq!(one.spans().len(), 1, "{one:?}");
        assert_eq!(
            at(&db.references_in_files(p.id, "Shape", &one).await.unwrap()),
            at(&all)
        );
        // A span bridging a file not wanted reads none of its rows.
        let (first, last) = (
            holding[0].0.min(holding[1].0),
            holding[0].0.max(holding[1].0),
        );
        let beyond = last + 1_000;
        let bridged = FileSpans::among(&[first, beyond], [(first, 2), (last, 2)]);
        assert_eq!(bridged.spans(), [(first, beyond)]);
        let only_first = db
            .references_in_files(p.id, "Shape", &bridged)
            .await
            .unwrap();
        assert_eq!(only_first.len(), 2);
        assert!(only_first.iter().all(|r| r.file_path == paths[&first]));
        assert!(db.uses_per_file(p.id, "Nowhere").await.unwrap().is_empty());
        // Each file's rows of some kinds, counted off the index.
        let mut counted = Vec::new();
        for asked in [&["use", "implements"][..], &["call"], &[], &["nonsense"]] {
            let per_file = db
                .kinds_per_file(p.id, "Shape", &kinds(asked))
                .await
                .unwrap();
            let mut named: Vec<(&str, u32)> = per_file
                .iter()
                .map(|(f, n)| (paths[f].as_str(), *n))
                .collect();
            named.sort();
            counted.push(named);
        }
        assert_eq!(
            counted,
            [
                vec![("src/a.rs", 2), ("src/z.rs", 1)],
                vec![("src/z.rs", 1)],
                vec![],
                vec![]
            ]
        );
        assert_eq!(
            paths.len(),
            3,
            "the other project's files are not this one's: {paths:?}"
        );
    }

    #[tokio::test]
    async fn a_qualified_name_matches_whole_path_segments_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db.register_project("/work/q", Some("q")).await.unwrap();
        let qualified = |q: &str| SymbolRow {
            qualified_name: q.into(),
            ..sym("new", 1)
        };
        let defs = vec![
            qualified("demo::Pool::new"),
            qualified("demo::ThreadPool::new"),
            qualified("demo::sync::Pool::new"),
            qualified("Pool::new"),
            qualified("démo::Ünï::new"),
        ];
        db.write_files(p.id, &[write("src/lib.rs", "h", defs, vec![])], &[])
            .await
            .unwrap();
        let found = |q: &'static str| {
            let db = db.clone();
            async move {
                let rows = db.symbols_by_qualified_name(p.id, "new", q).await.unwrap();
                rows.into_iter()
                    .map(|s| s.qualified_name)
                    .collect::<Vec<_>>()
            }
        };
        // `ThreadPool::new` ends with "Pool::new" but not with "::Pool::new".
        let mut pool = found("Pool::new").await;
        pool.sort();
        assert_eq!(
            pool,
            ["Pool::new", "demo::Pool::new", "demo::sync::Pool::new"]
        );
        assert_eq!(found("demo::Pool::new").await, ["demo::Pool::new"]);
        assert_eq!(found("Ünï::new").await, ["démo::Ünï::new"]);
        assert!(found("Other::new").await.is_empty());
    }
}
