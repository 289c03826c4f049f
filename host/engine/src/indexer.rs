//! Indexing a project: walk, hash, parse in parallel, write in batches.
//!
//! Unchanged files (same content hash as stored) are skipped; files gone from disk are
//! removed. The project is marked incomplete while a run writes and complete when it
//! finishes, so an interrupted run is visible as such.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use scryer_db::{Db, EdgeRow, FileWrite, ProjectRow, RefRow, SymbolRow};

use crate::file_limits::{MAX_SOURCE_BYTES, MAX_TEXT_BYTES};
use crate::lang::{self, Language};
use crate::model::FileSymbols;
use crate::safe_fs::{Refused, Root};

/// Files larger than this are not parsed (see [`crate::file_limits`]).
pub const MAX_FILE_BYTES: u64 = MAX_SOURCE_BYTES;
/// Files written per transaction at most (and parsed files waiting for the writer).
const WRITE_BATCH: usize = 256;
/// A bulk load (ADR 0040) commits at least this many rows (definitions and references)
/// at a time. Every commit writes each page it changed to the WAL and, past turso's
/// checkpoint threshold, into the file again; the name index takes its rows at random
/// places, so a commit of a few files rewrites hundreds of pages for a few rows each.
/// Committing whatever was ready (322 transactions on the monorepo) wrote 31-33 GB
/// for a 711 MB database; at 100,000 rows 12.5-13.2 GB, and the run took 3-6 % less
/// (docs/learnings/scale.md, stop 39).
const BULK_COMMIT_ROWS: usize = 100_000;
/// Parsed files a bulk load's writer may fall behind by: while it commits 100,000 rows
/// the parse goes on. With the queue of 256 it stopped, and large commits lost more
/// than they saved (200,000 rows a commit: 91 s against 75 s). Bounded for memory:
/// ~20 MB more at the peak on the monorepo.
const BULK_QUEUE_FILES: usize = 1_024;

/// Progress of a run, shared with status queries.
#[derive(Debug, Default)]
pub struct Progress {
    pub done: AtomicU32,
    pub total: AtomicU32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexReport {
    /// Source files found.
    pub files_seen: usize,
    /// Files (re)parsed because they were new or changed.
    pub files_parsed: usize,
    pub files_removed: usize,
    pub parse_failures: usize,
    pub symbols_written: usize,
    pub references_written: usize,
    pub elapsed_ms: u64,
    /// (size, mtime) of each file whose content the index now holds, taken just before
    /// it was read: the freshness check trusts these instead of reading the file again.
    pub stamps: Vec<(String, FileStamp)>,
    /// What the run found but did not index.
    pub skipped: Skipped,
    /// Names used at least [`scryer_db::USES_RECORD_MIN_ROWS`] times in the files this
    /// run parsed: candidates for a record of their usages per file (ADR 0057).
    pub many_usages: Vec<String>,
}

/// Paths a run or refresh found and left out of the index, for the index facts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Symlinks (to a file or a directory), or paths through one, resolving outside the
    /// root.
    pub links_leaving_root: Vec<String>,
    /// Source files above [`MAX_SOURCE_BYTES`].
    pub too_large: Vec<String>,
}

impl Skipped {
    fn extend(&mut self, other: Skipped) {
        self.links_leaving_root.extend(other.links_leaving_root);
        self.too_large.extend(other.too_large);
    }

    /// Records why `rel` was not read, when that is worth a fact.
    fn note(&mut self, rel: &str, why: &Refused) {
        match why {
            Refused::LeavesRoot(_) => self.links_leaving_root.push(rel.to_string()),
            Refused::TooLarge(_) => self.too_large.push(rel.to_string()),
            _ => {}
        }
    }

    fn sort(&mut self) {
        self.links_leaving_root.sort();
        self.links_leaving_root.dedup();
        self.too_large.sort();
        self.too_large.dedup();
    }
}

/// A source file found by the walk.
#[derive(Clone, Debug)]
struct SourceFile {
    abs: PathBuf,
    rel: String,
    /// The module path of the file (crate or project name first).
    module_path: Vec<String>,
    language: &'static dyn Language,
}

