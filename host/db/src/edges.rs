//! Graph edges (`calls`, `implements`, `instantiates`, `reexports`) between symbols,
//! written with each file's index rows and read by direction.
//!
//! The source of an edge is exact (the qualified name of the symbol it is written in);
//! the target is the name as written, tied to a definition at query time (ADR 0002), so
//! an edit to one file never leaves another file's edges pointing at a stale target.

use anyhow::Result;
use turso::Row;

use crate::{Db, col, int, text};

/// This area's tables, applied at open after the core schema.
pub(crate) const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS edge (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        file_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        from_symbol TEXT NOT NULL,
        to_name TEXT NOT NULL,
        to_qualifier TEXT,
        site_kind TEXT NOT NULL,
        line INTEGER NOT NULL,
        col INTEGER NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS edge_by_source ON edge (project_id, from_symbol)",
    "CREATE INDEX IF NOT EXISTS edge_by_target ON edge (project_id, to_name)",
    // No index on `file_id`: a file's edges are a range of row ids (`file_rows`).
    "DROP INDEX IF EXISTS edge_by_file",
];

/// An edge as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeRow {
    pub kind: String,
    pub from_symbol: String,
    pub to_name: String,
    pub to_qualifier: Option<String>,
    pub site_kind: String,
    pub line: u32,
    pub column: u32,
    /// Filled on reads: the file the edge is written in, relative to the project root.
    pub file_path: String,
}

/// The edge columns after `project_id, file_id`, in insert order.
pub(crate) const EDGE_DATA_COLUMNS: &str =
    "kind, from_symbol, to_name, to_qualifier, site_kind, line, col";

const EDGE_COLUMNS: &str =
    "e.kind, e.from_symbol, e.to_name, e.to_qualifier, e.site_kind, e.line, e.col, f.path";

fn edge_from(row: &Row) -> Result<EdgeRow> {
    Ok(EdgeRow {
        kind: text(col(row, 0)?).unwrap_or_default(),
        from_symbol: text(col(row, 1)?).unwrap_or_default(),
        to_name: text(col(row, 2)?).unwrap_or_default(),
        to_qualifier: text(col(row, 3)?),
        site_kind: text(col(row, 4)?).unwrap_or_default(),
        line: int(col(row, 5)?).unwrap_or(0) as u32,
        column: int(col(row, 6)?).unwrap_or(0) as u32,
        file_path: text(col(row, 7)?).unwrap_or_default(),
    })
}

impl Db {
    /// Edges written inside the symbol(s) named `from_symbol`, by file then line.
    pub async fn edges_from(&self, project_id: i64, from_symbol: &str) -> Result<Vec<EdgeRow>> {
        self.edges_where("e.from_symbol = ?2", project_id, from_symbol)
            .await
    }

    /// Edges whose written target is the bare name `to_name`, by file then line.
    pub async fn edges_to(&self, project_id: i64, to_name: &str) -> Result<Vec<EdgeRow>> {
        self.edges_where("e.to_name = ?2", project_id, to_name)
            .await
    }

    async fn edges_where(
        &self,
        filter: &str,
        project_id: i64,
        value: &str,
    ) -> Result<Vec<EdgeRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query(
                format!(
                    "SELECT {EDGE_COLUMNS} FROM edge e JOIN source_file f ON f.id = e.file_id \
                     WHERE e.project_id = ?1 AND {filter}"
                ),
                (project_id, value),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(edge_from(&row)?);
        }
        // Sorted here: turso's ORDER BY over the join costs more than the query itself.
        out.sort_by(|a, b| (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column)));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FileWrite;

    fn call(from: &str, to: &str, line: u32) -> EdgeRow {
        EdgeRow {
            kind: "calls".into(),
            from_symbol: from.into(),
            to_name: to.into(),
            to_qualifier: None,
            site_kind: "call".into(),
            line,
            column: 5,
            file_path: String::new(),
        }
    }

    fn file(path: &str, edges: Vec<EdgeRow>) -> FileWrite {
        FileWrite {
            path: path.into(),
            content_hash: format!("{path}-{}", edges.len()),
            size: 1,
            language: "rust".into(),
            parse_errors: false,
            line_count: 10,
            symbols: Vec::new(),
            references: Vec::new(),
            edges,
        }
    }

    #[tokio::test]
    async fn edges_read_by_direction_and_go_with_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db
            .register_project("/work/demo", Some("demo"))
            .await
            .unwrap();
        let other = db
            .register_project("/work/other", Some("other"))
            .await
            .unwrap();
        db.write_files(
            p.id,
            &[
                file("src/b.rs", vec![call("demo::b::run", "helper", 7)]),
                file(
                    "src/a.rs",
                    vec![
                        call("demo::a::main", "run", 3),
                        call("demo::a::main", "helper", 4),
                    ],
                ),
            ],
            &[],
        )
        .await
        .unwrap();
        db.write_files(
            other.id,
            &[file("src/a.rs", vec![call("other::x", "helper", 1)])],
            &[],
        )
        .await
        .unwrap();

        let out = db.edges_from(p.id, "demo::a::main").await.unwrap();
        let targets: Vec<(&str, u32, &str)> = out
            .iter()
            .map(|e| (e.to_name.as_str(), e.line, e.file_path.as_str()))
            .collect();
        assert_eq!(
            targets,
            vec![("run", 3, "src/a.rs"), ("helper", 4, "src/a.rs")]
        );

        let into = db.edges_to(p.id, "helper").await.unwrap();
        let sources: Vec<&str> = into.iter().map(|e| e.from_symbol.as_str()).collect();
        assert_eq!(
            sources,
            vec!["demo::a::main", "demo::b::run"],
            "ordered by file, other project excluded"
        );

        // Rewriting a file replaces its edges; removing it drops them.
        db.write_files(
            p.id,
            &[file("src/a.rs", vec![call("demo::a::main", "run", 9)])],
            &["src/b.rs".into()],
        )
        .await
        .unwrap();
        assert!(db.edges_to(p.id, "helper").await.unwrap().is_empty());
        assert_eq!(
            db.edges_from(p.id, "demo::a::main").await.unwrap()[0].line,
            9
        );
    }
}
