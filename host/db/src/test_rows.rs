//! Rows and reads the unit tests of this crate share: a definition, a usage, a file
//! write, and the ids of stored rows.

use crate::{Db, FileWrite, RefRow, SymbolRow, col, int};

pub(crate) fn sym(name: &str, line: u32) -> SymbolRow {
    SymbolRow {
        name: name.into(),
        kind: "function".into(),
        qualified_name: format!("demo::{name}"),
        owner: None,
        signature: format!("fn {name}()"),
        docstring: None,
        start_line: line,
        end_line: line + 2,
        name_line: line,
        name_column: 4,
        file_path: String::new(),
    }
}

/// A fresh database in a temporary directory (kept while the returned guard lives), with
/// project `demo` registered at `/work/demo`.
pub(crate) async fn demo_project() -> (tempfile::TempDir, Db, crate::ProjectRow) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(&dir.path().join("index.db")).await.unwrap();
    let p = db
        .register_project("/work/demo", Some("demo"))
        .await
        .unwrap();
    (dir, db, p)
}

pub(crate) fn write(
    path: &str,
    hash: &str,
    symbols: Vec<SymbolRow>,
    refs: Vec<RefRow>,
) -> FileWrite {
    FileWrite {
        path: path.into(),
        content_hash: hash.into(),
        size: 10,
        language: "rust".into(),
        parse_errors: false,
        line_count: 20,
        symbols,
        edges: Vec::new(),
        references: refs,
    }
}

pub(crate) fn reference(name: &str, line: u32) -> RefRow {
    RefRow {
        name: name.into(),
        kind: "call".into(),
        line,
        column: 5,
        qualifier: None,
        enclosing_symbol: "demo::main".into(),
        file_path: String::new(),
    }
}

/// The two integer columns of every row `sql` selects.
pub(crate) async fn int_pairs(
    db: &Db,
    sql: &str,
    params: impl turso::IntoParams,
) -> Vec<(i64, i64)> {
    let conn = db.connect().await.unwrap();
    let mut rows = conn.query(sql, params).await.unwrap();
    let mut out = Vec::new();
    while let Some(row) = rows.next().await.unwrap() {
        out.push((
            int(col(&row, 0).unwrap()).unwrap(),
            int(col(&row, 1).unwrap()).unwrap(),
        ));
    }
    out
}

/// `(id, file_id)` of every row of `table`.
pub(crate) async fn row_ids(db: &Db, table: &str) -> Vec<(i64, i64)> {
    let sql = format!("SELECT id, file_id FROM {table} ORDER BY id");
    int_pairs(db, &sql, ()).await
}
