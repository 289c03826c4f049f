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
    pub index: SymbolIndex,
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
        *held = Some(Arc::new(WorkspaceIndex {
            root: root.to_string(),
            generation,
            index,
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

    /// The index of project `project_id` (rooted at `root`) at `generation`, built with
    /// `fill` when there is none or it was built at another generation.
    /// `kept_for`: the project's last completed run (`indexed_at`) when no writer has
    /// changed its rows since in this process, so an index kept for that run may be mapped.
    pub(crate) fn workspace(
        &self,
        project_id: i64,
        root: &str,
        generation: u64,
        kept_for: impl FnOnce() -> Option<String>,
        fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<()>,
    ) -> Result<Arc<WorkspaceIndex>> {
        let slot = slot(&self.workspace, project_id);
        let mut held = lock(&slot);
        if let Some(ix) = held.as_ref()
            && ix.generation == generation
            && ix.root == root
        {
            return Ok(ix.clone());
        }
        if let Some(index) =
            kept_for().and_then(|at| self.open_kept_workspace(project_id, root, &at))
        {
            let kept = Arc::new(WorkspaceIndex {
                root: root.to_string(),
                generation,
                index,
            });
            *held = Some(kept.clone());
            return Ok(kept);
        }
        let started = Instant::now();
        let index = self.build_unkept(project_id, fill)?;
        tracing::info!(
            project_id,
            generation,
            symbols = index.len(),
            ms = started.elapsed().as_millis() as u64,
            "search index built"
        );
        let built = Arc::new(WorkspaceIndex {
            root: root.to_string(),
            generation,
            index,
        });
        *held = Some(built.clone());
        Ok(built)
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
            .workspace(1, "/p", 0, || None, fill(&calls, &["alpha"]))
            .unwrap();
        let again = cache
            .workspace(1, "/p", 0, || None, fill(&calls, &["beta"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(Arc::ptr_eq(&first, &again));
        // Built on disk, opened, and its directory removed: it answers from its maps.
        assert!(_dir.path().join("projects").exists());
        assert!(!_dir.path().join("projects/1.unkept").exists());
        let page = again.index.search("alpha", None, 0, 5).unwrap();
        assert_eq!((page.total, page.hits[0].key), (1, 1));

        let moved = cache
            .workspace(1, "/p", 1, || None, fill(&calls, &["beta"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(moved.index.search("alpha", None, 0, 5).unwrap().total, 0);
        assert_eq!(moved.index.search("beta", None, 0, 5).unwrap().total, 1);

        // Another project has its own slot.
        cache
            .workspace(2, "/q", 1, || None, fill(&calls, &["gamma"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        // The same id for a project at another root (a deleted id given out again).
        cache
            .workspace(1, "/elsewhere", 1, || None, fill(&calls, &["beta"]))
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
            .workspace(3, "/p", 0, || Some(at.into()), fill(&calls, &["beta"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(ix.index.search("alpha", None, 0, 5).unwrap().total, 1);
        // Another run, or another root, is not the kept one's.
        let other = SearchCache::new(crates.clone());
        other
            .workspace(3, "/p", 0, || Some("later".into()), fill(&calls, &["beta"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        // A writer removes it first.
        let last = SearchCache::new(crates);
        last.forget_kept_workspace(3);
        last.workspace(3, "/p", 0, || Some(at.into()), fill(&calls, &["beta"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_failed_fill_leaves_no_index_behind() {
        let (cache, _dir) = cache();
        assert!(
            cache
                .workspace(1, "/p", 0, || None, |_| Err(anyhow::anyhow!("disk gone")))
                .is_err()
        );
        let calls = AtomicUsize::new(0);
        let ok = cache
            .workspace(1, "/p", 0, || None, fill(&calls, &["alpha"]))
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
                            || None,
                            |b| {
                                calls.fetch_add(1, Ordering::SeqCst);
                                std::thread::sleep(Duration::from_millis(50));
                                b.add(document(row(1, "alpha")))?;
                                Ok(())
                            },
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