/// Skipped, even when no ignore file says so, unless they stand under a `src` directory
/// (where they are ordinary modules, e.g. Rust's `src/build/`): vendored code and build
/// output by the names most build tools give them (`target` is cargo's). Each language
/// adds the directories its own tools fill ([`Language::skipped_dirs`]).
const SKIPPED_OUTSIDE_SRC: &[&str] = &["vendor", "dist", "build", "target"];

/// Whether the walk skips the directory `rel` (relative to the project root).
pub fn skipped_dir(rel: &Path) -> bool {
    let Some(name) = rel.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if lang::is_skipped_dir_name(name) {
        return true;
    }
    SKIPPED_OUTSIDE_SRC.contains(&name)
        && !rel
            .parent()
            .is_some_and(|p| p.components().any(|c| c.as_os_str() == "src"))
}

/// The project's own name, the package of files outside any Rust crate.
fn project_name(root: &Path) -> String {
    root.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("crate")
        .replace('-', "_")
}

/// The crate name declared by a `Cargo.toml` (`[package] name`), `-` made `_`.
pub fn crate_name_of(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if in_package && let Some(rest) = line.strip_prefix("name") {
            let rest = rest.trim_start();
            if let Some(value) = rest.strip_prefix('=') {
                let v = value.trim().trim_matches(|c| c == '"' || c == '\'');
                if !v.is_empty() {
                    return Some(v.replace('-', "_"));
                }
            }
        }
    }
    None
}

/// The name a Go module is known by: the last segment of the `module` path in `go.mod`
/// (a major-version segment `v2`, `v3`.. skipped), `-` and `.` made `_`.
pub fn go_module_name_of(go_mod: &str) -> Option<String> {
    let line = go_mod
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("module ") || l.starts_with("module\t"))?;
    let path = line["module".len()..]
        .split("//")
        .next()?
        .trim()
        .trim_matches(|c| c == '"' || c == '`');
    let mut segments = path.rsplit('/').filter(|s| !s.is_empty());
    let mut last = segments.next()?;
    let is_major = |s: &str| {
        s.strip_prefix('v')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if is_major(last)
        && let Some(prev) = segments.next()
    {
        last = prev;
    }
    Some(last.replace(['-', '.'], "_"))
}

