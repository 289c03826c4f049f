//! The database schema. One statement per entry; applied in order at open.
//!
//! Paths are stored relative to the project root with `/` separators; lines 1-based.

/// Bumped when what the indexer stores per file changes; a database written by an older
/// version forgets its file hashes at open, so the next run re-extracts every file.
/// 2: graph edges. 3: `Self` inside an impl is stored under the impl's type name.
/// 4: per-file rows are numbered within their file (`file_rows`); older rows are not,
/// so a database from before 4 loses its stored index at open and is indexed again.
/// 5: the precise tables (`precise.rs`, ADR 0018); added empty, nothing is re-extracted.
/// 6: Python and TypeScript imports and module-qualified uses are references (ADR 0019).
/// 7: an attribute inside a Rust token tree (a `macro_rules!` body) is read as a parsed
/// attribute is: `cfg(feature = "x")` keys are no references (ADR 0031); a Python
/// module-level variable qualifies nothing; a TypeScript `C.prototype.m` is C's `m`.
/// 8: a reference keeps its enclosing name's id (`ref_site.scope_id`, the names in
/// `ref_scope`: `scopes`); the old `ref_site` table is dropped at open and the database
/// indexed again from scratch.
/// 9: a source file keeps how many symbol and reference rows it has
/// (`source_file.symbol_count`, `ref_count`), so a project's counts are a sum over its
/// files instead of a scan of every row; added at open (and, until 10, filled in).
/// 10: a reference's kind is stored as a code (`ref_kinds`) and the name index holds it
/// (`ref_site_by_name_file_kind`, ADR 0042); the old `ref_site` is dropped at open and
/// the database indexed again from scratch, as for 8.
/// 11: a scope's id keeps the names of one prefix side by side (`scopes::scope_id`,
/// ADR 0051); every stored id changes, so the references go and the database is indexed
/// again from scratch, as for 10.
pub const SCHEMA_VERSION: i64 = 11;

/// The last version that changed what the indexer extracts per file: a database from
/// before it forgets its file hashes at open (a later version that only adds tables
/// leaves them).
pub const EXTRACTION_VERSION: i64 = 8;

/// The last version whose per-file tables an older database cannot keep: opening one from
/// before it drops them (`Db::migrate_in`) and indexes every project again.
pub const LAYOUT_VERSION: i64 = 11;

/// Run before [`STATEMENTS`] on a database from before [`LAYOUT_VERSION`]: its
/// `ref_site` has the old columns, which the new indexes would not find.
pub const OLD_LAYOUT_DROPS: &[&str] = &[
    "DROP INDEX IF EXISTS ref_site_calls_by_caller",
    "DROP INDEX IF EXISTS ref_site_by_name_file",
    "DROP INDEX IF EXISTS ref_site_by_name_file_kind",
    "DROP TABLE IF EXISTS ref_site",
];

/// The version that gave each source file its row counts.
pub const FILE_ROW_COUNTS_VERSION: i64 = 9;

/// Run on a database from before 9, whose `source_file` lacks the per-file row counts
/// (its rows are gone: 9 is older than [`LAYOUT_VERSION`]).
pub const ADD_FILE_ROW_COUNTS: &[&str] = &[
    "ALTER TABLE source_file ADD COLUMN symbol_count INTEGER",
    "ALTER TABLE source_file ADD COLUMN ref_count INTEGER",
];

/// Definitions by name (`inspect_symbol`, `resolve_definition`, attribution).
pub(crate) const SYMBOL_BY_NAME: &str =
    "CREATE INDEX IF NOT EXISTS symbol_by_name ON symbol (project_id, name)";

/// References by name, covering "which files use this name, and how many of its calls
/// each holds" (see below).
pub(crate) const REF_SITE_BY_NAME_FILE: &str = "CREATE INDEX IF NOT EXISTS ref_site_by_name_file_kind \
     ON ref_site (project_id, name, file_id, kind)";

pub const STATEMENTS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    // A registered workspace. `index_complete` is 0 while a run is writing: a project
    // found with 0 at start-up was interrupted and must be finished before it answers.
    "CREATE TABLE IF NOT EXISTS project (
        id INTEGER PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        root TEXT NOT NULL UNIQUE,
        crate_name TEXT,
        registered_at TEXT NOT NULL,
        indexed_at TEXT,
        index_complete INTEGER NOT NULL DEFAULT 0,
        last_index_ms INTEGER,
        last_error TEXT
    )",
    "CREATE TABLE IF NOT EXISTS source_file (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        path TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        language TEXT NOT NULL,
        parse_errors INTEGER NOT NULL,
        line_count INTEGER NOT NULL,
        symbol_count INTEGER,
        ref_count INTEGER
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS source_file_by_path ON source_file (project_id, path)",
    "CREATE TABLE IF NOT EXISTS symbol (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        file_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        qualified_name TEXT NOT NULL,
        owner TEXT,
        signature TEXT NOT NULL,
        docstring TEXT,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        name_line INTEGER NOT NULL,
        name_column INTEGER NOT NULL
    )",
    SYMBOL_BY_NAME,
    // No index on `file_id` here or on the other per-file tables: a file's rows are a
    // range of row ids (`file_rows`).
    "DROP INDEX IF EXISTS symbol_by_file",
    "CREATE TABLE IF NOT EXISTS ref_site (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        file_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        kind INTEGER NOT NULL,
        line INTEGER NOT NULL,
        col INTEGER NOT NULL,
        qualifier TEXT,
        scope_id INTEGER NOT NULL
    )",
    // The names references are written in, each once per project (`scopes`); `id` is
    // `scope_id(project_id, qualified_name)`.
    "CREATE TABLE IF NOT EXISTS ref_scope (
        id INTEGER PRIMARY KEY,
        project_id INTEGER NOT NULL,
        qualified_name TEXT NOT NULL
    )",
    // Covers "which files use this name" without reading the table (tokio, a name with
    // 654 usages: 0.2 ms instead of 0.7), and with `kind` (a code, `ref_kinds`) how many
    // of them are calls (the call edges' window, ADR 0042). It replaced
    // `ref_site_by_name (project_id, name)` and then `ref_site_by_name_file (project_id,
    // name, file_id)`, dropped here from databases older than the layout they lived in.
    "DROP INDEX IF EXISTS ref_site_by_name",
    "DROP INDEX IF EXISTS ref_site_by_name_file",
    REF_SITE_BY_NAME_FILE,
    "DROP INDEX IF EXISTS ref_site_by_file",
];

/// Every statement applied at open, in order: the core tables above, then each area's
/// own (kept beside the queries that use them).
pub fn all_statements() -> impl Iterator<Item = &'static str> {
    STATEMENTS
        .iter()
        .chain(crate::edges::SCHEMA)
        .chain(crate::deps::SCHEMA)
        .chain(crate::decisions::SCHEMA)
        .chain(crate::telemetry::SCHEMA)
        .chain(crate::precise::SCHEMA)
        .chain(crate::dense::SCHEMA)
        .copied()
}
