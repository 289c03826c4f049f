//! A large project's first index is written without the secondary indexes, which are
//! built once its rows are in (ADR 0040).
//!
//! turso inserts every index entry into its b-tree one by one, at a random place. While
//! an index fits the page cache that is cheap; once it outgrows it, the upkeep grows
//! faster than the rows (a throwaway bench, 1M and 3M references with two indexes:
//! 13 s and 74 s while writing, against 5.4 s and 19 s for writing without them and
//! building them after). The writer is the longest side of a large index run, so what
//! it saves is wall time: on the monorepo corpus the index run went from 74-77 s to
//! 63-66 s.
//!
//! Architecture invariant: while a bulk load runs, queries still answer (the planner
//! scans the table instead), and whatever stops a run, the indexes come back: the run
//! restores them on every exit ([`Db::end_bulk_load`]), and a process that died mid-run
//! recreates them at the next open, where every schema statement is applied
//! (`IF NOT EXISTS`).

use anyhow::{Context, Result};

use crate::{Db, edges, int, schema};

/// The indexes a bulk load defers: (name, the statement that builds it). Each is cheap to
/// build afterwards (integer keys, or a table a tenth the size of the references); on
/// the monorepo all four took 4.8 s after the load and saved 10-12 s during it.
/// `ref_site_by_name_file_kind` is kept up row by row: building it afterwards took 24 s, more
/// than its upkeep during the load costs.
pub(crate) const DEFERRED: &[(&str, &str)] = &[
    ("ref_site_calls_by_caller", edges::CALLS_BY_CALLER),
    ("symbol_by_name", schema::SYMBOL_BY_NAME),
    ("edge_by_source", edges::EDGE_BY_SOURCE),
    ("edge_by_target", edges::EDGE_BY_TARGET),
];

/// A first index of fewer files than this keeps its indexes: while they fit the page
/// cache their upkeep is cheap, and building them afterwards, when nothing overlaps it,
/// gains nothing (2,122 files of the monorepo: even; 5,174 files: 9 % faster; 17,236
/// files: 14 %; docs/learnings/scale.md).
pub const BULK_LOAD_MIN_FILES: usize = 2_000;

impl Db {
    /// Starts a bulk load for the first index of a project of `files` files, if it is
    /// worth one: at least [`BULK_LOAD_MIN_FILES`], and no fewer than the files already
    /// stored (the indexes are rebuilt over every project's rows, so a small project
    /// added beside a large one keeps them). Returns whether it started; a started bulk
    /// load must be ended with [`Db::end_bulk_load`], whatever the run's outcome.
    pub async fn begin_bulk_load(&self, files: usize) -> Result<bool> {
        if files < BULK_LOAD_MIN_FILES {
            return Ok(false);
        }
        let mut running = self.bulk_loads.lock().await;
        let conn = self.connect().await?;
        if *running == 0 {
            let mut rows = conn.query("SELECT count(*) FROM source_file", ()).await?;
            let stored = match rows.next().await? {
                Some(row) => int(crate::col(&row, 0)?).unwrap_or(0),
                None => 0,
            };
            drop(rows);
            if usize::try_from(stored).unwrap_or(usize::MAX) > files {
                return Ok(false);
            }
            for (name, _) in DEFERRED {
                conn.execute(&format!("DROP INDEX IF EXISTS {name}"), ())
                    .await
                    .with_context(|| format!("dropping index {name} for a bulk load"))?;
            }
        }
        *running += 1;
        Ok(true)
    }

