//! Precise data: the occurrences a language's own SCIP indexer reported, stored per
//! file against the file's content hash at the time of the run (ADR 0018).
//!
//! - `precise_run`: one row per (project, language): who indexed it, when, how long,
//!   how much, and whether its rows are all written (`complete`);
//! - `precise_file`: each file the run covered with the content hash it had when the run
//!   started. A file's precise rows are used only while this hash equals the hash the
//!   tree-sitter index holds for it now; an edited file falls back to the heuristic;
//! - `precise_symbol`: SCIP symbol strings, interned per project and language;
//! - `precise_occurrence`: one row per occurrence of a global symbol, numbered within its
//!   `precise_file` like the core per-file rows (`file_rows`), so a file's occurrences
//!   are one range of ids;
//! - `precise_packed`: the same occurrences once more, a file's in one record (symbol,
//!   line, column, roles), for the read that holds a project's precise data in memory:
//!   tokio's 171k occurrences took 95 ms as rows, read once per new process (stop 48);
//! - `precise_attempt`: the last time scryer ran a (project, language)'s indexer: a
//!   digest of what the run read and how it ended, so a run over the same inputs is not
//!   made again (ADR 0055).

use std::collections::HashMap;

use anyhow::Result;
use turso::{Connection, Value};

use crate::file_rows::{self, RowIds};
use crate::{Db, col, in_transaction, int, text};

pub(crate) const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS precise_run (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        language TEXT NOT NULL,
        tool TEXT NOT NULL,
        version TEXT NOT NULL,
        source TEXT NOT NULL,
        finished_at TEXT,
        duration_ms INTEGER,
        peak_rss_kb INTEGER,
        files INTEGER NOT NULL DEFAULT 0,
        occurrences INTEGER NOT NULL DEFAULT 0,
        complete INTEGER NOT NULL DEFAULT 0
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS precise_run_by_language ON precise_run (project_id, language)",
    "CREATE TABLE IF NOT EXISTS precise_file (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        language TEXT NOT NULL,
        path TEXT NOT NULL,
        content_hash TEXT NOT NULL
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS precise_file_by_path ON precise_file (project_id, path)",
    "CREATE TABLE IF NOT EXISTS precise_symbol (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        language TEXT NOT NULL,
        symbol TEXT NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS precise_symbol_by_language ON precise_symbol (project_id, language)",
    "CREATE INDEX IF NOT EXISTS precise_symbol_by_text ON precise_symbol (project_id, symbol)",
    "CREATE TABLE IF NOT EXISTS precise_occurrence (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        symbol_id INTEGER NOT NULL,
        line INTEGER NOT NULL,
        col INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        end_col INTEGER NOT NULL,
        roles INTEGER NOT NULL,
        enclosing_start INTEGER,
        enclosing_end INTEGER
    )",
    "CREATE INDEX IF NOT EXISTS precise_occurrence_by_symbol ON precise_occurrence (symbol_id)",
    "CREATE TABLE IF NOT EXISTS precise_packed (
        file_id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        language TEXT NOT NULL,
        hits BLOB NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS precise_attempt (
        project_id INTEGER NOT NULL,
        language TEXT NOT NULL,
        inputs TEXT NOT NULL,
        failure TEXT,
        at_unix INTEGER NOT NULL,
        PRIMARY KEY (project_id, language)
    )",
];

pub(crate) const PROJECT_DELETIONS: &[&str] = &[
    "DELETE FROM precise_attempt WHERE project_id = ?1",
    "DELETE FROM precise_occurrence WHERE project_id = ?1",
    "DELETE FROM precise_packed WHERE project_id = ?1",
    "DELETE FROM precise_symbol WHERE project_id = ?1",
    "DELETE FROM precise_file WHERE project_id = ?1",
    "DELETE FROM precise_run WHERE project_id = ?1",
];

/// What a stored run holds, numbered: 1, the occurrence rows; 2, the rows and each
/// file's record (`precise_packed`). A run's inputs digest includes it, so a project
/// whose run an earlier build stored is indexed again once, and gets the records.
pub const PRECISE_STORE_LAYOUT: u32 = 2;

/// SCIP's definition role bit.
pub const PRECISE_ROLE_DEFINITION: i64 = 1;

