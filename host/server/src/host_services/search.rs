//! The `search` interface: BM25 over the call's project (or the crates it locks).
//!
//! Indexes live in [`crate::indexing::search_cache`]: the project's is rebuilt after its index
//! changes, each dependency crate's is kept on disk, built once per crate index run
//! (usually by the dependency worker, ADR 0014). A dependency search runs over the
//! indexes of the locked crates together and merges them by score. Hits carry symbol
//! row ids; the rows of a page are read from the database when it is answered.

use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scryer_db::{DependencyIndex, SymbolRow};
use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, SearchHit, SearchPage, SearchScope};
use scryer_search::{SearchError, SymbolIndex, SymbolIndexBuilder, normalize_crate_name};

use super::{HostImpl, internal, symbol};
use crate::Core;
use crate::indexing::search_cache::{ProjectRows, document, fill_from};

/// Most hits one call returns. Routers page far below this; it keeps a careless call
/// from copying a whole corpus through the component boundary.
const MAX_LIMIT: u32 = 1000;
/// Locked crates named in a "no such crate" error, at most.
const NAMED_CRATES: usize = 40;
/// How long a dependency search waits for crate indexes being built before it says so.
/// Below the default 30 s wall time of a router call, so the answer is this message and
/// not a timeout; the build goes on and a later call finds it done.
const DEPENDENCY_BUILD_WAIT: Duration = Duration::from_secs(20);
/// Threads building crate indexes at once (one per core, at most this many).
const MAX_BUILD_THREADS: usize = 4;

fn search_error(e: SearchError) -> CallError {
    match e {
        SearchError::InvalidArgument(m) => CallError::InvalidArgument(m),
        SearchError::Index(m) => CallError::Internal(format!("search index: {m}")),
    }
}

fn total(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
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

fn hit_of(row: SymbolRow, score: f32, matched_terms: Vec<String>) -> SearchHit {
    SearchHit {
        symbol: symbol(row),
        score,
        matched_terms,
        crate_name: None,
        crate_version: None,
    }
}

/// [`fill_from`] on the server's database.
fn fill(core: &Core, project_id: i64, builder: &mut SymbolIndexBuilder) -> anyhow::Result<()> {
    fill_from(&core.handle, core.projects.db(), project_id, builder)
}

/// A project's rows, as its search index reads them.
struct Rows<'a> {
    host: &'a HostImpl,
    project_id: i64,
}

impl ProjectRows for Rows<'_> {
    fn completed_run(&self) -> Option<String> {
        let row = self
            .host
            .block(self.host.core.projects.db().project(self.project_id));
        row.ok()
            .flatten()
            .filter(|r| r.index_complete)
            .and_then(|r| r.indexed_at)
    }

    fn fill(&self, builder: &mut SymbolIndexBuilder) -> anyhow::Result<()> {
        fill(&self.host.core, self.project_id, builder)
    }

    fn fill_files(
        &self,
        paths: &[String],
        builder: &mut SymbolIndexBuilder,
    ) -> anyhow::Result<Vec<i64>> {
        let mut rows = Vec::new();
        let ids = self
            .host
            .block(self.host.core.projects.db().each_search_row_in(
                self.project_id,
                paths,
                |row| {
                    rows.push(row);
                    Ok(())
                },
            ))?;
        for row in rows {
            builder.add(document(row))?;
        }
        Ok(ids)
    }
}

