//! Precise mode in the daemon (ADR 0018): the SCIP indexers run in the background after
//! a project's tree-sitter index is ready, their occurrences are stored against each
//! file's content hash, and answers read them for every file still unedited since.
//!
//! - this module: the per-project state (`off|unavailable|pending|running|ready|failed`
//!   per language) and its report;
//! - [`scheduler`]: one run at a time per daemon, debounced after edits, ingest of a
//!   SCIP file (also `scryer precise import`);
//! - [`answers`]: which files are fresh, and the precise usages, links and definitions
//!   the `index` imports (WIT 0.4) answer with;
//! - [`family`]: a Rust trait item's family (the impls' items), which rust-analyzer's
//!   symbols tie only by name.

pub mod answers;
pub mod family;
pub mod memo;
pub mod occurrences;
pub mod scheduler;
pub mod symbols;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scryer_db::{Db, PreciseRunRow};
use scryer_engine::precise::{PreciseLanguage, PreciseMode};
use tokio::sync::Notify;

pub use answers::{Freshness, PreciseUsages};

/// Host-side limits of precise mode (the router limits live in `host/runtime/src/limits.rs`).
pub mod limits {
    use std::time::Duration;

    /// Wall-clock limit of one indexer run (`SCRYER_PRECISE_TIMEOUT_S`, default 600 s).
    pub fn run_timeout() -> Duration {
        secs_from_env("SCRYER_PRECISE_TIMEOUT_S", 600)
    }

    /// Quiet time after the last edit before a re-run starts
    /// (`SCRYER_PRECISE_SETTLE_MS`, default 30 s).
    pub fn settle() -> Duration {
        Duration::from_millis(from_env("SCRYER_PRECISE_SETTLE_MS", 30_000))
    }

    /// How long a failed run is not made again over the same inputs (ADR 0055): a
    /// failure can come from outside them (a missing toolchain component, a run killed
    /// by its wall-clock limit on a loaded machine), so it is tried again after this.
    pub const FAILED_RUN_KEPT: Duration = Duration::from_secs(3600);

    /// Names whose unresolved sites are kept between calls (each a name's few sites;
    /// the whole set is dropped when the index or the precise data changes).
    pub const UNRESOLVED_KEPT: usize = 4096;

    /// Sites of definitions' precise usages kept between calls (about 150 bytes each:
    /// 15 MB at the bound; tokio's every definition together holds about 100k).
    pub const USAGE_SITES_KEPT: usize = 100_000;

    /// Occurrences of a project held in memory per precise generation (24 bytes each:
    /// 48 MB at the bound; tokio has 171k). A project with more is read from the
    /// database per look-up.
    pub const OCCURRENCES_HELD: usize = 2_000_000;

    fn secs_from_env(var: &str, default: u64) -> Duration {
        Duration::from_secs(from_env(var, default))
    }

    fn from_env(var: &str, default: u64) -> u64 {
        std::env::var(var)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(default)
    }
}

/// One language's precise state in one project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LangState {
    /// No indexer found: why, and how to install it.
    Unavailable(String),
    Pending,
    Running,
    Ready,
    /// The last run failed (the data of an earlier run, if any, is still used).
    Failed(String),
}

impl LangState {
    pub fn name(&self) -> &'static str {
        match self {
            LangState::Unavailable(_) => "unavailable",
            LangState::Pending => "pending",
            LangState::Running => "running",
            LangState::Ready => "ready",
            LangState::Failed(_) => "failed",
        }
    }
}

/// One language's line in the status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LangStatus {
    pub language: PreciseLanguage,
    pub state: LangState,
    /// The indexer found for it, and its version.
    pub indexer: Option<String>,
    pub indexer_version: Option<String>,
    /// The stored run, when there is one.
    pub run: Option<PreciseRunRow>,
}

/// A project's precise stage, as `get_indexing_status` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreciseStatus {
    /// `off`, `unavailable`, `pending`, `running`, `ready` or `failed`.
    pub state: String,
    pub languages: Vec<LangStatus>,
    /// Files of covered languages whose precise data does not apply (edited or added since).
    pub stale_files: u32,
    pub note: Option<String>,
}