/// Walks `root` honouring `.gitignore` (and `.ignore`), skipping hidden directories and
/// dependency/build directories ([`skipped_dir`]), and returns the source files of every
/// supported language with their module paths.
fn walk(root: &Root) -> Result<(Vec<SourceFile>, Skipped)> {
    let mut source_files = Vec::new();
    let mut skipped = Skipped::default();
    // (manifest file name, its directory, the package name it declares)
    let mut packages: Vec<(&'static str, PathBuf, String)> = Vec::new();
    let root_path = root.path();
    for entry in crate::walk::walker(root_path, skipped_dir) {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                tracing::debug!(error = %e, "skipping unreadable entry");
                continue;
            }
        };
        let path = entry.path();
        if entry.file_type().is_some_and(|t| t.is_symlink()) {
            // Never followed; counted when it leads out of the root.
            if let Err(why) = root.check(path) {
                skipped.note(&relative_path(root_path, path)?, &why);
            }
            continue;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Some(file_name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Some(manifest) = lang::manifest_named(file_name) {
            if let Some(name) = read_manifest(root, path, manifest.package_name) {
                packages.push((
                    manifest.file_name,
                    path.parent().unwrap_or(root_path).to_path_buf(),
                    name,
                ));
            }
        } else if let Some(language) = lang::language_for(file_name) {
            match entry.metadata() {
                Ok(m) if m.len() > MAX_FILE_BYTES => {
                    skipped.too_large.push(relative_path(root_path, path)?)
                }
                Ok(_) => source_files.push((path.to_path_buf(), language)),
                Err(_) => {}
            }
        }
    }
    let root = root_path;
    // The innermost package directory holding a file decides its module path.
    packages.sort_by_key(|(_, dir, _)| std::cmp::Reverse(dir.components().count()));
    let fallback = project_name(root);
    let mut out = Vec::with_capacity(source_files.len());
    for (abs, language) in source_files {
        let rel = relative_path(root, &abs)?;
        let module_path = if let Some(manifest) = language.manifest() {
            let (package_dir, package) = packages
                .iter()
                .find(|(m, dir, _)| *m == manifest.file_name && abs.starts_with(dir))
                .map(|(_, d, n)| (d.as_path(), n.clone()))
                .unwrap_or((root, fallback.clone()));
            let in_package = relative_path(package_dir, &abs)?;
            language.module_path(&package, &in_package)
        } else {
            language.module_path(&fallback, &rel)
        };
        out.push(SourceFile {
            abs,
            rel,
            module_path,
            language,
        });
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok((out, skipped))
}

/// The package name a manifest inside `root` declares, read through the gate.
fn read_manifest(root: &Root, path: &Path, parse: fn(&str) -> Option<String>) -> Option<String> {
    let bytes = root.read(path, MAX_TEXT_BYTES).ok()?;
    parse(&String::from_utf8_lossy(&bytes))
}

/// `path` relative to `root`, with `/` separators.
pub fn relative_path(root: &Path, path: &Path) -> Result<String> {
    let rel = path
        .strip_prefix(root)
        .with_context(|| format!("{} is not inside {}", path.display(), root.display()))?;
    Ok(rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/"))
}

/// Parses one file into the rows stored for it.
/// `edited`: the file changed since it was indexed (a refresh), not a run over the tree.
fn parse_file(file: &SourceFile, bytes: &[u8], hash: String, edited: bool) -> FileWrite {
    let source = String::from_utf8_lossy(bytes);
    let extracted: FileSymbols =
        crate::lang::extract_file(file.language, &source, &file.module_path, &file.rel, edited);
    // The extractor's own edges; those at call sites are the call references, read as
    // edges by the database (ADR 0013).
    let edges = extracted
        .edges
        .iter()
        .cloned()
        .map(|e| EdgeRow {
            kind: e.kind.as_str().to_string(),
            from_symbol: e.from_symbol,
            to_name: e.to_name,
            to_qualifier: e.to_qualifier,
            site_kind: e.site_kind.as_str().to_string(),
            line: e.line,
            column: e.column,
            file_path: String::new(),
        })
        .collect();
    FileWrite {
        edges,
        path: file.rel.clone(),
        content_hash: hash,
        size: bytes.len() as i64,
        language: file.language.name().into(),
        parse_errors: extracted.has_parse_errors,
        line_count: source.lines().count() as i64,
        symbols: extracted
            .definitions
            .into_iter()
            .map(|d| SymbolRow {
                name: d.name,
                kind: d.kind.as_str().to_string(),
                qualified_name: d.qualified_name,
                owner: d.owner,
                signature: d.signature,
                docstring: d.docstring,
                start_line: d.start_line,
                end_line: d.end_line,
                name_line: d.name_line,
                name_column: d.name_column,
                file_path: String::new(),
            })
            .collect(),
        references: extracted
            .references
            .into_iter()
            .map(|r| RefRow {
                name: r.name,
                kind: r.kind.as_str().to_string(),
                line: r.line,
                column: r.column,
                qualifier: r.qualifier,
                enclosing_symbol: r.enclosing_symbol,
                file_path: String::new(),
            })
            .collect(),
    }
}

pub fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// Reads, hashes and (when changed) parses `files` on `workers` threads, sending each
/// parsed file to `out` as soon as it is ready. Stops early when `out` is closed (the
/// writer failed).
fn parse_changed(
    root: &Root,
    files: &[SourceFile],
    stored: &HashMap<String, String>,
    progress: &Progress,
    extent: Extent,
    workers: usize,
    out: tokio::sync::mpsc::Sender<FileWrite>,
) -> (Vec<(String, FileStamp)>, Skipped, Vec<String>) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers.clamp(1, files.len().max(1)))
            .map(|_| {
            let out = out.clone();
            let next = &next;
            scope.spawn(move || {
                let mut stamps = Vec::new();
                let mut skipped = Skipped::default();
                // Files the walk listed but the read refused (replaced since).
                let mut refused = Vec::new();
                loop {
                    if extent == Extent::DefinitionsOnly {
                        crate::foreground::yield_to_calls();
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(i) else { break };
                    // Taken before the read: if the file changes after it, its stamp no
                    // longer matches and the next freshness check reads it again.
                    let stamp = file_stamp(&file.abs);
                    let read = root.read(&file.abs, MAX_FILE_BYTES);
                    if let Err(why) = &read {
                        skipped.note(&file.rel, why);
                        refused.push(file.rel.clone());
                    }
                    if let Ok(bytes) = read {
                        let hash = content_hash(&bytes);
                        if stored.get(&file.rel) == Some(&hash) {
                            stamps.extend(stamp.map(|s| (file.rel.clone(), s)));
                        } else {
                            // An extractor bug costs that one file (retried by the next
                            // run, its hash unstored), not the run.
                            let parsed = std::panic::catch_unwind(AssertUnwindSafe(|| {
                                parse_file(file, &bytes, hash, false)
                            }));
                            match parsed {
                                Ok(mut write) => {
                                    if extent == Extent::DefinitionsOnly {
                                        // Dropped file by file: all of windows-sys holds
                                        // over a million references.
                                        write.references = Vec::new();
                                        write.edges = Vec::new();
                                    }
                                    if out.blocking_send(write).is_err() {
                                        break;
                                    }
                                    stamps.extend(stamp.map(|s| (file.rel.clone(), s)));
                                }
                                Err(_) => {
                                    tracing::warn!(file = %file.rel, "extraction panicked; file skipped")
                                }
                            }
                        }
                    }
                    progress.done.fetch_add(1, Ordering::Relaxed);
                }
                (stamps, skipped, refused)
            })
            })
            .collect();
        let mut all = (Vec::new(), Skipped::default(), Vec::new());
        for (stamps, skipped, refused) in handles.into_iter().filter_map(|h| h.join().ok()) {
            all.0.extend(stamps);
            all.1.extend(skipped);
            all.2.extend(refused);
        }
        all
    })
}