/// The indexes of `crates` (all indexed): those not open yet are mapped from disk, or
/// built and kept there, on background threads. Waits at most `wait`; past it the answer says how far the build got, and
/// the build goes on for the next call.
fn crate_indexes(
    core: &Arc<Core>,
    crates: &[DependencyIndex],
    wait: Duration,
) -> Result<Vec<Arc<SymbolIndex>>, CallError> {
    let ids: Vec<i64> = crates.iter().filter_map(|c| c.index_project_id).collect();
    let ready = |ids: &[i64]| -> Vec<Option<Arc<SymbolIndex>>> {
        ids.iter()
            .map(|&id| core.search.built_dependency(id))
            .collect()
    };
    let have = ready(&ids);
    if have.iter().all(Option::is_some) {
        return Ok(have.into_iter().flatten().collect());
    }
    let missing: Vec<DependencyIndex> = crates
        .iter()
        .filter(|c| c.index_project_id.is_some())
        .zip(&have)
        .filter(|(_, h)| h.is_none())
        .map(|(c, _)| c.clone())
        .collect();
    let started = Instant::now();
    let queue = Arc::new(Mutex::new(missing));
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_BUILD_THREADS);
    let (tx, rx) = channel::<Result<(), String>>();
    for _ in 0..threads {
        let (core, queue, tx) = (core.clone(), queue.clone(), tx.clone());
        // Detached on purpose: a build that outlives this call still fills the cache.
        std::thread::spawn(move || {
            loop {
                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop();
                let Some(c) = next else { break };
                let Some(id) = c.index_project_id else {
                    continue;
                };
                if let Err(e) = core.search.dependency(&c, |b| fill(&core, id, b)) {
                    let _ = tx.send(Err(format!("{e:#}")));
                    return;
                }
            }
            let _ = tx.send(Ok(()));
        });
    }
    drop(tx);
    let deadline = started + wait;
    for _ in 0..threads {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(CallError::Internal(format!(
                    "building a dependency search index: {e}"
                )));
            }
            Err(RecvTimeoutError::Timeout) => {
                let done = ready(&ids).iter().filter(|h| h.is_some()).count();
                return Err(CallError::Internal(format!(
                    "the dependency search index is still being built ({done} of {} crates ready \
                     after {} s; it is built once per crate version and kept): call again shortly",
                    ids.len(),
                    started.elapsed().as_secs()
                )));
            }
            // Every thread ended (one may have panicked): what is built is checked below.
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let have = ready(&ids);
    if have.iter().all(Option::is_some) {
        Ok(have.into_iter().flatten().collect())
    } else {
        Err(CallError::Internal(
            "building a dependency search index failed; see the server log".into(),
        ))
    }
}

