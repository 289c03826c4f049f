//! The turso database: schema, project registry, and the stored index.
//!
//! This file holds [`Db`] (opening a file, applying the schema, connections) and the
//! helpers every table family shares; each family's `impl Db` is in its own module:
//! `projects` (the registry), `files` (source files and writing their rows),
//! `symbols` (reading definitions and usages), `edges`, `search_rows`, `deps`,
//! `precise`, `decisions`, `telemetry`; `dense` keeps the definitions of a name defined
//! thousands of times as one record; `damage` keeps a damaged file aside.
//!
//! Architecture invariant: this is the only crate that writes SQL. Everything above it
//! speaks in the row types defined here.
//!
//! turso lets one process open a database file; scryer's server is that process.

mod bulk;
mod damage;
mod decisions;
mod dense;
mod deps;
mod edges;
mod file_rows;
mod file_spans;
mod files;
mod precise;
mod projects;
mod record;
mod ref_kinds;
mod row_diff;
mod schema;
mod scopes;
mod search_rows;
mod split_read;
mod symbols;
mod telemetry;
#[cfg(test)]
mod test_rows;

pub use bulk::BULK_LOAD_MIN_FILES;
pub use damage::{NOTE_SUFFIX, SetAside, kept_aside, seal_clean_exit};
pub use decisions::*;
pub use dense::{DENSE_MIN_DEFINITIONS, USES_RECORD_MIN_ROWS};
pub use deps::*;
pub use edges::*;
pub use file_rows::keys_of_file;
pub use file_spans::{FileSpans, SPAN_GAP_MAX_ROWS};
pub use files::{Facts, FileRow, FileWrite};
pub use precise::*;
pub(crate) use projects::PROJECT_COLUMNS;
pub use projects::{ProjectRow, select_project};
pub use ref_kinds::{kind_bits, ref_kind_has_code};
pub use search_rows::SearchRow;
pub use symbols::{NameUses, RefRow, SymbolRow};
pub(crate) use symbols::{SYMBOL_COLUMNS, symbol_from};
pub use telemetry::*;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use turso::{Connection, Value};

pub use schema::SCHEMA_VERSION;
pub use scopes::scope_id;

#[derive(Clone)]
pub struct Db {
    database: turso::Database,
    path: PathBuf,
    /// Idle read connections. A turso connection keeps its own page cache, so a query
    /// on a fresh connection reads every page it touches from the file again; reusing
    /// readers keeps the pages a tool call needs in memory.
    readers: Arc<Mutex<Vec<Connection>>>,
    /// Bulk loads running (`bulk`): the first drops the deferred indexes, the last
    /// builds them.
    bulk_loads: Arc<tokio::sync::Mutex<usize>>,
    /// Index runs' failures that could not be written (the disk was full), by project:
    /// every project row read shows them until the project's next run starts.
    unrecorded_failures: Arc<Mutex<std::collections::HashMap<i64, String>>>,
}

/// Runs `body` inside `BEGIN IMMEDIATE` … `COMMIT`, rolling back on error.
pub(crate) async fn in_transaction<T>(
    conn: &Connection,
    body: impl AsyncFnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    conn.execute("BEGIN IMMEDIATE", ()).await?;
    match body(conn).await {
        Ok(v) => match conn.execute("COMMIT", ()).await {
            Ok(_) => Ok(v),
            Err(e) => {
                // A commit that failed (a full disk) may leave the transaction open.
                let _ = conn.execute("ROLLBACK", ()).await;
                Err(e.into())
            }
        },
        Err(e) => {
            let _ = conn.execute("ROLLBACK", ()).await;
            Err(e)
        }
    }
}

/// Idle read connections kept at most (one per concurrent reader is plenty).
const IDLE_READERS: usize = 8;

/// A read connection from the pool, returned to it when dropped. Only for statements
/// that leave no transaction open: writers take [`Db::connect`].
pub(crate) struct Reader {
    conn: Option<Connection>,
    pool: Arc<Mutex<Vec<Connection>>>,
}

impl std::ops::Deref for Reader {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
            .as_ref()
            .expect("a reader holds its connection until dropped")
    }
}

