//! The in-memory search indexes behind the `search` interface.
//!
//! - one per project, tagged with the project's index generation
//!   ([`crate::indexing::projects::ProjectManager::generation`]) and rebuilt lazily by the first
//!   search after an index run or a refresh moved it;
//! - one per dependency crate index (keyed by the project row holding it), built once and
//!   kept on disk beside the database ([`dependency_dir`]): a crate version's sources never
//!   change, so neither does its index, and the next process maps it instead of building
//!   it again (ADR 0014). Kept in memory, tokio's 160 crate indexes took ~50 MiB and
//!   building them raised the process's peak by ~200 MiB.
//!
//! - a project's index is also kept on disk beside the database ([`project_dir`]), built
//!   at the end of each index run and valid for that run (ADR 0024): a process that opens
//!   the database maps it instead of building it on its first search (20 s on a 7M-line
//!   tree). Every writer of the project's rows (an index run, a refresh) removes it before
//!   it writes, so a kept index is never older than the rows.
//!
//! Only the indexes are kept; a hit's key is its symbol's row id, and the rows of a page
//! of hits are read when it is answered. (Holding the rows of a project's dependencies
//! would cost ~700 MiB for tokio's 160 crates.)
//!
//! Each slot has its own lock, so two calls needing the same index build it once and a
//! build for one project never holds up searches of another.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Instant;

use anyhow::{Context, Result};
use scryer_db::{Db, DependencyIndex, SearchRow};
use scryer_engine::indexer::Changed;
use scryer_search::stored::{self, Outcome};
use scryer_search::{SearchDoc, SymbolIndex, SymbolIndexBuilder};

/// Worker threads building a project's index (kept at the end of its index run, or
/// rebuilt by a search after an edit): a caller waits for either, and on one core it was
/// the monorepo's run's last 11 s (docs/learnings/scale.md, stop 36). Dependency crates
/// are built on one thread: their builds run in the background beside the answers.
const KEEP_THREADS: usize = 2;

/// A project's index and what it was built from.
pub(crate) struct WorkspaceIndex {
    /// The project root it was built for: a deleted project's id can be given to the next
    /// one registered, and its generation count starts where the old one stopped.
    pub root: String,
    pub generation: u64,
    pub index: Arc<SymbolIndex>,
    /// The kept index it was made from with the changed files' rows (or is), and that
    /// index's stamp: the next change is applied to it again without opening it.
    kept: Option<(String, Arc<SymbolIndex>)>,
}

/// Where a project index's documents come from: the project's rows in the database.
pub(crate) trait ProjectRows {
    /// The project's last completed index run (`indexed_at`), whose kept index may be
    /// mapped; `None` while none is complete.
    fn completed_run(&self) -> Option<String>;
    /// Adds every definition of the project, by row id.
    fn fill(&self, builder: &mut SymbolIndexBuilder) -> Result<()>;
    /// Adds the current definitions of the files at `paths`, by row id, and returns the
    /// files' ids (absent files have none).
    fn fill_files(&self, paths: &[String], builder: &mut SymbolIndexBuilder) -> Result<Vec<i64>>;
}

/// The file in a kept project index's directory listing the files whose rows changed
/// since it was built, one JSON object a line (`{"old":12,"path":"src/a.rs"}`), appended
/// by each refresh before it writes ([`SearchCache::note_changes`]).
const CHANGES_FILE: &str = "changed-files";

/// Changed files a kept index is searched beside (their rows in a small index of their
/// own) before a search builds the project's index again instead: 2,000 of the
/// monorepo's 17,236 files hold about a ninth of its rows.
const MAX_CHANGED_FILES: usize = 2_000;

/// The files changed since a kept index was built: ids its documents have (`old`), and
/// the paths whose current rows are indexed beside it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Changes {
    old_ids: Vec<i64>,
    paths: Vec<String>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ChangeLine {
    old: Option<i64>,
    path: String,
}

/// Reads a changes file: `None` if a line cannot be read (a write cut short), and the
/// caller builds the index again rather than trust it. A missing file lists nothing.
fn read_changes(file: &Path) -> Option<Changes> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Changes::default()),
        Err(_) => return None,
    };
    let mut changes = Changes::default();
    let mut seen = std::collections::HashSet::new();
    for line in text.lines() {
        let c: ChangeLine = serde_json::from_str(line).ok()?;
        changes.old_ids.extend(c.old);
        if seen.insert(c.path.clone()) {
            changes.paths.push(c.path);
        }
    }
    changes.old_ids.sort_unstable();
    changes.old_ids.dedup();
    Some(changes)
}

type Slot<T> = Arc<Mutex<Option<Arc<T>>>>;