/// A (project, language)'s last precise run as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreciseRunRow {
    pub language: String,
    /// The indexer's name and version, as its index's metadata says.
    pub tool: String,
    pub version: String,
    /// `run` (scryer ran the indexer) or `import` (`scryer precise import`).
    pub source: String,
    pub finished_at: Option<String>,
    pub duration_ms: Option<i64>,
    pub peak_rss_kb: Option<i64>,
    pub files: i64,
    pub occurrences: i64,
    /// All its rows are written.
    pub complete: bool,
}

/// The last run of a (project, language)'s indexer that scryer made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreciseAttempt {
    /// A digest of what the run read: the language's files (paths and content hashes),
    /// its project markers, the indexer and its version.
    pub inputs: String,
    /// Why it failed; `None`: its index was stored.
    pub failure: Option<String>,
    /// When it ended, in seconds since the Unix epoch.
    pub at_unix: i64,
}

/// A file a precise run covered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreciseFileRow {
    pub id: i64,
    pub language: String,
    pub path: String,
    pub content_hash: String,
}

/// One occurrence to store (1-based lines and columns).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreciseOccurrenceRow {
    pub symbol: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub roles: i32,
    pub enclosing: Option<(u32, u32)>,
}

/// One stored occurrence, read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreciseHit {
    pub file_id: i64,
    pub symbol_id: i64,
    pub symbol: String,
    pub line: u32,
    pub column: u32,
    pub roles: i64,
}

/// Documents written per transaction while a run is stored: other writers (a refresh)
/// wait at most this long's worth of rows.
const DOCUMENTS_PER_COMMIT: usize = 32;
const ROWS_PER_INSERT: usize = 64;
const OCCURRENCE_COLUMNS: usize = 10;

/// Stores one precise run of a (project, language), document by document. Until
/// [`PreciseWriter::finish`] the run is marked incomplete and no answer uses it.
pub struct PreciseWriter {
    conn: Connection,
    project_id: i64,
    language: String,
    symbols: HashMap<String, i64>,
    next_symbol: i64,
    next_file: i64,
    pending: Vec<(String, String, Vec<PreciseOccurrenceRow>)>,
    files: i64,
    occurrences: i64,
    run: PreciseRunRow,
}

impl Db {
    /// Starts storing a run: the (project, language)'s previous rows go, and its run row
    /// says `complete = 0` until [`PreciseWriter::finish`].
    pub async fn precise_begin(
        &self,
        project_id: i64,
        run: PreciseRunRow,
    ) -> Result<PreciseWriter> {
        let conn = self.connect().await?;
        let language = run.language.clone();
        in_transaction(&conn, async |conn| {
            delete_language(conn, project_id, &language).await?;
            conn.execute(
                "INSERT INTO precise_run (project_id, language, tool, version, source, complete) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 0)",
                (
                    project_id,
                    language.as_str(),
                    run.tool.as_str(),
                    run.version.as_str(),
                    run.source.as_str(),
                ),
            )
            .await?;
            Ok(())
        })
        .await?;
        let next_symbol = max_id(&conn, "precise_symbol").await? + 1;
        let next_file = max_id(&conn, "precise_file").await? + 1;
        Ok(PreciseWriter {
            conn,
            project_id,
            language,
            symbols: HashMap::new(),
            next_symbol,
            next_file,
            pending: Vec::new(),
            files: 0,
            occurrences: 0,
            run,
        })
    }

