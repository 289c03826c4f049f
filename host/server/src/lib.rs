//! The scryer server: MCP in front, routers behind.
//!
//! ```text
//! MCP (rmcp) → session → project resolution → budget → runtime.call(router) → last-word budget → MCP
//! ```
//!
//! Architecture invariant: `transport/mcp.rs` is the only module that speaks the MCP
//! protocol types; `call/dispatch.rs` decides what a call means and formats nothing
//! itself (routers render their answers).
//!
//! The code is in folders by job:
//!
//! - `transport/`: how sessions reach the server (the MCP handler, HTTP, line checks,
//!   receipt order).
//! - `call/`: one tool call's pipeline (project resolution, contract, paths, budget,
//!   windows, telemetry).
//! - `plugins/`: which plugins are loaded and answer which tools; profiles, shadow runs,
//!   hot swap.
//! - `indexing/`: projects and their index runs, dependency crates, file watching, the
//!   search indexes, precise data.
//! - `host_services/`: the host side of the WIT imports, one file per interface.
//! - `daemon.rs`: the process that owns a database and serves sessions on its socket.
//! - this file: [`Server`] and [`Core`], the state everything above shares.

mod call;
pub mod daemon;
mod host_services;
mod indexing;
mod page_cache;
mod plugins;
mod transport;

pub use call::{contract, telemetry, tokens};
pub use indexing::precise;
pub use transport::{http, order, wire};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use scryer_db::Db;
use scryer_runtime::{CompileCache, Grants, Limits, Runtime};

use indexing::{projects, search_cache, watcher};
use plugins::{plugin_watch, profiles, shadow};

pub use call::dispatch::CallOutcome;
pub use indexing::projects::IndexState;
pub use plugins::plugin_watch::{ServingPlugin, ServingReport};
pub use plugins::registry::{Origin, PluginStatus, Registry, ShadowStatus, Status};
pub use plugins::shadow::{ShadowReport, ShadowTool};
pub use transport::mcp::McpSession;

/// Output format of answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Json,
    Text,
}

/// Per-session defaults (from `scryer serve` flags).
#[derive(Clone, Debug, Default)]
pub struct SessionOptions {
    /// Which tools the session lists (`--tools`).
    pub tools: contract::Profile,
    /// Which tools carry the always-load mark (`--always-load`).
    pub always_load: contract::AlwaysLoad,
    /// Budget for every answer unless the call sets `max_tokens`.
    pub max_tokens: Option<u32>,
    pub format: Format,
    /// Project to make active at start (slug, id or root path).
    pub project: Option<String>,
}

/// What the host knows about one MCP session.
#[derive(Clone, Debug)]
pub struct SessionState {
    /// The client's working directory (sent in the daemon handshake), never the
    /// daemon's own: relative paths and the cwd tier of project resolution use it.
    pub cwd: PathBuf,
    pub active_project: Option<i64>,
    pub options: SessionOptions,
    /// The client's workspace roots from `roots/list`, when it offers them; they take
    /// the place of `cwd` when a call names no project.
    pub roots: Vec<PathBuf>,
    /// Whether the session already tried registering its cwd as a project.
    pub cwd_registered: bool,
}

impl SessionState {
    fn new(cwd: PathBuf, options: SessionOptions) -> SessionState {
        SessionState {
            cwd,
            active_project: None,
            options,
            roots: Vec::new(),
            cwd_registered: false,
        }
    }
}

/// A plugin to load: its label (for errors), bytes, and grants.
pub struct PluginSource {
    pub label: String,
    pub wasm: ComponentBytes,
    pub grants: Grants,
    /// Native code for `wasm` compiled at build time (the first-party routers).
    pub precompiled: Option<scryer_runtime::Precompiled>,
}

/// A plugin's component bytes, or how to get them: a first-party router whose native
/// code built into the binary fits this engine never needs its component, so it is
/// not decompressed at start (about 6 MB for the seven routers).
pub enum ComponentBytes {
    Bytes(Vec<u8>),
    /// Produces the bytes when the component must be compiled after all.
    Deferred(fn(&str) -> Vec<u8>),
}

impl ComponentBytes {
    /// The bytes (`label` names the plugin to a deferred source).
    fn get(self, label: &str) -> Vec<u8> {
        match self {
            ComponentBytes::Bytes(b) => b,
            ComponentBytes::Deferred(f) => f(label),
        }
    }
}

pub struct ServerConfig {
    pub db_path: PathBuf,
    /// Compiled-code cache directory; `None` compiles on every start.
    pub compile_cache: Option<PathBuf>,
    pub limits: Limits,
    pub plugins: Vec<PluginSource>,
    /// How long a call waits for a project's first index before answering partially.
    pub first_query_wait: Duration,
    /// Watch registered projects for file changes (off for one-shot commands).
    pub watch_files: bool,
}

