//! Graph edges (`calls`, `implements`, `instantiates`, `reexports`) between symbols,
//! read by direction.
//!
//! The source of an edge is exact (the qualified name of the symbol it is written in);
//! the target is the name as written, tied to a definition at query time (ADR 0002), so
//! an edit to one file never leaves another file's edges pointing at a stale target.
//!
//! Edges at call sites (`calls`, and `instantiates` by a call such as `Point(1, 2)`) are
//! the `call` / `method_call` references themselves, read as edges by the caller's [`CallEdgeRule`];
//! only the extractor's other edges (implementations, constructions by path, re-exports)
//! have rows in `edge` (ADR 0013: storing 31.9k call edges of tokio beside their 31.9k
//! references cost ~6 % of a cold index).

use anyhow::Result;
use turso::{Row, Value};

use crate::file_spans::FileSpans;
use crate::{Db, col, int, ref_kinds, text};

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
    EDGE_BY_SOURCE,
    EDGE_BY_TARGET,
    // No index on `file_id`: a file's edges are a range of row ids (`file_rows`).
    "DROP INDEX IF EXISTS edge_by_file",
    // Call edges by their caller: the call references, by the id of the name they are in
    // (`scopes`; the id names its project too).
    CALLS_BY_CALLER,
];

pub(crate) const EDGE_BY_SOURCE: &str =
    "CREATE INDEX IF NOT EXISTS edge_by_source ON edge (project_id, from_symbol)";
pub(crate) const EDGE_BY_TARGET: &str =
    "CREATE INDEX IF NOT EXISTS edge_by_target ON edge (project_id, to_name)";
/// Its condition is [`ref_kinds::CALLS_SQL`] written out (a `const` cannot format).
pub(crate) const CALLS_BY_CALLER: &str = "CREATE INDEX IF NOT EXISTS ref_site_calls_by_caller \
     ON ref_site (scope_id) WHERE kind IN (0, 1)";

/// Usage kinds of the references that are also call edges.
pub const CALL_SITE_KINDS: [&str; 2] = ["call", "method_call"];

/// The edge kind (`calls`, `instantiates`) a call reference is, from the file's language,
/// the reference's kind and the name called: a language's rule, which the database does
/// not know (the index engine's `lang::call_edge_kind` is the one the host passes).
pub type CallEdgeRule = fn(language: &str, site_kind: &str, name: &str) -> &'static str;

/// Whether an edge is one of the call references' ([`CALL_SITE_KINDS`]) rather than a
/// row of its own.
pub fn is_call_site_edge(site_kind: &str) -> bool {
    CALL_SITE_KINDS.contains(&site_kind)
}

/// A call reference's caller, as `edges_from` selects it: by the id of its name.
const CALLER_FILTER: &str = "r.scope_id = ?2";

/// The call references of a project matching `filter` (on `r`, the value as `?2`),
/// with what makes them edges: name, kind, qualifier, enclosing symbol, line, column,
/// file path and language. Its `kind` condition implies `ref_site_calls_by_caller`'s,
/// so the planner can read that index.
/// The column of [`call_references_sql`]'s rows holding the file id.
const CALL_FILE_ID_COLUMN: usize = 8;