    /// The last run of `language`'s indexer scryer made for the project, if any is kept.
    pub async fn precise_attempt(
        &self,
        project_id: i64,
        language: &str,
    ) -> Result<Option<PreciseAttempt>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT inputs, failure, at_unix FROM precise_attempt \
                 WHERE project_id = ?1 AND language = ?2",
                (project_id, language),
            )
            .await?;
        let Some(row) = rows.next().await? else {
            return Ok(None);
        };
        Ok(Some(PreciseAttempt {
            inputs: text(col(&row, 0)?).unwrap_or_default(),
            failure: text(col(&row, 1)?),
            at_unix: int(col(&row, 2)?).unwrap_or_default(),
        }))
    }

    /// Keeps how the last run of `language`'s indexer ended, replacing the one before.
    /// Written after the run's rows (a stored run's `precise_begin` drops the one before).
    pub async fn record_precise_attempt(
        &self,
        project_id: i64,
        language: &str,
        attempt: &PreciseAttempt,
    ) -> Result<()> {
        let conn = self.connect().await?;
        conn.execute(
            "INSERT INTO precise_attempt (project_id, language, inputs, failure, at_unix) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(project_id, language) DO UPDATE SET \
             inputs = excluded.inputs, failure = excluded.failure, at_unix = excluded.at_unix",
            (
                project_id,
                language,
                attempt.inputs.as_str(),
                attempt.failure.as_deref(),
                attempt.at_unix,
            ),
        )
        .await?;
        Ok(())
    }

    /// Every (project, language) run stored for a project, by language.
    pub async fn precise_runs(&self, project_id: i64) -> Result<Vec<PreciseRunRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT language, tool, version, source, finished_at, duration_ms, peak_rss_kb, \
                 files, occurrences, complete FROM precise_run WHERE project_id = ?1 ORDER BY language",
                (project_id,),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(PreciseRunRow {
                language: text(col(&row, 0)?).unwrap_or_default(),
                tool: text(col(&row, 1)?).unwrap_or_default(),
                version: text(col(&row, 2)?).unwrap_or_default(),
                source: text(col(&row, 3)?).unwrap_or_default(),
                finished_at: text(col(&row, 4)?),
                duration_ms: int(col(&row, 5)?),
                peak_rss_kb: int(col(&row, 6)?),
                files: int(col(&row, 7)?).unwrap_or_default(),
                occurrences: int(col(&row, 8)?).unwrap_or_default(),
                complete: int(col(&row, 9)?).unwrap_or(0) != 0,
            });
        }
        Ok(out)
    }

    /// The files precise runs covered, by path.
    pub async fn precise_files(&self, project_id: i64) -> Result<HashMap<String, PreciseFileRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT id, language, path, content_hash FROM precise_file WHERE project_id = ?1",
                (project_id,),
            )
            .await?;
        let mut out = HashMap::new();
        while let Some(row) = rows.next().await? {
            let f = PreciseFileRow {
                id: int(col(&row, 0)?).unwrap_or_default(),
                language: text(col(&row, 1)?).unwrap_or_default(),
                path: text(col(&row, 2)?).unwrap_or_default(),
                content_hash: text(col(&row, 3)?).unwrap_or_default(),
            };
            out.insert(f.path.clone(), f);
        }
        Ok(out)
    }

    /// The occurrences in one precise file on lines `from..=to` (definitions only when
    /// `definitions_only`), in line then column order.
    pub async fn precise_in_file(
        &self,
        file_id: i64,
        from: u32,
        to: u32,
        definitions_only: bool,
    ) -> Result<Vec<PreciseHit>> {
        let (start, end) = file_rows::range(file_id)?;
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                format!(
                    "SELECT o.id, o.symbol_id, s.symbol, o.line, o.col, o.roles \
                     FROM precise_occurrence o JOIN precise_symbol s ON s.id = o.symbol_id \
                     WHERE {} AND o.line >= ?3 AND o.line <= ?4",
                    file_rows::in_file("o.id")
                ),
                (start, end, i64::from(from), i64::from(to)),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            let hit = hit_from(&row, true)?;
            if !definitions_only || hit.roles & PRECISE_ROLE_DEFINITION != 0 {
                out.push(hit);
            }
        }
        out.sort_by_key(|h| (h.line, h.column));
        Ok(out)
    }

    /// The project's interned SCIP symbols, `(id, symbol)` in id order (held in memory by
    /// the precise answers, which match patterns over them).
    pub async fn precise_symbols(&self, project_id: i64) -> Result<Vec<(i64, String)>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT id, symbol FROM precise_symbol WHERE project_id = ?1 ORDER BY id",
                (project_id,),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push((
                int(col(&row, 0)?).unwrap_or_default(),
                text(col(&row, 1)?).unwrap_or_default(),
            ));
        }
        Ok(out)
    }

    /// The ids of the project's interned SCIP symbol `symbol` (none when the index never
    /// names it).
    pub async fn precise_symbol_ids(&self, project_id: i64, symbol: &str) -> Result<Vec<i64>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT id FROM precise_symbol WHERE project_id = ?1 AND symbol = ?2",
                (project_id, symbol),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(int(col(&row, 0)?).unwrap_or_default());
        }
        Ok(out)
    }

    /// Every occurrence of one symbol (its `symbol` left empty), by file id then line.
    pub async fn precise_occurrences_of(&self, symbol_id: i64) -> Result<Vec<PreciseHit>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT id, symbol_id, line, col, roles FROM precise_occurrence WHERE symbol_id = ?1",
                (symbol_id,),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(hit_from(&row, false)?);
        }
        out.sort_by_key(|h| (h.file_id, h.line, h.column));
        Ok(out)
    }

    /// Every occurrence stored for the precise files `file_ids` (one id range read per
    /// file), `symbol` left empty, in id order: what the precise answers hold in memory
    /// per precise generation. `None` once there are more than `at_most`.
    pub async fn precise_occurrences_in(
        &self,
        file_ids: &[i64],
        at_most: usize,
    ) -> Result<Option<Vec<PreciseHit>>> {
        let conn = self.reader().await?;
        let mut out = Vec::new();
        for &file_id in file_ids {
            let mut packed = conn
                .query_cached(
                    "SELECT hits FROM precise_packed WHERE file_id = ?1",
                    (file_id,),
                )
                .await?;
            let unpacked = match packed.next().await? {
                Some(row) => match col(&row, 0)? {
                    Value::Blob(bytes) => unpack(file_id, &bytes),
                    _ => None,
                },
                None => None,
            };
            drop(packed);
            if let Some(hits) = unpacked {
                if out.len() + hits.len() > at_most {
                    return Ok(None);
                }
                out.extend(hits);
                continue;
            }
            // A run stored before the records (or one that does not read): its rows.
            let mut rows = conn
                .query_cached(
                    format!(
                        "SELECT id, symbol_id, line, col, roles FROM precise_occurrence WHERE {} ORDER BY id",
                        file_rows::in_file("id")
                    ),
                    file_rows::range(file_id)?,
                )
                .await?;
            while let Some(row) = rows.next().await? {
                if out.len() == at_most {
                    return Ok(None);
                }
                out.push(hit_from(&row, false)?);
            }
        }
        Ok(Some(out))
    }
}

