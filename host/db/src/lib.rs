//! The turso database: schema, project registry, and the stored index.
//!
//! Architecture invariant: this is the only crate that writes SQL. Everything above it
//! speaks in the row types defined here.
//!
//! turso lets one process open a database file; scryer's server is that process.

mod damage;
mod decisions;
mod deps;
mod edges;
mod file_rows;
mod precise;
mod row_diff;
mod schema;
mod search_rows;
mod telemetry;

pub use damage::{NOTE_SUFFIX, SetAside, kept_aside, seal_clean_exit};
pub use decisions::*;
pub use deps::*;
pub use edges::*;
pub use precise::*;
pub use search_rows::{RowOrder, SearchRow};
pub use telemetry::*;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use turso::{Connection, Value};

pub use schema::SCHEMA_VERSION;

/// Statements (each taking the project id as `?1`) that remove a project's rows from
/// the tables areas keep beside the core ones.
fn deletions_for_project() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    out.extend(decisions::PROJECT_DELETIONS);
    out.extend(deps::PROJECT_DELETIONS);
    out.extend(precise::PROJECT_DELETIONS);
    out
}

/// A registered project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectRow {
    pub id: i64,
    pub slug: String,
    /// Canonical absolute path.
    pub root: String,
    pub crate_name: Option<String>,
    pub indexed_at: Option<String>,
    /// False while an index run is writing (or was interrupted while writing).
    pub index_complete: bool,
    pub last_index_ms: Option<i64>,
    pub last_error: Option<String>,
}

/// A definition as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
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

#[derive(Clone)]
pub struct Db {
    database: turso::Database,
    path: PathBuf,
    /// Idle read connections. A turso connection keeps its own page cache, so a query
    /// on a fresh connection reads every page it touches from the file again; reusing
    /// readers keeps the pages a tool call needs in memory.
    readers: Arc<Mutex<Vec<Connection>>>,
}

/// Runs `body` inside `BEGIN IMMEDIATE` … `COMMIT`, rolling back on error.
pub(crate) async fn in_transaction<T>(
    conn: &Connection,
    body: impl AsyncFnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    conn.execute("BEGIN IMMEDIATE", ()).await?;
    match body(conn).await {
        Ok(v) => {
            conn.execute("COMMIT", ()).await?;
            Ok(v)
        }
        Err(e) => {
            let _ = conn.execute("ROLLBACK", ()).await;
            Err(e)
        }
    }
}

/// Rows inserted per statement: one multi-row `INSERT` costs far less than as many
/// single-row ones (measured on a 5,300-line file's 2,700 references).
const ROWS_PER_INSERT: usize = 64;

/// Buffers rows of one table and inserts them `ROWS_PER_INSERT` at a time, with one
/// prepared statement for full batches and a one-off one for the rest.
struct RowInserter {
    /// `INSERT INTO t (a, b) VALUES ` (the placeholders are appended).
    head: String,
    columns: usize,
    pending: Vec<Value>,
    full: Option<turso::Statement>,
}

