//! Project registration and index runs: at most one run per project at a time, in the
//! background, observable while it runs.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Result;
use scryer_db::{Db, EdgeRow, Facts, FileSpans, NameUses, ProjectRow, RefRow, SymbolRow};
use scryer_engine::indexer::{self, FileStamp, IndexReport, Progress, RefreshReport, Skipped};
use tokio::sync::{Mutex, watch};

use crate::indexing::deps::DependencyWorker;
use crate::indexing::runs::{Run, Runs};

/// A project's index state, as tools report it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexState {
    /// Indexed and complete.
    Ready,
    /// The first index is being built.
    Building { done: u32, total: u32 },
    /// A re-index runs over an existing index, or the last run did not finish.
    Stale { done: u32, total: u32 },
    /// Registered, never indexed.
    Unindexed,
}

impl IndexState {
    pub fn name(&self) -> &'static str {
        match self {
            IndexState::Ready => "ready",
            IndexState::Building { .. } => "building",
            IndexState::Stale { .. } => "stale",
            IndexState::Unindexed => "unindexed",
        }
    }
}

pub struct ProjectManager {
    db: Db,
    /// The search indexes built from this database: dependency indexing keeps each
    /// crate's, and calls search them.
    search: Arc<crate::indexing::search_cache::SearchCache>,
    /// The index runs going on (shared with the dependency worker, which gives way to them).
    runs: Arc<Runs>,
    /// The dependency worker: crates the projects lock, indexed in the background.
    deps: Arc<DependencyWorker>,
    /// One writer per project: index runs and file refreshes take this lock.
    writers: Mutex<HashMap<i64, Arc<Mutex<()>>>>,
    /// Bumped whenever a project's stored index changes (a run ends, a refresh wrote), so
    /// in-memory structures built from it (the search index) know when to rebuild.
    generations: std::sync::Mutex<HashMap<i64, u64>>,
    /// Counts per project at an index generation: counting a large project's rows costs
    /// milliseconds, and routers ask for them on every call.
    facts: std::sync::Mutex<HashMap<i64, (u64, Facts)>>,
    /// Held while `facts` or `paths` is read (see [`kept`]).
    reading_facts: tokio::sync::Mutex<()>,
    reading_paths: tokio::sync::Mutex<()>,
    /// (size, mtime) of files whose content matched the index when an index run read them
    /// or a refresh last checked them.
    stamps: std::sync::Mutex<HashMap<(i64, String), FileStamp>>,
    /// A name's usage rows per project, at an index generation (see [`NameCache`]); also
    /// the rows of some kinds only, keyed `name` + U+001F + the kinds.
    usages: std::sync::Mutex<NameCache<RefRow>>,
    /// The definitions of a name, per project, at an index generation: a common name's
    /// thousands of rows are read by every call about it (ADR 0029).
    definitions: std::sync::Mutex<NameCache<SymbolRow>>,
    /// The call edges to a name, per project, at an index generation (ADR 0029).
    edges: std::sync::Mutex<NameCache<EdgeRow>>,
    /// The files that use a name and how many usage rows (and calls) each holds, in path
    /// order (the order of a name's rows), per project, at an index generation.
    uses: std::sync::Mutex<NameCache<NameUses>>,
    /// Each project's file paths by id, at an index generation.
    paths: std::sync::Mutex<HashMap<i64, AtGeneration<HashMap<i64, String>>>>,
    /// Registrations in flight, by root: one registration (and first index start) per
    /// root at a time; every other caller for that root awaits its answer.
    registering: std::sync::Mutex<HashMap<PathBuf, Registered>>,
    /// What the last run and later refreshes found and left out (links leaving the root,
    /// files too large), per project: the facts answers report.
    skipped: std::sync::Mutex<HashMap<i64, Skipped>>,
    /// Precise mode: the SCIP indexers run after index runs and edits (ADR 0018).
    precise: Arc<crate::indexing::precise::PreciseService>,
}

/// The answer of a registration in flight: `None` until it is known.
type Registered = watch::Receiver<Option<Result<ProjectRow, String>>>;

/// A value and the index generation it was read at.
type AtGeneration<T> = (u64, Arc<T>);

/// What was recently read about names. Attribution asks about the same common names
/// (`new`, `Ok`, owner types and their accessors) across calls and many times within
/// one `inspect_symbol`; reading `new`'s 2,300 rows on tokio takes milliseconds.
/// Entries hold the generation they were read at and are served only at that
/// generation and while no run is writing, like `facts`.
pub struct NameCache<V> {
    /// (project, key) → (generation read at, values).
    entries: HashMap<(i64, String), AtGeneration<Vec<V>>>,
    /// Values held in all entries: past [`MAX_CACHED_NAME_VALUES`] the cache starts over.
    held: usize,
}

impl<V> Default for NameCache<V> {
    fn default() -> Self {
        NameCache {
            entries: HashMap::new(),
            held: 0,
        }
    }
}

impl<V> NameCache<V> {
    fn get(&self, key: &(i64, String), generation: u64) -> Option<Arc<Vec<V>>> {
        self.entries
            .get(key)
            .filter(|(g, _)| *g == generation)
            .map(|(_, v)| v.clone())
    }

    fn put(&mut self, key: (i64, String), generation: u64, values: Arc<Vec<V>>) {
        if values.len() > MAX_CACHED_NAME_VALUES {
            return;
        }
        if self.held + values.len() > MAX_CACHED_NAME_VALUES {
            *self = NameCache::default();
        }
        self.held += values.len();
        if let Some((_, old)) = self.entries.insert(key, (generation, values)) {
            self.held -= old.len();
        }
    }
}

/// See [`ProjectManager::read_point`].
#[derive(Clone, Copy)]
struct ReadPoint {
    project_id: i64,
    generation: u64,
    writing: bool,
}

/// `map`'s value for the project at `at`, else `read`'s answer (kept unless a run writes).
///
/// One read at a time per map (`reading`): a call that finds the value being read (a
/// session's opening reads the project's paths while its first call asks for them) waits
/// for that read instead of making the same one beside it.
async fn kept<V: Clone>(
    map: &std::sync::Mutex<HashMap<i64, (u64, V)>>,
    reading: &tokio::sync::Mutex<()>,
    at: ReadPoint,
    read: impl Future<Output = Result<V>>,
) -> Result<V> {
    let lock = || map.lock().unwrap_or_else(|p| p.into_inner());
    let held = || {
        lock()
            .get(&at.project_id)
            .filter(|(g, _)| !at.writing && *g == at.generation)
            .map(|(_, v)| v.clone())
    };
    if let Some(v) = held() {
        return Ok(v);
    }
    let _one = reading.lock().await;
    if let Some(v) = held() {
        return Ok(v);
    }
    let fresh = read.await?;
    if !at.writing {
        lock().insert(at.project_id, (at.generation, fresh.clone()));
    }
    Ok(fresh)
}

