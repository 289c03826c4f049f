//! Dependency crates in the background: after a project's index run, what it locks in
//! `Cargo.lock` is recorded and each crate version not indexed yet is indexed from the
//! local cargo registry into the shared dependency index.
//!
//! One worker per database (a [`DependencyWorker`], owned by the project manager)
//! indexes the pending crates one at a time, and waits before each crate while any user
//! project has an index run going: a dependency (tokio has ~800 files) never delays the
//! project the user asked for. Calls to the `dependencies` interface re-check the
//! project's `Cargo.lock` ([`DependencyWorker::ensure_current`]), so a `cargo update`, a
//! `cargo fetch` or an index built before this existed is picked up without a re-index.
//! A crate whose run fails is stored as failed, with why (no worker tries it again and
//! again); the next index run of a project that locks it retries it. Work left pending by
//! a stopped server resumes at start ([`DependencyWorker::resume`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Result;
use scryer_db::{Db, ProjectRow};
use scryer_engine::deps;

use crate::indexing::runs::Runs;
use crate::indexing::search_cache::SearchCache;

/// How long a call trusts the last look at a project's `Cargo.lock`.
pub(crate) const RECHECK: Duration = Duration::from_secs(2);
/// How long the worker waits for a user index run before going on regardless.
const YIELD_LIMIT: Duration = Duration::from_secs(600);
/// A crate whose run failed because another writer held the database is tried this many
/// more times, after this pause (the index is incremental: work done is kept).
const BUSY_RETRIES: u32 = 20;
const BUSY_PAUSE: Duration = Duration::from_millis(500);

/// The dependency worker of one database (its project manager owns it).
pub(crate) struct DependencyWorker {
    db: Db,
    /// The search indexes of this database: the worker keeps each indexed crate's.
    search: Arc<SearchCache>,
    /// The user projects' index runs, which the worker gives way to.
    runs: Arc<Runs>,
    state: Mutex<State>,
    /// Recording is quick but must not interleave for one project (two callers would both
    /// insert the same new crate).
    recording: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    /// The running worker task's token, and whether more work arrived meanwhile.
    worker: Option<(u64, bool)>,
    next_worker: u64,
    /// The last `Cargo.lock` fingerprint recorded per project, and when it was checked.
    seen: HashMap<i64, (String, Instant)>,
}

/// What identifies the lockfile's content: its path and a hash of its bytes ("none"
/// without one).
fn fingerprint(project_root: &Path) -> String {
    match deps::find_lockfile(project_root) {
        Some(path) => match scryer_engine::safe_fs::read_regular(
            &path,
            scryer_engine::file_limits::MAX_LOCKFILE_BYTES,
        ) {
            Ok(bytes) => format!(
                "{}#{}",
                path.display(),
                scryer_engine::indexer::content_hash(&bytes)
            ),
            Err(e) => format!("{}!{e}", path.display()),
        },
        None => "none".into(),
    }
}

impl DependencyWorker {
    pub(crate) fn new(db: Db, search: Arc<SearchCache>, runs: Arc<Runs>) -> Arc<DependencyWorker> {
        Arc::new(DependencyWorker {
            db,
            search,
            runs,
            state: Mutex::new(State::default()),
            recording: tokio::sync::Mutex::new(()),
        })
    }

    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Called when a project's index run finished: makes its failed crates pending again,
    /// records what it locks and indexes the new crates, in the background. Returns at once.
    pub(crate) fn index_locked_crates(self: &Arc<Self>, project: &ProjectRow) {
        self.index_locked_crates_with(project, deps::default_cargo_home());
    }