/// A file's size and modification time, as the freshness check compares them.
pub type FileStamp = (u64, Option<std::time::SystemTime>);

/// Taken with `lstat`: a file replaced by a link gets the link's stamp, never its target's.
pub fn file_stamp(path: &Path) -> Option<FileStamp> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.len(), m.modified().ok()))
}

/// Threads that parse while the one writer stores what they produce. The writer is the
/// slower side of a full run (turso inserts and index upkeep cost more than parsing),
/// so it gets a core of its own. A definitions-only run (a dependency crate, in the
/// background) parses on one thread: on tokio's 160 locked crates, two threads peaked
/// at 315 MB RSS and one at 232 MB, for 35 s of indexing instead of 26.
fn parse_workers(extent: Extent) -> usize {
    match extent {
        Extent::Full => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .saturating_sub(1)
            .max(1),
        Extent::DefinitionsOnly => 1,
    }
}

/// Indexes (or re-indexes) a project. Returns what changed.
pub async fn index_project(
    db: &Db,
    project: &ProjectRow,
    progress: Arc<Progress>,
) -> Result<IndexReport> {
    index_project_as(db, project, progress, Extent::Full).await
}

/// How much of a project an index run keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// Every source file; definitions, references and edges.
    Full,
    /// A dependency crate: the definitions of its library sources only. Its tests,
    /// benches and examples define nothing a user calls, and no tool reads usages inside
    /// a dependency; dropping them makes a crate's index a fraction of the size.
    DefinitionsOnly,
}

/// Top-level directories of a crate that hold no library code.
const NON_LIBRARY_DIRS: &[&str] = &["tests", "benches", "examples"];

pub async fn index_project_as(
    db: &Db,
    project: &ProjectRow,
    progress: Arc<Progress>,
    extent: Extent,
) -> Result<IndexReport> {
    let started = Instant::now();
    let root = PathBuf::from(&project.root);
    // The names whose usages have a record now: the run's first write drops the
    // records, and the run's end writes them again (with the names it counted).
    let recorded = db.uses_record_names(project.id).await.unwrap_or_default();
    db.start_index_run(project.id).await?;
    let result = run(db, project, &root, progress, extent).await;
    if let Ok(report) = &result
        && extent == Extent::Full
    {
        write_records(db, project, report, recorded).await;
    }
    let elapsed_ms = started.elapsed().as_millis() as u64;
    match result {
        Ok(mut report) => {
            report.elapsed_ms = elapsed_ms;
            db.finish_index_run(project.id, elapsed_ms as i64, None)
                .await?;
            Ok(report)
        }
        Err(e) => {
            let msg = explain_failure(&format!("{e:#}"));
            let _ = db
                .finish_index_run(project.id, elapsed_ms as i64, Some(&msg))
                .await;
            Err(e)
        }
    }
}