/// Whether `map` (as [`kept`] fills it) holds `project_id`'s value of `generation`.
fn kept_at<V>(
    map: &std::sync::Mutex<HashMap<i64, (u64, V)>>,
    project_id: i64,
    generation: u64,
) -> bool {
    map.lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&project_id)
        .is_some_and(|(g, _)| *g == generation)
}

/// What `cache` holds for `key` at `at`, when no run is writing.
fn peek<V>(
    cache: &std::sync::Mutex<NameCache<V>>,
    at: ReadPoint,
    key: &str,
) -> Option<Arc<Vec<V>>> {
    if at.writing {
        return None;
    }
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&(at.project_id, key.to_string()), at.generation)
}

/// `cache`'s entry for `key` at `at`, else `read`'s answer (kept unless a run writes).
async fn cached<V>(
    cache: &std::sync::Mutex<NameCache<V>>,
    at: ReadPoint,
    key: String,
    read: impl Future<Output = Result<Vec<V>>>,
) -> Result<Arc<Vec<V>>> {
    if let Some(values) = peek(cache, at, &key) {
        return Ok(values);
    }
    let values = Arc::new(read.await?);
    if !at.writing {
        cache.lock().unwrap_or_else(|p| p.into_inner()).put(
            (at.project_id, key),
            at.generation,
            values.clone(),
        );
    }
    Ok(values)
}

/// A usage window that leaves at most 1/this of its name's rows out is sliced from the
/// whole list (read once, kept) rather than read from its files alone (ADR 0041); an
/// edge window likewise (ADR 0042). A smaller one is read from its files and kept as a
/// window: `into` on the monorepo, a 10,000-row window of 17,078, was read whole (the
/// rule was "at least a quarter") at 5 µs a row.
const WINDOW_READ_WHOLE_FRACTION: usize = 4;

/// Whether a window of `wanted` rows of `total` is read as the whole list.
fn read_whole(wanted: usize, total: usize) -> bool {
    total
        .saturating_sub(wanted)
        .saturating_mul(WINDOW_READ_WHOLE_FRACTION)
        <= total
}

/// The cache key of a window of `name`'s rows read from its files alone (the whole
/// list's key is the name; a kind filter's holds `\u{1f}`).
fn window_key(name: &str, wanted: &Range<usize>) -> String {
    format!("{name}\u{1e}{}..{}", wanted.start, wanted.end)
}

/// `kinds` sorted, each once, and the cache key of `name`'s rows of those kinds.
fn kinds_key(name: &str, kinds: &[String]) -> (Vec<String>, String) {
    let mut kinds = kinds.to_vec();
    kinds.sort();
    kinds.dedup();
    let key = format!("{name}\u{1f}{}", kinds.join(","));
    (kinds, key)
}

/// A read of some kinds of a name's rows goes to the files holding them alone when they
/// are at most 1/this of the files using the name (else one read over the name index).
const FEW_FILES_FRACTION: usize = 4;

/// The files (of `per_file`: file id and its row count, in row order) whose rows overlap
/// `wanted`, and the index of the first of those files' first row.
fn files_over(
    per_file: impl IntoIterator<Item = (i64, usize)>,
    wanted: &Range<usize>,
) -> (Vec<i64>, usize) {
    let (mut files, mut first, mut row) = (Vec::new(), None, 0usize);
    for (file, n) in per_file {
        let end = row + n;
        if end > wanted.start && row < wanted.end {
            first.get_or_insert(row);
            files.push(file);
        }
        if end >= wanted.end {
            break;
        }
        row = end;
    }
    (files, first.unwrap_or(wanted.start))
}

/// `wanted` made relative to rows read from its files, the first of which is row
/// `first`, and clamped to the `read` rows there are.
fn within(wanted: Range<usize>, first: usize, read: usize) -> Range<usize> {
    let start = wanted.start - first.min(wanted.start);
    start.min(read)..(start + wanted.len()).min(read)
}

/// The window `take` picks of a name's list, whose rows each file of `per_file` holds
/// (file id and row count, in the list's order): a window of nearly all of it is sliced
/// from the whole list (`whole`, read once and kept); a smaller one is read from the
/// files holding it (`in_files`) and kept in `cache` under `key` and its range. Usages
/// (ADR 0041), call edges (ADR 0042) and rows of some kinds (ADR 0049) are windowed so.
async fn window_of<V, W, WF, F, FF>(
    cache: &std::sync::Mutex<NameCache<V>>,
    at: ReadPoint,
    key: &str,
    per_file: Vec<(i64, usize)>,
    take: impl FnOnce(usize) -> Range<usize>,
    whole: W,
    in_files: F,
) -> Result<(Arc<Vec<V>>, Range<usize>)>
where
    W: FnOnce() -> WF,
    WF: Future<Output = Result<Arc<Vec<V>>>>,
    F: FnOnce(Vec<i64>) -> FF,
    FF: Future<Output = Result<Vec<V>>>,
{
    let total: usize = per_file.iter().map(|&(_, n)| n).sum();
    let wanted = take(total);
    // A window of nearly all the rows is sliced from the whole, read once and kept;
    // a smaller one (`into` on the monorepo: 10,000 of 17,078) is read from its files
    // and kept under its range (`read_whole`).
    if read_whole(wanted.len(), total) {
        let all = whole().await?;
        let n = all.len();
        return Ok((all, wanted.start.min(n)..wanted.end.min(n)));
    }
    let (files, first) = files_over(per_file, &wanted);
    let rows = cached(cache, at, window_key(key, &wanted), in_files(files)).await?;
    let window = within(wanted, first, rows.len());
    Ok((rows, window))
}

/// About 30 MB of usage rows on tokio-sized projects at most.
const MAX_CACHED_NAME_VALUES: usize = 200_000;

impl ProjectManager {
    pub fn new(db: Db) -> Arc<ProjectManager> {
        let search = Arc::new(crate::indexing::search_cache::SearchCache::new(
            crate::indexing::search_cache::dependency_dir(db.path()),
        ));
        let runs = Arc::new(Runs::default());
        let deps = DependencyWorker::new(db.clone(), search.clone(), runs.clone());
        Arc::new(ProjectManager {
            search,
            runs,
            deps,
            writers: Mutex::new(HashMap::new()),
            generations: std::sync::Mutex::new(HashMap::new()),
            facts: std::sync::Mutex::new(HashMap::new()),
            reading_facts: tokio::sync::Mutex::new(()),
            reading_paths: tokio::sync::Mutex::new(()),
            stamps: std::sync::Mutex::new(HashMap::new()),
            usages: std::sync::Mutex::new(NameCache::default()),
            definitions: std::sync::Mutex::new(NameCache::default()),
            edges: std::sync::Mutex::new(NameCache::default()),
            uses: std::sync::Mutex::new(NameCache::default()),
            paths: std::sync::Mutex::new(HashMap::new()),
            registering: std::sync::Mutex::new(HashMap::new()),
            skipped: std::sync::Mutex::new(HashMap::new()),
            precise: crate::indexing::precise::PreciseService::new(db.clone()),
            db,
        })
    }