/// A project's freshness and the (index, precise) generations it was computed at.
type FreshnessAt = ((u64, u64), Arc<Freshness>);

#[derive(Default)]
struct ProjectEntry {
    languages: BTreeMap<PreciseLanguage, LangStatus>,
    /// When the next run is due (`None`: none scheduled).
    due: Option<tokio::time::Instant>,
    running: bool,
    /// A run of the project has finished in this process.
    ran: bool,
    /// The project's row (root, slug), kept for its runs.
    project: Option<scryer_db::ProjectRow>,
}

/// The daemon's precise service: state per project, the scheduler's queue, caches.
pub struct PreciseService {
    db: Db,
    mode: PreciseMode,
    entries: Mutex<HashMap<i64, ProjectEntry>>,
    /// Wakes the scheduler when something is queued.
    wake: Notify,
    /// Bumped whenever stored precise data changes (caches key on it).
    generation: std::sync::atomic::AtomicU64,
    freshness: Mutex<HashMap<i64, FreshnessAt>>,
    /// Each project's interned SCIP symbols (for the family and note patterns) and its
    /// occurrences, held per precise generation.
    held: symbols::HeldCache,
    /// Each (project, scope and name)'s unresolved sites, at (index, precise) generations.
    unresolved: memo::Memo<(i64, String), answers::Unresolved>,
    /// Each (project, file, start line and name)'s precise usages, likewise.
    usages: memo::Memo<(i64, String, u32, String), answers::PreciseUsages>,
    started: std::sync::Once,
    /// One run or import at a time per daemon.
    run_lock: tokio::sync::Mutex<()>,
}

impl PreciseService {
    pub fn new(db: Db) -> Arc<PreciseService> {
        Arc::new(PreciseService {
            db,
            mode: PreciseMode::from_env(),
            entries: Mutex::new(HashMap::new()),
            wake: Notify::new(),
            generation: Default::default(),
            freshness: Mutex::new(HashMap::new()),
            held: Default::default(),
            unresolved: memo::Memo::new(limits::UNRESOLVED_KEPT),
            usages: memo::Memo::new(limits::USAGE_SITES_KEPT),
            started: std::sync::Once::new(),
            run_lock: tokio::sync::Mutex::new(()),
        })
    }

    pub fn mode(&self) -> PreciseMode {
        self.mode
    }

    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<i64, ProjectEntry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What is held of the project's precise data (its interned SCIP symbols, its
    /// occurrences), until the precise generation moves.
    pub async fn held(&self, project_id: i64) -> anyhow::Result<Arc<symbols::Held>> {
        self.held
            .get(&self.db, project_id, self.precise_generation())
            .await
    }

    /// Every occurrence of `symbol_id` in the project, by file, line and column.
    pub async fn occurrences_of(
        &self,
        project_id: i64,
        symbol_id: i64,
    ) -> anyhow::Result<Vec<scryer_db::PreciseHit>> {
        let held = self.held(project_id).await?;
        match &held.occurrences {
            Some(o) => Ok(o.of_symbol(symbol_id)),
            None => self.db.precise_occurrences_of(symbol_id).await,
        }
    }

    /// The occurrences in precise file `file_id` of the project on lines `from..=to`
    /// (definitions only when `definitions_only`), by line and column.
    pub async fn in_file(
        &self,
        project_id: i64,
        file_id: i64,
        from: u32,
        to: u32,
        definitions_only: bool,
    ) -> anyhow::Result<Vec<scryer_db::PreciseHit>> {
        let held = self.held(project_id).await?;
        match &held.occurrences {
            Some(o) => Ok(o.in_file(&held.symbols, file_id, from, to, definitions_only)),
            None => {
                self.db
                    .precise_in_file(file_id, from, to, definitions_only)
                    .await
            }
        }
    }