/// Writes the records of the names the project defines thousands of times (ADR 0048).
/// They only make reads faster: a failure is logged, and those names are read row by row.
/// A run that wrote nothing leaves records that are there as they are: no write dropped
/// them, so they still hold the rows (the monorepo's took 398 ms to write).
///
/// Besides the names defined thousands of times, the names used at least
/// [`scryer_db::USES_RECORD_MIN_ROWS`] times get a record of their usages: those counted in
/// the files this run wrote, and those that had one before it (their usages may be in
/// files this run did not parse).
async fn write_records(
    db: &Db,
    project: &ProjectRow,
    report: &IndexReport,
    mut recorded: Vec<String>,
) {
    let wrote = report.files_parsed > 0 || report.files_removed > 0;
    if !wrote && db.has_records(project.id).await.unwrap_or(false) {
        return;
    }
    let started = Instant::now();
    recorded.extend(report.many_usages.iter().cloned());
    recorded.sort();
    recorded.dedup();
    match db
        .write_records(project.id, scryer_db::DENSE_MIN_DEFINITIONS, &recorded)
        .await
    {
        Ok(names) => tracing::info!(
            project = %project.slug,
            names,
            ms = started.elapsed().as_millis() as u64,
            "dense definitions written"
        ),
        Err(e) => tracing::warn!(
            project = %project.slug,
            error = %format!("{e:#}"),
            "dense definitions not written; those names are read row by row"
        ),
    }
}

/// An index run's error as the status shows it: a full disk is said in words with what to
/// do, whichever layer (turso, the file system) reported it.
fn explain_failure(msg: &str) -> String {
    let lower = msg.to_lowercase();
    if lower.contains("no storage space") || lower.contains("no space left") {
        format!("the disk is full ({msg}); free some space and run index_workspace again")
    } else {
        msg.to_string()
    }
}

async fn run(
    db: &Db,
    project: &ProjectRow,
    root: &Path,
    progress: Arc<Progress>,
    extent: Extent,
) -> Result<IndexReport> {
    let root = Root::new(root).with_context(|| format!("project root {}", root.display()))?;
    let walk_root = root.clone();
    let (mut files, walk_skipped) = tokio::task::spawn_blocking(move || walk(&walk_root)).await??;
    if extent == Extent::DefinitionsOnly {
        files.retain(|f| {
            let top = f.rel.split('/').next().unwrap_or("");
            !NON_LIBRARY_DIRS.contains(&top)
        });
    }
    progress.total.store(files.len() as u32, Ordering::Relaxed);
    progress.done.store(0, Ordering::Relaxed);
    let stored: HashMap<String, String> = db
        .files(project.id)
        .await?
        .into_iter()
        .map(|(path, f)| (path, f.content_hash))
        .collect();
    let seen: HashSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
    let removed: Vec<String> = stored
        .keys()
        .filter(|p| !seen.contains(p.as_str()))
        .cloned()
        .collect();

    let mut report = IndexReport {
        files_seen: files.len(),
        files_removed: removed.len(),
        ..IndexReport::default()
    };
    // A large project's first index writes its rows before building the name indexes
    // (ADR 0040); they are built on every way out of the loop.
    let stored_paths: HashSet<String> = stored.keys().cloned().collect();
    let bulk = extent == Extent::Full
        && stored_paths.is_empty()
        && db.begin_bulk_load(report.files_seen).await?;
    let commits = if bulk {
        Commits::bulk()
    } else {
        Commits::as_ready()
    };
    // Parse on worker threads and write as files arrive: the writer's transactions
    // overlap the parsing instead of waiting for all of it.
    // Bounded, so parsing never runs far ahead of a slower writer (memory).
    let (sender, mut parsed) = tokio::sync::mpsc::channel(commits.files);
    let workers = parse_workers(extent);
    let parsing = tokio::task::spawn_blocking(move || {
        parse_changed(&root, &files, &stored, &progress, extent, workers, sender)
    });
    let written = write_parsed(
        db,
        project.id,
        &mut parsed,
        &removed,
        extent,
        commits,
        &mut report,
    )
    .await;
    if bulk {
        let built = db.end_bulk_load().await;
        written?;
        built?;
    } else {
        written?;
    }
    let first_write = report.files_parsed == 0;
    let (stamps, read_skipped, refused) = parsing.await?;
    report.stamps = stamps;
    report.skipped = walk_skipped;
    report.skipped.extend(read_skipped);
    report.skipped.sort();
    if first_write && !removed.is_empty() {
        db.write_files(project.id, &[], &removed).await?;
    }
    // Listed by the walk, refused by the read (replaced by a link, a FIFO, grown past the
    // cap): what the index held for them is dropped.
    let dropped: Vec<String> = refused
        .into_iter()
        .filter(|r| stored_paths.contains(r))
        .collect();
    if !dropped.is_empty() {
        report.files_removed += dropped.len();
        db.write_files(project.id, &[], &dropped).await?;
    }
    Ok(report)
}