    /// Ends a bulk load: when it was the last one running, builds the deferred indexes.
    pub async fn end_bulk_load(&self) -> Result<()> {
        let mut running = self.bulk_loads.lock().await;
        *running = running.saturating_sub(1);
        if *running == 0 {
            let conn = self.connect().await?;
            for (name, create) in DEFERRED {
                let started = std::time::Instant::now();
                conn.execute(create, ())
                    .await
                    .with_context(|| format!("building index {name} after a bulk load"))?;
                tracing::debug!(
                    target: "scryer::bulk_load",
                    index = name,
                    ms = started.elapsed().as_millis() as u64,
                    "index built"
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows::*;

    /// The names of the indexes the schema holds now.
    async fn indexes(db: &Db) -> Vec<String> {
        let conn = db.connect().await.unwrap();
        let mut rows = conn
            .query("SELECT name FROM sqlite_schema WHERE type = 'index'", ())
            .await
            .unwrap();
        let mut out = Vec::new();
        while let Some(row) = rows.next().await.unwrap() {
            out.extend(crate::text(crate::col(&row, 0).unwrap()));
        }
        out
    }

    fn deferred_present(all: &[String]) -> Vec<&'static str> {
        DEFERRED
            .iter()
            .map(|(name, _)| *name)
            .filter(|n| all.iter().any(|a| a == n))
            .collect()
    }

    #[tokio::test]
    async fn a_bulk_load_writes_without_the_deferred_indexes_and_builds_them_after() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let every: Vec<&str> = DEFERRED.iter().map(|(n, _)| *n).collect();
        assert_eq!(deferred_present(&indexes(&db).await), every);

        assert!(!db.begin_bulk_load(BULK_LOAD_MIN_FILES - 1).await.unwrap());
        assert_eq!(deferred_present(&indexes(&db).await), every, "small: kept");

        assert!(db.begin_bulk_load(BULK_LOAD_MIN_FILES).await.unwrap());
        assert!(deferred_present(&indexes(&db).await).is_empty());
        let all = indexes(&db).await;
        assert!(
            all.iter().any(|n| n == "ref_site_by_name_file_kind"),
            "{all:?}"
        );
        // A second load at the same time keeps them off until the last one ends.
        assert!(db.begin_bulk_load(BULK_LOAD_MIN_FILES).await.unwrap());
        let p = db.register_project("/work/a", Some("a")).await.unwrap();
        let a = write(
            "src/a.rs",
            "a",
            vec![sym("main", 1)],
            vec![reference("helper", 2)],
        );
        db.write_files(p.id, &[a], &[]).await.unwrap();
        db.end_bulk_load().await.unwrap();
        assert!(deferred_present(&indexes(&db).await).is_empty());
        db.end_bulk_load().await.unwrap();
        assert_eq!(deferred_present(&indexes(&db).await), every);
        // What was written without them is found through them.
        assert_eq!(db.symbols_by_name(p.id, "main").await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_project_smaller_than_what_is_stored_keeps_the_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db.register_project("/work/big", Some("big")).await.unwrap();
        let conn = db.connect().await.unwrap();
        // One more file stored than the new project brings: the indexes would be rebuilt
        // over more rows than the load writes.
        for i in 0..=BULK_LOAD_MIN_FILES {
            conn.execute(
                "INSERT INTO source_file (project_id, path, content_hash, size, language, \
                 parse_errors, line_count) VALUES (?1, ?2, 'h', 1, 'rust', 0, 1)",
                (p.id, format!("src/f{i}.rs")),
            )
            .await
            .unwrap();
        }
        assert!(!db.begin_bulk_load(BULK_LOAD_MIN_FILES).await.unwrap());
        let every: Vec<&str> = DEFERRED.iter().map(|(n, _)| *n).collect();
        assert_eq!(deferred_present(&indexes(&db).await), every);
        assert!(db.begin_bulk_load(BULK_LOAD_MIN_FILES + 1).await.unwrap());
        db.end_bulk_load().await.unwrap();
        assert_eq!(deferred_present(&indexes(&db).await), every);
    }

    #[tokio::test]
    async fn indexes_dropped_by_a_run_that_never_ended_are_back_at_the_next_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let db = Db::open(&path).await.unwrap();
        assert!(db.begin_bulk_load(BULK_LOAD_MIN_FILES).await.unwrap());
        assert!(deferred_present(&indexes(&db).await).is_empty());
        drop(db);
        let db = Db::open(&path).await.unwrap();
        let every: Vec<&str> = DEFERRED.iter().map(|(n, _)| *n).collect();
        assert_eq!(deferred_present(&indexes(&db).await), every);
    }
}