impl RowInserter {
    /// Inserts into `table`: `id, project_id, file_id`, then its data columns.
    fn new(table: &row_diff::RowTable) -> Self {
        let columns = table.columns.split(',').count() + 3;
        RowInserter {
            head: format!(
                "INSERT INTO {} (id, project_id, file_id, {}) VALUES ",
                table.name, table.columns
            ),
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
        debug_assert_eq!(data.len() + 3, self.columns);
        self.pending.push(Value::Integer(ids.take()?));
        self.pending.push(Value::Integer(project_id));
        self.pending.push(Value::Integer(file_id));
        self.pending.extend(data);
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

    async fn flush(&mut self, conn: &Connection) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let rows = self.pending.len() / self.columns;
        let batch = std::mem::take(&mut self.pending);
        conn.execute(&self.sql(rows), batch).await?;
        Ok(())
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

const PROJECT_COLUMNS: &str =
    "id, slug, root, crate_name, indexed_at, index_complete, last_index_ms, last_error";

fn project_from(row: &turso::Row) -> Result<ProjectRow> {
    Ok(ProjectRow {
        id: int(col(row, 0)?).unwrap_or_default(),
        slug: text(col(row, 1)?).unwrap_or_default(),
        root: text(col(row, 2)?).unwrap_or_default(),
        crate_name: text(col(row, 3)?),
        indexed_at: text(col(row, 4)?),
        index_complete: int(col(row, 5)?).unwrap_or(0) != 0,
        last_index_ms: int(col(row, 6)?),
        last_error: text(col(row, 7)?),
    })
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

const SYMBOL_COLUMNS: &str = "s.name, s.kind, s.qualified_name, s.owner, s.signature, s.docstring, \
     s.start_line, s.end_line, s.name_line, s.name_column, f.path";

/// Symbol rows in file, then line order. Sorted here: turso's ORDER BY over the join
/// costs more than the query itself.
async fn symbols_in_file_order(mut rows: turso::Rows) -> Result<Vec<SymbolRow>> {
    let mut out = Vec::new();
    while let Some(row) = rows.next().await? {
        out.push(symbol_from(&row)?);
    }
    out.sort_by(|a, b| (&a.file_path, a.start_line).cmp(&(&b.file_path, b.start_line)));
    Ok(out)
}

fn symbol_from(row: &turso::Row) -> Result<SymbolRow> {
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

/// Most `-N` suffixes tried for a project's slug before registration gives up.
const MAX_SLUG_SUFFIX: u32 = 1000;

/// What the error of [`Db::open`] says when another process holds the file.
pub const IN_USE: &str = "is in use by another scryer process";

/// Page cache of each connection, in MiB: at most this much of the database is kept in
/// memory per connection (pages are cached as they are read, so a small project never
/// fills it). `SCRYER_DB_CACHE_MIB` overrides it (docs/learnings/latency.md).
pub const DB_CACHE_MIB: i64 = 32;

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
        // turso's own page cache is 2,000 pages (8 MiB) per connection: a query over a
        // common name's rows in a project larger than that reads pages again and again.
        // Negative: KiB, as SQLite reads it.
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
        for stmt in schema::all_statements() {
            conn.execute(stmt, ()).await.with_context(|| {
                format!("applying schema: {}", stmt.lines().next().unwrap_or(stmt))
            })?;
        }
        let mut rows = conn
            .query("SELECT value FROM meta WHERE key = 'schema_version'", ())
            .await?;
        let stored = match rows.next().await? {
            Some(row) => text(col(&row, 0)?).and_then(|v| v.parse::<i64>().ok()),
            None => None,
        };
        drop(rows);
        if let Some(v) = stored.filter(|v| *v > SCHEMA_VERSION) {
            // Migrating down would destroy what a newer build wrote: the caller keeps the
            // file aside instead (`Db::open_or_set_aside`).
            anyhow::bail!(
                "{} {v}; this build reads {SCHEMA_VERSION})",
                damage::NEWER_SCHEMA
            );
        }
        if stored.is_some_and(|v| v < 4) {
            // Rows from before 4 are not numbered within their file (`file_rows`), so no
            // by-file read would find them: the stored index goes, and every project and
            // dependency crate is indexed again (a project found incomplete at start-up
            // is re-indexed before it answers as complete).
            for stmt in [
                "DELETE FROM edge",
                "DELETE FROM ref_site",
                "DELETE FROM symbol",
                "DELETE FROM source_file",
                "UPDATE project SET index_complete = 0",
                "UPDATE dependency_crate SET indexed_at = NULL",
            ] {
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

    // ---- projects ------------------------------------------------------------------

    /// The user's projects, by slug. The rows that hold a dependency crate's index are
    /// not projects anyone registered, and are left out.
    pub async fn projects(&self) -> Result<Vec<ProjectRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query(
                format!(
                    "SELECT {PROJECT_COLUMNS} FROM project WHERE {} ORDER BY slug",
                    deps::NOT_A_DEPENDENCY
                ),
                (),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(project_from(&row)?);
        }
        Ok(out)
    }

    pub async fn project(&self, id: i64) -> Result<Option<ProjectRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query(
                format!("SELECT {PROJECT_COLUMNS} FROM project WHERE id = ?1"),
                (id,),
            )
            .await?;
        match rows.next().await? {
            Some(row) => Ok(Some(project_from(&row)?)),
            None => Ok(None),
        }
    }

    /// A user project by slug, numeric id or root path (exact, after trimming a trailing
    /// `/`). Dependency index rows never match: they are not in [`Db::projects`].
    pub async fn project_by_selector(&self, selector: &str) -> Result<Option<ProjectRow>> {
        let sel = selector.trim();
        let sel = if sel.len() > 1 {
            sel.trim_end_matches('/')
        } else {
            sel
        };
        let all = self.projects().await?;
        let by_id = sel.parse::<i64>().ok();
        Ok(all
            .into_iter()
            .find(|p| p.slug == sel || p.root == sel || Some(p.id) == by_id))
    }

    /// Registers `root` (canonical, absolute) or returns the existing registration. The
    /// slug is the directory name, made unique with a numeric suffix. Fails when `root`
    /// already holds a dependency crate's shared index: one directory, one project row.
    pub async fn register_project(
        &self,
        root: &str,
        crate_name: Option<&str>,
    ) -> Result<ProjectRow> {
        if let Some(p) = self.project_by_root(root).await? {
            return Ok(p);
        }
        if let Some((name, version)) = self.dependency_rooted_at(root).await? {
            anyhow::bail!(
                "{root} is indexed as the dependency crate {name} {version} (cargo registry \
                 sources), so it cannot be registered as a project; look it up through the \
                 dependency tools (e.g. get_crate_outline, search_symbols with \
                 scope_level \"dependencies\"), or copy the sources elsewhere to index them as a project"
            );
        }
        let base = Path::new(root)
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty())
            .unwrap_or("project")
            .to_string();
        let conn = self.connect().await?;
        // Idempotent under concurrency: a row another registration of the same root
        // inserted meanwhile is the answer, and a slug taken meanwhile moves on to the
        // next one (`ON CONFLICT DO NOTHING` covers both unique columns).
        for n in 1..=MAX_SLUG_SUFFIX {
            let slug = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            if self.slug_taken(&slug).await? {
                continue;
            }
            conn.execute(
                "INSERT INTO project (slug, root, crate_name, registered_at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT DO NOTHING",
                (slug.as_str(), root, opt_text(crate_name), now_rfc3339()),
            )
            .await?;
            if let Some(p) = self.project_by_root(root).await? {
                return Ok(p);
            }
        }
        anyhow::bail!(
            "registering {root}: the slugs {base} to {base}-{MAX_SLUG_SUFFIX} are all taken; delete_project some of them"
        )
    }

    /// The user project registered at exactly `root`.
    pub async fn project_by_root(&self, root: &str) -> Result<Option<ProjectRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query(
                format!(
                    "SELECT {PROJECT_COLUMNS} FROM project WHERE root = ?1 AND {}",
                    deps::NOT_A_DEPENDENCY
                ),
                (root,),
            )
            .await?;
        match rows.next().await? {
            Some(row) => Ok(Some(project_from(&row)?)),
            None => Ok(None),
        }
    }

    /// Whether any row of `project` (a user's or a dependency index's) has `slug`.
    async fn slug_taken(&self, slug: &str) -> Result<bool> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query("SELECT 1 FROM project WHERE slug = ?1", (slug,))
            .await?;
        Ok(rows.next().await?.is_some())
    }

    /// Marks the start of an index run: answers must not claim completeness until
    /// [`Db::finish_index_run`].
    pub async fn start_index_run(&self, project_id: i64) -> Result<()> {
        let conn = self.connect().await?;
        conn.execute(
            "UPDATE project SET index_complete = 0 WHERE id = ?1",
            (project_id,),
        )
        .await?;
        Ok(())
    }

    pub async fn finish_index_run(
        &self,
        project_id: i64,
        elapsed_ms: i64,
        error: Option<&str>,
    ) -> Result<()> {
        let conn = self.connect().await?;
        conn.execute(
            "UPDATE project SET index_complete = ?2, indexed_at = ?3, last_index_ms = ?4, last_error = ?5 WHERE id = ?1",
            (
                project_id,
                i64::from(error.is_none()),
                now_rfc3339(),
                elapsed_ms,
                opt_text(error),
            ),
        )
        .await?;
        Ok(())
    }

    // ---- files ---------------------------------------------------------------------

    /// Every indexed file of a project, by relative path.
    pub async fn files(&self, project_id: i64) -> Result<HashMap<String, FileRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query(
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
            .query(
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
        let mut ins_file = conn
            .prepare(
                "INSERT INTO source_file (project_id, path, content_hash, size, language, parse_errors, line_count) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .await?;
        let mut upd_file = conn
            .prepare(
                "UPDATE source_file SET content_hash = ?1, size = ?2, language = ?3, parse_errors = ?4, \
                 line_count = ?5 WHERE id = ?6",
            )
            .await?;
        let mut ins_sym = RowInserter::new(&row_diff::SYMBOL_ROWS);
        let mut ins_ref = RowInserter::new(&row_diff::REF_ROWS);
        let mut ins_edge = RowInserter::new(&row_diff::EDGE_ROWS);
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
        for w in writes {
            let previous = stored.get(w.path.as_str()).copied();
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
                        ))
                        .await?;
                    conn.last_insert_rowid()
                }
            };
            let mut symbols: Vec<Vec<Value>> = w
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
            let mut references: Vec<Vec<Value>> = w
                .references
                .iter()
                .map(|r| {
                    vec![
                        Value::Text(r.name.clone()),
                        Value::Text(r.kind.clone()),
                        Value::Integer(i64::from(r.line)),
                        Value::Integer(i64::from(r.column)),
                        opt_text(r.qualifier.clone()),
                        Value::Text(r.enclosing_symbol.clone()),
                    ]
                })
                .collect();
            let mut edges: Vec<Vec<Value>> = w
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
        Ok(())
    }