    /// [`in_file`](Self::in_file) on only the lines in `lines` (sorted, each once).
    pub async fn on_lines(
        &self,
        project_id: i64,
        file_id: i64,
        lines: &[u32],
    ) -> anyhow::Result<Vec<scryer_db::PreciseHit>> {
        let held = self.held(project_id).await?;
        if let Some(o) = &held.occurrences {
            return Ok(o.on_lines(&held.symbols, file_id, lines));
        }
        let (Some(&from), Some(&to)) = (lines.first(), lines.last()) else {
            return Ok(Vec::new());
        };
        let mut hits = self.db.precise_in_file(file_id, from, to, false).await?;
        hits.retain(|h| lines.binary_search(&h.line).is_ok());
        Ok(hits)
    }

    /// Where the locals defined in precise file `file_id` are defined (line, column), by
    /// line and column.
    pub async fn local_definitions(
        &self,
        project_id: i64,
        file_id: i64,
    ) -> anyhow::Result<Vec<(u32, u32)>> {
        let held = self.held(project_id).await?;
        if let Some(o) = &held.occurrences {
            return Ok(o.local_definitions(held.local_ids(), file_id));
        }
        let defs = self.db.precise_in_file(file_id, 1, u32::MAX, true).await?;
        Ok(defs
            .iter()
            .filter(|h| h.symbol == scryer_engine::precise::scip_read::LOCAL)
            .map(|h| (h.line, h.column))
            .collect())
    }

    /// Whether any occurrence of `symbol_id` in the project defines it.
    pub async fn has_definition(&self, project_id: i64, symbol_id: i64) -> anyhow::Result<bool> {
        let held = self.held(project_id).await?;
        if let Some(o) = &held.occurrences {
            return Ok(o.has_definition(symbol_id));
        }
        let hits = self.db.precise_occurrences_of(symbol_id).await?;
        Ok(hits
            .iter()
            .any(|o| o.roles & scryer_db::PRECISE_ROLE_DEFINITION != 0))
    }

    pub fn precise_generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::Acquire)
    }

    fn bump(&self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }

    /// The tree-sitter index of `project` is ready: a first run is queued now, a later
    /// one (a re-index after a burst of edits) once edits have settled.
    pub fn index_ready(self: &Arc<Self>, project: &scryer_db::ProjectRow) {
        let known = self.entries().contains_key(&project.id);
        self.queue(
            project,
            if known {
                limits::settle()
            } else {
                Duration::ZERO
            },
        );
    }

    /// Queues a first run for a project indexed before this process started (its data,
    /// if any, is used meanwhile; the run refreshes it).
    pub fn ensure(self: &Arc<Self>, project: &scryer_db::ProjectRow) {
        if self.mode == PreciseMode::Auto
            && project.index_complete
            && !self.entries().contains_key(&project.id)
        {
            self.queue(project, Duration::ZERO);
        }
    }

    /// A file of `project` changed (the index was refreshed): a run is queued once edits
    /// have settled, when the project has precise data or was queued before.
    pub fn edited(self: &Arc<Self>, project: &scryer_db::ProjectRow) {
        let known = self.entries().contains_key(&project.id);
        if known {
            self.queue(project, limits::settle());
        }
    }

    fn queue(self: &Arc<Self>, project: &scryer_db::ProjectRow, after: Duration) {
        if self.mode == PreciseMode::Off {
            return;
        }
        self.started.call_once(|| {
            tokio::spawn(scheduler::run_loop(self.clone()));
        });
        let due = tokio::time::Instant::now() + after;
        let mut entries = self.entries();
        let e = entries.entry(project.id).or_default();
        // An edit moves a queued run later (edits settle first); a ready index never
        // moves one earlier than an edit asked for.
        e.due = Some(match e.due {
            Some(d) if after.is_zero() => d.min(due),
            _ => due,
        });
        for l in e.languages.values_mut() {
            if !matches!(l.state, LangState::Running | LangState::Unavailable(_)) {
                l.state = LangState::Pending;
            }
        }
        drop(entries);
        scheduler::remember_project(self, project);
        self.wake.notify_one();
    }

    /// The project's precise stage.
    pub async fn status(&self, project_id: i64, index_generation: u64) -> PreciseStatus {
        if self.mode == PreciseMode::Off {
            return PreciseStatus {
                state: "off".into(),
                languages: Vec::new(),
                stale_files: 0,
                note: Some(
                    "SCRYER_PRECISE=off: answers come from the tree-sitter index only".into(),
                ),
            };
        }
        let runs = self.db.precise_runs(project_id).await.unwrap_or_default();
        let (mut languages, due, running, ran) = {
            let entries = self.entries();
            match entries.get(&project_id) {
                Some(e) => (
                    e.languages.values().cloned().collect::<Vec<_>>(),
                    e.due.is_some(),
                    e.running,
                    e.ran,
                ),
                None => (Vec::new(), false, false, false),
            }
        };
        for run in runs {
            let Some(lang) = PreciseLanguage::named(&run.language) else {
                continue;
            };
            match languages.iter_mut().find(|l| l.language == lang) {
                Some(l) => {
                    // An index imported for a language whose indexer is missing here
                    // answers all the same.
                    if run.complete
                        && run.source == "import"
                        && matches!(l.state, LangState::Unavailable(_))
                    {
                        l.state = LangState::Ready;
                    }
                    l.run = Some(run);
                }
                None => languages.push(LangStatus {
                    language: lang,
                    state: if run.complete {
                        LangState::Ready
                    } else {
                        LangState::Pending
                    },
                    indexer: Some(run.tool.clone()),
                    indexer_version: Some(run.version.clone()),
                    run: Some(run),
                }),
            }
        }
        languages.sort_by_key(|l| l.language);
        let stale_files = match self.freshness(project_id, index_generation).await {
            Ok(f) => f.stale.len() as u32,
            Err(_) => 0,
        };
        let has = |s: &str| languages.iter().any(|l| l.state.name() == s);
        let state = if running || has("running") {
            "running"
        } else if due || has("pending") {
            "pending"
        } else if has("ready") {
            "ready"
        } else if has("failed") {
            "failed"
        } else if languages.is_empty() && !ran {
            "pending"
        } else {
            "unavailable"
        };
        let note = match state {
            "pending" if languages.is_empty() => {
                Some("waiting for the first tree-sitter index of the project".to_string())
            }
            "unavailable" if languages.is_empty() => Some(
                "no file of a language with a SCIP indexer (Rust, Python, TypeScript/JavaScript, Go)"
                    .to_string(),
            ),
            _ => None,
        };
        PreciseStatus {
            state: state.into(),
            languages,
            stale_files,
            note,
        }
    }

    /// Forgets cached freshness (the precise data or the index changed).
    fn forget(&self, project_id: i64) {
        self.freshness
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&project_id);
    }
}