/// State shared by every session and by the host services routers import.
pub struct Core {
    pub(crate) projects: Arc<projects::ProjectManager>,
    pub(crate) watcher: Option<Arc<watcher::ProjectWatcher>>,
    sessions: Mutex<HashMap<u64, SessionState>>,
    next_session: AtomicU64,
    pub(crate) handle: tokio::runtime::Handle,
    pub(crate) first_query_wait: Duration,
    pub(crate) search: Arc<search_cache::SearchCache>,
    /// Writes telemetry rows; `None` when telemetry is off.
    pub(crate) telemetry: Option<telemetry::Recorder>,
    /// What shadow runs found (ADR 0030).
    pub(crate) shadows: shadow::Book,
    /// The database path, as reports name it.
    pub(crate) db_label: String,
    /// Project files read recently, for reads of their lines.
    pub(crate) files: host_services::file_cache::FileCache,
}

impl Core {
    /// The shared state over an open database: nothing here waits for anything.
    fn start(db: Db, config: &ServerConfig) -> Arc<Core> {
        let db_for_telemetry = db.clone();
        let projects = projects::ProjectManager::new(db);
        let watcher = config
            .watch_files
            .then(|| watcher::ProjectWatcher::start(projects.clone()));
        let telemetry = telemetry::enabled().then(|| telemetry::Recorder::start(db_for_telemetry));
        let search = projects.search().clone();
        Arc::new(Core {
            telemetry,
            watcher,
            projects,
            sessions: Mutex::new(HashMap::new()),
            next_session: AtomicU64::new(1),
            handle: tokio::runtime::Handle::current(),
            first_query_wait: config.first_query_wait,
            search,
            shadows: shadow::Book::default(),
            db_label: config.db_path.display().to_string(),
            files: host_services::file_cache::FileCache::new(host_services::file_cache::RACY),
        })
    }

    pub(crate) fn session(&self, id: u64) -> SessionState {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
            .unwrap_or_else(|| {
                SessionState::new(
                    std::env::current_dir().unwrap_or_default(),
                    SessionOptions::default(),
                )
            })
    }

    /// Changes one session's state (nothing if the session is closed).
    pub(crate) fn update_session(&self, session: u64, change: impl FnOnce(&mut SessionState)) {
        if let Some(s) = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(&session)
        {
            change(s);
        }
    }

    pub(crate) fn set_active_project(&self, session: u64, project: i64) {
        self.update_session(session, |s| s.active_project = Some(project));
    }

    /// How many sessions are open.
    pub(crate) fn session_count(&self) -> usize {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }

    /// A deleted project is no session's active project any more.
    pub(crate) fn forget_project(&self, project: i64) {
        for s in self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values_mut()
        {
            if s.active_project == Some(project) {
                s.active_project = None;
            }
        }
    }

    pub(crate) fn unknown_project_message(&self, selector: &str) -> String {
        let known: Vec<String> = self
            .handle
            .block_on(self.projects.db().projects())
            .unwrap_or_default()
            .into_iter()
            .map(|p| p.slug)
            .collect();
        unknown_project(selector, &known)
    }
}

pub(crate) fn unknown_project(selector: &str, known: &[String]) -> String {
    let shown: String = selector.chars().take(80).collect();
    if known.is_empty() {
        format!(
            "unknown project {shown:?}: no project is registered yet; call index_workspace(path) first"
        )
    } else {
        format!(
            "unknown project {shown:?}: accepted are a registered slug, id or root path; registered: {}",
            known.join(", ")
        )
    }
}

/// Loads the routers when some must be compiled first (their code built into the binary
/// does not fit this engine, or a `--plugin` file): sessions wait for it in `tools/list`
/// and calls, and are told with `notifications/tools/list_changed`. A router that does
/// not load leaves the server serving that error to every call.
async fn load_in_background(
    server: Server,
    plugins: Vec<PluginSource>,
    installed: Option<scryer_runtime::installed::PluginHome>,
    serving: Option<(scryer_runtime::installed::PluginHome, String)>,
) {
    let started = std::time::Instant::now();
    match Registry::load(&server.runtime, plugins, installed.as_ref()).await {
        Ok(registry) => {
            tracing::info!(
                ms = started.elapsed().as_millis() as u64,
                "routers compiled and loaded"
            );
            server.live.store(Arc::new(registry));
            server.live.set_ready(Ok(()));
            if let Some((home, db_label)) = serving {
                plugin_watch::start(server.live, server.runtime, home, db_label, false, true);
            }
        }
        Err(e) => {
            tracing::error!("the routers did not load: {e:#}");
            server.live.set_ready(Err(format!("{e:#}")));
        }
    }
}