impl Reader {
    /// `sql` run with `params`, its statement prepared once per pooled connection and
    /// kept in turso's statement cache: preparing (parsing and planning) was 9–14% of
    /// the daemon's CPU under load before (docs/learnings/scale.md, stop 45). turso
    /// prepares again by itself when the schema changed since.
    ///
    /// Architecture invariant: `sql` has one of a few shapes. turso keeps every text
    /// a connection caches for the connection's life, so a text that varies with the
    /// input (a list of `?`s as long as an id list) would grow it without bound; such
    /// reads call [`turso::Connection::query`].
    pub(crate) async fn query_cached(
        &self,
        sql: impl AsRef<str>,
        params: impl turso::IntoParams,
    ) -> turso::Result<turso::Rows> {
        let mut statement = self.prepare_cached(sql).await?;
        statement.query(params).await
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            let mut idle = self.pool.lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < IDLE_READERS {
                idle.push(conn);
            }
        }
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("path", &self.path).finish()
    }
}

/// The current time as RFC 3339 UTC.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

pub(crate) fn text(v: Value) -> Option<String> {
    match v {
        Value::Text(s) => Some(s),
        _ => None,
    }
}

pub(crate) fn int(v: Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(i),
        _ => None,
    }
}

pub(crate) fn col(row: &turso::Row, i: usize) -> Result<Value> {
    row.get_value(i).map_err(anyhow::Error::from)
}

pub(crate) fn opt_text<T: Into<String>>(v: Option<T>) -> Value {
    match v {
        Some(s) => Value::Text(s.into()),
        None => Value::Null,
    }
}

/// What the error of [`Db::open`] says when another process holds the file.
pub const IN_USE: &str = "is in use by another scryer process";

/// Page cache of each connection, in MiB: at most this much of the database is kept in
/// memory per connection (pages are cached as they are read, so a small project never
/// fills it). `SCRYER_DB_CACHE_MIB` overrides it (docs/learnings/latency.md).
///
/// turso's own default (2,000 pages). It was 32: a new process's first read of thousands
/// of pages then filled fresh memory, page fault by page fault, where a cache this size
/// reuses its evicted buffers. `into`'s 10,017-row window on the monorepo read in 30-38
/// ms against 47-51; the probe's first calls over 100 ms went from 5 / 2 / 1 to 0 / 0 /
/// 0 per round, and tokio's load was the same (ADR 0060).
pub const DB_CACHE_MIB: i64 = 8;

/// [`DB_CACHE_MIB`], or `SCRYER_DB_CACHE_MIB` when it is a whole number from 1 to 4096
/// (anything else is logged and the default used).
fn cache_mib() -> i64 {
    let Ok(v) = std::env::var("SCRYER_DB_CACHE_MIB") else {
        return DB_CACHE_MIB;
    };
    match v.trim().parse::<i64>() {
        Ok(m) if (1..=4096).contains(&m) => m,
        _ => {
            tracing::warn!(
                "SCRYER_DB_CACHE_MIB={v:?} ignored: accepted is a whole number of MiB from 1 to 4096; using {DB_CACHE_MIB}"
            );
            DB_CACHE_MIB
        }
    }
}

impl Db {
    /// Opens (creating if needed) the database file and applies the schema.
    pub async fn open(path: &Path) -> Result<Db> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let path_str = path
            .to_str()
            .with_context(|| format!("database path {} is not UTF-8", path.display()))?;
        let database = match turso::Builder::new_local(path_str).build().await {
            Ok(db) => db,
            Err(e) if e.to_string().contains("locked by another process") => anyhow::bail!(
                "the database {} {IN_USE} (turso lets one process open a database file); \
                 stop that process, or pass --db PATH to use another database",
                path.display()
            ),
            Err(e) => {
                return Err(
                    anyhow::Error::from(e).context(format!("opening database {}", path.display()))
                );
            }
        };
        let db = Db {
            database,
            path: path.to_path_buf(),
            readers: Arc::default(),
            bulk_loads: Arc::default(),
            unrecorded_failures: Arc::default(),
        };
        db.migrate().await?;
        Ok(db)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A new connection. Connections are cheap; readers take their own so they never
    /// wait behind a writer's transaction.
    pub async fn connect(&self) -> Result<Connection> {
        let conn = self
            .database
            .connect()
            .context("connecting to the database")?;
        // turso refuses a second writer at once; background dependency indexing and a
        // user's refresh may overlap, so a writer waits its turn instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .context("setting the busy timeout")?;
        // Sorting and DISTINCT spill to a temporary database; on disk that is a new
        // directory, file and fsync per query (measured: most of a small query's system
        // time). Our result sets fit in memory.
        conn.pragma_update("temp_store", "memory")
            .await
            .context("setting temp_store")?;
        // The page cache per connection ([`DB_CACHE_MIB`], which `SCRYER_DB_CACHE_MIB`
        // overrides). Negative: KiB, as SQLite reads it.
        let cache_kib = cache_mib() * 1024;
        conn.pragma_update("cache_size", -cache_kib)
            .await
            .context("setting cache_size")?;
        Ok(conn)
    }