/// The layout of a `precise_packed` record (`crate::record`): (symbol id, line, column,
/// roles) per occurrence in id order. A record of another layout is not read (the file's
/// rows are).
const PACKED_LAYOUT: u32 = 1;

type PackedHit = (i64, u32, u32, i32);

/// A file's occurrences from its record (`symbol` left empty), or `None` when the
/// record is of another layout or not whole.
fn unpack(file_id: i64, bytes: &[u8]) -> Option<Vec<PreciseHit>> {
    let hits: Vec<PackedHit> = crate::record::decode(PACKED_LAYOUT, bytes).ok()?;
    Some(
        hits.into_iter()
            .map(|(symbol_id, line, column, roles)| PreciseHit {
                file_id,
                symbol_id,
                symbol: String::new(),
                line,
                column,
                roles: roles.into(),
            })
            .collect(),
    )
}

fn hit_from(row: &turso::Row, with_symbol: bool) -> Result<PreciseHit> {
    let id = int(col(row, 0)?).unwrap_or_default();
    let i = if with_symbol { 1 } else { 0 };
    Ok(PreciseHit {
        file_id: id >> 32,
        symbol_id: int(col(row, 1)?).unwrap_or_default(),
        symbol: if with_symbol {
            text(col(row, 2)?).unwrap_or_default()
        } else {
            String::new()
        },
        line: int(col(row, 2 + i)?).unwrap_or(0) as u32,
        column: int(col(row, 3 + i)?).unwrap_or(0) as u32,
        roles: int(col(row, 4 + i)?).unwrap_or(0),
    })
}

async fn max_id(conn: &Connection, table: &str) -> Result<i64> {
    let mut rows = conn
        .query(&format!("SELECT MAX(id) FROM {table}"), ())
        .await?;
    Ok(match rows.next().await? {
        Some(row) => int(col(&row, 0)?).unwrap_or(0),
        None => 0,
    })
}