    /// The precise service (SCIP data, its runs and its answers).
    pub fn precise(&self) -> &Arc<crate::indexing::precise::PreciseService> {
        &self.precise
    }

    /// What the index of `project_id` leaves out, as far as runs and refreshes saw.
    pub fn skipped(&self, project_id: i64) -> Skipped {
        let all = self.skipped.lock().unwrap_or_else(|p| p.into_inner());
        all.get(&project_id).cloned().unwrap_or_default()
    }

    /// Folds a refresh's findings into the project's skipped facts.
    fn note_refresh(&self, project_id: i64, report: &RefreshReport) {
        let mut all = self.skipped.lock().unwrap_or_else(|p| p.into_inner());
        let known = all.entry(project_id).or_default();
        for list in [&mut known.links_leaving_root, &mut known.too_large] {
            list.retain(|p| !report.cleared.contains(p));
        }
        for p in &report.skipped.links_leaving_root {
            if !known.links_leaving_root.contains(p) {
                known.links_leaving_root.push(p.clone());
            }
        }
        for p in &report.skipped.too_large {
            if !known.too_large.contains(p) {
                known.too_large.push(p.clone());
            }
        }
        known.links_leaving_root.sort();
        known.too_large.sort();
    }

    /// The index generation of a project: changes whenever its stored index changed.
    pub fn generation(&self, project_id: i64) -> u64 {
        *self
            .generations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&project_id)
            .unwrap_or(&0)
    }

    /// Where a read stands: the project's index generation, taken before the query, and
    /// whether a run is writing. Values read while a write lands are tagged with the
    /// generation before it, which that write's bump retires; while a run writes (it
    /// changes rows file by file without a new generation) nothing is served from a
    /// cache or kept in one.
    async fn read_point(&self, project_id: i64) -> ReadPoint {
        ReadPoint {
            project_id,
            generation: self.generation(project_id),
            writing: self.writing(project_id).await,
        }
    }

    /// Reads what nearly every call on a project needs and keeps it (its counts and
    /// its file paths), in the background, unless it is kept already: a session's first
    /// calls then find it read (on the monorepo 6 ms and 5 ms cold, each first call
    /// about a common name paid both).
    pub fn warm(self: &Arc<Self>, project_id: i64) {
        let generation = self.generation(project_id);
        if kept_at(&self.facts, project_id, generation)
            && kept_at(&self.paths, project_id, generation)
        {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            let at = this.read_point(project_id).await;
            let _ = this.facts(project_id).await;
            let _ = this.file_paths(at).await;
        });
    }

    /// The project's counts: routers ask for them on every call.
    pub async fn facts(&self, project_id: i64) -> Result<Facts> {
        let at = self.read_point(project_id).await;
        kept(
            &self.facts,
            &self.reading_facts,
            at,
            self.db.facts(project_id),
        )
        .await
    }

    /// Every usage site of `name` in the project, ordered by file then line.
    pub async fn references_to_name(
        &self,
        project_id: i64,
        name: &str,
    ) -> Result<Arc<Vec<RefRow>>> {
        let at = self.read_point(project_id).await;
        cached(
            &self.usages,
            at,
            name.to_string(),
            self.db.references_to_name(project_id, name),
        )
        .await
    }

    /// The definitions named `name` in the project, as stored.
    pub async fn symbols_by_name(
        &self,
        project_id: i64,
        name: &str,
    ) -> Result<Arc<Vec<SymbolRow>>> {
        let at = self.read_point(project_id).await;
        cached(
            &self.definitions,
            at,
            name.to_string(),
            self.db.symbols_by_name(project_id, name),
        )
        .await
    }

    /// The call edges to `name` (stored edges and call references made edges).
    pub async fn edges_to(&self, project_id: i64, name: &str) -> Result<Arc<Vec<EdgeRow>>> {
        let at = self.read_point(project_id).await;
        cached(
            &self.edges,
            at,
            name.to_string(),
            self.db
                .edges_to(project_id, name, scryer_engine::lang::call_edge_kind),
        )
        .await
    }

    /// The usage sites of `name` whose kind is one of `kinds`, ordered by file then line.
    pub async fn references_of_kinds(
        &self,
        project_id: i64,
        name: &str,
        kinds: &[String],
    ) -> Result<Arc<Vec<RefRow>>> {
        let at = self.read_point(project_id).await;
        if let Some(rows) = peek(&self.usages, at, name) {
            return Ok(Arc::new(
                rows.iter()
                    .filter(|r| kinds.contains(&r.kind))
                    .cloned()
                    .collect(),
            ));
        }
        let (kinds, key) = kinds_key(name, kinds);
        cached(&self.usages, at, key, async {
            // When the name's per-file counts are known (a windowed call read them), a
            // read of kinds few files hold goes to those files alone: `new`'s `use`
            // and `implements` rows on the monorepo, among 102,528, took 7-10 ms
            // through the whole name index.
            let few = peek(&self.uses, at, name).and_then(|uses| {
                let wanted = scryer_db::kind_bits(kinds.iter().map(String::as_str));
                let files: Vec<i64> = uses
                    .iter()
                    .filter(|u| u.kinds & wanted != 0)
                    .map(|u| u.file_id)
                    .collect();
                (files.len().saturating_mul(FEW_FILES_FRACTION) <= uses.len())
                    .then(|| FileSpans::among_uses(&files, &uses))
            });
            match few {
                Some(files) if !kinds.is_empty() => {
                    self.db
                        .references_in_files_of_kinds(project_id, name, &files, Some(&kinds))
                        .await
                }
                _ => self.db.references_of_kinds(project_id, name, &kinds).await,
            }
        })
        .await
    }

    /// A window of `name`'s rows of the kinds `kinds` (ordered by file then line, as
    /// [`references_of_kinds`](Self::references_of_kinds) gives them all): `take` is told
    /// how many there are and answers which to hand over. As with
    /// [`usage_window`](Self::usage_window), a window of a longer list is read from the
    /// files holding it alone, found by each file's count of those kinds in the name
    /// index: `fmt`'s `use` and `implements` rows on the monorepo are 9,879, of which a
    /// call hands a router about 140 (ADR 0049).
    pub async fn kinds_window(
        &self,
        project_id: i64,
        name: &str,
        kinds: &[String],
        take: impl FnOnce(usize) -> Range<usize>,
    ) -> Result<(Arc<Vec<RefRow>>, Range<usize>)> {
        let at = self.read_point(project_id).await;
        let (kinds, whole_key) = kinds_key(name, kinds);
        let kept =
            peek(&self.usages, at, name).is_some() || peek(&self.usages, at, &whole_key).is_some();
        if kept {
            let all = self.references_of_kinds(project_id, name, &kinds).await?;
            let wanted = take(all.len());
            return Ok((all, wanted));
        }
        let paths = self.file_paths(at).await?;
        let mut per_file = self.db.kinds_per_file(project_id, name, &kinds).await?;
        per_file.sort_by(|a, b| paths.get(&a.0).cmp(&paths.get(&b.0)));
        let per_file = per_file.into_iter().map(|(f, n)| (f, n as usize)).collect();
        let kinds = &kinds;
        window_of(
            &self.usages,
            at,
            &whole_key,
            per_file,
            take,
            || self.references_of_kinds(project_id, name, kinds),
            |files| async move {
                // Spans bridge files by all their rows of the name, which only its usage
                // counts tell; without them, a span per file.
                let spans = match peek(&self.uses, at, name) {
                    Some(uses) => FileSpans::among_uses(&files, &uses),
                    None => FileSpans::each(&files),
                };
                self.db
                    .references_in_files_of_kinds(project_id, name, &spans, Some(kinds))
                    .await
            },
        )
        .await
    }

    /// A window of `name`'s usage rows (ordered by file then line): `take` is told how
    /// many there are and answers which to hand over. Rows wanted whole are read whole
    /// (and cached); a window of a longer list is read from the files holding it alone,
    /// found by counting each file's rows in the name index (ADR 0041): on the 7.17M-line
    /// monorepo a window of `new`'s 102,528 rows costs milliseconds instead of 400.
    pub async fn usage_window(
        &self,
        project_id: i64,
        name: &str,
        take: impl FnOnce(usize) -> Range<usize>,
    ) -> Result<(Arc<Vec<RefRow>>, Range<usize>)> {
        let at = self.read_point(project_id).await;
        if let Some(all) = peek(&self.usages, at, name) {
            let wanted = take(all.len());
            return Ok((all, wanted));
        }
        let uses = self.uses_per_file(at, name).await?;
        window_of(
            &self.usages,
            at,
            name,
            uses.iter().map(|u| (u.file_id, u.rows as usize)).collect(),
            take,
            || self.references_to_name(project_id, name),
            |files| async move {
                let reading = std::time::Instant::now();
                let spans = FileSpans::among_uses(&files, &uses);
                let rows = self.db.references_in_files(project_id, name, &spans).await;
                tracing::debug!(
                    target: "scryer::call_time",
                    files = files.len(),
                    spans = spans.spans().len(),
                    rows = rows.as_ref().map_or(0, Vec::len),
                    read_us = reading.elapsed().as_micros() as u64,
                    "usage window read"
                );
                rows
            },
        )
        .await
    }

    /// A window of the call edges to `name` (stored edges and call references, ordered by
    /// file then line, as [`edges_to`](Self::edges_to) gives them all): `take` is told
    /// how many there are and answers which to hand over. Like
    /// [`usage_window`](Self::usage_window), a window of a long list is read from the
    /// files holding it alone, found by each file's count of calls in the name index
    /// (ADR 0042).
    pub async fn edge_window(
        &self,
        project_id: i64,
        name: &str,
        take: impl FnOnce(usize) -> Range<usize>,
    ) -> Result<(Arc<Vec<EdgeRow>>, Range<usize>)> {
        let at = self.read_point(project_id).await;
        if let Some(all) = peek(&self.edges, at, name) {
            let wanted = take(all.len());
            return Ok((all, wanted));
        }
        let uses = self.uses_per_file(at, name).await?;
        let stored = self.db.stored_edges_to(project_id, name).await?;
        // Each file's edges, in path order: its calls, and its stored edges (a file may
        // hold stored edges and no usage row of the name).
        let mut per_file: Vec<(i64, usize)> = uses
            .iter()
            .filter(|u| u.calls > 0)
            .map(|u| (u.file_id, u.calls as usize))
            .collect();
        if !stored.is_empty() {
            let mut counts: HashMap<i64, usize> = per_file.iter().copied().collect();
            for (file, _) in &stored {
                *counts.entry(*file).or_default() += 1;
            }
            let paths = self.file_paths(at).await?;
            per_file = counts.into_iter().collect();
            per_file.sort_by(|a, b| paths.get(&a.0).cmp(&paths.get(&b.0)));
        }
        let rule = scryer_engine::lang::call_edge_kind;
        let stored = &stored;
        window_of(
            &self.edges,
            at,
            name,
            per_file,
            take,
            // The whole list, as `edges_to` reads it but with the stored edges already
            // read: them first (at one position the extractor's edge comes first), then
            // the calls, in one order.
            || {
                cached(&self.edges, at, name.to_string(), async move {
                    let mut all: Vec<EdgeRow> = stored.iter().map(|(_, e)| e.clone()).collect();
                    all.extend(self.db.call_edges_to(project_id, name, rule).await?);
                    scryer_db::sort_edges(&mut all);
                    Ok(all)
                })
            },
            |files| async move {
                let spans = FileSpans::among_uses(&files, &uses);
                // Stored edges first: at one position the extractor's edge comes first.
                let mut rows: Vec<EdgeRow> = stored
                    .iter()
                    .filter(|(file, _)| spans.keeps(*file))
                    .map(|(_, e)| e.clone())
                    .collect();
                rows.extend(
                    self.db
                        .call_edges_in_files(project_id, name, &spans, rule)
                        .await?,
                );
                scryer_db::sort_edges(&mut rows);
                Ok(rows)
            },
        )
        .await
    }

    /// How many usage rows `name` has: off its cached rows, else off the name index.
    pub async fn usage_count(&self, project_id: i64, name: &str) -> Result<usize> {
        let at = self.read_point(project_id).await;
        if let Some(all) = peek(&self.usages, at, name) {
            return Ok(all.len());
        }
        let uses = self.uses_per_file(at, name).await?;
        Ok(uses.iter().map(|u| u.rows as usize).sum())
    }

    /// The files that use `name` with their usage row counts, in path order.
    /// A name with a record of them (`scryer_db::Db::dense_uses`) is read in path order
    /// without the project's paths: on the monorepo those took 21-24 ms of `new`'s first
    /// call, read cold beside its definitions.
    async fn uses_per_file(&self, at: ReadPoint, name: &str) -> Result<Arc<Vec<NameUses>>> {
        cached(&self.uses, at, name.to_string(), async {
            if let Some(uses) = self.db.dense_uses(at.project_id, name).await? {
                return Ok(uses);
            }
            let paths = self.file_paths(at).await?;
            let mut uses = self.db.uses_per_file(at.project_id, name).await?;
            uses.sort_by(|a, b| paths.get(&a.file_id).cmp(&paths.get(&b.file_id)));
            Ok(uses)
        })
        .await
    }

    /// The project's file paths by id.
    async fn file_paths(&self, at: ReadPoint) -> Result<Arc<HashMap<i64, String>>> {
        kept(&self.paths, &self.reading_paths, at, async {
            Ok(Arc::new(self.db.file_paths(at.project_id).await?))
        })
        .await
    }

    /// The files that use any of `names`, sorted, each once: read off a name's cached
    /// usage rows when there are some, else off the name index.
    pub async fn files_naming(&self, project_id: i64, names: &[String]) -> Result<Vec<String>> {
        let at = self.read_point(project_id).await;
        let mut files = std::collections::BTreeSet::new();
        for name in names {
            if let Some(rows) = peek(&self.usages, at, name) {
                files.extend(rows.iter().map(|r| r.file_path.clone()));
                continue;
            }
            let uses = self.uses_per_file(at, name).await?;
            let paths = self.file_paths(at).await?;
            files.extend(uses.iter().filter_map(|u| paths.get(&u.file_id).cloned()));
        }
        Ok(files.into_iter().collect())
    }

    /// Whether an index run is writing the project's rows now: what is read then is not
    /// kept (the caches here, and the precise answers' kept unresolved sites).
    pub(crate) async fn writing(&self, project_id: i64) -> bool {
        self.runs
            .lock()
            .await
            .get(&project_id)
            .is_some_and(|r| !*r.finished.borrow())
    }

    /// A project's rows were deleted: what was cached from them is not served again.
    pub fn forget_index(&self, project_id: i64) {
        self.search.forget_kept_workspace(project_id);
        self.bump_generation(project_id);
    }

    /// Builds the search index of a project whose index run just finished and keeps it
    /// beside the database, so the first search of this or any later process needs no
    /// build (ADR 0024). A failure only costs that first search the build.
    async fn keep_search_index(self: &Arc<Self>, project_id: i64) {
        let Ok(Some(row)) = self.db.project(project_id).await else {
            return;
        };
        let Some(indexed_at) = row.indexed_at.clone().filter(|_| row.index_complete) else {
            return;
        };
        let this = self.clone();
        let generation = self.generation(project_id);
        let handle = tokio::runtime::Handle::current();
        let kept = tokio::task::spawn_blocking(move || {
            this.search
                .keep_workspace(project_id, &row.root, &indexed_at, generation, |b| {
                    crate::indexing::search_cache::fill_from(&handle, &this.db, project_id, b)
                })
        })
        .await;
        match kept {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(project_id, error = %format!("{e:#}"), "project search index not kept")
            }
            Err(e) => tracing::warn!(project_id, error = %e, "project search index not kept"),
        }
    }

    fn bump_generation(&self, project_id: i64) {
        *self
            .generations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(project_id)
            .or_default() += 1;
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The dependency worker of this database.
    pub(crate) fn deps(&self) -> &Arc<DependencyWorker> {
        &self.deps
    }

    pub(crate) fn search(&self) -> &Arc<crate::indexing::search_cache::SearchCache> {
        &self.search
    }

    /// Registers a directory (canonicalized) as a project, or answers the project
    /// registered there, without indexing it. One registration per root at a time:
    /// concurrent callers share it.
    #[cfg(test)]
    pub(crate) async fn register(self: &Arc<Self>, root: &Path) -> Result<ProjectRow> {
        self.register_once(root.to_path_buf(), false)
            .await
            .map_err(anyhow::Error::msg)
    }

    /// [`ProjectManager::register`], then an index run (a new one unless one runs):
    /// `index_workspace` and `scryer index`. A project never indexed has its first run
    /// started inside the registration, before any other caller learns of it, so every
    /// call that finds the row sees it building and waits.
    pub async fn register_and_index(
        self: &Arc<Self>,
        root: &Path,
    ) -> Result<(ProjectRow, watch::Receiver<bool>)> {
        let project = self
            .register_once(root.to_path_buf(), true)
            .await
            .map_err(anyhow::Error::msg)?;
        let finished = self.start_index(&project).await;
        Ok((project, finished))
    }

    /// Joins the registration of `root` in flight, or leads a new one. Which of the two
    /// is decided before this returns (no await), so a caller that marks something
    /// after calling it knows the registration is findable by [`Self::in_flight`].
    pub(crate) fn register_once(
        self: &Arc<Self>,
        root: PathBuf,
        first_index: bool,
    ) -> impl Future<Output = Result<ProjectRow, String>> + Send + 'static {
        let mut map = self.registering.lock().unwrap_or_else(|p| p.into_inner());
        let lead = match map.get(&root) {
            Some(rx) => Err(rx.clone()),
            None => {
                let (tx, rx) = watch::channel(None);
                map.insert(root.clone(), rx);
                Ok(tx)
            }
        };
        drop(map);
        let this = self.clone();
        async move {
            match lead {
                Err(rx) => answer_of(rx).await,
                Ok(tx) => {
                    // The entry goes when this ends, answered or not (a dropped sender
                    // wakes the followers, who then see no answer).
                    let _leave = LeaveRegistration(&this, &root);
                    let answer = this.register_now(&root, first_index).await;
                    let _ = tx.send(Some(answer.clone()));
                    answer
                }
            }
        }
    }

    /// The registration of `root` in flight, if any: its answer when it ends.
    pub(crate) async fn in_flight(&self, root: &Path) -> Option<Result<ProjectRow, String>> {
        let rx = self
            .registering
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(root)
            .cloned()?;
        Some(answer_of(rx).await)
    }

    /// Waits for every registration in flight now. A call that read the project rows
    /// and then waited here sees each row it read either finished registering (its first
    /// index run started) or not at all.
    pub(crate) async fn settle_registrations(&self) {
        let pending: Vec<Registered> = self
            .registering
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for rx in pending {
            let _ = answer_of(rx).await;
        }
    }

    async fn register_now(
        self: &Arc<Self>,
        root: &Path,
        first_index: bool,
    ) -> Result<ProjectRow, String> {
        let crate_name = scryer_engine::safe_fs::read_text(
            &root.join("Cargo.toml"),
            scryer_engine::file_limits::MAX_TEXT_BYTES,
        )
        .ok()
        .and_then(|t| indexer::crate_name_of(&t));
        let root_str = root.to_string_lossy();
        let project = self
            .db
            .register_project(&root_str, crate_name.as_deref())
            .await
            .map_err(|e| format!("registering {}: {e:#}", root.display()))?;
        if first_index
            && project.indexed_at.is_none()
            && !project.index_complete
            && !self.running(project.id).await
        {
            drop(self.start_index(&project).await);
        }
        Ok(project)
    }

    /// Whether a run of the project has started and not ended.
    async fn running(&self, project_id: i64) -> bool {
        self.writing(project_id).await
    }

    /// Starts an index run for `project` unless one is running; returns a receiver that
    /// turns `true` when the (new or running) run ends.
    pub async fn start_index(self: &Arc<Self>, project: &ProjectRow) -> watch::Receiver<bool> {
        let mut runs = self.runs.lock().await;
        if let Some(run) = runs.get(&project.id)
            && !*run.finished.borrow()
        {
            return run.finished.clone();
        }
        let (tx, rx) = watch::channel(false);
        let progress = Arc::new(Progress::default());
        runs.insert(
            project.id,
            Run {
                progress: progress.clone(),
                finished: rx.clone(),
            },
        );
        drop(runs);
        let this = self.clone();
        let project = project.clone();
        let writer = self.writer(project.id).await;
        tokio::spawn(async move {
            let _write = writer.lock().await;
            // The kept search index goes before the rows change (ADR 0024).
            this.search.forget_kept_workspace(project.id);
            let outcome: Result<IndexReport> =
                indexer::index_project(&this.db, &project, progress).await;
            if let Ok(report) = &outcome {
                let mut stamps = this.stamps.lock().unwrap_or_else(|p| p.into_inner());
                for (rel, stamp) in &report.stamps {
                    stamps.insert((project.id, rel.clone()), *stamp);
                }
                drop(stamps);
                this.skipped
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(project.id, report.skipped.clone());
                this.deps.index_locked_crates(&project);
            }
            match &outcome {
                Ok(r) => tracing::info!(
                    project = %project.slug,
                    files = r.files_seen,
                    parsed = r.files_parsed,
                    ms = r.elapsed_ms,
                    "index run finished"
                ),
                Err(e) => {
                    tracing::warn!(project = %project.slug, error = %format!("{e:#}"), "index run failed")
                }
            }
            this.bump_generation(project.id);
            if outcome.is_ok() {
                this.keep_search_index(project.id).await;
            }
            let _ = tx.send(true);
            if outcome.is_ok()
                && let Ok(Some(row)) = this.db.project(project.id).await
            {
                this.precise.index_ready(&row);
            }
        });
        rx
    }

    async fn writer(&self, project_id: i64) -> Arc<Mutex<()>> {
        self.writers
            .lock()
            .await
            .entry(project_id)
            .or_default()
            .clone()
    }

    /// Re-indexes, drops or adds the named files (project-relative) so answers about
    /// them are fresh. Skipped while an index run is active: the run writes them.
    pub async fn refresh(&self, project: &ProjectRow, paths: &[String]) -> Result<RefreshReport> {
        if paths.is_empty() {
            return Ok(RefreshReport::default());
        }
        if self.writing(project.id).await {
            return Ok(RefreshReport::default());
        }
        // Files whose size and mtime are what they were when their content last matched
        // the index need neither a read nor a hash (the index stores no mtime).
        let root = Path::new(&project.root);
        let stamp = |rel: &str| indexer::file_stamp(&root.join(rel));
        let unchanged = |rel: &String, now: &Option<FileStamp>| {
            now.is_some()
                && self
                    .stamps
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(&(project.id, rel.clone()))
                    == now.as_ref()
        };
        let mut checked: Vec<(String, Option<FileStamp>)> = Vec::new();
        for rel in paths {
            let now = stamp(rel);
            if !unchanged(rel, &now) {
                checked.push((rel.clone(), now));
            }
        }
        if checked.is_empty() {
            return Ok(RefreshReport::default());
        }
        let writer = self.writer(project.id).await;
        let _write = writer.lock().await;
        let rels: Vec<String> = checked.iter().map(|(r, _)| r.clone()).collect();
        // The kept search index learns which files change before their rows do, and only
        // if they do: a session's first answers check their files, which have not changed.
        let report = indexer::refresh_files_with(&self.db, project, &rels, |changed| {
            self.search.note_changes(project.id, changed)
        })
        .await?;
        self.note_refresh(project.id, &report);
        if !report.is_empty() {
            self.bump_generation(project.id);
            self.precise.edited(project);
        }
        let mut stamps = self.stamps.lock().unwrap_or_else(|p| p.into_inner());
        for (rel, now) in checked {
            // Remember the stamp only if the file did not move while it was refreshed:
            // then the index holds exactly the content that stamp describes.
            match now {
                Some(before) if stamp(&rel) == Some(before) => {
                    stamps.insert((project.id, rel), before);
                }
                _ => {
                    stamps.remove(&(project.id, rel));
                }
            }
        }
        Ok(report)
    }

    /// Waits until the project's running index run (if any) ends, at most `limit`.
    /// Returns whether no run is active afterwards.
    pub async fn wait_idle(&self, project_id: i64, limit: Duration) -> bool {
        self.runs.wait_idle(project_id, limit).await
    }

    /// The state of a project, combining the stored row with any run in progress.
    pub async fn state(&self, project: &ProjectRow) -> IndexState {
        let runs = self.runs.lock().await;
        if let Some(run) = runs.get(&project.id)
            && !*run.finished.borrow()
        {
            let done = run.progress.done.load(Ordering::Relaxed);
            let total = run.progress.total.load(Ordering::Relaxed);
            return if project.indexed_at.is_none() {
                IndexState::Building { done, total }
            } else {
                IndexState::Stale { done, total }
            };
        }
        match (project.index_complete, &project.indexed_at) {
            (true, _) => IndexState::Ready,
            (false, None) => IndexState::Unindexed,
            (false, Some(_)) => IndexState::Stale { done: 0, total: 0 },
        }
    }

    /// Finishes projects whose last run was interrupted (the process died mid-write):
    /// they are re-indexed in the background before they answer as complete.
    pub async fn resume_interrupted(self: &Arc<Self>) -> Result<usize> {
        let mut n = 0;
        for p in self.db.projects().await? {
            if !p.index_complete && p.last_error.is_none() && Path::new(&p.root).is_dir() {
                tracing::info!(project = %p.slug, "resuming an interrupted index run");
                self.start_index(&p).await;
                n += 1;
            }
        }
        Ok(n)
    }
}