    /// A pooled connection for reading (see [`Reader`]).
    pub(crate) async fn reader(&self) -> Result<Reader> {
        let idle = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.connect().await?,
        };
        Ok(Reader {
            conn: Some(conn),
            pool: self.readers.clone(),
        })
    }

    async fn migrate(&self) -> Result<()> {
        let conn = self.connect().await?;
        // One transaction: a fresh database's schema is one commit (one fsync) instead of
        // one per statement, and a crash leaves no half-applied schema.
        in_transaction(&conn, async |conn| Self::migrate_in(conn).await).await
    }

    async fn migrate_in(conn: &Connection) -> Result<()> {
        // `meta` is the schema's first statement: the stored version is read before the
        // rest, which a database of an older layout could not take.
        let (meta, _) = schema::STATEMENTS.split_first().expect("a schema");
        conn.execute(meta, ()).await?;
        let mut rows = conn
            .query("SELECT value FROM meta WHERE key = 'schema_version'", ())
            .await?;
        let stored = match rows.next().await? {
            Some(row) => text(col(&row, 0)?).and_then(|v| v.parse::<i64>().ok()),
            None => None,
        };
        drop(rows);
        if stored.is_some_and(|v| v < schema::LAYOUT_VERSION) {
            for stmt in schema::OLD_LAYOUT_DROPS {
                conn.execute(stmt, ()).await?;
            }
        }
        for stmt in schema::all_statements() {
            conn.execute(stmt, ()).await.with_context(|| {
                format!("applying schema: {}", stmt.lines().next().unwrap_or(stmt))
            })?;
        }
        if let Some(v) = stored.filter(|v| *v > SCHEMA_VERSION) {
            // Migrating down would destroy what a newer build wrote: the caller keeps the
            // file aside instead (`Db::open_or_set_aside`).
            anyhow::bail!(
                "{} {v}; this build reads {SCHEMA_VERSION})",
                damage::NEWER_SCHEMA
            );
        }
        if stored.is_some_and(|v| v < schema::LAYOUT_VERSION) {
            // Rows from before 4 are not numbered within their file (`file_rows`), so no
            // by-file read would find them; references from before 11 were dropped above
            // (`ref_site` changed its columns in 8, its kinds to codes in 10, its scope
            // ids in 11). The stored
            // index goes, and every project and dependency crate is indexed again (a
            // project found incomplete at start-up is re-indexed before it answers as
            // complete).
            for stmt in [
                "DELETE FROM edge",
                "DELETE FROM ref_site",
                "DELETE FROM ref_scope",
                "DELETE FROM symbol",
                "DELETE FROM source_file",
                "UPDATE project SET index_complete = 0",
                "UPDATE dependency_crate SET indexed_at = NULL",
            ] {
                conn.execute(stmt, ()).await?;
            }
        }
        if stored.is_some_and(|v| v < schema::FILE_ROW_COUNTS_VERSION)
            // A database an older build made lacks them; one this build made and then
            // marked older (the tests' way to make an old database) has them. Its files
            // were emptied above (it is older than the layout too): nothing to count.
            && conn
                .prepare("SELECT symbol_count, ref_count FROM source_file LIMIT 0")
                .await
                .is_err()
        {
            for stmt in schema::ADD_FILE_ROW_COUNTS {
                conn.execute(stmt, ()).await?;
            }
        }
        if stored.is_some_and(|v| v < schema::EXTRACTION_VERSION) {
            // Older rows lack what this version extracts (graph edges since 2): an empty
            // hash never matches, so every file is re-extracted by the next run.
            conn.execute("UPDATE source_file SET content_hash = ''", ())
                .await?;
        }
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1) \
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (SCHEMA_VERSION.to_string(),),
        )
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rows::*;

    /// A pooled reader keeps its statements (`Reader::query_cached`). One kept from
    /// before the schema changed under it (the name index dropped, as a bulk load does,
    /// then built again, with rows written in between) is prepared again: the reads see
    /// every row, not what the old plan's pages held.
    #[tokio::test]
    async fn a_kept_statement_reads_right_after_the_schema_changes_under_it() {
        let (_dir, db, p) = demo_project().await;
        let write_alpha = async |path: &str, line: u32| {
            db.write_files(
                p.id,
                &[write(path, path, vec![sym("alpha", line)], vec![])],
                &[],
            )
            .await
            .unwrap();
        };
        let lines = async || {
            let mut lines: Vec<u32> = db
                .symbols_row_by_row(p.id, "alpha")
                .await
                .unwrap()
                .into_iter()
                .map(|s| s.start_line)
                .collect();
            lines.sort();
            lines
        };
        write_alpha("src/a.rs", 1).await;
        assert_eq!(lines().await, [1]);
        assert_eq!(lines().await, [1], "read again on the kept statement");
        let writer = db.connect().await.unwrap();
        writer
            .execute("DROP INDEX symbol_by_name", ())
            .await
            .unwrap();
        write_alpha("src/b.rs", 9).await;
        assert_eq!(lines().await, [1, 9]);
        writer.execute(schema::SYMBOL_BY_NAME, ()).await.unwrap();
        write_alpha("src/c.rs", 20).await;
        assert_eq!(lines().await, [1, 9, 20]);
    }

    #[tokio::test]
    async fn a_database_from_before_per_file_row_ids_is_indexed_again_from_scratch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let db = Db::open(&path).await.unwrap();
        let p = db.register_project("/work/a", Some("a")).await.unwrap();
        let a = write(
            "src/a.rs",
            "a",
            vec![sym("main", 1)],
            vec![reference("x", 2)],
        );
        db.write_files(p.id, &[a], &[]).await.unwrap();
        db.finish_index_run(p.id, 5, None).await.unwrap();
        assert!(db.project(p.id).await.unwrap().unwrap().index_complete);
        let conn = db.connect().await.unwrap();
        conn.execute(
            "UPDATE meta SET value = '3' WHERE key = 'schema_version'",
            (),
        )
        .await
        .unwrap();
        drop((conn, db));

        let db = Db::open(&path).await.unwrap();
        for table in ["symbol", "ref_site", "edge"] {
            assert!(row_ids(&db, table).await.is_empty(), "{table} emptied");
        }
        assert_eq!(db.file(p.id, "src/a.rs").await.unwrap(), None);
        let p = db.project(p.id).await.unwrap().unwrap();
        assert!(
            !p.index_complete,
            "an emptied project is re-indexed before it answers"
        );
        // The next open keeps what the new version wrote.
        let a = write("src/a.rs", "a", vec![sym("main", 1)], vec![]);
        db.write_files(p.id, &[a], &[]).await.unwrap();
        drop(db);
        let db = Db::open(&path).await.unwrap();
        assert_eq!(row_ids(&db, "symbol").await.len(), 1);
    }

    #[tokio::test]
    async fn a_database_with_kind_names_and_no_file_counts_gets_both_and_is_indexed_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let db = Db::open(&path).await.unwrap();
        let p = db.register_project("/work/a", Some("a")).await.unwrap();
        db.finish_index_run(p.id, 5, None).await.unwrap();
        // Version 8's tables: `ref_site` with kinds by name, `source_file` without counts.
        let conn = db.connect().await.unwrap();
        for stmt in [
            "DROP INDEX ref_site_calls_by_caller",
            "DROP INDEX ref_site_by_name_file_kind",
            "DROP TABLE ref_site",
            "CREATE TABLE ref_site (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, \
             file_id INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, \
             line INTEGER NOT NULL, col INTEGER NOT NULL, qualifier TEXT, \
             scope_id INTEGER NOT NULL)",
            "CREATE INDEX ref_site_calls_by_caller ON ref_site (scope_id) \
             WHERE kind IN ('call', 'method_call')",
            "CREATE INDEX ref_site_by_name_file ON ref_site (project_id, name, file_id)",
            "INSERT INTO ref_site VALUES (1, 1, 1, 'x', 'call', 2, 1, NULL, 7)",
            "ALTER TABLE source_file DROP COLUMN symbol_count",
            "ALTER TABLE source_file DROP COLUMN ref_count",
            "UPDATE meta SET value = '8' WHERE key = 'schema_version'",
        ] {
            conn.execute(stmt, ()).await.unwrap();
        }
        drop((conn, db));

        let db = Db::open(&path).await.unwrap();
        assert!(row_ids(&db, "ref_site").await.is_empty());
        assert!(!db.project(p.id).await.unwrap().unwrap().index_complete);
        // Indexed again: counts kept per file, kinds read back by name, calls found by
        // the index on codes.
        let mut refs: Vec<RefRow> = (1..=3).map(|l| reference("x", l)).collect();
        refs[1].kind = "use".into();
        refs[2].kind = "a_kind_from_a_newer_engine".into();
        let a = write("src/a.rs", "a", vec![sym("main", 1)], refs);
        db.write_files(p.id, &[a], &[]).await.unwrap();
        let facts = db.facts(p.id).await.unwrap();
        assert_eq!((facts.files, facts.symbols, facts.references), (1, 1, 3));
        let kinds: Vec<String> = db
            .references_to_name(p.id, "x")
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.kind)
            .collect();
        assert_eq!(kinds, ["call", "use", "a_kind_from_a_newer_engine"]);
        let uses = db.uses_per_file(p.id, "x").await.unwrap();
        assert_eq!((uses.len(), uses[0].rows, uses[0].calls), (1, 3, 1));
    }

    #[tokio::test]
    async fn a_database_with_enclosing_names_on_each_reference_gets_the_new_layout_and_is_indexed_again()
     {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let db = Db::open(&path).await.unwrap();
        let p = db.register_project("/work/a", Some("a")).await.unwrap();
        db.finish_index_run(p.id, 5, None).await.unwrap();
        // Version 7's `ref_site`, holding a row, as a build of that version left it.
        let conn = db.connect().await.unwrap();
        for stmt in [
            "DROP INDEX ref_site_calls_by_caller",
            "DROP INDEX ref_site_by_name_file_kind",
            "DROP TABLE ref_site",
            "CREATE TABLE ref_site (id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, \
             file_id INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, \
             line INTEGER NOT NULL, col INTEGER NOT NULL, qualifier TEXT, \
             enclosing_symbol TEXT NOT NULL)",
            "CREATE INDEX ref_site_calls_by_caller ON ref_site (project_id, enclosing_symbol) \
             WHERE kind IN ('call', 'method_call')",
            "INSERT INTO ref_site VALUES (1, 1, 1, 'x', 'call', 2, 1, NULL, 'a::main')",
            "UPDATE meta SET value = '7' WHERE key = 'schema_version'",
        ] {
            conn.execute(stmt, ()).await.unwrap();
        }
        drop((conn, db));

        let db = Db::open(&path).await.unwrap();
        assert!(row_ids(&db, "ref_site").await.is_empty());
        assert!(!db.project(p.id).await.unwrap().unwrap().index_complete);
        let a = write(
            "src/a.rs",
            "a",
            vec![sym("main", 1)],
            vec![reference("x", 2)],
        );
        db.write_files(p.id, &[a], &[]).await.unwrap();
        let refs = db.references_to_name(p.id, "x").await.unwrap();
        assert_eq!(refs.len(), 1);
        assert_eq!(
            refs[0].enclosing_symbol, "demo::main",
            "read back by its id"
        );
    }

    #[tokio::test]
    async fn a_second_open_of_a_database_file_in_the_same_process_works() {
        // turso locks the file per process, not per handle: a second handle in the same
        // process sees the first one's rows. (Another process is refused; the
        // end-to-end suite checks that message.)
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let a = Db::open(&path).await.unwrap();
        a.register_project("/x/demo", None).await.unwrap();
        let b = Db::open(&path).await.unwrap();
        assert_eq!(b.projects().await.unwrap().len(), 1);
    }
}
