//! The `search` interface: BM25 over the call's project (or the crates it locks).
//!
//! Indexes live in [`crate::search_cache`]: the project's is rebuilt after its index
//! changes, each dependency crate's is built once. A dependency search runs over the
//! indexes of the locked crates together and merges them by score.

use std::path::Path;
use std::sync::Arc;

use scryer_db::{DependencyIndex, SymbolRow};
use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, SearchHit, SearchPage, SearchScope};
use scryer_search::{SearchError, SymbolIndex, normalize_crate_name};

use super::{HostImpl, internal, symbol};
use crate::search_cache::CrateIndex;

/// Most hits one call returns. Routers page far below this; it keeps a careless call
/// from copying a whole corpus through the component boundary.
const MAX_LIMIT: u32 = 1000;
/// Locked crates named in a "no such crate" error, at most.
const NAMED_CRATES: usize = 40;

fn search_error(e: SearchError) -> CallError {
    match e {
        SearchError::InvalidArgument(m) => CallError::InvalidArgument(m),
        SearchError::Index(m) => CallError::Internal(format!("search index: {m}")),
    }
}

fn total(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// One dependency crate ready to search.
struct Searchable {
    crate_name: String,
    version: String,
    source_root: Option<String>,
    index: Arc<CrateIndex>,
}

/// Orders version strings numerically where they are numbers (`1.10.0` after `1.9.3`).
fn version_key(v: &str) -> Vec<(u64, String)> {
    v.split(['.', '-', '+'])
        .map(|part| match part.parse::<u64>() {
            Ok(n) => (n, String::new()),
            Err(_) => (0, part.to_string()),
        })
        .collect()
}

/// The crates a dependency search covers, from the project's locked crates (`locked`)
/// and, for a named crate the project does not lock, every indexed crate (`all`).
/// Returns the indexed ones; `Err` names what went wrong.
fn select_crates(
    locked: &[DependencyIndex],
    all: impl FnOnce() -> anyhow::Result<Vec<DependencyIndex>>,
    crate_name: Option<&str>,
) -> Result<Vec<DependencyIndex>, CallError> {
    let Some(wanted) = crate_name else {
        return Ok(locked
            .iter()
            .filter(|d| d.index_project_id.is_some())
            .cloned()
            .collect());
    };
    let norm = normalize_crate_name(wanted);
    if norm.is_empty() {
        return Err(CallError::InvalidArgument(
            "crate_name is empty: pass a crate the project locks, e.g. `serde`".into(),
        ));
    }
    let same = |d: &&DependencyIndex| normalize_crate_name(&d.crate_name) == norm;
    let locked_same: Vec<&DependencyIndex> = locked.iter().filter(same).collect();
    if !locked_same.is_empty() {
        // Locked but not indexed yet gives an empty page; the router explains it from
        // `locked-crates`.
        return Ok(locked_same
            .into_iter()
            .filter(|d| d.index_project_id.is_some())
            .cloned()
            .collect());
    }
    // Not locked: any indexed version of it, the newest.
    let cached = all().map_err(internal)?;
    if let Some(newest) = cached
        .iter()
        .filter(same)
        .filter(|d| d.index_project_id.is_some())
        .max_by_key(|d| version_key(&d.version))
    {
        return Ok(vec![newest.clone()]);
    }
    let mut names: Vec<&str> = locked.iter().map(|d| d.crate_name.as_str()).collect();
    names.dedup();
    let shown: String = wanted.chars().take(80).collect();
    Err(CallError::NotFound(if names.is_empty() {
        format!(
            "crate {shown:?} is not locked by this project (it locks no crates: dependency search \
             needs a Cargo.lock) and no indexed version of it is cached"
        )
    } else {
        let more = names.len().saturating_sub(NAMED_CRATES);
        let mut list = names
            .iter()
            .take(NAMED_CRATES)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if more > 0 {
            list.push_str(&format!(" and {more} more"));
        }
        format!(
            "crate {shown:?} is not locked by this project and no indexed version of it is cached; \
             the project locks: {list}"
        )
    }))
}

/// A dependency symbol's path: absolute, inside the crate's sources.
fn absolute(source_root: Option<&str>, relative: &str) -> String {
    match source_root {
        Some(root) => Path::new(root)
            .join(relative)
            .to_string_lossy()
            .into_owned(),
        None => relative.to_string(),
    }
}

fn hit_of(row: &SymbolRow, score: f32, matched_terms: Vec<String>) -> SearchHit {
    SearchHit {
        symbol: symbol(row.clone()),
        score,
        matched_terms,
        crate_name: None,
        crate_version: None,
    }
}

impl HostImpl {
    pub(super) fn search_symbols(
        &self,
        scope: &CallScope,
        query: &str,
        level: SearchScope,
        crate_name: Option<&str>,
        offset: u32,
        limit: u32,
    ) -> Result<SearchPage, CallError> {
        if limit > MAX_LIMIT {
            return Err(CallError::InvalidArgument(format!(
                "limit {limit} is too large: at most {MAX_LIMIT} hits per call; page with offset"
            )));
        }
        let project = self.project(scope)?;
        let (offset, limit) = (offset as usize, limit as usize);
        match level {
            SearchScope::Workspace => {
                if let Some(c) = crate_name {
                    let shown: String = c.chars().take(80).collect();
                    return Err(CallError::InvalidArgument(format!(
                        "crate_name {shown:?} narrows dependency hits, but the scope is workspace; \
                         search the dependencies scope or leave crate_name out"
                    )));
                }
                let db = self.core.projects.db();
                let generation = self.core.projects.generation(project.id);
                let ix = self
                    .core
                    .search
                    .workspace(project.id, &project.root, generation, || {
                        self.block(db.all_symbols(project.id))
                    })
                    .map_err(internal)?;
                let page = ix
                    .index
                    .search(query, None, offset, limit)
                    .map_err(search_error)?;
                let hits = page
                    .hits
                    .into_iter()
                    .filter_map(|h| {
                        let row = ix.symbols.get(usize::try_from(h.key).ok()?)?;
                        Some(hit_of(row, h.score, h.matched_terms))
                    })
                    .collect();
                Ok(SearchPage {
                    hits,
                    total: total(page.total),
                })
            }
            SearchScope::Dependencies => {
                let db = self.core.projects.db();
                let locked = self
                    .block(db.dependency_indexes(project.id))
                    .map_err(internal)?;
                let chosen = select_crates(
                    &locked,
                    || self.block(db.all_dependency_indexes()),
                    crate_name,
                )?;
                let mut crates = Vec::with_capacity(chosen.len());
                for d in chosen {
                    let Some(id) = d.index_project_id else {
                        continue;
                    };
                    let index = self
                        .core
                        .search
                        .dependency(id, &d.crate_name, &d.version, || {
                            self.block(db.all_symbols(id))
                        })
                        .map_err(internal)?;
                    crates.push(Searchable {
                        crate_name: d.crate_name,
                        version: d.version,
                        source_root: d.source_root,
                        index,
                    });
                }
                if crates.is_empty() {
                    // Nothing to search, but a bad query is still reported as such.
                    scryer_search::check_query(query).map_err(search_error)?;
                    return Ok(SearchPage {
                        hits: Vec::new(),
                        total: 0,
                    });
                }
                let indexes: Vec<&SymbolIndex> = crates.iter().map(|c| &c.index.index).collect();
                let page = SymbolIndex::search_many(&indexes, query, None, offset, limit)
                    .map_err(search_error)?;
                let hits = page
                    .hits
                    .into_iter()
                    .filter_map(|h| {
                        let c = crates.get(h.source)?;
                        let row = c.index.symbols.get(usize::try_from(h.hit.key).ok()?)?;
                        let mut hit = hit_of(row, h.hit.score, h.hit.matched_terms);
                        hit.symbol.file_path =
                            absolute(c.source_root.as_deref(), &hit.symbol.file_path);
                        hit.crate_name = Some(c.crate_name.clone());
                        hit.crate_version = Some(c.version.clone());
                        Some(hit)
                    })
                    .collect();
                Ok(SearchPage {
                    hits,
                    total: total(page.total),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dep(name: &str, version: &str, id: Option<i64>) -> DependencyIndex {
        DependencyIndex {
            crate_name: name.into(),
            version: version.into(),
            index_project_id: id,
            source_root: Some(format!("/registry/{name}-{version}")),
            note: None,
        }
    }

    fn names(v: &[DependencyIndex]) -> Vec<String> {
        v.iter()
            .map(|d| format!("{}@{}", d.crate_name, d.version))
            .collect()
    }

    fn no_cache() -> anyhow::Result<Vec<DependencyIndex>> {
        panic!("the cache is read only for a crate the project does not lock")
    }

    #[test]
    fn all_indexed_locked_crates_are_searched_without_a_crate_name() {
        let locked = [dep("serde", "1.0.1", Some(5)), dep("zstd", "0.1.0", None)];
        let got = select_crates(&locked, no_cache, None).unwrap();
        assert_eq!(names(&got), ["serde@1.0.1"]);
    }

    #[test]
    fn a_crate_name_matches_ignoring_case_and_dashes() {
        let locked = [
            dep("tokio-util", "0.7.1", Some(5)),
            dep("tokio", "1.0.0", Some(6)),
        ];
        for c in ["Tokio_Util", "tokio-util", " tokio_UTIL "] {
            let got = select_crates(&locked, no_cache, Some(c)).unwrap();
            assert_eq!(names(&got), ["tokio-util@0.7.1"], "{c}");
        }
        // Locked but not indexed yet: nothing to search, and no error.
        let pending = [dep("regex", "1.0.0", None)];
        assert!(
            select_crates(&pending, no_cache, Some("regex"))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn an_unlocked_crate_falls_back_to_its_newest_cached_version() {
        let locked = [dep("serde", "1.0.1", Some(5))];
        let cache = || {
            Ok(vec![
                dep("rand", "0.9.0", Some(7)),
                dep("rand", "0.10.1", Some(8)),
                dep("rand", "0.11.0", None),
            ])
        };
        let got = select_crates(&locked, cache, Some("RAND")).unwrap();
        assert_eq!(names(&got), ["rand@0.10.1"]);
    }

    #[test]
    fn an_unknown_crate_is_not_found_and_the_locked_crates_are_named() {
        let locked = [
            dep("serde", "1.0.1", Some(5)),
            dep("tokio", "1.0.0", Some(6)),
        ];
        match select_crates(&locked, || Ok(Vec::new()), Some("nope")) {
            Err(CallError::NotFound(m)) => {
                assert!(m.contains("\"nope\""), "{m}");
                assert!(m.contains("serde, tokio"), "{m}");
            }
            other => panic!("{other:?}"),
        }
        let many: Vec<DependencyIndex> = (0..50)
            .map(|i| dep(&format!("c{i:02}"), "1.0.0", Some(i)))
            .collect();
        match select_crates(&many, || Ok(Vec::new()), Some("nope")) {
            Err(CallError::NotFound(m)) => assert!(m.ends_with("and 10 more"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            select_crates(&[], || Ok(Vec::new()), Some("x")),
            Err(CallError::NotFound(m)) if m.contains("locks no crates")
        ));
        assert!(matches!(
            select_crates(&locked, no_cache, Some(" ")),
            Err(CallError::InvalidArgument(_))
        ));
    }

    #[test]
    fn versions_order_numerically() {
        let mut v = vec!["1.10.0", "1.9.3", "1.9.10", "0.2.0"];
        v.sort_by_key(|s| version_key(s));
        assert_eq!(v, ["0.2.0", "1.9.3", "1.9.10", "1.10.0"]);
    }

    #[test]
    fn dependency_paths_are_made_absolute() {
        assert_eq!(
            absolute(Some("/registry/serde-1.0.1"), "src/de.rs"),
            "/registry/serde-1.0.1/src/de.rs"
        );
        assert_eq!(absolute(None, "src/de.rs"), "src/de.rs");
    }
}