/// How a run's writer groups parsed files into transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Commits {
    /// Parsed files waiting for the writer, and files per transaction, at most.
    files: usize,
    /// Rows a transaction waits for before it commits (0: commits whatever is ready).
    min_rows: usize,
}

impl Commits {
    /// An edit's or a small project's run: whatever is ready, so each file's rows are
    /// in as soon as the writer gets to them.
    fn as_ready() -> Self {
        Commits {
            files: WRITE_BATCH,
            min_rows: 0,
        }
    }

    /// A large first index (nothing answers from it until it is done): few, large
    /// transactions ([`BULK_COMMIT_ROWS`]).
    fn bulk() -> Self {
        Commits {
            files: BULK_QUEUE_FILES,
            min_rows: BULK_COMMIT_ROWS,
        }
    }

    /// The next transaction's files: the first to arrive, whatever else is ready, and
    /// more as they come while fewer than `min_rows` rows are held. Empty once every
    /// file has been taken.
    async fn next(&self, parsed: &mut tokio::sync::mpsc::Receiver<FileWrite>) -> Vec<FileWrite> {
        let rows = |w: &FileWrite| w.symbols.len() + w.references.len();
        let mut writes = Vec::new();
        let mut held = 0;
        while writes.len() < self.files {
            let next = if writes.is_empty() || held < self.min_rows {
                parsed.recv().await
            } else {
                parsed.try_recv().ok()
            };
            let Some(w) = next else { break };
            held += rows(&w);
            writes.push(w);
        }
        writes
    }
}