fn call_references_sql(filter: &str) -> String {
    let kinds = ref_kinds::CALLS_SQL;
    format!(
        "SELECT r.name, r.kind, r.qualifier, s.qualified_name, r.line, r.col, f.path, \
         f.language, r.file_id FROM ref_site r JOIN source_file f ON f.id = r.file_id \
         LEFT JOIN ref_scope s ON s.id = r.scope_id WHERE r.project_id = ?1 AND {filter} AND r.kind IN ({kinds})"
    )
}

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
    pub async fn edges_from(
        &self,
        project_id: i64,
        from_symbol: &str,
        rule: CallEdgeRule,
    ) -> Result<Vec<EdgeRow>> {
        let filter = ("e.from_symbol = ?2", CALLER_FILTER);
        let scope = Value::Integer(crate::scope_id(project_id, from_symbol));
        self.edges_where(filter, project_id, (from_symbol, scope), rule)
            .await
    }

    /// Edges whose written target is the bare name `to_name`, by file then line.
    pub async fn edges_to(
        &self,
        project_id: i64,
        to_name: &str,
        rule: CallEdgeRule,
    ) -> Result<Vec<EdgeRow>> {
        let value = (to_name, Value::from(to_name));
        self.edges_where(("e.to_name = ?2", "r.name = ?2"), project_id, value, rule)
            .await
    }

    /// The stored edges matching `filter` (`?2`: `value`) and the call references
    /// matching `call_filter` (`?2`: `call_value`), the latter made edges by `rule`.
    async fn edges_where(
        &self,
        (filter, call_filter): (&str, &str),
        project_id: i64,
        (value, call_value): (&str, Value),
        rule: CallEdgeRule,
    ) -> Result<Vec<EdgeRow>> {
        let conn = self.reader().await?;
        let mut out = Vec::new();
        let mut rows = conn
            .query_cached(
                format!(
                    "SELECT {EDGE_COLUMNS} FROM edge e JOIN source_file f ON f.id = e.file_id \
                     WHERE e.project_id = ?1 AND {filter}"
                ),
                (project_id, value),
            )
            .await?;
        while let Some(row) = rows.next().await? {
            out.push(edge_from(&row)?);
        }
        drop(rows);
        // After the stored edges: at one position, the extractor's edge came first.
        push_call_edges(&conn, call_filter, project_id, call_value, rule, &mut out).await?;
        sort_edges(&mut out);
        Ok(out)
    }

    /// The call references to the bare name `to_name`, made edges by `rule`, unordered:
    /// [`edges_to`](Self::edges_to) without the stored edges, for a caller that has read
    /// those already ([`stored_edges_to`](Self::stored_edges_to)).
    pub async fn call_edges_to(
        &self,
        project_id: i64,
        to_name: &str,
        rule: CallEdgeRule,
    ) -> Result<Vec<EdgeRow>> {
        let conn = self.reader().await?;
        let mut out = Vec::new();
        push_call_edges(
            &conn,
            "r.name = ?2",
            project_id,
            Value::from(to_name),
            rule,
            &mut out,
        )
        .await?;
        Ok(out)
    }

    /// The stored edges (not the call references) whose written target is the bare name
    /// `to_name`, each with its file's id: few even for a common name (`new` on the
    /// monorepo: none; `Error`: dozens).
    pub async fn stored_edges_to(
        &self,
        project_id: i64,
        to_name: &str,
    ) -> Result<Vec<(i64, EdgeRow)>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                format!(
                    "SELECT {EDGE_COLUMNS}, e.file_id FROM edge e \
                     JOIN source_file f ON f.id = e.file_id WHERE e.project_id = ?1 AND e.to_name = ?2"
                ),
                (project_id, to_name),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push((int(col(&row, 8)?).unwrap_or(0), edge_from(&row)?));
        }
        Ok(out)
    }

    /// The call references to the bare name `to_name` in the files `files`, made edges
    /// by `rule`, unordered: with the stored edges of those files, a window of a common
    /// name's edges read without the rest (`uses_per_file` counts each file's calls).
    /// One index range scan per span of files.
    pub async fn call_edges_in_files(
        &self,
        project_id: i64,
        to_name: &str,
        files: &FileSpans,
        rule: CallEdgeRule,
    ) -> Result<Vec<EdgeRow>> {
        if files.is_empty() {
            return Ok(Vec::new());
        }
        let conn = self.reader().await?;
        let mut stmt = conn
            .prepare(&call_references_sql(
                "r.name = ?2 AND r.file_id >= ?3 AND r.file_id <= ?4",
            ))
            .await?;
        let mut out = Vec::new();
        for &(first, last) in files.spans() {
            let mut rows = stmt.query((project_id, to_name, first, last)).await?;
            while let Some(row) = rows.next().await? {
                if files.keeps(int(col(&row, CALL_FILE_ID_COLUMN)?).unwrap_or(0)) {
                    out.push(call_edge_from(&row, rule)?);
                }
            }
            drop(rows);
            stmt.reset()?;
        }
        Ok(out)
    }
}

