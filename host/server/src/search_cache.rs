//! The in-memory search indexes behind the `search` interface.
//!
//! - one per project, tagged with the project's index generation
//!   ([`crate::projects::ProjectManager::generation`]) and rebuilt lazily by the first
//!   search after an index run or a refresh moved it;
//! - one per dependency crate index (keyed by the project row holding it), built once and
//!   kept: a crate version's sources never change, so neither does its index.
//!
//! Only the indexes are kept; a hit's key is its symbol's row id, and the rows of a page
//! of hits are read when it is answered. (Holding the rows of a project's dependencies
//! would cost ~700 MiB for tokio's 160 crates; their indexes take ~50 MiB.)
//!
//! Each slot has its own lock, so two calls needing the same index build it once and a
//! build for one project never holds up searches of another.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Instant;

use anyhow::Result;
use scryer_db::SearchRow;
use scryer_search::{SearchDoc, SymbolIndex, SymbolIndexBuilder};

/// A project's index and what it was built from.
pub(crate) struct WorkspaceIndex {
    /// The project root it was built for: a deleted project's id can be given to the next
    /// one registered, and its generation count starts where the old one stopped.
    pub root: String,
    pub generation: u64,
    pub index: SymbolIndex,
}

type Slot<T> = Arc<Mutex<Option<Arc<T>>>>;

#[derive(Default)]
pub(crate) struct SearchCache {
    workspace: Mutex<HashMap<i64, Slot<WorkspaceIndex>>>,
    crates: Mutex<HashMap<i64, Slot<SymbolIndex>>>,
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

/// Builds an index with `fill`, which adds the documents.
fn build(fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<()>) -> Result<SymbolIndex> {
    let mut builder = SymbolIndexBuilder::new()?;
    fill(&mut builder)?;
    Ok(builder.finish()?)
}

impl SearchCache {
    /// The index of project `project_id` (rooted at `root`) at `generation`, built with
    /// `fill` when there is none or it was built at another generation.
    pub(crate) fn workspace(
        &self,
        project_id: i64,
        root: &str,
        generation: u64,
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
        let started = Instant::now();
        let index = build(fill)?;
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

    /// The index of one dependency crate (the project row `index_project_id` holds it),
    /// built with `fill` the first time it is asked for. Waits while another call builds it.
    pub(crate) fn dependency(
        &self,
        index_project_id: i64,
        fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<()>,
    ) -> Result<Arc<SymbolIndex>> {
        let slot = slot(&self.crates, index_project_id);
        let mut held = lock(&slot);
        if let Some(ix) = held.as_ref() {
            return Ok(ix.clone());
        }
        let started = Instant::now();
        let index = Arc::new(build(fill)?);
        tracing::debug!(
            index_project_id,
            symbols = index.len(),
            ms = started.elapsed().as_millis() as u64,
            "dependency search index built"
        );
        *held = Some(index.clone());
        Ok(index)
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
    ) -> impl FnOnce(&mut SymbolIndexBuilder) -> Result<()> + 'a {
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
        let cache = SearchCache::default();
        let calls = AtomicUsize::new(0);
        let first = cache
            .workspace(1, "/p", 0, fill(&calls, &["alpha"]))
            .unwrap();
        let again = cache
            .workspace(1, "/p", 0, fill(&calls, &["beta"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(Arc::ptr_eq(&first, &again));
        let page = again.index.search("alpha", None, 0, 5).unwrap();
        assert_eq!((page.total, page.hits[0].key), (1, 1));

        let moved = cache
            .workspace(1, "/p", 1, fill(&calls, &["beta"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(moved.index.search("alpha", None, 0, 5).unwrap().total, 0);
        assert_eq!(moved.index.search("beta", None, 0, 5).unwrap().total, 1);

        // Another project has its own slot.
        cache
            .workspace(2, "/q", 1, fill(&calls, &["gamma"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        // The same id for a project at another root (a deleted id given out again).
        cache
            .workspace(1, "/elsewhere", 1, fill(&calls, &["beta"]))
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn a_failed_fill_leaves_no_index_behind() {
        let cache = SearchCache::default();
        assert!(
            cache
                .workspace(1, "/p", 0, |_| Err(anyhow::anyhow!("disk gone")))
                .is_err()
        );
        let calls = AtomicUsize::new(0);
        let ok = cache
            .workspace(1, "/p", 0, fill(&calls, &["alpha"]))
            .unwrap();
        assert_eq!(ok.index.len(), 1);
    }

    #[test]
    fn a_dependency_index_is_built_once_and_seen_only_when_built() {
        let cache = SearchCache::default();
        let calls = AtomicUsize::new(0);
        assert!(cache.built_dependency(40).is_none());
        for _ in 0..3 {
            let ix = cache.dependency(40, fill(&calls, &["decode"])).unwrap();
            assert_eq!(ix.search("decode", None, 0, 5).unwrap().total, 1);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(cache.built_dependency(40).is_some());
        assert!(cache.built_dependency(41).is_none());
    }

    #[test]
    fn a_dependency_being_built_is_not_waited_for_by_the_check() {
        let cache = Arc::new(SearchCache::default());
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let builder = {
            let cache = cache.clone();
            std::thread::spawn(move || {
                cache
                    .dependency(7, |b| {
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
    fn concurrent_callers_share_one_build() {
        let cache = Arc::new(SearchCache::default());
        let calls = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let cache = cache.clone();
                let calls = calls.clone();
                std::thread::spawn(move || {
                    cache
                        .workspace(7, "/p", 3, |b| {
                            calls.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(50));
                            b.add(document(row(1, "alpha")))?;
                            Ok(())
                        })
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