pub(crate) struct SearchCache {
    workspace: Mutex<HashMap<i64, Slot<WorkspaceIndex>>>,
    crates: Mutex<HashMap<i64, Slot<SymbolIndex>>>,
    /// Where dependency crate indexes are kept ([`dependency_dir`]).
    crates_dir: PathBuf,
    /// Where project indexes are kept ([`project_dir`]).
    projects_dir: PathBuf,
}

/// The directory keeping the project search indexes of the database whose dependency
/// indexes live in `crates_dir`: its sibling.
fn project_dir(crates_dir: &Path) -> PathBuf {
    crates_dir.with_file_name("projects")
}

/// What a kept project index must have been built from: the project's completed index
/// run (a writer removes the index before it changes rows; the run's finish time and the
/// root tell a replaced project apart).
fn project_stamp(project_id: i64, root: &str, indexed_at: &str) -> String {
    format!("project {project_id} at {root}, indexed at {indexed_at}")
}

/// The directory keeping the dependency search indexes of the database at `db_path`:
/// beside it, as its `-wal` file is, since their keys are that database's row ids.
pub(crate) fn dependency_dir(db_path: &Path) -> PathBuf {
    let mut name = db_path.file_name().unwrap_or_default().to_os_string();
    name.push("-search");
    db_path.with_file_name(name).join("dependencies")
}

/// The directory keeping the project search indexes of the database at `db_path`.
pub(crate) fn projects_dir(db_path: &Path) -> PathBuf {
    project_dir(&dependency_dir(db_path))
}