/// Appends to `out` the call references of the project matching `filter` (`?2`: `value`),
/// made edges by `rule`.
async fn push_call_edges(
    conn: &turso::Connection,
    filter: &str,
    project_id: i64,
    value: Value,
    rule: CallEdgeRule,
    out: &mut Vec<EdgeRow>,
) -> Result<()> {
    let mut calls = conn
        .query(
            call_references_sql(filter),
            vec![Value::Integer(project_id), value],
        )
        .await?;
    while let Some(row) = calls.next().await? {
        out.push(call_edge_from(&row, rule)?);
    }
    Ok(())
}

/// A row of [`call_references_sql`] as the edge `rule` makes it.
fn call_edge_from(row: &Row, rule: CallEdgeRule) -> Result<EdgeRow> {
    let name = text(col(row, 0)?).unwrap_or_default();
    let site_kind = ref_kinds::read(&col(row, 1)?);
    let language = text(col(row, 7)?).unwrap_or_default();
    Ok(EdgeRow {
        kind: rule(&language, &site_kind, &name).to_string(),
        from_symbol: text(col(row, 3)?).unwrap_or_default(),
        to_qualifier: text(col(row, 2)?),
        to_name: name,
        site_kind,
        line: int(col(row, 4)?).unwrap_or(0) as u32,
        column: int(col(row, 5)?).unwrap_or(0) as u32,
        file_path: text(col(row, 6)?).unwrap_or_default(),
    })
}

