//! Indexing a project: walk, hash, parse in parallel, write in batches.
//!
//! Unchanged files (same content hash as stored) are skipped; files gone from disk are
//! removed. The project is marked incomplete while a run writes and complete when it
//! finishes, so an interrupted run is visible as such.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use scryer_db::{Db, FileWrite, ProjectRow, RefRow, SymbolRow};

use crate::model::FileSymbols;
use crate::rust_lang;

/// Files larger than this are skipped: generated tables, not code anyone navigates.
pub const MAX_FILE_BYTES: u64 = 4 << 20;
/// Files written per transaction.
const WRITE_BATCH: usize = 256;

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
}

/// A source file found by the walk.
#[derive(Clone, Debug)]
struct SourceFile {
    abs: PathBuf,
    rel: String,
    /// The module path of the file (crate name first).
    module_path: Vec<String>,
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

/// Walks `root` honouring `.gitignore` (and `.ignore`), skipping hidden directories,
/// and returns the Rust files with their module paths.
fn walk(root: &Path) -> Result<Vec<SourceFile>> {
    let mut rs_files = Vec::new();
    let mut crates: Vec<(PathBuf, String)> = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                tracing::debug!(error = %e, "skipping unreadable entry");
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        match path.file_name().and_then(|n| n.to_str()) {
            Some("Cargo.toml") => {
                if let Ok(text) = std::fs::read_to_string(path)
                    && let Some(name) = crate_name_of(&text)
                {
                    crates.push((path.parent().unwrap_or(root).to_path_buf(), name));
                }
            }
            Some(n)
                if n.ends_with(".rs")
                    && entry
                        .metadata()
                        .map(|m| m.len() <= MAX_FILE_BYTES)
                        .unwrap_or(false) =>
            {
                rs_files.push(path.to_path_buf());
            }
            _ => {}
        }
    }
    // The innermost crate directory holding a file decides its module path.
    crates.sort_by_key(|(dir, _)| std::cmp::Reverse(dir.components().count()));
    let fallback = root
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("crate")
        .replace('-', "_");
    let mut out = Vec::with_capacity(rs_files.len());
    for abs in rs_files {
        let rel = relative_path(root, &abs)?;
        let (crate_dir, crate_name) = crates
            .iter()
            .find(|(dir, _)| abs.starts_with(dir))
            .map(|(d, n)| (d.as_path(), n.clone()))
            .unwrap_or((root, fallback.clone()));
        let in_crate = relative_path(crate_dir, &abs)?;
        let module_path = rust_lang::module_path_for(&crate_name, &in_crate);
        out.push(SourceFile {
            abs,
            rel,
            module_path,
        });
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
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
fn parse_file(file: &SourceFile, bytes: &[u8], hash: String) -> FileWrite {
    let source = String::from_utf8_lossy(bytes);
    let extracted: FileSymbols = rust_lang::extract(&source, &file.module_path);
    FileWrite {
        path: file.rel.clone(),
        content_hash: hash,
        size: bytes.len() as i64,
        language: "rust".into(),
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

/// Reads, hashes and (when changed) parses `files` on all cores.
fn parse_changed(
    files: &[SourceFile],
    stored: &HashMap<String, String>,
    progress: &Progress,
) -> Vec<FileWrite> {
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(files.len().max(1));
    let results: Vec<Vec<FileWrite>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(file) = files.get(i) else { break };
                        if let Ok(bytes) = std::fs::read(&file.abs) {
                            let hash = content_hash(&bytes);
                            if stored.get(&file.rel) != Some(&hash) {
                                out.push(parse_file(file, &bytes, hash));
                            }
                        }
                        progress.done.fetch_add(1, Ordering::Relaxed);
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    results.into_iter().flatten().collect()
}

/// Indexes (or re-indexes) a project. Returns what changed.
pub async fn index_project(
    db: &Db,
    project: &ProjectRow,
    progress: Arc<Progress>,
) -> Result<IndexReport> {
    let started = Instant::now();
    let root = PathBuf::from(&project.root);
    db.start_index_run(project.id).await?;
    let result = run(db, project, &root, progress).await;
    let elapsed_ms = started.elapsed().as_millis() as u64;
    match result {
        Ok(mut report) => {
            report.elapsed_ms = elapsed_ms;
            db.finish_index_run(project.id, elapsed_ms as i64, None)
                .await?;
            Ok(report)
        }
        Err(e) => {
            let msg = format!("{e:#}");
            let _ = db
                .finish_index_run(project.id, elapsed_ms as i64, Some(&msg))
                .await;
            Err(e)
        }
    }
}

async fn run(
    db: &Db,
    project: &ProjectRow,
    root: &Path,
    progress: Arc<Progress>,
) -> Result<IndexReport> {
    let root_owned = root.to_path_buf();
    let files = tokio::task::spawn_blocking(move || walk(&root_owned)).await??;
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
    let stored = Arc::new(stored);
    let files = Arc::new(files);
    // Parse a chunk on all cores, write it in one transaction, go on.
    let chunk = WRITE_BATCH * 4;
    let mut start = 0;
    let mut first_write = true;
    while start < files.len() || first_write {
        let end = (start + chunk).min(files.len());
        let (files_c, stored_c, progress_c) = (files.clone(), stored.clone(), progress.clone());
        let writes = tokio::task::spawn_blocking(move || {
            parse_changed(&files_c[start..end], &stored_c, &progress_c)
        })
        .await?;
        report.files_parsed += writes.len();
        report.parse_failures += writes.iter().filter(|w| w.parse_errors).count();
        report.symbols_written += writes.iter().map(|w| w.symbols.len()).sum::<usize>();
        report.references_written += writes.iter().map(|w| w.references.len()).sum::<usize>();
        for (i, batch) in writes.chunks(WRITE_BATCH).enumerate() {
            let gone: &[String] = if first_write && i == 0 { &removed } else { &[] };
            db.write_files(project.id, batch, gone).await?;
        }
        if first_write && writes.is_empty() && !removed.is_empty() {
            db.write_files(project.id, &[], &removed).await?;
        }
        first_write = false;
        start = end;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_package_name() {
        let toml = "[workspace]\nmembers = []\n\n[package]\nname = \"regex-automata\"\nversion = \"0.4\"\n[dependencies]\nname = \"x\"\n";
        assert_eq!(crate_name_of(toml).as_deref(), Some("regex_automata"));
        assert_eq!(crate_name_of("[workspace]\n"), None);
    }
}

/// What [`refresh_files`] changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RefreshReport {
    /// Files re-parsed because their content changed, or added because they are new.
    pub updated: Vec<String>,
    /// Files dropped because they are gone from disk.
    pub removed: Vec<String>,
}

impl RefreshReport {
    pub fn is_empty(&self) -> bool {
        self.updated.is_empty() && self.removed.is_empty()
    }
}

/// The crate a file belongs to: the nearest `Cargo.toml` with a package name between the
/// file and the project root, else the root directory's name.
fn crate_of(root: &Path, file: &Path) -> (PathBuf, String) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if !d.starts_with(root) {
            break;
        }
        if let Ok(text) = std::fs::read_to_string(d.join("Cargo.toml"))
            && let Some(name) = crate_name_of(&text)
        {
            return (d.to_path_buf(), name);
        }
        dir = d.parent();
    }
    let fallback = root
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("crate")
        .replace('-', "_");
    (root.to_path_buf(), fallback)
}

/// Brings the stored index of `paths` (relative to the project root) in line with the
/// disk: a changed file is re-parsed, a deleted one dropped, a new Rust file added.
/// Cheap when nothing changed: a size comparison, then a content hash.
pub async fn refresh_files(
    db: &Db,
    project: &ProjectRow,
    paths: &[String],
) -> Result<RefreshReport> {
    let root = PathBuf::from(&project.root);
    let mut report = RefreshReport::default();
    let mut writes = Vec::new();
    for rel in paths {
        if !rel.ends_with(".rs")
            || rel
                .split('/')
                .any(|seg| seg == ".." || seg.starts_with('.'))
        {
            continue;
        }
        let abs = root.join(rel);
        let stored = db.file(project.id, rel).await?;
        match std::fs::read(&abs) {
            Err(_) => {
                if stored.is_some() {
                    report.removed.push(rel.clone());
                }
            }
            Ok(bytes) => {
                if bytes.len() as u64 > MAX_FILE_BYTES {
                    continue;
                }
                let unchanged = stored.as_ref().is_some_and(|f| {
                    f.size == bytes.len() as i64 && f.content_hash == content_hash(&bytes)
                });
                if unchanged {
                    continue;
                }
                let (crate_dir, crate_name) = crate_of(&root, &abs);
                let in_crate = relative_path(&crate_dir, &abs)?;
                let file = SourceFile {
                    abs: abs.clone(),
                    rel: rel.clone(),
                    module_path: rust_lang::module_path_for(&crate_name, &in_crate),
                };
                let hash = content_hash(&bytes);
                writes.push(parse_file(&file, &bytes, hash));
                report.updated.push(rel.clone());
            }
        }
    }
    if !report.is_empty() {
        db.write_files(project.id, &writes, &report.removed).await?;
    }
    Ok(report)
}