/// Removes a (project, language)'s precise rows: its files' occurrences (one id range
/// per file), files, symbols, run row and the last attempt (an import, or a run whose
/// attempt is written once it is stored, replaces what it said).
async fn delete_language(conn: &Connection, project_id: i64, language: &str) -> Result<()> {
    let mut ids = Vec::new();
    let mut rows = conn
        .query(
            "SELECT id FROM precise_file WHERE project_id = ?1 AND language = ?2",
            (project_id, language),
        )
        .await?;
    while let Some(row) = rows.next().await? {
        ids.push(int(col(&row, 0)?).unwrap_or_default());
    }
    drop(rows);
    for id in ids {
        conn.execute(
            &format!(
                "DELETE FROM precise_occurrence WHERE {}",
                file_rows::in_file("id")
            ),
            file_rows::range(id)?,
        )
        .await?;
    }
    for table in [
        "precise_packed",
        "precise_file",
        "precise_symbol",
        "precise_run",
        "precise_attempt",
    ] {
        conn.execute(
            &format!("DELETE FROM {table} WHERE project_id = ?1 AND language = ?2"),
            (project_id, language),
        )
        .await?;
    }
    Ok(())
}

impl PreciseWriter {
    /// Queues one document: its path, the content hash the file had when the run started,
    /// and its occurrences. Written in batches of documents.
    pub async fn add_document(
        &mut self,
        path: String,
        content_hash: String,
        occurrences: Vec<PreciseOccurrenceRow>,
    ) -> Result<()> {
        self.pending.push((path, content_hash, occurrences));
        if self.pending.len() >= DOCUMENTS_PER_COMMIT {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<()> {
        let docs = std::mem::take(&mut self.pending);
        if docs.is_empty() {
            return Ok(());
        }
        let conn = self.conn.clone();
        in_transaction(&conn, async |conn| {
            for (path, hash, occs) in &docs {
                self.write_document(conn, path, hash, occs).await?;
            }
            Ok(())
        })
        .await
    }

    async fn write_document(
        &mut self,
        conn: &Connection,
        path: &str,
        hash: &str,
        occs: &[PreciseOccurrenceRow],
    ) -> Result<()> {
        let file_id = self.next_file;
        self.next_file += 1;
        conn.execute(
            "INSERT INTO precise_file (id, project_id, language, path, content_hash) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            (file_id, self.project_id, self.language.as_str(), path, hash),
        )
        .await?;
        let mut new_symbols: Vec<Value> = Vec::new();
        let mut ids = RowIds::after(file_id, None)?;
        let mut values: Vec<Value> = Vec::with_capacity(OCCURRENCE_COLUMNS * ROWS_PER_INSERT);
        let mut packed: Vec<PackedHit> = Vec::with_capacity(occs.len());
        for o in occs {
            let symbol_id = match self.symbols.get(&o.symbol) {
                Some(&id) => id,
                None => {
                    let id = self.next_symbol;
                    self.next_symbol += 1;
                    self.symbols.insert(o.symbol.clone(), id);
                    new_symbols.extend([
                        Value::Integer(id),
                        Value::Integer(self.project_id),
                        Value::Text(self.language.clone()),
                        Value::Text(o.symbol.clone()),
                    ]);
                    id
                }
            };
            packed.push((symbol_id, o.line, o.column, o.roles));
            let (es, ee) = match o.enclosing {
                Some((s, e)) => (Value::Integer(s.into()), Value::Integer(e.into())),
                None => (Value::Null, Value::Null),
            };
            values.extend([
                Value::Integer(ids.take()?),
                Value::Integer(self.project_id),
                Value::Integer(symbol_id),
                Value::Integer(o.line.into()),
                Value::Integer(o.column.into()),
                Value::Integer(o.end_line.into()),
                Value::Integer(o.end_column.into()),
                Value::Integer(o.roles.into()),
                es,
                ee,
            ]);
        }
        insert_rows(
            conn,
            "INSERT OR FAIL INTO precise_symbol (id, project_id, language, symbol) VALUES ",
            4,
            new_symbols,
        )
        .await?;
        insert_rows(
            conn,
            "INSERT OR FAIL INTO precise_occurrence (id, project_id, symbol_id, line, col, end_line, \
             end_col, roles, enclosing_start, enclosing_end) VALUES ",
            OCCURRENCE_COLUMNS,
            values,
        )
        .await?;
        conn.execute(
            "INSERT INTO precise_packed (file_id, project_id, language, hits) VALUES (?1, ?2, ?3, ?4)",
            (
                file_id,
                self.project_id,
                self.language.as_str(),
                Value::Blob(crate::record::encode(PACKED_LAYOUT, &packed)?),
            ),
        )
        .await?;
        self.files += 1;
        self.occurrences += occs.len() as i64;
        Ok(())
    }

    /// Writes what is queued and marks the run complete, with the time and memory the
    /// run row given to [`Db::precise_begin`] carries.
    pub async fn finish(mut self) -> Result<PreciseRunRow> {
        self.flush().await?;
        let (duration_ms, peak_rss_kb) = (self.run.duration_ms, self.run.peak_rss_kb);
        let finished_at = crate::now_rfc3339();
        self.conn
            .execute(
                "UPDATE precise_run SET finished_at = ?1, duration_ms = ?2, peak_rss_kb = ?3, \
                 files = ?4, occurrences = ?5, complete = 1 WHERE project_id = ?6 AND language = ?7",
                (
                    finished_at.as_str(),
                    duration_ms.map_or(Value::Null, Value::Integer),
                    peak_rss_kb.map_or(Value::Null, Value::Integer),
                    self.files,
                    self.occurrences,
                    self.project_id,
                    self.language.as_str(),
                ),
            )
            .await?;
        Ok(PreciseRunRow {
            finished_at: Some(finished_at),
            duration_ms,
            peak_rss_kb,
            files: self.files,
            occurrences: self.occurrences,
            complete: true,
            ..self.run
        })
    }
}

/// Inserts `values` (rows of `columns` each) `ROWS_PER_INSERT` rows per statement.
/// `head` says `INSERT OR FAIL`, as `files::RowInserter`'s do (no statement journal; the
/// enclosing transaction is what an error rolls back).
async fn insert_rows(
    conn: &Connection,
    head: &str,
    columns: usize,
    values: Vec<Value>,
) -> Result<()> {
    let row = format!("({})", vec!["?"; columns].join(", "));
    let mut full: Option<turso::Statement> = None;
    for chunk in values.chunks(columns * ROWS_PER_INSERT) {
        let rows = chunk.len() / columns;
        if rows == ROWS_PER_INSERT {
            if full.is_none() {
                full = Some(
                    conn.prepare(&format!("{head}{}", vec![row.as_str(); rows].join(", ")))
                        .await?,
                );
            }
            if let Some(stmt) = full.as_mut() {
                stmt.execute(chunk.to_vec()).await?;
            }
        } else {
            conn.execute(
                &format!("{head}{}", vec![row.as_str(); rows].join(", ")),
                chunk.to_vec(),
            )
            .await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(language: &str) -> PreciseRunRow {
        PreciseRunRow {
            language: language.into(),
            tool: "rust-analyzer".into(),
            version: "1.95.0".into(),
            source: "run".into(),
            finished_at: None,
            duration_ms: None,
            peak_rss_kb: None,
            files: 0,
            occurrences: 0,
            complete: false,
        }
    }

    fn occ(symbol: &str, line: u32, column: u32, roles: i32) -> PreciseOccurrenceRow {
        PreciseOccurrenceRow {
            symbol: symbol.into(),
            line,
            column,
            end_line: line,
            end_column: column + 3,
            roles,
            enclosing: None,
        }
    }

    #[tokio::test]
    async fn the_last_attempt_is_kept_replaced_and_dropped_by_the_next_stored_run() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("i.db")).await.unwrap();
        let p = db.register_project("/p", None).await.unwrap();
        assert_eq!(db.precise_attempt(p.id, "rust").await.unwrap(), None);
        let failed = PreciseAttempt {
            inputs: "d1".into(),
            failure: Some("more than one project".into()),
            at_unix: 100,
        };
        db.record_precise_attempt(p.id, "rust", &failed)
            .await
            .unwrap();
        assert_eq!(
            db.precise_attempt(p.id, "rust").await.unwrap(),
            Some(failed)
        );
        assert_eq!(db.precise_attempt(p.id, "python").await.unwrap(), None);
        let stored = PreciseAttempt {
            inputs: "d2".into(),
            failure: None,
            at_unix: 200,
        };
        db.record_precise_attempt(p.id, "rust", &stored)
            .await
            .unwrap();
        assert_eq!(
            db.precise_attempt(p.id, "rust").await.unwrap(),
            Some(stored.clone())
        );
        // A run (or an import) being stored replaces what the last attempt said.
        db.precise_begin(p.id, run("rust")).await.unwrap();
        assert_eq!(db.precise_attempt(p.id, "rust").await.unwrap(), None);
        db.record_precise_attempt(p.id, "rust", &stored)
            .await
            .unwrap();
        db.delete_project(p.id).await.unwrap();
        assert_eq!(db.precise_attempt(p.id, "rust").await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_run_is_stored_read_back_and_replaced_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("i.db")).await.unwrap();
        let p = db.register_project("/p", None).await.unwrap();
        let first = PreciseRunRow {
            duration_ms: Some(1200),
            peak_rss_kb: Some(5000),
            ..run("rust")
        };
        let mut w = db.precise_begin(p.id, first).await.unwrap();
        assert!(!db.precise_runs(p.id).await.unwrap()[0].complete);
        w.add_document(
            "src/a.rs".into(),
            "h1".into(),
            vec![occ("s f().", 3, 8, 1), occ("s g().", 5, 1, 0)],
        )
        .await
        .unwrap();
        w.add_document("src/b.rs".into(), "h2".into(), vec![occ("s f().", 9, 2, 0)])
            .await
            .unwrap();
        let done = w.finish().await.unwrap();
        assert_eq!((done.files, done.occurrences, done.complete), (2, 3, true));
        assert_eq!(db.precise_runs(p.id).await.unwrap(), [done]);

        let files = db.precise_files(p.id).await.unwrap();
        let a = &files["src/a.rs"];
        assert_eq!(a.content_hash, "h1");
        let defs = db.precise_in_file(a.id, 1, 10, true).await.unwrap();
        assert_eq!(defs.len(), 1);
        assert_eq!(
            (defs[0].symbol.as_str(), defs[0].line, defs[0].column),
            ("s f().", 3, 8)
        );
        let all = db.precise_occurrences_of(defs[0].symbol_id).await.unwrap();
        let b = files["src/b.rs"].id;
        assert_eq!(
            all.iter().map(|h| (h.file_id, h.line)).collect::<Vec<_>>(),
            [(a.id, 3), (b, 9)]
        );
        // Every occurrence of the files, in id order, or none past the bound.
        let held = db.precise_occurrences_in(&[a.id, b], 3).await.unwrap();
        let held_once = held.clone();
        assert_eq!(
            held.unwrap()
                .iter()
                .map(|h| (h.file_id, h.line, h.symbol_id == defs[0].symbol_id))
                .collect::<Vec<_>>(),
            [(a.id, 3, true), (a.id, 5, false), (b, 9, true)]
        );
        assert!(
            db.precise_occurrences_in(&[a.id, b], 2)
                .await
                .unwrap()
                .is_none()
        );
        // Read from each file's record; a run stored before the records (none for b.rs)
        // or a record of another layout (a.rs) reads the rows, with the same answer.
        assert_eq!(packed(&db).await, 2);
        let conn = db.connect().await.unwrap();
        conn.execute("DELETE FROM precise_packed WHERE file_id = ?1", (b,))
            .await
            .unwrap();
        let other = crate::record::encode(PACKED_LAYOUT + 1, &[(1i64, 3u32, 8u32, 1i32)]).unwrap();
        conn.execute(
            "UPDATE precise_packed SET hits = ?1 WHERE file_id = ?2",
            (Value::Blob(other), a.id),
        )
        .await
        .unwrap();
        assert_eq!(
            db.precise_occurrences_in(&[a.id, b], 3).await.unwrap(),
            held_once,
        );

        // The next run of the language replaces every row of the last one.
        let mut w = db.precise_begin(p.id, run("rust")).await.unwrap();
        w.add_document("src/a.rs".into(), "h3".into(), vec![occ("s f().", 4, 8, 1)])
            .await
            .unwrap();
        w.finish().await.unwrap();
        let files = db.precise_files(p.id).await.unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files["src/a.rs"].content_hash, "h3");
        assert_eq!(packed(&db).await, 1, "the last run's records are gone");
        let defs = db
            .precise_in_file(files["src/a.rs"].id, 1, 10, true)
            .await
            .unwrap();
        assert_eq!(
            db.precise_occurrences_of(defs[0].symbol_id)
                .await
                .unwrap()
                .len(),
            1
        );

        db.delete_project(p.id).await.unwrap();
        assert!(db.precise_runs(p.id).await.unwrap().is_empty());
        assert_eq!(packed(&db).await, 0);
    }

    async fn packed(db: &Db) -> i64 {
        let conn = db.connect().await.unwrap();
        let mut rows = conn
            .query("SELECT count(*) FROM precise_packed", ())
            .await
            .unwrap();
        int(col(&rows.next().await.unwrap().unwrap(), 0).unwrap()).unwrap()
    }
}