/// Puts edges in the order graph reads give them: by file, then line, then column; at
/// one position the first pushed stays first (the extractor's stored edge before the
/// call reference). Sorted in Rust: turso's `ORDER BY` over the join costs more than the
/// query itself.
pub fn sort_edges(edges: &mut [EdgeRow]) {
    edges.sort_by(|a, b| (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FileWrite, RefRow};

    /// A language rule as the host passes one (the engine's is `lang::call_edge_kind`):
    /// an upper-case call constructs, except in Go.
    fn call_edge_kind(language: &str, site_kind: &str, name: &str) -> &'static str {
        let upper = name.chars().next().is_some_and(char::is_uppercase);
        if site_kind == "call" && upper && language != "go" {
            "instantiates"
        } else {
            "calls"
        }
    }

    /// A call reference: stored as a reference, read as an edge too.
    fn call(from: &str, to: &str, line: u32) -> RefRow {
        RefRow {
            name: to.into(),
            kind: "call".into(),
            line,
            column: 5,
            qualifier: None,
            enclosing_symbol: from.into(),
            file_path: String::new(),
        }
    }

    fn implements(from: &str, to: &str, line: u32) -> EdgeRow {
        EdgeRow {
            kind: "implements".into(),
            from_symbol: from.into(),
            to_name: to.into(),
            to_qualifier: None,
            site_kind: "type".into(),
            line,
            column: 5,
            file_path: String::new(),
        }
    }

    fn file(path: &str, language: &str, calls: Vec<RefRow>, edges: Vec<EdgeRow>) -> FileWrite {
        FileWrite {
            path: path.into(),
            content_hash: format!("{path}-{}-{}", calls.len(), edges.len()),
            size: 1,
            language: language.into(),
            parse_errors: false,
            line_count: 10,
            symbols: Vec::new(),
            references: calls,
            edges,
        }
    }

    #[tokio::test]
    async fn edges_read_by_direction_and_go_with_their_file() {
        let (_dir, db, p) = crate::test_rows::demo_project().await;
        let other = db
            .register_project("/work/other", Some("other"))
            .await
            .unwrap();
        // A call edge handed in with the file is not stored twice: the reference is it.
        let mut stray = implements("demo::a::main", "helper", 4);
        stray.kind = "calls".into();
        stray.site_kind = "call".into();
        db.write_files(
            p.id,
            &[
                file(
                    "src/b.rs",
                    "rust",
                    vec![call("demo::b::run", "helper", 7)],
                    vec![],
                ),
                file(
                    "src/a.rs",
                    "rust",
                    vec![
                        call("demo::a::main", "run", 3),
                        call("demo::a::main", "helper", 4),
                        call("demo::a::main", "Point", 6),
                    ],
                    vec![implements("demo::a::main", "Shape", 2), stray],
                ),
                file("main.go", "go", vec![call("main::run", "Point", 1)], vec![]),
            ],
            &[],
        )
        .await
        .unwrap();
        db.write_files(
            other.id,
            &[file(
                "src/a.rs",
                "rust",
                vec![call("other::x", "helper", 1)],
                vec![],
            )],
            &[],
        )
        .await
        .unwrap();

        let out = db
            .edges_from(p.id, "demo::a::main", call_edge_kind)
            .await
            .unwrap();
        let targets: Vec<(&str, &str, u32, &str)> = out
            .iter()
            .map(|e| {
                (
                    e.kind.as_str(),
                    e.to_name.as_str(),
                    e.line,
                    e.file_path.as_str(),
                )
            })
            .collect();
        assert_eq!(
            targets,
            vec![
                ("implements", "Shape", 2, "src/a.rs"),
                ("calls", "run", 3, "src/a.rs"),
                ("calls", "helper", 4, "src/a.rs"),
                ("instantiates", "Point", 6, "src/a.rs"),
            ]
        );

        let into = db.edges_to(p.id, "helper", call_edge_kind).await.unwrap();
        let sources: Vec<&str> = into.iter().map(|e| e.from_symbol.as_str()).collect();
        assert_eq!(
            sources,
            vec!["demo::a::main", "demo::b::run"],
            "ordered by file, other project excluded"
        );
        let into = db.edges_to(p.id, "Point", call_edge_kind).await.unwrap();
        let kinds: Vec<(&str, &str)> = into
            .iter()
            .map(|e| (e.file_path.as_str(), e.kind.as_str()))
            .collect();
        assert_eq!(
            kinds,
            vec![("main.go", "calls"), ("src/a.rs", "instantiates")]
        );

        // Rewriting a file replaces its edges; removing it drops them.
        db.write_files(
            p.id,
            &[file(
                "src/a.rs",
                "rust",
                vec![call("demo::a::main", "run", 9)],
                vec![],
            )],
            &["src/b.rs".into()],
        )
        .await
        .unwrap();
        assert!(
            db.edges_to(p.id, "helper", call_edge_kind)
                .await
                .unwrap()
                .is_empty()
        );
        let out = db
            .edges_from(p.id, "demo::a::main", call_edge_kind)
            .await
            .unwrap();
        assert_eq!((out.len(), out[0].line), (1, 9));
    }

    #[tokio::test]
    async fn call_edges_by_caller_are_an_index_read() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let conn = db.connect().await.unwrap();
        let mut rows = conn
            .query(
                format!("EXPLAIN QUERY PLAN {}", call_references_sql(CALLER_FILTER)),
                (1_i64, 7_i64),
            )
            .await
            .unwrap();
        let mut plan = String::new();
        while let Some(row) = rows.next().await.unwrap() {
            for i in 0..row.column_count() {
                if let Ok(turso::Value::Text(t)) = row.get_value(i) {
                    plan.push_str(&t);
                    plan.push('\n');
                }
            }
        }
        assert!(plan.contains("ref_site_calls_by_caller"), "{plan}");
    }
}