/// The rows of hits by their ids (keys), in hit order; hits whose row is gone (deleted
/// since the index was built) are left out.
fn rows_of(core: &Core, ids: &[i64]) -> Result<HashMap<i64, SymbolRow>, CallError> {
    Ok(core
        .handle
        .block_on(core.projects.db().symbols_by_ids(ids))
        .map_err(internal)?
        .into_iter()
        .collect())
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
                let generation = self.core.projects.generation(project.id);
                let core = &self.core;
                let ix = core
                    .search
                    .workspace(
                        project.id,
                        &project.root,
                        generation,
                        &Rows {
                            host: self,
                            project_id: project.id,
                        },
                    )
                    .map_err(internal)?;
                let page = ix
                    .index
                    .search(query, None, offset, limit)
                    .map_err(search_error)?;
                let ids: Vec<i64> = page.hits.iter().map(|h| h.key as i64).collect();
                let mut rows = rows_of(core, &ids)?;
                let hits = page
                    .hits
                    .into_iter()
                    .filter_map(|h| {
                        let row = rows.remove(&(h.key as i64))?;
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
                // Like the `dependencies` interface: a changed Cargo.lock is read again first.
                self.block(
                    self.core
                        .projects
                        .deps()
                        .ensure_current(project.id, Path::new(&project.root)),
                )
                .map_err(|e| {
                    CallError::Internal(format!("reading the project's Cargo.lock: {e:#}"))
                })?;
                let locked = self
                    .block(db.dependency_indexes(project.id))
                    .map_err(internal)?;
                let chosen = select_crates(
                    &locked,
                    || self.block(db.all_dependency_indexes()),
                    crate_name,
                )?;
                // Check the query before any index is built for it.
                scryer_search::check_query(query).map_err(search_error)?;
                if chosen.is_empty() {
                    // Nothing indexed to search: the router explains from `locked-crates`.
                    return Ok(SearchPage {
                        hits: Vec::new(),
                        total: 0,
                    });
                }
                let indexes = crate_indexes(&self.core, &chosen, DEPENDENCY_BUILD_WAIT)?;
                let refs: Vec<&SymbolIndex> = indexes.iter().map(Arc::as_ref).collect();
                let page = SymbolIndex::search_many(&refs, query, None, offset, limit)
                    .map_err(search_error)?;
                let ids: Vec<i64> = page.hits.iter().map(|h| h.hit.key as i64).collect();
                let mut rows = rows_of(&self.core, &ids)?;
                let hits = page
                    .hits
                    .into_iter()
                    .filter_map(|h| {
                        let c = chosen.get(h.source)?;
                        let row = rows.remove(&(h.hit.key as i64))?;
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
            indexed_at: id.map(|_| "2026-12-01T00:00:00Z".into()),
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

    /// The service over a real server and database: a project indexed by the indexer,
    /// and a second project locking two crates whose indexes are written directly.
    mod live {
        use std::path::Path;
        use std::sync::Arc;
        use std::time::Duration;

        use scryer_db::{DependencyRecord, FileWrite, SymbolRow};
        use scryer_runtime::wit::{CallError, Project, SearchPage, SearchScope};
        use scryer_runtime::{CallScope, HostServices, Limits};

        use crate::{Server, ServerConfig};

        fn scope(p: &scryer_db::ProjectRow) -> CallScope {
            CallScope {
                plugin: "search".into(),
                project: Some(Project {
                    id: p.id,
                    slug: p.slug.clone(),
                    root: p.root.clone(),
                }),
                session: 0,
                window: Default::default(),
                memo: Default::default(),
            }
        }

        async fn search(
            host: &Arc<dyn HostServices>,
            scope: &CallScope,
            query: &str,
            level: SearchScope,
            krate: Option<&str>,
        ) -> Result<SearchPage, CallError> {
            let (host, scope, query) = (host.clone(), scope.clone(), query.to_string());
            let krate = krate.map(str::to_string);
            // Host services block on the runtime: they run on a blocking thread, as in a call.
            tokio::task::spawn_blocking(move || {
                host.search(&scope, &query, level, krate.as_deref(), 0, 10)
            })
            .await
            .unwrap()
        }

        fn names(page: &SearchPage) -> Vec<&str> {
            page.hits.iter().map(|h| h.symbol.name.as_str()).collect()
        }

        fn row(name: &str, line: u32, doc: &str) -> SymbolRow {
            SymbolRow {
                name: name.into(),
                kind: "function".into(),
                qualified_name: format!("codec::{name}"),
                owner: None,
                signature: format!("pub fn {name}()"),
                docstring: Some(doc.into()),
                start_line: line,
                end_line: line,
                name_line: line,
                name_column: 8,
                file_path: String::new(),
            }
        }

        fn file(symbols: Vec<SymbolRow>) -> FileWrite {
            FileWrite {
                path: "src/codec.rs".into(),
                content_hash: "h".into(),
                size: 1,
                language: "rust".into(),
                parse_errors: false,
                line_count: 10,
                symbols,
                references: vec![],
                edges: vec![],
            }
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn searches_a_project_and_the_crates_it_locks() {
            let dir = tempfile::tempdir().unwrap();
            let server = Server::start(ServerConfig {
                db_path: dir.path().join("index.db"),
                compile_cache: None,
                limits: Limits::default(),
                plugins: vec![],
                first_query_wait: Duration::from_secs(5),
                watch_files: false,
            })
            .await
            .unwrap();
            let host = server.host_services();

            // Workspace: indexed by the indexer, searched, changed, re-indexed.
            let root = dir.path().join("demo");
            std::fs::create_dir_all(root.join("src")).unwrap();
            std::fs::write(
                root.join("src/lib.rs"),
                "/// Reads the settings file.\npub fn parse_config() {}\n\npub struct ConfigLoader;\n",
            )
            .unwrap();
            let demo = server.index_path(&root).await.unwrap();
            let ws = scope(&demo);
            let page = search(&host, &ws, "parse config", SearchScope::Workspace, None)
                .await
                .unwrap();
            assert_eq!(names(&page)[0], "parse_config");
            assert_eq!(page.hits[0].symbol.file_path, "src/lib.rs");
            assert_eq!(page.hits[0].matched_terms, ["parse", "config"]);
            assert_eq!(page.total, 2);
            assert!(page.hits[0].crate_name.is_none());

            std::fs::write(
                root.join("src/lib.rs"),
                "pub fn parse_config() {}\n\npub fn brand_new_thing() {}\n",
            )
            .unwrap();
            server.index_path(&root).await.unwrap();
            let page = search(&host, &ws, "brand new", SearchScope::Workspace, None)
                .await
                .unwrap();
            assert_eq!(names(&page), ["brand_new_thing"]);

            assert!(matches!(
                search(&host, &ws, "::", SearchScope::Workspace, None).await,
                Err(CallError::InvalidArgument(m)) if m.contains("no searchable term")
            ));
            assert!(matches!(
                search(&host, &ws, "x", SearchScope::Workspace, Some("serde")).await,
                Err(CallError::InvalidArgument(m)) if m.contains("workspace")
            ));
            let nowhere = CallScope {
                project: None,
                ..ws.clone()
            };
            assert!(matches!(
                search(&host, &nowhere, "x", SearchScope::Workspace, None).await,
                Err(CallError::NotFound(_))
            ));
            // It locks nothing: an empty page, the router explains.
            let none = search(&host, &ws, "frame", SearchScope::Dependencies, None)
                .await
                .unwrap();
            assert_eq!(none.total, 0);

            // Dependencies: a project whose Cargo.lock locks two crates, their indexes
            // written as the dependency indexer would.
            let app_root = dir.path().join("app");
            std::fs::create_dir_all(&app_root).unwrap();
            std::fs::write(
                app_root.join("Cargo.lock"),
                "version = 4\n\n\
                 [[package]]\nname = \"tiny-dep\"\nversion = \"1.2.0\"\n\
                 source = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n\
                 [[package]]\nname = \"other_dep\"\nversion = \"0.3.0\"\n\
                 source = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
            )
            .unwrap();
            let db = server.core.projects.db().clone();
            let app = db
                .register_project(&app_root.to_string_lossy(), Some("app"))
                .await
                .unwrap();
            // Records what the Cargo.lock names (the sources are in no registry here).
            server
                .core
                .projects
                .deps()
                .ensure_current(app.id, &app_root)
                .await
                .unwrap();
            let tiny_src = dir.path().join("registry/tiny-dep-1.2.0");
            let other_src = dir.path().join("registry/other_dep-0.3.0");
            let record = |name: &str, version: &str, src: &Path| DependencyRecord {
                name: name.into(),
                version: version.into(),
                source_root: Some(src.to_string_lossy().into_owned()),
                note: None,
            };
            db.record_project_dependencies(
                app.id,
                &[
                    record("tiny-dep", "1.2.0", &tiny_src),
                    record("other_dep", "0.3.0", &other_src),
                ],
            )
            .await
            .unwrap();
            for p in db.pending_dependencies(Some(app.id)).await.unwrap() {
                let holder = db.dependency_index_project(p.crate_id).await.unwrap();
                let symbols = if p.name == "tiny-dep" {
                    vec![
                        row("decode_frame", 3, "Decodes one frame."),
                        row("Frame", 9, "A frame."),
                    ]
                } else {
                    vec![row("encode_frame", 5, "Encodes a frame into bytes.")]
                };
                db.write_files(holder.id, &[file(symbols)], &[])
                    .await
                    .unwrap();
                db.finish_dependency_index(p.crate_id, None).await.unwrap();
            }

            let deps = scope(&app);
            let page = search(&host, &deps, "frame", SearchScope::Dependencies, None)
                .await
                .unwrap();
            assert_eq!(page.total, 3);
            assert_eq!(names(&page)[0], "Frame", "the exact name first");
            let frame = &page.hits[0];
            assert_eq!(frame.crate_name.as_deref(), Some("tiny-dep"));
            assert_eq!(frame.crate_version.as_deref(), Some("1.2.0"));
            assert_eq!(
                Path::new(&frame.symbol.file_path),
                tiny_src.join("src/codec.rs")
            );
            let encode = page
                .hits
                .iter()
                .find(|h| h.symbol.name == "encode_frame")
                .unwrap();
            assert_eq!(encode.crate_name.as_deref(), Some("other_dep"));

            let one = search(
                &host,
                &deps,
                "frame",
                SearchScope::Dependencies,
                Some("Other-Dep"),
            )
            .await
            .unwrap();
            assert_eq!(names(&one), ["encode_frame"]);
            match search(
                &host,
                &deps,
                "frame",
                SearchScope::Dependencies,
                Some("nope"),
            )
            .await
            {
                Err(CallError::NotFound(m)) => assert!(m.contains("other_dep, tiny-dep"), "{m}"),
                other => panic!("{other:?}"),
            }
            // Not locked by `demo`, but cached: the fallback finds it.
            let cached = search(
                &host,
                &ws,
                "decode",
                SearchScope::Dependencies,
                Some("tiny_dep"),
            )
            .await
            .unwrap();
            assert_eq!(names(&cached), ["decode_frame"]);
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn a_dependency_search_reads_the_lockfile_first_and_again_when_it_changed() {
            let dir = tempfile::tempdir().unwrap();
            let server = Server::start(ServerConfig {
                db_path: dir.path().join("index.db"),
                compile_cache: None,
                limits: Limits::default(),
                plugins: vec![],
                first_query_wait: Duration::from_secs(5),
                watch_files: false,
            })
            .await
            .unwrap();
            let host = server.host_services();
            let root = dir.path().join("app");
            std::fs::create_dir_all(&root).unwrap();
            // Names a crate no cargo registry holds: recorded as missing, never indexed.
            std::fs::write(
                root.join("Cargo.lock"),
                "version = 4\n\n[[package]]\nname = \"scryer-test-absent\"\nversion = \"0.0.1\"\n\
                 source = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
            )
            .unwrap();
            let db = server.core.projects.db().clone();
            let app = db
                .register_project(&root.to_string_lossy(), None)
                .await
                .unwrap();
            assert!(db.dependency_indexes(app.id).await.unwrap().is_empty());

            let page = search(&host, &scope(&app), "x", SearchScope::Dependencies, None)
                .await
                .unwrap();
            assert_eq!(page.total, 0);
            let locked = db.dependency_indexes(app.id).await.unwrap();
            let names: Vec<&str> = locked.iter().map(|d| d.crate_name.as_str()).collect();
            assert_eq!(names, ["scryer-test-absent"]);

            // `cargo update` swaps the crate: once the last look is old enough, the next
            // search sees the new lockfile.
            std::fs::write(
                root.join("Cargo.lock"),
                "version = 4\n\n[[package]]\nname = \"scryer-test-other\"\nversion = \"0.0.2\"\n\
                 source = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
            )
            .unwrap();
            tokio::time::sleep(crate::indexing::deps::RECHECK).await;
            search(&host, &scope(&app), "x", SearchScope::Dependencies, None)
                .await
                .unwrap();
            let locked = db.dependency_indexes(app.id).await.unwrap();
            let names: Vec<&str> = locked.iter().map(|d| d.crate_name.as_str()).collect();
            assert_eq!(names, ["scryer-test-other"]);
        }
    }

    /// The first dependency search (one index per locked crate) and later ones, over a
    /// database holding an indexed project whose `Cargo.lock` names crates in the local
    /// cargo registry. Indexes the pending crates first (writes to that database). See
    /// docs/learnings/search.md:
    ///
    /// ```text
    /// SCRYER_SEARCH_BENCH_DB=/tmp/search-bench.db cargo test -p scryer-server \
    ///     dependency_search_timings -- --ignored --nocapture
    /// ```
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs an indexed database: see the doc comment"]
    async fn dependency_search_timings() {
        use std::time::{Duration, Instant};

        use scryer_runtime::Limits;
        use scryer_runtime::wit::Project;

        use crate::{Server, ServerConfig};

        let path = std::env::var("SCRYER_SEARCH_BENCH_DB").unwrap_or("/tmp/search-bench.db".into());
        let server = Server::start(ServerConfig {
            db_path: path.into(),
            compile_cache: None,
            limits: Limits::default(),
            plugins: vec![],
            first_query_wait: Duration::from_secs(5),
            watch_files: false,
        })
        .await
        .unwrap();
        let db = server.core.projects.db().clone();
        let project = db.projects().await.unwrap().into_iter().next().unwrap();
        let started = Instant::now();
        server.core.projects.deps().index_locked_crates(&project);
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let pending = db.pending_dependencies(Some(project.id)).await.unwrap();
            if pending.is_empty() && started.elapsed() > Duration::from_secs(3) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(1800),
                "still {} pending",
                pending.len()
            );
        }
        let locked = db.dependency_indexes(project.id).await.unwrap();
        let indexed: Vec<_> = locked.iter().filter_map(|d| d.index_project_id).collect();
        let mut symbols = 0;
        for id in &indexed {
            symbols += db.all_symbols(*id).await.unwrap().len();
        }
        println!(
            "{}: {} locked crates, {} indexed ({} symbols), indexing took {} s",
            project.slug,
            locked.len(),
            indexed.len(),
            symbols,
            started.elapsed().as_secs()
        );

        let host = server.host_services();
        let scope = CallScope {
            plugin: "search".into(),
            project: Some(Project {
                id: project.id,
                slug: project.slug.clone(),
                root: project.root.clone(),
            }),
            session: 0,
            window: Default::default(),
            memo: Default::default(),
        };
        let attempt = {
            let (host, scope) = (host.clone(), scope.clone());
            move |query: &'static str| {
                let (host, scope) = (host.clone(), scope.clone());
                async move {
                    tokio::task::spawn_blocking(move || {
                        let start = Instant::now();
                        let page =
                            host.search(&scope, query, SearchScope::Dependencies, None, 0, 20);
                        (start.elapsed(), page)
                    })
                    .await
                    .unwrap()
                }
            }
        };
        let timed = {
            let attempt = attempt.clone();
            move |query: &'static str| {
                let attempt = attempt.clone();
                async move {
                    let (t, page) = attempt(query).await;
                    (t, page.unwrap())
                }
            }
        };
        // The first search builds every crate's index; past its wait it says so, and the
        // caller (an agent) calls again.
        let started = Instant::now();
        let mut calls = 0;
        let page = loop {
            calls += 1;
            match attempt("serialize map").await.1 {
                Ok(page) => break page,
                Err(CallError::Internal(m)) if m.contains("still being built") => {
                    println!("  call {calls}: {m}");
                }
                Err(e) => panic!("{e:?}"),
            }
        };
        println!(
            "first dependency search (builds {} indexes): answered after {} ms and {calls} call(s), {} hits",
            indexed.len(),
            started.elapsed().as_millis(),
            page.total
        );
        let queries = [
            "serialize map",
            "Deserializer",
            "spawn",
            "hash map entry",
            "Bytes",
        ];
        let mut times = Vec::new();
        for _ in 0..20 {
            for q in queries {
                times.push(timed(q).await.0);
            }
        }
        times.sort();
        println!(
            "later dependency searches ({} queries x 20): p50 {} us, p95 {} us",
            queries.len(),
            times[times.len() / 2].as_micros(),
            times[times.len() * 95 / 100].as_micros()
        );
        for q in queries {
            let (_, page) = timed(q).await;
            let top: Vec<String> = page
                .hits
                .iter()
                .take(3)
                .map(|h| {
                    format!(
                        "{} {} ({:.2})",
                        h.crate_name.as_deref().unwrap_or("?"),
                        h.symbol.qualified_name,
                        h.score
                    )
                })
                .collect();
            println!("{q:?} ({} hits): {}", page.total, top.join("; "));
        }
    }
}