/// Writes parsed files as they arrive, grouped into transactions by `commits`; `removed`
/// files go with the first.
async fn write_parsed(
    db: &Db,
    project_id: i64,
    parsed: &mut tokio::sync::mpsc::Receiver<FileWrite>,
    removed: &[String],
    extent: Extent,
    commits: Commits,
    report: &mut IndexReport,
) -> Result<()> {
    let mut first_write = true;
    // Each name's usages in the files this run writes: the names used often enough for a
    // usage record are chosen from it, without reading the name index back.
    // Counted on the writer's path for every reference of a cold index (6.5M on the
    // monorepo): hashed with foldhash, as the grammar's field names are.
    let mut tally: HashMap<String, u32, foldhash::fast::RandomState> = HashMap::default();
    loop {
        let writes = commits.next(parsed).await;
        if writes.is_empty() {
            break;
        }
        for r in writes.iter().flat_map(|w| &w.references) {
            match tally.get_mut(r.name.as_str()) {
                Some(n) => *n += 1,
                None => {
                    tally.insert(r.name.clone(), 1);
                }
            }
        }
        report.files_parsed += writes.len();
        report.parse_failures += writes.iter().filter(|w| w.parse_errors).count();
        report.symbols_written += writes.iter().map(|w| w.symbols.len()).sum::<usize>();
        report.references_written += writes.iter().map(|w| w.references.len()).sum::<usize>();
        let gone: &[String] = if first_write { removed } else { &[] };
        if extent == Extent::DefinitionsOnly {
            crate::foreground::yield_to_calls_async().await;
        }
        db.write_files(project_id, &writes, gone).await?;
        first_write = false;
    }
    report.many_usages = tally
        .into_iter()
        .filter(|(_, n)| *n as usize >= scryer_db::USES_RECORD_MIN_ROWS)
        .map(|(name, _)| name)
        .collect();
    report.many_usages.sort();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A parsed file of `rows` references.
    fn parsed(path: &str, rows: usize) -> FileWrite {
        let site = RefRow {
            name: "x".into(),
            kind: "call".into(),
            line: 1,
            column: 1,
            qualifier: None,
            enclosing_symbol: "demo::f".into(),
            file_path: String::new(),
        };
        FileWrite {
            path: path.into(),
            content_hash: "h".into(),
            size: 1,
            language: "rust".into(),
            parse_errors: false,
            line_count: 1,
            symbols: Vec::new(),
            references: vec![site; rows],
            edges: Vec::new(),
        }
    }

    fn paths(writes: &[FileWrite]) -> Vec<&str> {
        writes.iter().map(|w| w.path.as_str()).collect()
    }

    #[tokio::test]
    async fn a_bulk_commit_waits_for_its_rows_and_an_edit_takes_what_is_ready() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(16);
        // Whatever is ready, capped at `files`; never waiting for more.
        let ready = Commits {
            files: 2,
            min_rows: 0,
        };
        for p in ["a", "b", "c"] {
            tx.send(parsed(p, 4)).await.unwrap();
        }
        assert_eq!(paths(&ready.next(&mut rx).await), ["a", "b"]);
        assert_eq!(paths(&ready.next(&mut rx).await), ["c"]);
        // Waits for files still being parsed until it holds `min_rows`, then takes what
        // else is ready; the last transaction is whatever is left.
        let bulk = Commits {
            files: 8,
            min_rows: 10,
        };
        tx.send(parsed("d", 4)).await.unwrap();
        let late = tokio::spawn(async move {
            for p in ["e", "f", "g"] {
                tokio::task::yield_now().await;
                tx.send(parsed(p, 4)).await.unwrap();
            }
            tx.send(parsed("h", 1)).await.unwrap();
        });
        let first = bulk.next(&mut rx).await;
        assert!(first.len() >= 3, "{:?}", paths(&first));
        late.await.unwrap();
        let mut all = paths(&first).join("");
        loop {
            let w = bulk.next(&mut rx).await;
            if w.is_empty() {
                break;
            }
            all.push_str(&paths(&w).join(""));
        }
        assert_eq!(all, "defgh");
    }

    #[test]
    fn reads_the_package_name() {
        let toml = "[workspace]\nmembers = []\n\n[package]\nname = \"regex-automata\"\nversion = \"0.4\"\n[dependencies]\nname = \"x\"\n";
        assert_eq!(crate_name_of(toml).as_deref(), Some("regex_automata"));
        assert_eq!(crate_name_of("[workspace]\n"), None);
    }

    #[test]
    fn reads_the_go_module_name() {
        let name = |s: &str| go_module_name_of(s);
        assert_eq!(
            name("// c\nmodule github.com/acme/geo-tools\n\ngo 1.22\n").as_deref(),
            Some("geo_tools")
        );
        assert_eq!(
            name("module example.com/x/v2 // v2\n").as_deref(),
            Some("x")
        );
        assert_eq!(
            name("module \"gopkg.in/yaml.v3\"\n").as_deref(),
            Some("yaml_v3")
        );
        assert_eq!(name("module v2\n").as_deref(), Some("v2"));
        assert_eq!(name("go 1.22\n"), None);
    }
}

/// What [`refresh_files`] changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RefreshReport {
    /// Files re-parsed because their content changed, or added because they are new.
    pub updated: Vec<String>,
    /// Files dropped because they are gone from disk, or no longer a regular file
    /// inside the root (replaced by a link, a FIFO, grown past the cap).
    pub removed: Vec<String>,
    /// What was found and left out, for the index facts.
    pub skipped: Skipped,
    /// Paths checked and found to be neither a link leaving the root nor too large: a
    /// fact about them recorded earlier no longer holds.
    pub cleared: Vec<String>,
}