/// Removes a led registration from the map when it ends.
struct LeaveRegistration<'a>(&'a ProjectManager, &'a Path);

impl Drop for LeaveRegistration<'_> {
    fn drop(&mut self) {
        self.0
            .registering
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(self.1);
    }
}

/// The answer a registration in flight sends.
async fn answer_of(mut rx: Registered) -> Result<ProjectRow, String> {
    match rx.wait_for(Option::is_some).await {
        Ok(answer) => answer.clone().expect("waited for an answer"),
        Err(_) => Err("the registration of this project was abandoned; call again".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project of two files, indexed for real.
    async fn indexed(dir: &Path) -> (Arc<ProjectManager>, ProjectRow) {
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            "pub mod shape;\nuse crate::shape::Shape;\npub fn area(s: &Shape) -> u32 { s.side() }\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("src/shape.rs"),
            "pub struct Shape;\nimpl Shape {\n    pub fn side(&self) -> u32 { 1 }\n}\n",
        )
        .unwrap();
        let db = Db::open(&dir.join("index.db")).await.unwrap();
        let pm = ProjectManager::new(db);
        let project = pm
            .register(&dir.join("src").parent().unwrap().canonicalize().unwrap())
            .await
            .unwrap();
        let mut done = pm.start_index(&project).await;
        done.wait_for(|d| *d).await.unwrap();
        (pm, project)
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[tokio::test]
    async fn narrow_reads_answer_the_same_from_the_database_and_from_cached_usages() {
        let dir = tempfile::tempdir().unwrap();
        let (pm, p) = indexed(dir.path()).await;
        let id = p.id;
        let kinds = names(&["use", "implements"]);

        // Nothing cached: file ids through the index, imports through a kind filter.
        let files = pm
            .files_naming(id, &names(&["Shape", "side"]))
            .await
            .unwrap();
        assert_eq!(files, ["src/lib.rs", "src/shape.rs"]);
        // `side` is called in lib.rs; its definition is not a usage.
        assert_eq!(
            pm.files_naming(id, &names(&["side"])).await.unwrap(),
            ["src/lib.rs"]
        );
        let imports = pm.references_of_kinds(id, "Shape", &kinds).await.unwrap();
        assert_eq!(
            imports
                .iter()
                .map(|r| (r.file_path.as_str(), r.line, r.kind.as_str()))
                .collect::<Vec<_>>(),
            [("src/lib.rs", 2, "use")]
        );

        // With the name's usage rows cached, the same answers are read off them.
        let all = pm.references_to_name(id, "Shape").await.unwrap();
        assert!(all.len() > imports.len(), "{all:?}");
        assert_eq!(
            pm.files_naming(id, &names(&["Shape", "side"]))
                .await
                .unwrap(),
            files
        );
        assert_eq!(
            pm.references_of_kinds(id, "Shape", &kinds).await.unwrap(),
            imports
        );
        assert!(
            pm.files_naming(id, &names(&["Nowhere"]))
                .await
                .unwrap()
                .is_empty()
        );

        // An edit is seen: a new file naming `Shape` after a refresh.
        std::fs::write(
            dir.path().join("src/extra.rs"),
            "use crate::shape::Shape;\npub fn unit() -> Shape { Shape }\n",
        )
        .unwrap();
        pm.refresh(&p, &names(&["src/extra.rs"])).await.unwrap();
        assert_eq!(
            pm.files_naming(id, &names(&["Shape"])).await.unwrap(),
            ["src/extra.rs", "src/lib.rs", "src/shape.rs"]
        );
        assert_eq!(
            pm.references_of_kinds(id, "Shape", &kinds)
                .await
                .unwrap()
                .len(),
            2
        );
    }
    /// Three more files using `Shape`, added after the first index, so their ids do not
    /// follow path order (`aa` sorts first).
    async fn shape_used_in_three_more_files(dir: &Path, pm: &ProjectManager, p: &ProjectRow) {
        for (file, uses) in [("src/zz.rs", 9), ("src/aa.rs", 7), ("src/mm.rs", 3)] {
            let body: String = (0..uses)
                .map(|i| format!("pub fn f{i}() -> Shape {{ Shape }}\n"))
                .collect();
            std::fs::write(dir.join(file), format!("use crate::shape::Shape;\n{body}")).unwrap();
        }
        let added = names(&["src/zz.rs", "src/aa.rs", "src/mm.rs"]);
        pm.refresh(p, &added).await.unwrap();
    }

    #[tokio::test]
    async fn a_window_read_from_its_files_alone_is_that_slice_of_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (pm, p) = indexed(dir.path()).await;
        shape_used_in_three_more_files(dir.path(), &pm, &p).await;
        let at = |rows: &[RefRow]| -> Vec<(String, u32, u32)> {
            rows.iter()
                .map(|r| (r.file_path.clone(), r.line, r.column))
                .collect()
        };
        let whole = at(&pm.db().references_to_name(p.id, "Shape").await.unwrap());
        assert!(whole.len() > 30, "{whole:?}");
        let pm = &pm;
        every_window_is_its_slice_of_the_whole(&whole, move |wanted| async move {
            let mut told = 0;
            let (rows, window) = pm
                .usage_window(p.id, "Shape", |total| {
                    told = total;
                    wanted.unwrap_or(0..total)
                })
                .await
                .unwrap();
            (told, rows.len(), at(&rows[window]))
        })
        .await;
    }

    /// A window of a name's rows of some kinds is the slice of all of them, however it
    /// is read (ADR 0049).
    #[tokio::test]
    async fn a_window_of_some_kinds_read_from_its_files_alone_is_that_slice_of_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (pm, p) = indexed(dir.path()).await;
        shape_used_in_three_more_files(dir.path(), &pm, &p).await;
        let kinds = names(&["use", "type"]);
        let at = |rows: &[RefRow]| -> Vec<(String, u32, u32, String)> {
            rows.iter()
                .map(|r| (r.file_path.clone(), r.line, r.column, r.kind.clone()))
                .collect()
        };
        let whole = at(&pm
            .db()
            .references_of_kinds(p.id, "Shape", &kinds)
            .await
            .unwrap());
        assert!(whole.len() > 20, "{whole:?}");
        let all = pm.db().references_to_name(p.id, "Shape").await.unwrap();
        assert!(all.len() > whole.len(), "other kinds are left out");
        let (pm, kinds) = (&pm, &kinds);
        every_window_is_its_slice_of_the_whole(&whole, move |wanted| async move {
            let mut told = 0;
            let (rows, window) = pm
                .kinds_window(p.id, "Shape", kinds, |total| {
                    told = total;
                    wanted.unwrap_or(0..total)
                })
                .await
                .unwrap();
            (told, rows.len(), at(&rows[window]))
        })
        .await;
    }

    /// A window read from its files alone is kept: the same window again is the rows
    /// read before; another window is read on its own; after an edit nothing kept is
    /// served.
    #[tokio::test]
    async fn a_window_read_from_its_files_is_kept_until_the_index_changes() {
        let dir = tempfile::tempdir().unwrap();
        let (pm, p) = indexed(dir.path()).await;
        shape_used_in_three_more_files(dir.path(), &pm, &p).await;
        let read = |wanted: Range<usize>| {
            let pm = &pm;
            async move {
                pm.usage_window(p.id, "Shape", |total| {
                    assert!(!read_whole(wanted.len(), total), "{wanted:?} of {total}");
                    wanted
                })
                .await
                .unwrap()
            }
        };
        let (first, window) = read(1..4).await;
        let (again, same) = read(1..4).await;
        assert!(Arc::ptr_eq(&first, &again), "kept, not read again");
        assert_eq!(window, same);
        let (other, _) = read(20..24).await;
        assert!(!Arc::ptr_eq(&first, &other));
        std::fs::write(
            dir.path().join("src/mm.rs"),
            "use crate::shape::Shape;\npub fn g() -> Shape { Shape }\n",
        )
        .unwrap();
        pm.refresh(&p, &names(&["src/mm.rs"])).await.unwrap();
        let (after, _) = read(1..4).await;
        assert!(
            !Arc::ptr_eq(&first, &after),
            "an edit retires the kept window"
        );
    }

    #[tokio::test]
    async fn an_edge_window_read_from_its_files_alone_is_that_slice_of_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let (pm, p) = indexed(dir.path()).await;
        // (file, calls, implementations): ids not in path order; `mm` holds stored edges
        // alone, `uu` only a use of the name (a usage row, no edge).
        let files = [
            ("src/zz.rs", 6, 1),
            ("src/aa.rs", 4, 2),
            ("src/mm.rs", 0, 3),
            ("src/uu.rs", 0, 0),
        ];
        for (file, calls, impls) in files {
            let mut body = String::from("use crate::draw::Draw;\n");
            for i in 0..impls {
                body += &format!("pub struct S{i};\nimpl Draw for S{i} {{}}\n");
            }
            for i in 0..calls {
                body += &format!("pub fn f{i}() {{ Draw(); }}\n");
            }
            std::fs::write(dir.path().join(file), body).unwrap();
        }
        let added = names(&files.map(|f| f.0));
        pm.refresh(&p, &added).await.unwrap();
        let at = |rows: &[EdgeRow]| -> Vec<(String, u32, u32, String)> {
            rows.iter()
                .map(|e| (e.file_path.clone(), e.line, e.column, e.kind.clone()))
                .collect()
        };
        let whole = at(&pm
            .db()
            .edges_to(p.id, "Draw", scryer_engine::lang::call_edge_kind)
            .await
            .unwrap());
        let kinds: std::collections::BTreeSet<&str> = whole.iter().map(|e| e.3.as_str()).collect();
        assert_eq!(whole.len(), 16, "{whole:?}");
        assert_eq!(kinds.len(), 2, "stored edges and calls: {kinds:?}");
        let pm = &pm;
        // A window read from its files is kept: the same window again is those rows.
        let (first, _) = pm.edge_window(p.id, "Draw", |_| 1..3).await.unwrap();
        let (again, _) = pm.edge_window(p.id, "Draw", |_| 1..3).await.unwrap();
        assert!(Arc::ptr_eq(&first, &again), "kept, not read again");
        every_window_is_its_slice_of_the_whole(&whole, move |wanted| async move {
            let mut told = 0;
            let (rows, window) = pm
                .edge_window(p.id, "Draw", |total| {
                    told = total;
                    wanted.unwrap_or(0..total)
                })
                .await
                .unwrap();
            (told, rows.len(), at(&rows[window]))
        })
        .await;
    }

    /// Checks a windowed read against the `whole` list: every window small enough to be
    /// read from its files alone (before anything is cached), then the whole (read and
    /// kept whole), then a window sliced off the kept list. `read(wanted)` reads the
    /// window `wanted` (`None`: all of it) and gives the count it was told, how many rows
    /// it read and the window's rows.
    async fn every_window_is_its_slice_of_the_whole<K, F, Fut>(whole: &[K], read: F)
    where
        K: PartialEq + std::fmt::Debug + Clone,
        F: Fn(Option<Range<usize>>) -> Fut,
        Fut: std::future::Future<Output = (usize, usize, Vec<K>)>,
    {
        for start in 0..whole.len() {
            for len in 0..whole.len() - start {
                if read_whole(len, whole.len()) {
                    break;
                }
                let (told, _, rows) = read(Some(start..start + len)).await;
                assert_eq!(told, whole.len());
                assert_eq!(rows, whole[start..start + len], "{start}+{len}");
            }
        }
        assert_eq!(read(None).await.2, whole);
        let (_, read_rows, rows) = read(Some(2..5)).await;
        assert_eq!((read_rows, rows), (whole.len(), whole[2..5].to_vec()));
    }

    /// A read of rare kinds once a name's per-file counts are known goes to the files
    /// holding them alone, and answers what the read over the name index does.
    #[tokio::test]
    async fn rare_kinds_read_from_their_files_alone_are_the_same_rows() {
        let dir = tempfile::tempdir().unwrap();
        let (pm, p) = indexed(dir.path()).await;
        // Sixteen files call `Shape`; two of them import it.
        let mut added = Vec::new();
        for i in 0..16 {
            let file = format!("src/c{i}.rs");
            let mut body = String::new();
            if i == 3 || i == 6 {
                body += "use crate::shape::Shape;\n";
            }
            body += &format!("pub fn f{i}() {{ Shape(); Shape(); }}\n");
            std::fs::write(dir.path().join(&file), body).unwrap();
            added.push(file);
        }
        pm.refresh(&p, &added).await.unwrap();
        let kinds = names(&["use", "implements"]);
        let rows = |r: &[RefRow]| -> Vec<(String, u32, String)> {
            r.iter()
                .map(|r| (r.file_path.clone(), r.line, r.kind.clone()))
                .collect()
        };
        let whole = rows(
            &pm.db()
                .references_of_kinds(p.id, "Shape", &kinds)
                .await
                .unwrap(),
        );
        let files: std::collections::BTreeSet<&str> = whole.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(files.len(), 3, "lib.rs, c3.rs and c6.rs: {whole:?}");
        // The per-file counts known (as a windowed call reads them): 3 files of the
        // 17 or more, few enough to be read alone.
        let at = pm.read_point(p.id).await;
        let uses = pm.uses_per_file(at, "Shape").await.unwrap();
        assert!(3 * FEW_FILES_FRACTION <= uses.len(), "{uses:?}");
        let wanted = scryer_db::kind_bits(kinds.iter().map(String::as_str));
        assert_eq!(uses.iter().filter(|u| u.kinds & wanted != 0).count(), 3);
        let ids: Vec<i64> = uses.iter().map(|u| u.file_id).collect();
        let every = FileSpans::each(&ids);
        let no_kinds = pm
            .db()
            .references_in_files_of_kinds(p.id, "Shape", &every, Some(&[]));
        assert!(no_kinds.await.unwrap().is_empty(), "no kind asked: no rows");
        let through_files = pm.references_of_kinds(p.id, "Shape", &kinds).await.unwrap();
        assert_eq!(rows(&through_files), whole);
        // A kind no file holds reads nothing; the calls, in most files, the whole index.
        let none = pm
            .references_of_kinds(p.id, "Shape", &names(&["macro"]))
            .await
            .unwrap();
        assert!(none.is_empty());
        let calls = pm
            .references_of_kinds(p.id, "Shape", &names(&["call"]))
            .await
            .unwrap();
        assert_eq!(calls.len(), 32);
    }

    #[tokio::test]
    async fn the_kept_search_index_stays_when_a_refresh_finds_nothing_changed() {
        let dir = tempfile::tempdir().unwrap();
        let (pm, p) = indexed(dir.path()).await;
        let kept = crate::indexing::search_cache::dependency_dir(pm.db().path())
            .with_file_name("projects")
            .join(p.id.to_string());
        assert!(kept.is_dir(), "the index run keeps {}", kept.display());

        // Touched, not changed: its stamp is new, so it is read and hashed again.
        let shape = dir.path().join("src/shape.rs");
        let later = std::time::SystemTime::now() + Duration::from_secs(10);
        std::fs::File::options()
            .write(true)
            .open(&shape)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let r = pm.refresh(&p, &names(&["src/shape.rs"])).await.unwrap();
        assert!(r.is_empty(), "{r:?}");
        assert!(kept.is_dir(), "nothing changed: the kept index stays");

        std::fs::write(&shape, "pub struct Shape;\npub struct Circle;\n").unwrap();
        let r = pm.refresh(&p, &names(&["src/shape.rs"])).await.unwrap();
        assert_eq!(r.updated, ["src/shape.rs"]);
        // The rows changed: the kept index stays and lists the file (ADR 0044).
        let noted = std::fs::read_to_string(kept.join("changed-files")).unwrap();
        assert!(noted.contains("\"path\":\"src/shape.rs\""), "{noted}");
    }
}