    /// [`Self::index_locked_crates`] with the cargo home given (tests never read the real one).
    fn index_locked_crates_with(
        self: &Arc<Self>,
        project: &ProjectRow,
        cargo_home: Option<PathBuf>,
    ) -> tokio::task::JoinHandle<()> {
        let this = self.clone();
        let (id, root) = (project.id, PathBuf::from(&project.root));
        tokio::spawn(async move {
            match this
                .db
                .retry_failed_dependencies(id, deps::QUEUED_NOTE)
                .await
            {
                Ok(0) => {}
                Ok(n) => tracing::info!(
                    project = id,
                    crates = n,
                    "retrying failed dependency crates"
                ),
                Err(e) => {
                    tracing::warn!(project = id, error = %format!("{e:#}"), "retrying failed dependency crates failed")
                }
            }
            if let Err(e) = this.record(id, &root, cargo_home).await {
                tracing::warn!(project = id, error = %format!("{e:#}"), "reading Cargo.lock failed");
            }
            // Crates retried above are pending even when the lockfile could not be read.
            this.kick();
        })
    }

    /// At server start: indexes the crates a stopped server left pending (an interrupted
    /// run, crates recorded but not reached), in the background. Returns at once.
    pub(crate) fn resume(self: &Arc<Self>) {
        let this = self.clone();
        tokio::spawn(async move {
            match this.db.pending_dependencies(None).await {
                Ok(pending) if pending.is_empty() => {}
                Ok(pending) => {
                    tracing::info!(
                        crates = pending.len(),
                        "resuming pending dependency indexing"
                    );
                    this.kick();
                }
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "reading pending dependency crates failed")
                }
            }
        });
    }

    /// Before a `dependencies` answer: records the project's locked crates again if its
    /// `Cargo.lock` changed since this process last read it (or was never read), and makes
    /// sure its pending crates are being indexed. Errors when the lockfile cannot be read.
    pub(crate) async fn ensure_current(
        self: &Arc<Self>,
        project_id: i64,
        project_root: &Path,
    ) -> Result<()> {
        self.ensure_current_with(project_id, project_root, deps::default_cargo_home())
            .await
    }

    /// [`Self::ensure_current`] with the cargo home given (tests never read the real one).
    async fn ensure_current_with(
        self: &Arc<Self>,
        project_id: i64,
        project_root: &Path,
        cargo_home: Option<PathBuf>,
    ) -> Result<()> {
        let fresh = self.with_state(|s| {
            s.seen
                .get(&project_id)
                .is_some_and(|(_, at)| at.elapsed() < RECHECK)
        });
        if !fresh {
            let root = project_root.to_path_buf();
            let now = tokio::task::spawn_blocking(move || fingerprint(&root)).await?;
            let same = self.with_state(|s| match s.seen.get_mut(&project_id) {
                Some((fp, at)) if *fp == now => {
                    *at = Instant::now();
                    true
                }
                _ => false,
            });
            if !same {
                self.record(project_id, project_root, cargo_home).await?;
            }
        }
        // Failed crates are not pending: they wait for an index run of the project.
        if !self
            .db
            .pending_dependencies(Some(project_id))
            .await?
            .is_empty()
        {
            self.kick();
        }
        Ok(())
    }

    /// Records what the project locks, and remembers the lockfile it read.
    async fn record(
        &self,
        project_id: i64,
        root: &Path,
        cargo_home: Option<PathBuf>,
    ) -> Result<()> {
        let _one = self.recording.lock().await;
        let root_owned = root.to_path_buf();
        let before = tokio::task::spawn_blocking(move || fingerprint(&root_owned)).await?;
        let report =
            deps::record_locked_crates(&self.db, project_id, root, cargo_home.as_deref()).await?;
        if report.recorded.new_crates > 0 || report.recorded.links_changed {
            tracing::info!(
                project = project_id,
                locked = report.locked,
                missing = report.missing,
                new = report.recorded.new_crates,
                "recorded locked crates"
            );
        }
        self.with_state(|s| s.seen.insert(project_id, (before, Instant::now())));
        Ok(())
    }

    /// Makes sure a worker is indexing the pending crates of this database: starts one, or
    /// tells the running one to look again when it runs out.
    fn kick(self: &Arc<Self>) {
        if !indexing_enabled() {
            return;
        }
        let token = self.with_state(|s| {
            if let Some((_, more)) = &mut s.worker {
                *more = true;
                return None;
            }
            s.next_worker += 1;
            let token = s.next_worker;
            s.worker = Some((token, false));
            Some(token)
        });
        let Some(token) = token else { return };
        let this = self.clone();
        tokio::spawn(async move {
            let _guard = WorkerGuard {
                worker: this.clone(),
                token,
            };
            loop {
                if let Err(e) = this.drain().await {
                    tracing::warn!(error = %format!("{e:#}"), "indexing dependency crates stopped");
                }
                let again = this.with_state(|s| match &mut s.worker {
                    Some((_, more)) if *more => {
                        *more = false;
                        true
                    }
                    _ => false,
                });
                if !again {
                    break;
                }
            }
        });
    }

    /// Indexes pending crates one at a time until none is left. A crate that failed only
    /// because another writer held the database is tried again a few times; then, or on any
    /// other failure, it is stored as failed (and so no longer pending).
    async fn drain(self: &Arc<Self>) -> Result<()> {
        let db = &self.db;
        let mut busy: HashMap<i64, u32> = HashMap::new();
        // Failed crates whose failure could not be stored: skipped for the rest of this
        // round, so the round ends; the next kick tries them again.
        let mut unrecorded: HashSet<i64> = HashSet::new();
        loop {
            let pending = db.pending_dependencies(None).await?;
            let Some(crate_) = pending
                .into_iter()
                .find(|p| !unrecorded.contains(&p.crate_id))
            else {
                self.sweep_search_indexes().await;
                return Ok(());
            };
            self.yield_to_user_runs().await?;
            let started = Instant::now();
            match deps::index_dependency(db, &crate_).await {
                Ok(r) => {
                    tracing::info!(
                        crate_name = %crate_.name,
                        version = %crate_.version,
                        files = r.files_seen,
                        symbols = r.symbols_written,
                        ms = started.elapsed().as_millis() as u64,
                        "indexed dependency crate"
                    );
                    if let Err(e) = self.keep_search_index(&crate_).await {
                        // A search builds it when it needs it.
                        tracing::warn!(
                            crate_name = %crate_.name,
                            error = %format!("{e:#}"),
                            "building a dependency crate's search index failed"
                        );
                    }
                }
                Err(e)
                    if scryer_db::is_busy(&e)
                        && *busy.entry(crate_.crate_id).or_default() < BUSY_RETRIES =>
                {
                    *busy.entry(crate_.crate_id).or_default() += 1;
                    tracing::debug!(crate_name = %crate_.name, "database busy: indexing the crate again shortly");
                    tokio::time::sleep(BUSY_PAUSE).await;
                }
                Err(e) if cancelled(&e) => {
                    // The runtime is going away under the run (`scryer index` exiting
                    // once its project is indexed): no fault of the crate, which stays
                    // pending for the next process.
                    tracing::debug!(crate_name = %crate_.name, "dependency indexing stopped: the process is exiting");
                    return Ok(());
                }
                Err(e) => {
                    tracing::warn!(
                        crate_name = %crate_.name,
                        version = %crate_.version,
                        error = %format!("{e:#}"),
                        "indexing a dependency crate failed"
                    );
                    if let Err(store) = deps::record_failure(db, &crate_, &e).await {
                        tracing::warn!(error = %format!("{store:#}"), "the failure was not stored");
                        unrecorded.insert(crate_.crate_id);
                    }
                }
            }
        }
    }

    /// Builds the search index of a crate whose index run just finished and keeps it on disk,
    /// so the first dependency search only maps it (building all of tokio's 160 crates'
    /// took that search 12 s). One crate at a time, on a blocking thread.
    async fn keep_search_index(
        self: &Arc<Self>,
        crate_: &scryer_db::PendingDependency,
    ) -> Result<()> {
        let Some(indexed) = self.db.dependency_index(crate_.crate_id).await? else {
            return Ok(());
        };
        let Some(id) = indexed.index_project_id else {
            return Ok(());
        };
        // Like the crate's parse, the build gives way to agents' calls; only before it
        // starts: a dependency search may be waiting for this very index.
        scryer_engine::foreground::yield_to_calls_async().await;
        let this = self.clone();
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            this.search.keep_dependency(&indexed, |b| {
                crate::indexing::search_cache::fill_from(&handle, &this.db, id, b)
            })
        })
        .await??;
        Ok(())
    }

    /// Once no crate is pending: removes kept search indexes that no crate in the database
    /// would open (a failure is only logged; the next round tries again).
    async fn sweep_search_indexes(&self) {
        let swept = match self.db.all_dependency_indexes().await {
            Ok(crates) => self.search.sweep_dependencies(&crates),
            Err(e) => Err(e),
        };
        match swept {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                removed = n,
                "removed search indexes of crates no longer held"
            ),
            Err(e) => {
                tracing::warn!(error = %format!("{e:#}"), "sweeping kept search indexes failed")
            }
        }
    }

    /// Waits while any user project has an index run going.
    async fn yield_to_user_runs(&self) -> Result<()> {
        for p in self.db.projects().await? {
            self.runs.wait_idle(p.id, YIELD_LIMIT).await;
        }
        Ok(())
    }
}