/// Start-up work no answer needs at once: the dependency worker and the file watches of
/// every registered project (each walks its project's directories).
async fn start_background_work(core: Arc<Core>) {
    core.projects.deps().resume();
    let Some(watcher) = core.watcher.clone() else {
        return;
    };
    let projects = match core.projects.db().projects().await {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!("file watching not started: {e:#}");
            return;
        }
    };
    let _ = tokio::task::spawn_blocking(move || {
        for p in projects {
            if Path::new(&p.root).is_dir() {
                watcher.watch(&p);
            }
        }
    })
    .await;
}

/// The plugins to load at start and the built-in routers to load on demand. A serving
/// process (`serving`, its routers' built-in code usable) loads the built-in routers a
/// session's profile needs when it opens (ADR 0030); `--plugin` files, and everything
/// otherwise, load at start.
fn split_on_demand(
    plugins: Vec<PluginSource>,
    serving: bool,
) -> (Vec<PluginSource>, Vec<PluginSource>) {
    if !serving {
        return (plugins, Vec::new());
    }
    let (on_demand, at_start) = plugins.into_iter().partition(|s| s.precompiled.is_some());
    (at_start, on_demand)
}

/// The running server: database, runtime, loaded routers.
#[derive(Clone)]
pub struct Server {
    pub(crate) core: Arc<Core>,
    pub(crate) runtime: Runtime,
    /// The registry this handle was taken with: a call keeps it to the end (hot swap
    /// changes only `live`).
    pub(crate) registry: Arc<Registry>,
    /// The registry new calls start on (`plugin_watch`).
    pub(crate) live: Arc<plugin_watch::Live>,
    /// The built-in routers loaded when a session's profile needs them (ADR 0030).
    pub(crate) pool: Arc<profiles::Pool>,
}

impl Server {
    /// Opens the database, loads every plugin, and resumes interrupted index runs.
    pub async fn start(config: ServerConfig) -> Result<Server> {
        Self::start_with_installed(config, None).await
    }

    /// [`Server::start`], also loading the plugins the operator installed under `installed`
    /// (each one that is refused is logged and left out; the rest are served).
    ///
    /// Only what answering `initialize` and `tools/list` needs is done before this
    /// returns: the database, the engine, and the routers when each one's code built into
    /// the binary fits this engine (loading that takes milliseconds). A router that must
    /// be compiled first is loaded in the background: sessions answer `initialize` at
    /// once, `tools/list` and calls wait for it (ADR 0015). A serving process loads the
    /// installed plugins after it returns (`plugin_watch::start`); their tools arrive
    /// with `tools/list_changed`. The tokenizer, the file watches and the dependency
    /// worker start beside the first sessions.
    pub async fn start_with_installed(
        config: ServerConfig,
        installed: Option<scryer_runtime::installed::PluginHome>,
    ) -> Result<Server> {
        let started = std::time::Instant::now();
        // Only routers' answers are counted: a server without any never needs the
        // tokenizer (~50 ms to load); the first count waits for it if it is still loading.
        if !config.plugins.is_empty() || installed.is_some() {
            tokio::task::spawn_blocking(tokens::warm_up);
        }
        let (db, set_aside) = Db::open_or_set_aside(&config.db_path)
            .await
            .map_err(|e| daemon::explain_open_error(e, &config.db_path))?;
        if let Some(aside) = set_aside {
            tracing::warn!("{}", aside.message(&config.db_path));
        }
        if config.watch_files {
            page_cache::warm_in_background(
                &config.db_path,
                &indexing::search_cache::projects_dir(&config.db_path),
            );
        }
        let db_ms = started.elapsed().as_millis() as u64;
        let core = Core::start(db, &config);
        let cache = match &config.compile_cache {
            Some(dir) => Some(CompileCache::open(dir)?),
            None => None,
        };
        let host = Arc::new(host_services::HostImpl { core: core.clone() });
        let runtime = Runtime::new(config.limits, cache, host)?;
        let precompiled = config.plugins.iter().all(|s| {
            s.precompiled
                .as_ref()
                .is_some_and(|p| runtime.precompiled_usable(p))
        });
        let serving_home = installed.clone().filter(|_| config.watch_files);
        let db_label = config.db_path.display().to_string();
        let (plugins, on_demand) =
            split_on_demand(config.plugins, precompiled && serving_home.is_some());
        let lazy = !on_demand.is_empty();
        let pool = Arc::new(profiles::Pool::new(on_demand, installed.clone()));
        let server = if precompiled {
            // A serving process (the same switch as file watching) loads its installed
            // plugins after it accepts sessions, and swaps them while it runs; one-shot
            // commands load them now and keep what they loaded.
            let now = if serving_home.is_some() {
                None
            } else {
                installed.as_ref()
            };
            let registry = Registry::load(&runtime, plugins, now).await?;
            let live = plugin_watch::Live::new(registry.into());
            if lazy {
                live.want_nothing_yet();
            }
            let server = Server::assemble(core, runtime, live, pool);
            if let Some(home) = serving_home {
                let (live, runtime) = (server.live.clone(), server.runtime.clone());
                plugin_watch::start(live, runtime, home, db_label, !lazy, !lazy);
            }
            server
        } else {
            let server = Server::assemble(core, runtime, plugin_watch::Live::pending(), pool);
            tokio::spawn(load_in_background(
                server.clone(),
                plugins,
                installed,
                serving_home.map(|home| (home, db_label)),
            ));
            server
        };
        server.core.projects.resume_interrupted().await?;
        let routers = if precompiled {
            "loaded"
        } else {
            "compiling in the background"
        };
        tracing::info!(
            db_ms,
            ms = started.elapsed().as_millis() as u64,
            routers,
            "server started"
        );
        tokio::spawn(start_background_work(server.core.clone()));
        Ok(server)
    }