/// What `scryer precise import` stored.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImportReply {
    pub project: String,
    pub language: String,
    pub tool: String,
    pub version: String,
    pub files: i64,
    pub occurrences: i64,
}

/// `scryer precise import`: the project is `selector` (slug, id or root path), else the
/// registered project whose root holds `cwd`; `index` is a SCIP file.
pub async fn import_index(
    projects: &crate::indexing::projects::ProjectManager,
    selector: Option<&str>,
    cwd: Option<&std::path::Path>,
    index: &std::path::Path,
) -> anyhow::Result<ImportReply> {
    let db = projects.db();
    let project = match selector {
        Some(sel) => match db.project_by_selector(sel).await? {
            Some(p) => p,
            None => {
                let known: Vec<String> = db.projects().await?.into_iter().map(|p| p.slug).collect();
                anyhow::bail!(crate::unknown_project(sel, &known));
            }
        },
        None => {
            let cwd = cwd.map(std::path::Path::to_path_buf).unwrap_or_default();
            db.projects()
                .await?
                .into_iter()
                .filter(|p| cwd.starts_with(&p.root))
                .max_by_key(|p| p.root.len())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "{} is inside no registered project; pass --project (a slug, id or root path) or index the project first (scryer index <dir>)",
                        cwd.display()
                    )
                })?
        }
    };
    if !project.index_complete {
        anyhow::bail!(
            "project `{}` has no complete index yet: run `scryer index {}` first (an import is checked against the indexed files' hashes)",
            project.slug,
            project.root
        );
    }
    let stored = scheduler::import(projects.precise(), &project, index).await?;
    Ok(ImportReply {
        project: project.slug,
        language: stored.language,
        tool: stored.tool,
        version: stored.version,
        files: stored.files,
        occurrences: stored.occurrences,
    })
}