    /// Forgets a project: its row and everything indexed for it, in one transaction.
    /// Telemetry rows stay (they hold no content) but lose their project.
    pub async fn delete_project(&self, project_id: i64) -> Result<()> {
        let conn = self.connect().await?;
        in_transaction(&conn, async |conn| {
            for table in ["edge", "ref_site", "symbol", "source_file"] {
                conn.execute(
                    &format!("DELETE FROM {table} WHERE project_id = ?1"),
                    (project_id,),
                )
                .await?;
            }
            for stmt in deletions_for_project() {
                conn.execute(stmt, (project_id,)).await?;
            }
            conn.execute(
                "UPDATE tool_call SET project_id = NULL WHERE project_id = ?1",
                (project_id,),
            )
            .await?;
            conn.execute("DELETE FROM project WHERE id = ?1", (project_id,))
                .await?;
            Ok(())
        })
        .await
    }

    // ---- reads ---------------------------------------------------------------------

    pub async fn symbols_by_name(&self, project_id: i64, name: &str) -> Result<Vec<SymbolRow>> {
        let conn = self.reader().await?;
        let rows = conn
            .query(
                format!(
                    "SELECT {SYMBOL_COLUMNS} FROM symbol s JOIN source_file f ON f.id = s.file_id \
                     WHERE s.project_id = ?1 AND s.name = ?2"
                ),
                (project_id, name),
            )
            .await?;
        symbols_in_file_order(rows).await
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
            .query(
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
            .query(
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
        let conn = self.reader().await?;
        let mut params: Vec<turso::Value> = vec![project_id.into(), name.into()];
        let kind_filter = match kinds {
            Some(kinds) => {
                let marks: Vec<String> = (0..kinds.len()).map(|i| format!("?{}", i + 3)).collect();
                params.extend(kinds.iter().map(|k| turso::Value::from(k.as_str())));
                format!(" AND r.kind IN ({})", marks.join(", "))
            }
            None => String::new(),
        };
        let mut rows = conn
            .query(
                format!(
                    "SELECT r.kind, r.line, r.col, r.qualifier, r.enclosing_symbol, f.path \
                     FROM ref_site r JOIN source_file f ON f.id = r.file_id \
                     WHERE r.project_id = ?1 AND r.name = ?2{kind_filter}"
                ),
                params,
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(RefRow {
                name: name.to_string(),
                kind: text(col(&row, 0)?).unwrap_or_default(),
                line: int(col(&row, 1)?).unwrap_or(0) as u32,
                column: int(col(&row, 2)?).unwrap_or(0) as u32,
                qualifier: text(col(&row, 3)?),
                enclosing_symbol: text(col(&row, 4)?).unwrap_or_default(),
                file_path: text(col(&row, 5)?).unwrap_or_default(),
            });
        }
        // Sorted here, not by SQL: turso's ORDER BY over the join took 35-45 % of the
        // query (tokio, a name with 654 rows: 1.1 ms against 0.75 ms).
        out.sort_by(|a, b| (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column)));
        Ok(out)
    }

    /// The ids of the files that use `name`, each once. Ids, not paths: the query then
    /// reads only the index (see `ref_site_by_name_file`), and a join or DISTINCT would
    /// triple its cost; [`file_paths`](Self::file_paths) maps them.
    pub async fn file_ids_naming(&self, project_id: i64, name: &str) -> Result<Vec<i64>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query(
                "SELECT file_id FROM ref_site WHERE project_id = ?1 AND name = ?2",
                (project_id, name),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(int(col(&row, 0)?).unwrap_or(0));
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Every file of a project: id → relative path.
    pub async fn file_paths(&self, project_id: i64) -> Result<HashMap<i64, String>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query(
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

    pub async fn facts(&self, project_id: i64) -> Result<Facts> {
        let conn = self.reader().await?;
        let count = |sql: &'static str| {
            let conn = conn.clone();
            async move {
                let mut rows = conn.query(sql, (project_id,)).await?;
                let n = match rows.next().await? {
                    Some(row) => int(col(&row, 0)?).unwrap_or(0),
                    None => 0,
                };
                anyhow::Ok(n as u32)
            }
        };
        Ok(Facts {
            files: count("SELECT COUNT(*) FROM source_file WHERE project_id = ?1").await?,
            parse_failures: count(
                "SELECT COUNT(*) FROM source_file WHERE project_id = ?1 AND parse_errors != 0",
            )
            .await?,
            symbols: count("SELECT COUNT(*) FROM symbol WHERE project_id = ?1").await?,
            references: count("SELECT COUNT(*) FROM ref_site WHERE project_id = ?1").await?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, line: u32) -> SymbolRow {
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

    fn write(path: &str, hash: &str, symbols: Vec<SymbolRow>, refs: Vec<RefRow>) -> FileWrite {
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

    fn reference(name: &str, line: u32) -> RefRow {
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
    async fn int_pairs(db: &Db, sql: &str, params: impl turso::IntoParams) -> Vec<(i64, i64)> {
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
    async fn row_ids(db: &Db, table: &str) -> Vec<(i64, i64)> {
        let sql = format!("SELECT id, file_id FROM {table} ORDER BY id");
        int_pairs(db, &sql, ()).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_registrations_of_one_root_make_one_row_and_same_names_get_own_slugs() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let mut tasks = Vec::new();
        for i in 0..24 {
            let db = db.clone();
            // Half register one root, half register roots that share its last component.
            let root = if i % 2 == 0 {
                "/work/app".to_string()
            } else {
                format!("/elsewhere/{i}/app")
            };
            tasks.push(tokio::spawn(async move {
                db.register_project(&root, None).await.map(|p| (root, p))
            }));
        }
        let mut same = std::collections::BTreeSet::new();
        for t in tasks {
            let (root, p) = t.await.unwrap().expect("every registration answers");
            assert_eq!(p.root, root);
            if root == "/work/app" {
                same.insert(p.id);
            }
        }
        assert_eq!(same.len(), 1, "one row for one root: {same:?}");
        let all = db.projects().await.unwrap();
        assert_eq!(all.len(), 13, "{all:?}");
        let slugs: std::collections::BTreeSet<&str> = all.iter().map(|p| p.slug.as_str()).collect();
        assert_eq!(slugs.len(), 13, "slugs are distinct: {slugs:?}");
        // Registering again answers the existing row.
        let again = db.register_project("/work/app", None).await.unwrap();
        assert!(same.contains(&again.id));
    }

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

    #[tokio::test]
    async fn narrow_name_reads_filter_by_kind_and_give_each_file_once_in_order() {
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

        // File ids, each once, mapped by the project's own paths; names are exact (case).
        let paths = db.file_paths(p.id).await.unwrap();
        let named = |ids: Vec<i64>| -> Vec<String> {
            let mut v: Vec<String> = ids.iter().map(|id| paths[id].clone()).collect();
            v.sort();
            v
        };
        assert_eq!(
            named(db.file_ids_naming(p.id, "Shape").await.unwrap()),
            ["src/a.rs", "src/z.rs"]
        );
        assert_eq!(
            named(db.file_ids_naming(p.id, "shape").await.unwrap()),
            ["src/m.rs"]
        );
        assert!(
            db.file_ids_naming(p.id, "Nowhere")
                .await
                .unwrap()
                .is_empty()
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

    #[tokio::test]
    async fn a_file_round_trips_and_rewriting_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db
            .register_project("/work/demo", Some("demo"))
            .await
            .unwrap();
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
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db
            .register_project("/work/demo", Some("demo"))
            .await
            .unwrap();
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

    #[tokio::test]
    async fn projects_are_found_by_slug_id_or_root_and_slugs_stay_unique() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let a = db.register_project("/a/demo", None).await.unwrap();
        let b = db.register_project("/b/demo", None).await.unwrap();
        assert_eq!(b.slug, "demo-2");
        assert_eq!(db.register_project("/a/demo", None).await.unwrap().id, a.id);
        assert_eq!(
            db.project_by_selector("demo-2").await.unwrap().unwrap().id,
            b.id
        );
        assert_eq!(
            db.project_by_selector(&a.id.to_string())
                .await
                .unwrap()
                .unwrap()
                .id,
            a.id
        );
        assert_eq!(
            db.project_by_selector("/b/demo/")
                .await
                .unwrap()
                .unwrap()
                .id,
            b.id
        );
        assert!(db.project_by_selector("nope").await.unwrap().is_none());
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

    #[tokio::test]
    async fn an_index_run_is_complete_only_once_finished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let db = Db::open(&path).await.unwrap();
        let p = db.register_project("/a/demo", None).await.unwrap();
        db.start_index_run(p.id).await.unwrap();
        assert!(!db.project(p.id).await.unwrap().unwrap().index_complete);
        db.finish_index_run(p.id, 12, None).await.unwrap();
        let p2 = db.project(p.id).await.unwrap().unwrap();
        assert!(p2.index_complete);
        assert_eq!(p2.last_index_ms, Some(12));
        assert!(p2.indexed_at.is_some());
        db.finish_index_run(p.id, 3, Some("disk full"))
            .await
            .unwrap();
        let p3 = db.project(p.id).await.unwrap().unwrap();
        assert!(!p3.index_complete);
        assert_eq!(p3.last_error.as_deref(), Some("disk full"));
    }
}
