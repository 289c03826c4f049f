//! Whole-project symbol reads for the in-memory search index.

use anyhow::Result;

use crate::{Db, SYMBOL_COLUMNS, SymbolRow, symbol_from};

impl Db {
    /// Every definition of a project, by file then line: the corpus the search index is
    /// built from. Empty for an unknown or unindexed project.
    pub async fn all_symbols(&self, project_id: i64) -> Result<Vec<SymbolRow>> {
        let conn = self.connect()?;
        let mut rows = conn
            .query(
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

    #[tokio::test]
    async fn all_symbols_reads_one_project_by_file_then_line() {
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
        let got = db.all_symbols(a.id).await.unwrap();
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
}
