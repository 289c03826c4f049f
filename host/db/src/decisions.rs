//! Architecture decisions recorded through the memory router, kept beside their files.
//!
//! A row holds the whole Markdown of its record, so a decision stays searchable while its
//! file is being written; the memory router purges rows whose file was deleted.

use std::time::Duration;

use anyhow::Result;

use crate::{Db, col, int, text};

/// How long a decision write waits for another writer (an index run, a dependency
/// index) to release the database before it reports the database as locked.
const WRITE_WAIT: Duration = Duration::from_secs(10);

/// This area's tables, applied at open after the core schema.
pub(crate) const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS decision (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        number INTEGER NOT NULL,
        title TEXT NOT NULL,
        status TEXT NOT NULL,
        file_path TEXT NOT NULL,
        text TEXT NOT NULL,
        recorded_at TEXT NOT NULL
    )",
    // One row per number and project: two sessions recording at once cannot both take it.
    "CREATE UNIQUE INDEX IF NOT EXISTS decision_by_number ON decision (project_id, number)",
];

/// Statements (project id as `?1`) removing a deleted project's rows from this area's
/// tables; run by `Db::delete_project`.
pub(crate) const PROJECT_DELETIONS: &[&str] = &["DELETE FROM decision WHERE project_id = ?1"];

/// A recorded decision as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecisionRecord {
    pub number: u32,
    pub title: String,
    pub status: String,
    /// Relative to the project root, e.g. `docs/adr/0003-title.md`.
    pub file_path: String,
    /// The whole Markdown document, frontmatter included.
    pub text: String,
    /// RFC 3339.
    pub recorded_at: String,
}

impl Db {
    /// A project's decisions, by number.
    pub async fn decisions(&self, project_id: i64) -> Result<Vec<DecisionRecord>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT number, title, status, file_path, text, recorded_at FROM decision \
                 WHERE project_id = ?1 ORDER BY number",
                (project_id,),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(DecisionRecord {
                number: int(col(&row, 0)?).unwrap_or(0) as u32,
                title: text(col(&row, 1)?).unwrap_or_default(),
                status: text(col(&row, 2)?).unwrap_or_default(),
                file_path: text(col(&row, 3)?).unwrap_or_default(),
                text: text(col(&row, 4)?).unwrap_or_default(),
                recorded_at: text(col(&row, 5)?).unwrap_or_default(),
            });
        }
        Ok(out)
    }

    /// Stores a decision. Returns false, storing nothing, when the project already has
    /// one with this number.
    pub async fn insert_decision(&self, project_id: i64, d: &DecisionRecord) -> Result<bool> {
        let conn = self.connect().await?;
        conn.busy_timeout(WRITE_WAIT)?;
        let taken = |conn: turso::Connection| async move {
            let mut rows = conn
                .query(
                    "SELECT 1 FROM decision WHERE project_id = ?1 AND number = ?2",
                    (project_id, i64::from(d.number)),
                )
                .await?;
            anyhow::Ok(rows.next().await?.is_some())
        };
        if taken(conn.clone()).await? {
            return Ok(false);
        }
        let inserted = conn
            .execute(
                "INSERT INTO decision (project_id, number, title, status, file_path, text, recorded_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                (
                    project_id,
                    i64::from(d.number),
                    d.title.as_str(),
                    d.status.as_str(),
                    d.file_path.as_str(),
                    d.text.as_str(),
                    d.recorded_at.as_str(),
                ),
            )
            .await;
        match inserted {
            Ok(_) => Ok(true),
            // Lost a race for the number: the unique index refused the second insert.
            Err(_) if taken(conn).await? => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes a project's decisions with this number; returns how many.
    pub async fn delete_decisions(&self, project_id: i64, number: u32) -> Result<u32> {
        let conn = self.connect().await?;
        conn.busy_timeout(WRITE_WAIT)?;
        let n = conn
            .execute(
                "DELETE FROM decision WHERE project_id = ?1 AND number = ?2",
                (project_id, i64::from(number)),
            )
            .await?;
        Ok(n as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(number: u32, title: &str) -> DecisionRecord {
        DecisionRecord {
            number,
            title: title.into(),
            status: "proposed".into(),
            file_path: format!("docs/adr/{number:04}-x.md"),
            text: format!("---\ntitle: \"{title}\"\n---\n"),
            recorded_at: "2026-11-29T00:00:00Z".into(),
        }
    }

    #[tokio::test]
    async fn decisions_are_per_project_and_numbers_unique() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let a = db.register_project("/a/demo", None).await.unwrap();
        let b = db.register_project("/b/demo", None).await.unwrap();
        assert!(db.insert_decision(a.id, &record(2, "Two")).await.unwrap());
        assert!(db.insert_decision(a.id, &record(1, "One")).await.unwrap());
        assert!(!db.insert_decision(a.id, &record(2, "Again")).await.unwrap());
        assert!(
            db.insert_decision(b.id, &record(2, "Other project"))
                .await
                .unwrap()
        );
        let got = db.decisions(a.id).await.unwrap();
        assert_eq!(got, vec![record(1, "One"), record(2, "Two")]);
        assert_eq!(db.delete_decisions(a.id, 2).await.unwrap(), 1);
        assert_eq!(db.delete_decisions(a.id, 2).await.unwrap(), 0);
        assert_eq!(db.decisions(a.id).await.unwrap().len(), 1);
        assert_eq!(
            db.decisions(b.id).await.unwrap(),
            vec![record(2, "Other project")]
        );
    }
}