    fn assemble(
        core: Arc<Core>,
        runtime: Runtime,
        live: plugin_watch::Live,
        pool: Arc<profiles::Pool>,
    ) -> Server {
        Server {
            core,
            runtime,
            registry: live.load(),
            live: Arc::new(live),
            pool,
        }
    }

    /// Answers one `tools/call` of session `session_id` (`call/dispatch.rs`): the
    /// session's project, the arguments checked, the index fresh, the router's answer
    /// fitted to the budget, the call recorded.
    pub async fn call_tool(
        &self,
        session_id: u64,
        name: &str,
        arguments: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> CallOutcome {
        call::dispatch::Dispatch {
            core: &self.core,
            registry: &self.registry,
            runtime: &self.runtime,
            plugin_home: self.pool_home(),
        }
        .call_tool(session_id, name, arguments)
        .await
    }

    /// `profile` with its plugins loaded (`plugins/profiles.rs`).
    pub(crate) async fn prepare_profile(
        &self,
        profile: &call::contract::Profile,
    ) -> anyhow::Result<call::contract::Profile> {
        profiles::ProfileLoading {
            pool: &self.pool,
            live: &self.live,
            runtime: &self.runtime,
        }
        .prepare_profile(profile)
        .await
    }

    /// The configuration directory's plugin home, when the server has one.
    pub(crate) fn pool_home(&self) -> Option<&scryer_runtime::installed::PluginHome> {
        self.pool.home()
    }

    /// The registry this handle was taken with (at start, or by [`Server::current`]).
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The registry serving new calls now (installed plugins may have been swapped).
    pub fn current_registry(&self) -> Arc<Registry> {
        self.live.load()
    }

    /// This server with the registry serving now: what one call runs on from start to
    /// end, whatever is swapped in meanwhile.
    pub fn current(&self) -> Server {
        Server {
            registry: self.live.load(),
            ..self.clone()
        }
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Opens a session with its working directory and options. Fails on an unknown
    /// `options.project`, or a profile (`options.tools`) naming what does not exist.
    /// The plugins the profile needs are loaded first (ADR 0030).
    pub async fn open_session(&self, cwd: PathBuf, mut options: SessionOptions) -> Result<u64> {
        options.tools = self.prepare_profile(&options.tools).await?;
        let mut active = None;
        if let Some(sel) = &options.project {
            let db = self.core.projects.db();
            let Some(p) = db.project_by_selector(sel).await? else {
                let known: Vec<String> = db.projects().await?.into_iter().map(|p| p.slug).collect();
                anyhow::bail!(unknown_project(sel, &known));
            };
            active = Some(p.id);
        }
        tokio::spawn(call::session::prepare_session_project(
            self.core.projects.clone(),
            cwd.clone(),
            active,
        ));
        Ok(self.open_session_resolved(cwd, options, active))
    }

    /// Opens a session whose active project is already resolved: for transports that
    /// open sessions outside async code (the HTTP session factory).
    pub(crate) fn open_session_resolved(
        &self,
        cwd: PathBuf,
        options: SessionOptions,
        active: Option<i64>,
    ) -> u64 {
        let id = self.core.next_session.fetch_add(1, Ordering::Relaxed);
        let mut state = SessionState::new(cwd, options);
        state.active_project = active;
        self.core
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, state);
        id
    }

    /// The host services routers import, for running router logic natively against the
    /// same data (benchmarks compare this with the component path).
    pub fn host_services(&self) -> Arc<dyn scryer_runtime::HostServices> {
        Arc::new(host_services::HostImpl {
            core: self.core.clone(),
        })
    }

    /// The scope a call from `session` to `plugin` would run under, for the session's
    /// active project.
    pub async fn call_scope(
        &self,
        session: u64,
        plugin: &str,
    ) -> Result<scryer_runtime::CallScope> {
        let state = self.core.session(session);
        let project = match state.active_project {
            Some(id) => self.core.projects.db().project(id).await?,
            None => None,
        };
        Ok(scryer_runtime::CallScope {
            plugin: plugin.into(),
            project: project.map(|p| scryer_runtime::wit::Project {
                id: p.id,
                slug: p.slug,
                root: p.root,
            }),
            session,
            window: Default::default(),
            memo: Default::default(),
        })
    }

    /// Makes `project` (slug, id or root) the session's active project.
    pub async fn activate(&self, session: u64, project: &str) -> Result<()> {
        let p = self
            .core
            .projects
            .db()
            .project_by_selector(project)
            .await?
            .ok_or_else(|| anyhow::anyhow!("unknown project {project}"))?;
        self.core.set_active_project(session, p.id);
        Ok(())
    }

    /// How many sessions are open.
    pub fn session_count(&self) -> usize {
        self.core.session_count()
    }

    /// The session's state (a default one for an unknown id).
    pub fn session_state(&self, id: u64) -> SessionState {
        self.core.session(id)
    }

    pub fn close_session(&self, id: u64) {
        self.core
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
    }

    /// The MCP handler for one session.
    pub fn mcp_session(&self, session: u64) -> McpSession {
        McpSession::new(self.clone(), session)
    }

    /// Stores a SCIP index built elsewhere (`scryer precise import`): `hello.path` is the
    /// index file, `hello.project` (else `hello.cwd`) picks the project.
    pub async fn precise_import(&self, hello: &daemon::Hello) -> Result<precise::ImportReply> {
        let index = hello
            .path
            .as_deref()
            .context("precise import needs the path of a SCIP index")?;
        precise::import_index(
            &self.core.projects,
            hello.project.as_deref(),
            hello.cwd.as_deref(),
            index,
        )
        .await
    }

    /// Leaves the database as a clean exit should: the write-ahead log folded into the
    /// file, and the file sealed, so the next process to open it skips the start check
    /// (a `quick_check` of every page: 3.5 s for the monorepo's 745 MB) while the file
    /// stays as left (ADR 0025). Best effort: a write still going leaves a log, and so no
    /// seal.
    pub async fn seal_at_exit(&self) {
        let db = self.core.projects.db();
        match db.checkpoint().await {
            Ok(()) => scryer_db::seal_clean_exit(db.path()),
            Err(e) => tracing::warn!(
                error = %format!("{e:#}"),
                "checkpointing the database at exit failed"
            ),
        }
    }

    /// Indexes a directory now and waits for the run (the `scryer index` command).
    pub async fn index_path(&self, root: &std::path::Path) -> Result<scryer_db::ProjectRow> {
        self.index_path_watching(root, |_, _| {}).await
    }

    /// [`index_path`](Self::index_path), telling `tick` the files done and in all about
    /// four times a second while the run goes on (`scryer index`'s progress line).
    pub async fn index_path_watching(
        &self,
        root: &std::path::Path,
        mut tick: impl FnMut(u32, u32),
    ) -> Result<scryer_db::ProjectRow> {
        let root = std::fs::canonicalize(root).with_context(|| format!("{}", root.display()))?;
        let (project, rx) = self.core.projects.register_and_index(&root).await?;
        // A daemon keeps the project current from here on, as it does for
        // index_workspace (one-shot commands run without a watcher).
        if let Some(w) = &self.core.watcher {
            w.watch(&project);
        }
        let started = std::time::Instant::now();
        while !indexing::runs::wait_finished(rx.clone(), Duration::from_millis(250)).await {
            if started.elapsed() > Duration::from_secs(24 * 3600) {
                break;
            }
            if let projects::IndexState::Building { done, total }
            | projects::IndexState::Stale { done, total } =
                self.core.projects.state(&project).await
            {
                tick(done, total);
            }
        }
        Ok(self
            .core
            .projects
            .db()
            .project(project.id)
            .await?
            .unwrap_or(project))
    }
}
