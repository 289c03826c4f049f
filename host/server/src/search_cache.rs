//! The in-memory search indexes behind the `search` interface.
//!
//! - one per project, tagged with the project's index generation
//!   ([`crate::projects::ProjectManager::generation`]) and rebuilt lazily by the first
//!   search after an index run or a refresh moved it;
//! - one per dependency crate index (keyed by the project row holding it), built once and
//!   kept: a crate version's sources never change, so neither does its index.
//!
//! Each slot has its own lock, so two calls needing the same index build it once and a
//! build for one project never holds up searches of another.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use anyhow::Result;
use scryer_db::SymbolRow;
use scryer_search::{SearchDoc, SymbolIndex};

/// A project's symbols and their index; a hit's key is a position in `symbols`.
pub(crate) struct WorkspaceIndex {
    /// The project root it was built for: a deleted project's id can be given to the next
    /// one registered, and its generation count starts where the old one stopped.
    pub root: String,
    pub generation: u64,
    pub symbols: Vec<SymbolRow>,
    pub index: SymbolIndex,
}

/// One dependency crate's symbols (paths relative to its source root) and their index.
pub(crate) struct CrateIndex {
    pub symbols: Vec<SymbolRow>,
    pub index: SymbolIndex,
}

type Slot<T> = Arc<Mutex<Option<Arc<T>>>>;

#[derive(Default)]
pub(crate) struct SearchCache {
    workspace: Mutex<HashMap<i64, Slot<WorkspaceIndex>>>,
    crates: Mutex<HashMap<i64, Slot<CrateIndex>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while building leaves the slot empty or old, both of which are valid.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn slot<T>(map: &Mutex<HashMap<i64, Slot<T>>>, id: i64) -> Slot<T> {
    lock(map).entry(id).or_default().clone()
}

/// The documents of a symbol list; keys are positions in it.
fn documents<'a>(
    symbols: &'a [SymbolRow],
    krate: Option<(&'a str, &'a str)>,
) -> impl Iterator<Item = SearchDoc> + 'a {
    symbols.iter().enumerate().map(move |(i, s)| SearchDoc {
        key: i as u64,
        name: s.name.clone(),
        qualified_name: s.qualified_name.clone(),
        signature: s.signature.clone(),
        docstring: s.docstring.clone(),
        kind: s.kind.clone(),
        crate_name: krate.map(|(n, _)| n.to_string()),
        crate_version: krate.map(|(_, v)| v.to_string()),
    })
}

impl SearchCache {
    /// The index of project `project_id` (rooted at `root`) at `generation`, built from
    /// `load` when there is none or it was built at another generation. `load` reads the
    /// project's symbols.
    pub(crate) fn workspace(
        &self,
        project_id: i64,
        root: &str,
        generation: u64,
        load: impl FnOnce() -> Result<Vec<SymbolRow>>,
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
        let symbols = load()?;
        let index = SymbolIndex::build(documents(&symbols, None))?;
        tracing::info!(
            project_id,
            generation,
            symbols = symbols.len(),
            ms = started.elapsed().as_millis() as u64,
            "search index built"
        );
        let built = Arc::new(WorkspaceIndex {
            root: root.to_string(),
            generation,
            symbols,
            index,
        });
        *held = Some(built.clone());
        Ok(built)
    }

    /// The index of one dependency crate (the project row `index_project_id` holds it),
    /// built from `load` the first time it is asked for.
    pub(crate) fn dependency(
        &self,
        index_project_id: i64,
        crate_name: &str,
        version: &str,
        load: impl FnOnce() -> Result<Vec<SymbolRow>>,
    ) -> Result<Arc<CrateIndex>> {
        let slot = slot(&self.crates, index_project_id);
        let mut held = lock(&slot);
        if let Some(ix) = held.as_ref() {
            return Ok(ix.clone());
        }
        let started = Instant::now();
        let symbols = load()?;
        let index = SymbolIndex::build(documents(&symbols, Some((crate_name, version))))?;
        tracing::debug!(
            crate_name,
            version,
            symbols = symbols.len(),
            ms = started.elapsed().as_millis() as u64,
            "dependency search index built"
        );
        let built = Arc::new(CrateIndex { symbols, index });
        *held = Some(built.clone());
        Ok(built)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn sym(name: &str) -> SymbolRow {
        SymbolRow {
            name: name.into(),
            kind: "function".into(),
            qualified_name: format!("demo::{name}"),
            owner: None,
            signature: format!("fn {name}()"),
            docstring: None,
            start_line: 1,
            end_line: 2,
            name_line: 1,
            name_column: 4,
            file_path: "src/lib.rs".into(),
        }
    }

    #[test]
    fn a_project_index_is_rebuilt_only_when_its_generation_moves() {
        let cache = SearchCache::default();
        let loads = AtomicUsize::new(0);
        let load = |names: &'static [&'static str]| {
            let loads = &loads;
            move || {
                loads.fetch_add(1, Ordering::SeqCst);
                Ok(names.iter().map(|n| sym(n)).collect())
            }
        };
        let first = cache.workspace(1, "/p", 0, load(&["alpha"])).unwrap();
        let again = cache.workspace(1, "/p", 0, load(&["beta"])).unwrap();
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(again.index.search("alpha", None, 0, 5).unwrap().total, 1);

        let moved = cache.workspace(1, "/p", 1, load(&["beta"])).unwrap();
        assert_eq!(loads.load(Ordering::SeqCst), 2);
        assert_eq!(moved.index.search("alpha", None, 0, 5).unwrap().total, 0);
        assert_eq!(moved.index.search("beta", None, 0, 5).unwrap().total, 1);

        // Another project has its own slot.
        cache.workspace(2, "/q", 1, load(&["gamma"])).unwrap();
        assert_eq!(loads.load(Ordering::SeqCst), 3);

        // The same id for a project at another root (a deleted id given out again).
        cache
            .workspace(1, "/elsewhere", 1, load(&["beta"]))
            .unwrap();
        assert_eq!(loads.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn a_failed_load_leaves_no_index_behind() {
        let cache = SearchCache::default();
        assert!(
            cache
                .workspace(1, "/p", 0, || Err(anyhow::anyhow!("disk gone")))
                .is_err()
        );
        let ok = cache
            .workspace(1, "/p", 0, || Ok(vec![sym("alpha")]))
            .unwrap();
        assert_eq!(ok.symbols.len(), 1);
    }

    #[test]
    fn a_dependency_index_is_built_once() {
        let cache = SearchCache::default();
        let loads = AtomicUsize::new(0);
        for _ in 0..3 {
            let ix = cache
                .dependency(40, "tokio-util", "0.7.1", || {
                    loads.fetch_add(1, Ordering::SeqCst);
                    Ok(vec![sym("decode")])
                })
                .unwrap();
            assert_eq!(
                ix.index
                    .search("decode", Some("tokio_util"), 0, 5)
                    .unwrap()
                    .total,
                1
            );
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn concurrent_callers_share_one_build() {
        let cache = Arc::new(SearchCache::default());
        let loads = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let cache = cache.clone();
                let loads = loads.clone();
                std::thread::spawn(move || {
                    cache
                        .workspace(7, "/p", 3, || {
                            loads.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(50));
                            Ok(vec![sym("alpha")])
                        })
                        .unwrap()
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1);
    }
}