impl RefreshReport {
    pub fn is_empty(&self) -> bool {
        self.updated.is_empty() && self.removed.is_empty()
    }
}

/// The package a file belongs to: the nearest `manifest` (`Cargo.toml`, `go.mod`) that
/// declares a name, between the file and the project root, else the root directory's name.
fn package_of(root: &Root, file: &Path, manifest: lang::Manifest) -> (PathBuf, String) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(root.path()) {
            break;
        }
        if let Some(name) = read_manifest(root, &d.join(manifest.file_name), manifest.package_name)
        {
            return (d.to_path_buf(), name);
        }
        dir = d.parent();
    }
    (root.path().to_path_buf(), project_name(root.path()))
}

/// Brings the stored index of `paths` (relative to the project root) in line with the
/// disk: a changed file is re-parsed, a deleted one dropped, a new source file (of any
/// supported language, outside the skipped directories) added.
/// Cheap when nothing changed: a size comparison, then a content hash.
pub async fn refresh_files(
    db: &Db,
    project: &ProjectRow,
    paths: &[String],
) -> Result<RefreshReport> {
    refresh_files_with(db, project, paths, |_| {}).await
}

/// A file whose rows a refresh is about to rewrite or remove.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    /// Its id before the refresh; `None` for a file new to the index.
    pub old_file_id: Option<i64>,
    /// Project-relative.
    pub path: String,
}

/// [`refresh_files`], calling `before_write` with the files whose rows are about to
/// change just before they do, and only if they do: what is kept beside the rows (a
/// search index) learns of them then, and is left alone when every file was found
/// unchanged.
pub async fn refresh_files_with(
    db: &Db,
    project: &ProjectRow,
    paths: &[String],
    before_write: impl FnOnce(&[Changed]),
) -> Result<RefreshReport> {
    let root = Root::new(Path::new(&project.root))
        .with_context(|| format!("project root {}", project.root))?;
    let mut report = RefreshReport::default();
    let mut writes = Vec::new();
    let mut changed = Vec::new();
    for rel in paths {
        let Some(language) = lang::language_for(rel) else {
            continue;
        };
        if rel
            .split('/')
            .any(|seg| seg == ".." || seg.starts_with('.'))
            || Path::new(rel).ancestors().skip(1).any(skipped_dir)
        {
            continue;
        }
        let Some(abs) = root.join(rel) else { continue };
        let stored = db.file(project.id, rel).await?;
        let read = root.read(&abs, MAX_FILE_BYTES);
        match &read {
            Err(why @ (Refused::LeavesRoot(_) | Refused::TooLarge(_))) => {
                report.skipped.note(rel, why)
            }
            _ => report.cleared.push(rel.clone()),
        }
        match read {
            Err(_) => {
                if let Some(f) = &stored {
                    report.removed.push(rel.clone());
                    changed.push(Changed {
                        old_file_id: Some(f.id),
                        path: rel.clone(),
                    });
                }
            }
            Ok(bytes) => {
                let unchanged = stored.as_ref().is_some_and(|f| {
                    f.size == bytes.len() as i64 && f.content_hash == content_hash(&bytes)
                });
                if unchanged {
                    continue;
                }
                let module_path = if let Some(manifest) = language.manifest() {
                    let (package_dir, package) = package_of(&root, &abs, manifest);
                    let in_package = relative_path(&package_dir, &abs)?;
                    language.module_path(&package, &in_package)
                } else {
                    language.module_path(&project_name(root.path()), rel)
                };
                let file = SourceFile {
                    abs: abs.clone(),
                    rel: rel.clone(),
                    module_path,
                    language,
                };
                let hash = content_hash(&bytes);
                writes.push(parse_file(&file, &bytes, hash, true));
                report.updated.push(rel.clone());
                changed.push(Changed {
                    old_file_id: stored.as_ref().map(|f| f.id),
                    path: rel.clone(),
                });
            }
        }
    }
    if !report.is_empty() {
        before_write(&changed);
        db.write_files(project.id, &writes, &report.removed).await?;
    }
    Ok(report)
}