/// A crate index's directory name: readable, and unique per index project row.
fn crate_dir_name(c: &DependencyIndex, index_project_id: i64) -> String {
    let safe = |s: &str| -> String {
        s.chars()
            .take(64)
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || matches!(ch, '.' | '_' | '-' | '+') {
                    ch
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!(
        "{}-{}-{index_project_id}",
        safe(&c.crate_name),
        safe(&c.version)
    )
}

/// The index project of `c`, which only an indexed crate has.
fn indexed(c: &DependencyIndex) -> Result<i64> {
    c.index_project_id
        .with_context(|| format!("crate {} {} is not indexed", c.crate_name, c.version))
}

/// What a kept crate index must have been built from: the crate's index run (its rows'
/// ids change only with a new run, which has another finish time).
fn crate_stamp(c: &DependencyIndex, index_project_id: i64) -> String {
    format!(
        "crate {} {}, index project {index_project_id}, indexed at {}",
        c.crate_name,
        c.version,
        c.indexed_at.as_deref().unwrap_or("-")
    )
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while building leaves the slot empty or old, both of which are valid.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn slot<T>(map: &Mutex<HashMap<i64, Slot<T>>>, id: i64) -> Slot<T> {
    lock(map).entry(id).or_default().clone()
}

/// The search document of a symbol row; its key is the row id.
pub(crate) fn document(row: SearchRow) -> SearchDoc {
    SearchDoc {
        key: row.id as u64,
        name: row.name,
        qualified_name: row.qualified_name,
        signature: row.signature,
        docstring: row.docstring,
        kind: row.kind,
        // Each crate has an index of its own: no need to filter by crate inside one.
        crate_name: None,
        crate_version: None,
    }
}

/// Rows read ahead of the builder: enough to keep both sides busy, a few MiB at most.
const ROWS_READ_AHEAD: usize = 4096;

/// Streams the symbols of project row `project_id` into an index builder, reading them
/// on `handle`'s runtime while the caller (a plain thread) adds them: the read and the
/// build overlap (the monorepo's 741k definitions: ~0.5 s of reading beside ~9 s of
/// indexing, spread over the builder's workers). They are added by row id, so score ties
/// list definitions in file and source order.
pub(crate) fn fill_from(
    handle: &tokio::runtime::Handle,
    db: &Db,
    project_id: i64,
    builder: &mut SymbolIndexBuilder,
) -> Result<()> {
    let (tx, rx) = std::sync::mpsc::sync_channel(ROWS_READ_AHEAD);
    let db = db.clone();
    let reader = handle.spawn(async move {
        db.each_search_row(project_id, |row| {
            tx.send(row)
                .map_err(|_| anyhow::anyhow!("the index builder stopped"))
        })
        .await
    });
    let built = rx
        .into_iter()
        .try_for_each(|row| builder.add(document(row)));
    // A failed build drops the receiver, which stops the reader at its next row.
    let read = handle.block_on(reader);
    built?;
    read.context("reading the search rows")?.map(|_| ())
}

/// Builds an index with `fill`, which adds the documents.
fn build(fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<()>) -> Result<SymbolIndex> {
    let mut builder = SymbolIndexBuilder::new()?;
    fill(&mut builder)?;
    Ok(builder.finish()?)
}

impl SearchCache {
    pub(crate) fn new(crates_dir: PathBuf) -> SearchCache {
        SearchCache {
            workspace: Mutex::default(),
            crates: Mutex::default(),
            projects_dir: project_dir(&crates_dir),
            crates_dir,
        }
    }

    fn kept_project_dir(&self, project_id: i64) -> PathBuf {
        self.projects_dir.join(project_id.to_string())
    }

    /// Removes project `project_id`'s kept index, before its rows change. A removal that
    /// fails leaves an index its stamp no longer matches only if the run finishes, and the
    /// run's new stamp replaces it then.
    pub(crate) fn forget_kept_workspace(&self, project_id: i64) {
        let dir = self.kept_project_dir(project_id);
        if let Err(e) = std::fs::remove_dir_all(&dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %dir.display(), error = %e, "could not remove a kept project search index");
        }
    }

    /// Notes, in project `project_id`'s kept index, files whose rows are about to change
    /// (a refresh), before they do: a search then hides those files' documents in it and
    /// indexes their current rows beside it, instead of building the whole index again
    /// (ADR 0044). Synced before the rows are written; if it cannot be written, the kept
    /// index is removed, as every writer did before.
    pub(crate) fn note_changes(&self, project_id: i64, changed: &[Changed]) {
        let dir = self.kept_project_dir(project_id);
        if changed.is_empty() || !dir.join(stored::STAMP_FILE).exists() {
            return;
        }
        let mut text = String::new();
        for c in changed {
            let line = ChangeLine {
                old: c.old_file_id,
                path: c.path.clone(),
            };
            text.push_str(&serde_json::to_string(&line).unwrap_or_default());
            text.push('\n');
        }
        let file = dir.join(CHANGES_FILE);
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .and_then(|mut f| {
                use std::io::Write;
                f.write_all(text.as_bytes())?;
                f.sync_data()
            });
        if let Err(e) = written {
            tracing::warn!(file = %file.display(), error = %e, "could not note changed files; the kept search index goes");
            self.forget_kept_workspace(project_id);
        }
    }

    /// Builds project `project_id`'s index at the end of its index run (`indexed_at`),
    /// keeps it on disk and holds it for `generation`, so no search has to build it.
    pub(crate) fn keep_workspace(
        &self,
        project_id: i64,
        root: &str,
        indexed_at: &str,
        generation: u64,
        fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<()>,
    ) -> Result<()> {
        let slot = slot(&self.workspace, project_id);
        let mut held = lock(&slot);
        let started = Instant::now();
        std::fs::create_dir_all(&self.projects_dir)
            .with_context(|| format!("creating {}", self.projects_dir.display()))?;
        let (index, outcome) = stored::open_or_build_on(
            &self.kept_project_dir(project_id),
            &project_stamp(project_id, root, indexed_at),
            KEEP_THREADS,
            fill,
        )?;
        tracing::info!(
            project_id,
            symbols = index.len(),
            built = outcome == Outcome::Built,
            ms = started.elapsed().as_millis() as u64,
            "project search index kept"
        );
        let index = Arc::new(index);
        *held = Some(Arc::new(WorkspaceIndex {
            root: root.to_string(),
            generation,
            index: index.clone(),
            kept: Some((project_stamp(project_id, root, indexed_at), index)),
        }));
        Ok(())
    }

    /// The kept index of project `project_id` if it was built for its run `indexed_at`.
    fn open_kept_workspace(
        &self,
        project_id: i64,
        root: &str,
        indexed_at: &str,
    ) -> Option<SymbolIndex> {
        let dir = self.kept_project_dir(project_id);
        let wanted = project_stamp(project_id, root, indexed_at);
        stored::open_kept(&dir, &wanted)
    }

    /// Builds project `project_id`'s index for this process alone (its rows changed since
    /// the run that kept one, or none was kept): on [`KEEP_THREADS`] workers into a
    /// directory of its own, which is removed once the index is open (every file of a
    /// segment is opened, and mapped, when the index is, and a removed file stays readable
    /// while mapped). After an edit on the monorepo this was 13 s in memory on one thread
    /// (docs/learnings/scale.md, stop 36). Falls back to memory if the directory cannot
    /// be written.
    fn build_unkept(
        &self,
        project_id: i64,
        fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<()>,
    ) -> Result<SymbolIndex> {
        let dir = self.projects_dir.join(format!("{project_id}.unkept"));
        let made = (|| {
            if dir.exists() {
                std::fs::remove_dir_all(&dir)?;
            }
            std::fs::create_dir_all(&dir)
        })();
        let on_disk = made.is_ok();
        let builder = match made {
            Ok(()) => SymbolIndexBuilder::in_directory_on(&dir, KEEP_THREADS),
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "search index built in memory");
                SymbolIndexBuilder::new()
            }
        };
        let mut builder = builder?;
        fill(&mut builder)?;
        let index = builder.finish()?;
        if on_disk && let Err(e) = std::fs::remove_dir_all(&dir) {
            // Left for the next build of this project, which removes it first.
            tracing::debug!(dir = %dir.display(), error = %e, "an unkept search index's directory stays");
        }
        Ok(index)
    }

    /// The index of project `project_id` (rooted at `root`) at `generation`: the one held
    /// if made at that generation; else the index kept for the project's last completed
    /// run with the files changed since searched beside it (see [`Self::note_changes`]);
    /// else one built from all of `rows`.
    pub(crate) fn workspace(
        &self,
        project_id: i64,
        root: &str,
        generation: u64,
        rows: &impl ProjectRows,
    ) -> Result<Arc<WorkspaceIndex>> {
        let slot = slot(&self.workspace, project_id);
        let mut held = lock(&slot);
        if let Some(ix) = held.as_ref()
            && ix.generation == generation
            && ix.root == root
        {
            return Ok(ix.clone());
        }
        let started = Instant::now();
        // A failure there (a read of the changed files' rows) costs only the full build.
        let from_kept = self
            .kept_with_changes(project_id, root, held.as_deref(), rows)
            .unwrap_or_else(|e| {
                tracing::warn!(project_id, error = %format!("{e:#}"), "the kept search index could not be used");
                None
            });
        let (index, kept, changed_files) = match from_kept {
            Some((index, kept, changed)) => (index, Some(kept), Some(changed)),
            None => (
                Arc::new(self.build_unkept(project_id, |b| rows.fill(b))?),
                None,
                None,
            ),
        };
        tracing::info!(
            project_id,
            generation,
            from_kept = kept.is_some(),
            changed_files,
            symbols = index.len(),
            ms = started.elapsed().as_millis() as u64,
            "search index ready"
        );
        let made = WorkspaceIndex {
            root: root.to_string(),
            generation,
            index,
            kept,
        };
        let made = Arc::new(made);
        *held = Some(made.clone());
        Ok(made)
    }

    /// The kept index of the project's last completed run (the one `held` was made from,
    /// or mapped now) with the files changed since hidden in it and their current rows
    /// beside it, and how many files changed; `None` if there is no such index or more
    /// than [`MAX_CHANGED_FILES`] changed.
    #[allow(clippy::type_complexity)]
    fn kept_with_changes(
        &self,
        project_id: i64,
        root: &str,
        held: Option<&WorkspaceIndex>,
        rows: &impl ProjectRows,
    ) -> Result<Option<(Arc<SymbolIndex>, (String, Arc<SymbolIndex>), usize)>> {
        let Some(at) = rows.completed_run() else {
            return Ok(None);
        };
        let stamp = project_stamp(project_id, root, &at);
        let dir = self.kept_project_dir(project_id);
        let kept = match held.and_then(|h| h.kept.as_ref()) {
            Some((s, ix)) if *s == stamp && dir.join(stored::STAMP_FILE).exists() => ix.clone(),
            _ => match self.open_kept_workspace(project_id, root, &at) {
                Some(ix) => Arc::new(ix),
                None => return Ok(None),
            },
        };
        let Some(changes) = read_changes(&dir.join(CHANGES_FILE)) else {
            return Ok(None);
        };
        if changes.paths.len() > MAX_CHANGED_FILES {
            return Ok(None);
        }
        let index = if changes.paths.is_empty() {
            kept.clone()
        } else {
            let mut builder = SymbolIndexBuilder::new()?;
            let current_ids = rows.fill_files(&changes.paths, &mut builder)?;
            let current = builder.finish()?;
            let mut hidden = Vec::new();
            for id in changes.old_ids.iter().chain(&current_ids) {
                hidden.push(scryer_db::keys_of_file(*id)?);
            }
            Arc::new(kept.with_changes(&hidden, current)?)
        };
        Ok(Some((index, (stamp, kept), changes.paths.len())))
    }

    /// The index of dependency crate `c` (indexed: it has an index project), mapped from
    /// its directory if kept there for the same index run, or built with `fill` and kept.
    /// If it cannot be kept (a full disk, a directory it may not write), it is built in
    /// memory for this process, so the search still answers. Waits while another call
    /// opens or builds it.
    pub(crate) fn dependency(
        &self,
        c: &DependencyIndex,
        fill: impl Fn(&mut SymbolIndexBuilder) -> Result<()>,
    ) -> Result<Arc<SymbolIndex>> {
        let id = indexed(c)?;
        let slot = slot(&self.crates, id);
        let mut held = lock(&slot);
        if let Some(ix) = held.as_ref() {
            return Ok(ix.clone());
        }
        let index = match self.open_or_build(c, id, &fill) {
            Ok((index, _)) => index,
            Err(e) => {
                tracing::warn!(
                    crate_name = %c.crate_name,
                    version = %c.version,
                    error = %format!("{e:#}"),
                    "a dependency search index could not be kept on disk; built in memory"
                );
                build(&fill)?
            }
        };
        let index = Arc::new(index);
        *held = Some(index.clone());
        Ok(index)
    }

    /// Makes sure dependency crate `c`'s index is kept on disk, building it with `fill`
    /// if it is not, without opening it: the crate's index run just finished, and no
    /// search may ever ask for it.
    pub(crate) fn keep_dependency(
        &self,
        c: &DependencyIndex,
        fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<()>,
    ) -> Result<()> {
        let id = indexed(c)?;
        let slot = slot(&self.crates, id);
        let held = lock(&slot);
        if held.is_some() {
            return Ok(());
        }
        let started = Instant::now();
        let outcome = stored::keep(&self.crate_dir(c, id)?, &crate_stamp(c, id), fill)?;
        tracing::debug!(
            crate_name = %c.crate_name,
            version = %c.version,
            built = outcome == Outcome::Built,
            ms = started.elapsed().as_millis() as u64,
            "dependency search index kept"
        );
        Ok(())
    }

    /// Crate `c`'s directory, under a created [`dependency_dir`].
    fn crate_dir(&self, c: &DependencyIndex, id: i64) -> Result<PathBuf> {
        std::fs::create_dir_all(&self.crates_dir)
            .with_context(|| format!("creating {}", self.crates_dir.display()))?;
        Ok(self.crates_dir.join(crate_dir_name(c, id)))
    }

    /// Removes kept crate indexes that none of `crates` (every crate the database
    /// holds) would open: crates indexed again under another index project row, or a
    /// database that was replaced. Directories being built (`.partial`) are left to their
    /// build. Returns how many were removed.
    pub(crate) fn sweep_dependencies(&self, crates: &[DependencyIndex]) -> Result<usize> {
        let wanted: std::collections::HashSet<String> = crates
            .iter()
            .filter_map(|c| Some(crate_dir_name(c, c.index_project_id?)))
            .collect();
        let entries = match std::fs::read_dir(&self.crates_dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => {
                return Err(e).with_context(|| format!("reading {}", self.crates_dir.display()));
            }
        };
        let mut removed = 0;
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if wanted.contains(&name) || name.ends_with(".partial") || !entry.file_type()?.is_dir()
            {
                continue;
            }
            std::fs::remove_dir_all(entry.path())
                .with_context(|| format!("removing {}", entry.path().display()))?;
            removed += 1;
        }
        Ok(removed)
    }

    /// Opens or builds crate `c`'s kept index; the caller holds its slot, so one build
    /// at a time writes its directory.
    fn open_or_build(
        &self,
        c: &DependencyIndex,
        id: i64,
        fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<()>,
    ) -> Result<(SymbolIndex, Outcome)> {
        let started = Instant::now();
        let dir = self.crate_dir(c, id)?;
        let (index, outcome) = stored::open_or_build(&dir, &crate_stamp(c, id), fill)?;
        tracing::debug!(
            crate_name = %c.crate_name,
            version = %c.version,
            symbols = index.len(),
            built = outcome == Outcome::Built,
            ms = started.elapsed().as_millis() as u64,
            "dependency search index ready"
        );
        Ok((index, outcome))
    }

    /// The index of one dependency crate if it is built; `None` if it is not, or is being
    /// built right now (never waits).
    pub(crate) fn built_dependency(&self, index_project_id: i64) -> Option<Arc<SymbolIndex>> {
        let slot = lock(&self.crates).get(&index_project_id)?.clone();
        let held = match slot.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        held.clone()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    /// Rows of a project for tests: its completed run, and every row; changed files
    /// have no rows.
    struct Rows<K, F>(K, F);

    impl<K, F> ProjectRows for Rows<K, F>
    where
        K: Fn() -> Option<String>,
        F: Fn(&mut SymbolIndexBuilder) -> Result<()>,
    {
        fn completed_run(&self) -> Option<String> {
            (self.0)()
        }

        fn fill(&self, builder: &mut SymbolIndexBuilder) -> Result<()> {
            (self.1)(builder)
        }

        fn fill_files(&self, _: &[String], _: &mut SymbolIndexBuilder) -> Result<Vec<i64>> {
            Ok(Vec::new())
        }
    }

    /// A cache keeping crate indexes in a directory of its own (dropped with it).
    fn cache() -> (SearchCache, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        (SearchCache::new(dir.path().join("dependencies")), dir)
    }

    fn krate(name: &str, id: i64, indexed_at: &str) -> DependencyIndex {
        DependencyIndex {
            crate_name: name.into(),
            version: "1.0.0".into(),
            index_project_id: Some(id),
            indexed_at: Some(indexed_at.into()),
            source_root: None,
            note: None,
        }
    }

    fn row(id: i64, name: &str) -> SearchRow {
        SearchRow {
            id,
            name: name.into(),
            kind: "function".into(),
            qualified_name: format!("demo::{name}"),
            signature: format!("fn {name}()"),
            docstring: None,
        }
    }

    /// A fill that adds `names` (ids from 1) and counts its calls.
    fn fill<'a>(
        calls: &'a AtomicUsize,
        names: &'a [&'a str],
    ) -> impl Fn(&mut SymbolIndexBuilder) -> Result<()> + 'a {
        move |b| {
            calls.fetch_add(1, Ordering::SeqCst);
            for (i, n) in names.iter().enumerate() {
                b.add(document(row(i as i64 + 1, n)))?;
            }
            Ok(())
        }
    }

    #[test]
    fn a_project_index_is_rebuilt_only_when_its_generation_moves() {
        let (cache, _dir) = cache();
        let calls = AtomicUsize::new(0);
        let first = cache
            .workspace(1, "/p", 0, &Rows(|| None, fill(&calls, &["alpha"])))
            .unwrap();
        let again = cache
            .workspace(1, "/p", 0, &Rows(|| None, fill(&calls, &["beta"])))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(Arc::ptr_eq(&first, &again));
        // Built on disk, opened, and its directory removed: it answers from its maps.
        assert!(_dir.path().join("projects").exists());
        assert!(!_dir.path().join("projects/1.unkept").exists());
        let page = again.index.search("alpha", None, 0, 5).unwrap();
        assert_eq!((page.total, page.hits[0].key), (1, 1));

        let moved = cache
            .workspace(1, "/p", 1, &Rows(|| None, fill(&calls, &["beta"])))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(moved.index.search("alpha", None, 0, 5).unwrap().total, 0);
        assert_eq!(moved.index.search("beta", None, 0, 5).unwrap().total, 1);

        // Another project has its own slot.
        cache
            .workspace(2, "/q", 1, &Rows(|| None, fill(&calls, &["gamma"])))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        // The same id for a project at another root (a deleted id given out again).
        cache
            .workspace(1, "/elsewhere", 1, &Rows(|| None, fill(&calls, &["beta"])))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn a_kept_project_index_is_mapped_by_the_next_process_until_a_writer_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let crates = dir.path().join("dependencies");
        let calls = AtomicUsize::new(0);
        let at = "2026-12-01T10:00:00Z";
        SearchCache::new(crates.clone())
            .keep_workspace(3, "/p", at, 4, fill(&calls, &["alpha"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        // Another process: the kept index answers, nothing is built.
        let next = SearchCache::new(crates.clone());
        let ix = next
            .workspace(
                3,
                "/p",
                0,
                &Rows(|| Some(at.into()), fill(&calls, &["beta"])),
            )
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(ix.index.search("alpha", None, 0, 5).unwrap().total, 1);
        // Another run, or another root, is not the kept one's.
        let other = SearchCache::new(crates.clone());
        other
            .workspace(
                3,
                "/p",
                0,
                &Rows(|| Some("later".into()), fill(&calls, &["beta"])),
            )
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        // A writer removes it first.
        let last = SearchCache::new(crates);
        last.forget_kept_workspace(3);
        last.workspace(
            3,
            "/p",
            0,
            &Rows(|| Some(at.into()), fill(&calls, &["beta"])),
        )
        .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    /// A project whose file 1 now holds `gamma` (it held `alpha`) and file 2 `beta`.
    struct Edited<'a> {
        at: &'a str,
        full_builds: &'a AtomicUsize,
    }

    impl ProjectRows for Edited<'_> {
        fn completed_run(&self) -> Option<String> {
            Some(self.at.into())
        }

        fn fill(&self, b: &mut SymbolIndexBuilder) -> Result<()> {
            self.full_builds.fetch_add(1, Ordering::SeqCst);
            b.add(document(row(1 << 32, "gamma")))?;
            b.add(document(row(2 << 32, "beta")))?;
            Ok(())
        }

        fn fill_files(&self, paths: &[String], b: &mut SymbolIndexBuilder) -> Result<Vec<i64>> {
            assert_eq!(paths, ["src/a.rs"]);
            b.add(document(row(1 << 32, "gamma")))?;
            Ok(vec![1])
        }
    }

    #[test]
    fn a_kept_project_index_answers_after_an_edit_with_the_changed_files_rows_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let crates = dir.path().join("dependencies");
        let at = "2026-12-06T10:00:00Z";
        let kept = SearchCache::new(crates.clone());
        kept.keep_workspace(3, "/p", at, 0, |b| {
            b.add(document(row(1 << 32, "alpha")))?;
            b.add(document(row(2 << 32, "beta")))?;
            Ok(())
        })
        .unwrap();
        kept.note_changes(
            3,
            &[Changed {
                old_file_id: Some(1),
                path: "src/a.rs".into(),
            }],
        );
        let full_builds = AtomicUsize::new(0);
        let rows = Edited {
            at,
            full_builds: &full_builds,
        };
        // This process (its held index moved on) and the next both answer from the kept
        // index with file 1's current rows: nothing is built from all rows.
        for cache in [&kept, &SearchCache::new(crates.clone())] {
            let ix = cache.workspace(3, "/p", 1, &rows).unwrap();
            let total = |q: &str| ix.index.search(q, None, 0, 5).unwrap().total;
            assert_eq!((total("alpha"), total("gamma"), total("beta")), (0, 1, 1));
            assert_eq!(ix.index.len(), 2);
        }
        assert_eq!(full_builds.load(Ordering::SeqCst), 0);

        // A changes file cut short is not trusted: the index is built from all rows.
        let changes = crates
            .with_file_name("projects")
            .join("3")
            .join(CHANGES_FILE);
        std::fs::write(&changes, "{\"old\":1,\"pa").unwrap();
        let ix = SearchCache::new(crates.clone())
            .workspace(3, "/p", 1, &rows)
            .unwrap();
        assert_eq!(ix.index.search("gamma", None, 0, 5).unwrap().total, 1);
        assert_eq!(full_builds.load(Ordering::SeqCst), 1);

        // No kept index: noting changes writes nothing, and the search builds.
        kept.forget_kept_workspace(3);
        kept.note_changes(
            3,
            &[Changed {
                old_file_id: None,
                path: "src/b.rs".into(),
            }],
        );
        assert!(!changes.parent().unwrap().exists());
    }

    #[test]
    fn a_failed_fill_leaves_no_index_behind() {
        let (cache, _dir) = cache();
        assert!(
            cache
                .workspace(
                    1,
                    "/p",
                    0,
                    &Rows(
                        || None,
                        |_: &mut SymbolIndexBuilder| Err(anyhow::anyhow!("disk gone"))
                    )
                )
                .is_err()
        );
        let calls = AtomicUsize::new(0);
        let ok = cache
            .workspace(1, "/p", 0, &Rows(|| None, fill(&calls, &["alpha"])))
            .unwrap();
        assert_eq!(ok.index.len(), 1);
    }

    #[test]
    fn a_dependency_index_is_built_once_and_seen_only_when_built() {
        let (cache, _dir) = cache();
        let calls = AtomicUsize::new(0);
        assert!(cache.built_dependency(40).is_none());
        let serde = krate("serde", 40, "2026-12-01T10:00:00Z");
        for _ in 0..3 {
            let ix = cache.dependency(&serde, fill(&calls, &["decode"])).unwrap();
            assert_eq!(ix.search("decode", None, 0, 5).unwrap().total, 1);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(cache.built_dependency(40).is_some());
        assert!(cache.built_dependency(41).is_none());
    }

    #[test]
    fn a_dependency_being_built_is_not_waited_for_by_the_check() {
        let (cache, _dir) = cache();
        let cache = Arc::new(cache);
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let builder = {
            let cache = cache.clone();
            std::thread::spawn(move || {
                cache
                    .dependency(&krate("slow", 7, "2026-12-01T10:00:00Z"), |b| {
                        started_tx.send(()).unwrap();
                        release_rx.recv().unwrap();
                        b.add(document(row(1, "slow")))?;
                        Ok(())
                    })
                    .unwrap()
            })
        };
        started_rx.recv().unwrap();
        assert!(
            cache.built_dependency(7).is_none(),
            "being built is not built"
        );
        release_tx.send(()).unwrap();
        builder.join().unwrap();
        assert!(cache.built_dependency(7).is_some());
    }

    #[test]
    fn a_dependency_index_is_kept_on_disk_for_the_next_process_until_its_crate_is_indexed_again() {
        let dir = tempfile::tempdir().unwrap();
        let crates_dir = dependency_dir(&dir.path().join("index.db"));
        assert_eq!(crates_dir, dir.path().join("index.db-search/dependencies"));
        let calls = AtomicUsize::new(0);
        let serde = krate("serde", 40, "2026-12-01T10:00:00Z");
        {
            let first = SearchCache::new(crates_dir.clone());
            let ix = first.dependency(&serde, fill(&calls, &["decode"])).unwrap();
            assert_eq!(ix.search("decode", None, 0, 5).unwrap().total, 1);
        }
        assert!(crates_dir.join("serde-1.0.0-40").is_dir());

        // The next process maps it: no rows are read.
        let next = SearchCache::new(crates_dir.clone());
        let ix = next
            .dependency(&serde, |_| panic!("a kept index is not built again"))
            .unwrap();
        assert_eq!(ix.search("decode", None, 0, 5).unwrap().total, 1);
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        // The crate indexed again (its rows have new ids): built from the new rows.
        let again = SearchCache::new(crates_dir);
        let reindexed = krate("serde", 40, "2026-12-02T08:00:00Z");
        let ix = again
            .dependency(&reindexed, fill(&calls, &["encode"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(ix.search("decode", None, 0, 5).unwrap().total, 0);
        assert_eq!(ix.search("encode", None, 0, 5).unwrap().total, 1);

        // A crate not indexed has no index to open.
        let mut pending = krate("log", 41, "-");
        pending.index_project_id = None;
        let err = again
            .dependency(&pending, fill(&calls, &["warn"]))
            .unwrap_err();
        assert!(
            err.to_string().contains("log 1.0.0 is not indexed"),
            "{err}"
        );
    }

    #[test]
    fn a_sweep_removes_kept_indexes_no_crate_would_open() {
        let (kept, _dir) = cache();
        let calls = AtomicUsize::new(0);
        let serde = krate("serde", 40, "2026-12-01T10:00:00Z");
        let log = krate("log", 41, "2026-12-01T10:00:00Z");
        for c in [&serde, &log] {
            kept.keep_dependency(c, fill(&calls, &["item"])).unwrap();
        }
        let building = kept.crates_dir.join("regex-1.0.0-42.partial");
        std::fs::create_dir_all(&building).unwrap();
        // Nothing to sweep while every kept index is some crate's.
        assert_eq!(
            kept.sweep_dependencies(&[serde.clone(), log.clone()])
                .unwrap(),
            0
        );

        // log indexed again under another index project row: its old index goes.
        let log_again = krate("log", 43, "2026-12-02T10:00:00Z");
        assert_eq!(kept.sweep_dependencies(&[serde, log_again]).unwrap(), 1);
        let mut left: Vec<String> = std::fs::read_dir(&kept.crates_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["regex-1.0.0-42.partial", "serde-1.0.0-40"]);

        // No directory yet: nothing to do.
        let (fresh, _d) = cache();
        assert_eq!(fresh.sweep_dependencies(&[]).unwrap(), 0);
    }

    #[test]
    fn a_dependency_index_that_cannot_be_kept_is_built_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        // Its directory would be under a file: nothing can be written there.
        let blocker = dir.path().join("index.db-search");
        std::fs::write(&blocker, "not a directory").unwrap();
        let cache = SearchCache::new(blocker.join("dependencies"));
        let calls = AtomicUsize::new(0);
        let serde = krate("serde", 40, "2026-12-01T10:00:00Z");
        let ix = cache.dependency(&serde, fill(&calls, &["decode"])).unwrap();
        assert_eq!(ix.search("decode", None, 0, 5).unwrap().total, 1);
        // Kept for this process like any other.
        let again = cache
            .dependency(&serde, |_| panic!("built once per process"))
            .unwrap();
        assert!(Arc::ptr_eq(&ix, &again));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn crate_directory_names_keep_only_safe_characters() {
        let mut odd = krate("../../etc", 3, "t");
        odd.version = "1.0.0+build/7".into();
        assert_eq!(crate_dir_name(&odd, 3), ".._.._etc-1.0.0+build_7-3");
    }

    #[test]
    fn concurrent_callers_share_one_build() {
        let (cache, _dir) = cache();
        let cache = Arc::new(cache);
        let calls = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let cache = cache.clone();
                let calls = calls.clone();
                std::thread::spawn(move || {
                    cache
                        .workspace(
                            7,
                            "/p",
                            3,
                            &Rows(
                                || None,
                                |b: &mut SymbolIndexBuilder| {
                                    calls.fetch_add(1, Ordering::SeqCst);
                                    std::thread::sleep(Duration::from_millis(50));
                                    b.add(document(row(1, "alpha")))?;
                                    Ok(())
                                },
                            ),
                        )
                        .unwrap()
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