/// Removes a worker's registration when its task ends in any way (a panic included), so
/// the next call starts a new one.
struct WorkerGuard {
    worker: Arc<DependencyWorker>,
    token: u64,
}

impl Drop for WorkerGuard {
    fn drop(&mut self) {
        self.worker.with_state(|s| {
            if s.worker.is_some_and(|(t, _)| t == self.token) {
                s.worker = None;
            }
        });
    }
}

/// Whether dependency crates are indexed (`SCRYER_DEPENDENCIES=off` holds the worker;
/// locked crates are still recorded and reported as not indexed).
fn indexing_enabled() -> bool {
    !matches!(
        std::env::var("SCRYER_DEPENDENCIES")
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
            .as_str(),
        "off" | "0" | "false" | "no"
    )
}

/// Whether `e` is a task cancelled under the run (its runtime shutting down), rather than
/// a failure of what it was doing. Before this was told apart, `scryer index` recorded
/// every dependency crate still queued at its exit as failed ("task 75 was cancelled").
fn cancelled(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<tokio::task::JoinError>()
            .is_some_and(|j| j.is_cancelled())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexing::projects::ProjectManager;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    const LOCK: &str = "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\n\n\
        [[package]]\nname = \"foo\"\nversion = \"1.2.3\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n";

    /// A cargo home holding `foo 1.2.3` and `bar 0.9.0`, and a project locking foo.
    fn fixture(dir: &Path) -> (PathBuf, PathBuf) {
        let home = dir.join("cargo-home");
        for (name, version) in [("foo", "1.2.3"), ("bar", "0.9.0")] {
            let src = home.join(format!("registry/src/index.crates.io-0/{name}-{version}"));
            write(
                &src.join("Cargo.toml"),
                &format!("[package]\nname = \"{name}\"\n"),
            );
            write(
                &src.join("src/lib.rs"),
                &format!("pub fn {name}_fn() {{}}\n"),
            );
        }
        let root = dir.join("app");
        write(&root.join("Cargo.toml"), "[package]\nname = \"app\"\n");
        write(&root.join("Cargo.lock"), LOCK);
        (home, root)
    }

    /// Waits until no crate is pending (the worker ran out of work).
    async fn settled(projects: &Arc<ProjectManager>) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !projects
            .db()
            .pending_dependencies(None)
            .await
            .unwrap()
            .is_empty()
        {
            assert!(Instant::now() < deadline, "dependency crates still pending");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test]
    async fn calls_pick_up_a_changed_lockfile_and_the_worker_indexes_new_crates() {
        let dir = tempfile::tempdir().unwrap();
        let (home, root) = fixture(dir.path());
        let db = scryer_db::Db::open(&dir.path().join("index.db"))
            .await
            .unwrap();
        let projects = ProjectManager::new(db);
        let p = projects.register(&root).await.unwrap();

        projects
            .deps()
            .ensure_current_with(p.id, &root, Some(home.clone()))
            .await
            .unwrap();
        settled(&projects).await;
        let locked = projects.db().dependency_indexes(p.id).await.unwrap();
        assert_eq!(locked.len(), 1);
        assert!(locked[0].index_project_id.is_some(), "{locked:?}");

        // `cargo add bar`: the next call (after the re-check interval) sees it.
        write(
            &root.join("Cargo.lock"),
            &format!(
                "{LOCK}\n[[package]]\nname = \"bar\"\nversion = \"0.9.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
            ),
        );
        projects
            .deps()
            .with_state(|s| s.seen.get_mut(&p.id).unwrap().1 -= RECHECK);
        projects
            .deps()
            .ensure_current_with(p.id, &root, Some(home))
            .await
            .unwrap();
        settled(&projects).await;
        let locked = projects.db().dependency_indexes(p.id).await.unwrap();
        let names: Vec<(&str, bool)> = locked
            .iter()
            .map(|d| (d.crate_name.as_str(), d.index_project_id.is_some()))
            .collect();
        assert_eq!(names, vec![("bar", true), ("foo", true)]);
        // The crates' index rows are not user projects.
        assert_eq!(projects.db().projects().await.unwrap().len(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_worker_keeps_each_indexed_crates_search_index_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let (home, root) = fixture(dir.path());
        let db_path = dir.path().join("index.db");
        let db = scryer_db::Db::open(&db_path).await.unwrap();
        let projects = ProjectManager::new(db);
        let p = projects.register(&root).await.unwrap();
        projects
            .deps()
            .ensure_current_with(p.id, &root, Some(home))
            .await
            .unwrap();
        settled(&projects).await;
        let foo = projects.db().dependency_indexes(p.id).await.unwrap()[0].clone();
        let id = foo.index_project_id.expect("foo is indexed");
        let kept =
            crate::indexing::search_cache::dependency_dir(&db_path).join(format!("foo-1.2.3-{id}"));
        // The search index is built right after the crate's index run.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !kept.join(scryer_search::stored::STAMP_FILE).exists() {
            assert!(
                Instant::now() < deadline,
                "no search index kept in {}",
                kept.display()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A later process maps it: its first search builds nothing.
        let later = crate::indexing::search_cache::SearchCache::new(
            crate::indexing::search_cache::dependency_dir(&db_path),
        );
        let index = tokio::task::spawn_blocking(move || {
            later.dependency(&foo, |_| panic!("the kept index is not built again"))
        })
        .await
        .unwrap()
        .unwrap();
        let page = index.search("foo fn", None, 0, 5).unwrap();
        assert_eq!(page.total, 1);
    }

    #[tokio::test]
    async fn a_failed_crate_says_so_and_the_next_index_run_of_the_project_retries_it() {
        let dir = tempfile::tempdir().unwrap();
        let (home, root) = fixture(dir.path());
        let db = scryer_db::Db::open(&dir.path().join("index.db"))
            .await
            .unwrap();
        let projects = ProjectManager::new(db);
        let p = projects.register(&root).await.unwrap();
        let foo_src = home.join("registry/src/index.crates.io-0/foo-1.2.3");
        // Recorded with its sources found, which then go away before the worker runs.
        deps::record_locked_crates(projects.db(), p.id, &root, Some(&home))
            .await
            .unwrap();
        let kept = dir.path().join("kept");
        std::fs::rename(&foo_src, &kept).unwrap();
        projects.deps().kick();
        settled(&projects).await;
        let foo = &projects.db().dependency_indexes(p.id).await.unwrap()[0];
        assert_eq!(foo.index_project_id, None);
        let note = foo.note.clone().unwrap();
        assert!(
            note.starts_with("indexing failed: its sources")
                && note.contains("next index_workspace"),
            "{note}"
        );

        // The sources are back. A re-check of the lockfile keeps saying it failed (not
        // "being indexed"), and does not retry it.
        std::fs::rename(&kept, &foo_src).unwrap();
        projects.deps().with_state(|s| s.seen.remove(&p.id));
        projects
            .deps()
            .ensure_current_with(p.id, &root, Some(home.clone()))
            .await
            .unwrap();
        assert_eq!(
            projects.db().dependency_indexes(p.id).await.unwrap()[0]
                .note
                .as_deref(),
            Some(note.as_str())
        );
        assert!(
            projects
                .db()
                .pending_dependencies(None)
                .await
                .unwrap()
                .is_empty()
        );

        // The project is indexed again: foo is retried.
        projects
            .deps()
            .index_locked_crates_with(&p, Some(home))
            .await
            .unwrap();
        settled(&projects).await;
        let foo = &projects.db().dependency_indexes(p.id).await.unwrap()[0];
        assert!(foo.index_project_id.is_some(), "{foo:?}");
        assert_eq!(foo.note, None);
    }

    #[tokio::test]
    async fn a_server_start_resumes_pending_crates() {
        let dir = tempfile::tempdir().unwrap();
        let (home, root) = fixture(dir.path());
        let db_path = dir.path().join("index.db");
        {
            // A server stopped after recording what the project locks, before indexing it.
            let db = scryer_db::Db::open(&db_path).await.unwrap();
            let p = db
                .register_project(&root.to_string_lossy(), None)
                .await
                .unwrap();
            // Its own run finished: the start resumes no project run, whose end would
            // record the lockfile again from the real cargo home.
            db.finish_index_run(p.id, 1, None).await.unwrap();
            deps::record_locked_crates(&db, p.id, &root, Some(&home))
                .await
                .unwrap();
            assert_eq!(db.pending_dependencies(None).await.unwrap().len(), 1);
        }
        let server = crate::Server::start(crate::ServerConfig {
            db_path,
            compile_cache: None,
            limits: scryer_runtime::Limits::default(),
            plugins: vec![],
            first_query_wait: Duration::from_secs(5),
            watch_files: false,
        })
        .await
        .unwrap();
        let projects = &server.core.projects;
        settled(projects).await;
        let p = &projects.db().projects().await.unwrap()[0];
        let foo = &projects.db().dependency_indexes(p.id).await.unwrap()[0];
        assert!(foo.index_project_id.is_some(), "{foo:?}");
    }

    #[test]
    fn the_fingerprint_follows_the_lockfile_content() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(fingerprint(root), "none");
        write(&root.join("Cargo.lock"), "version = 4\n");
        let first = fingerprint(root);
        assert!(first.contains("Cargo.lock#"), "{first}");
        assert_eq!(fingerprint(root), first);
        write(&root.join("Cargo.lock"), "version = 4\n\n[[package]]\n");
        assert_ne!(fingerprint(root), first);
    }

    #[tokio::test]
    async fn a_task_cancelled_under_a_run_is_told_apart_from_a_failure() {
        let task = tokio::spawn(std::future::pending::<()>());
        task.abort();
        let join = task.await.unwrap_err();
        let e = anyhow::Error::from(join).context("indexing serde 1.0.0");
        assert!(cancelled(&e), "{e:#}");
        let panicked = tokio::spawn(async { panic!("a parser bug") })
            .await
            .unwrap_err();
        assert!(!cancelled(&anyhow::Error::from(panicked)));
        assert!(!cancelled(&anyhow::anyhow!("its sources are gone")));
    }
}
