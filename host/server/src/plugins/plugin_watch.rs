//! Hot swap: the serving process watches the installed plugins (ADR 0010).
//!
//! The registry serving new calls sits behind one lock as an `Arc`: a call takes the
//! `Arc` when it starts and finishes on it, whatever is swapped in meanwhile. A change
//! under the configuration directory (the policy, a `.wasm` in the plugins directory)
//! starts a quiet period; when events stop, every installed plugin is loaded again
//! exactly as at start (receipts, grants, clashes) and the new registry swapped in. A
//! plugin whose new version is refused keeps its loaded version serving while the policy
//! still approves that one. Sessions whose tool list changed are told with
//! `notifications/tools/list_changed` (see `mcp.rs`).
//!
//! What the process serves is also written to `<plugins dir>/.serving-<pid>.json`, so
//! `scryer plugin list` can say which version a running server keeps and why.
//!
//! A serving process loads its installed plugins here too, the first time, after it
//! has started accepting sessions: compiling a third-party plugin never holds up an
//! `initialize` (issue 15). Its tools arrive with `tools/list_changed`; a call to a tool
//! not served yet waits for that first load ([`Live::installed_loaded`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher as _};
use scryer_runtime::Runtime;
use scryer_runtime::installed::PluginHome;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};

use crate::plugins::profiles::Wanted;
use crate::plugins::registry::{Origin, Registry, Status};

/// Events must stop for this long before plugins are reloaded: `scryer plugin add`
/// writes the policy, then renames the bytes, and a copy by hand writes in chunks.
const QUIET: Duration = Duration::from_millis(300);
/// A stream of events that never pauses still reloads this often.
const MAX_WAIT: Duration = Duration::from_secs(3);

/// The registry new calls use, a counter sessions watch to learn it changed, and
/// whether the routers given at start have loaded.
pub(crate) struct Live {
    current: RwLock<Arc<Registry>>,
    generation: watch::Sender<u64>,
    /// `None` while the routers given at start are still loading (compiled in the
    /// background); then whether they loaded, or why not.
    ready: watch::Sender<Option<Result<(), String>>>,
    /// Whether the installed plugins have had their first load (true when there are
    /// none to load, or they load in `ready`'s registry).
    installed: watch::Sender<bool>,
    /// The plugins the live profiles need (ADR 0030): only those installed plugins are
    /// compiled and loaded. Every one unless the process loads on demand.
    wanted: std::sync::Mutex<Wanted>,
    /// Asks the watching task to load the installed plugins again (a profile needs more).
    nudge: std::sync::Mutex<Option<mpsc::UnboundedSender<()>>>,
}

impl Live {
    pub(crate) fn new(registry: Arc<Registry>) -> Live {
        Live {
            current: RwLock::new(registry),
            generation: watch::channel(0).0,
            ready: watch::channel(Some(Ok(()))).0,
            installed: watch::channel(true).0,
            wanted: std::sync::Mutex::new(Wanted::all()),
            nudge: std::sync::Mutex::new(None),
        }
    }

    /// From now on only the plugins a live profile names are loaded.
    pub(crate) fn want_nothing_yet(&self) {
        *self.wanted.lock().unwrap_or_else(|p| p.into_inner()) = Wanted::default();
    }

    /// Adds what a profile needs; whether it names plugins not wanted before.
    pub(crate) fn want(&self, more: &Wanted) -> bool {
        self.wanted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(more)
    }

    fn wanted(&self) -> Wanted {
        self.wanted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Replaces the serving registry by `change` of it, in one step (no swap between
    /// the read and the write is lost), and wakes the sessions.
    pub(crate) fn update(
        &self,
        change: impl FnOnce(&Registry) -> Result<Registry, String>,
    ) -> anyhow::Result<()> {
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        let new = change(&current).map_err(anyhow::Error::msg)?;
        *current = Arc::new(new);
        drop(current);
        self.generation.send_modify(|g| *g += 1);
        Ok(())
    }

    /// Records that the installed plugins load after the start ([`start`] with
    /// `load_first`).
    pub(crate) fn installed_pending(&self) {
        self.installed.send_replace(false);
    }

    /// Waits until the installed plugins have had their first load.
    pub(crate) async fn installed_loaded(&self) {
        let _ = self.installed.subscribe().wait_for(|done| *done).await;
    }

    /// Whether the routers given at start have loaded (or failed to).
    pub(crate) fn is_ready(&self) -> bool {
        self.ready.borrow().is_some()
    }

    /// An empty registry until the routers loading in the background are stored.
    pub(crate) fn pending() -> Live {
        let empty = Registry::new(Vec::new()).expect("no plugins, no clash");
        Live {
            ready: watch::channel(None).0,
            ..Live::new(Arc::new(empty))
        }
    }

    /// Records that the routers given at start have loaded (or why not).
    pub(crate) fn set_ready(&self, outcome: Result<(), String>) {
        self.ready.send_replace(Some(outcome));
    }

    /// Waits until the routers given at start have loaded; the error says why they did
    /// not.
    pub(crate) async fn ready(&self) -> Result<(), String> {
        let mut rx = self.ready.subscribe();
        let outcome = rx.wait_for(Option::is_some).await;
        match outcome.as_deref() {
            Ok(Some(outcome)) => outcome.clone(),
            _ => Err("the server is shutting down".into()),
        }
    }

    /// The registry serving now.
    pub(crate) fn load(&self) -> Arc<Registry> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Swaps in `registry` for new calls and wakes the sessions.
    pub(crate) fn store(&self, registry: Arc<Registry>) {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = registry;
        self.generation.send_modify(|g| *g += 1);
    }

    /// Changes whenever a registry is swapped in.
    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }
}

/// Watches `home` for the life of the process and hot-swaps the installed plugins
/// into `live` (compiled with `runtime`); with `load_first`, loads them first (the start's load, done after sessions
/// are accepted). A process loading on demand (ADR 0030) passes neither `load_first`
/// nor `report_now`: nothing is wanted before the first session, whose profile asks for
/// the load ([`load_newly_wanted`]), and the serving report is first written after it.
/// Watching fails soft: without it, plugins change at the next start.
pub(crate) fn start(
    live: Arc<Live>,
    runtime: Runtime,
    home: PluginHome,
    db_label: String,
    load_first: bool,
    report_now: bool,
) {
    if load_first {
        live.installed_pending();
    }
    let Some(watcher) = watch_home(&home) else {
        if load_first {
            tokio::spawn(async move { first_load(&live, &runtime, &home).await });
        }
        return;
    };
    let (watcher, tx, rx) = watcher;
    *live.nudge.lock().unwrap_or_else(|p| p.into_inner()) = Some(tx);
    let report = ServingReport::path(&home, std::process::id());
    tokio::spawn(async move {
        // Owned by the task: dropped (watching stops, the report is deleted) when the
        // runtime shuts down with the process.
        let _watcher = watcher;
        if load_first {
            first_load(&live, &runtime, &home).await;
        }
        remove_dead_reports(&home);
        if report_now {
            write_report(&report, &db_label, &live.load());
        }
        remove_at_exit(report.clone());
        let _report = RemoveOnDrop(report.clone());
        let mut rx = rx;
        while rx.recv().await.is_some() {
            settle(&mut rx).await;
            reload(&live, &runtime, &home).await;
            live.installed.send_replace(true);
            write_report(&report, &db_label, &live.load());
        }
    });
}

/// Loads the installed plugins a new session's profile names (ADR 0030): calls to tools
/// not served yet wait for it, as for the start's load. Without a watching task they
/// load here, from `home` with `runtime`.
pub(crate) fn load_newly_wanted(live: &Arc<Live>, runtime: &Runtime, home: Option<&PluginHome>) {
    live.installed_pending();
    let nudge = live.nudge.lock().unwrap_or_else(|p| p.into_inner()).clone();
    match nudge {
        Some(tx) if tx.send(()).is_ok() => {}
        // No watching task: load them here.
        _ => {
            let Some(home) = home.cloned() else {
                live.installed.send_replace(true);
                return;
            };
            let (live, runtime) = (live.clone(), runtime.clone());
            tokio::spawn(async move { first_load(&live, &runtime, &home).await });
        }
    }
}

/// The start's load of the installed plugins, in a process already serving.
async fn first_load(live: &Live, runtime: &Runtime, home: &PluginHome) {
    reload(live, runtime, home).await;
    live.installed.send_replace(true);
}

/// A watcher on the configuration and plugins directories, sending `()` on a change
/// that may change what loads; None (logged) when watching is unavailable.
type Watching = (
    notify::RecommendedWatcher,
    mpsc::UnboundedSender<()>,
    mpsc::UnboundedReceiver<()>,
);

fn watch_home(home: &PluginHome) -> Option<Watching> {
    let plugins_dir = home.plugins_dir();
    if let Err(e) = create_private_dir(&plugins_dir) {
        tracing::warn!("plugin hot swap unavailable: {e}");
        return None;
    }
    let (tx, rx) = mpsc::unbounded_channel::<()>();
    let nudge = tx.clone();
    let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(event) = res
            && event.paths.iter().any(|p| is_plugin_state(p))
        {
            let _ = tx.send(());
        }
    });
    let mut watcher = match watcher {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(error = %e, "plugin hot swap unavailable: cannot watch files");
            return None;
        }
    };
    for dir in [home.config_dir(), plugins_dir.as_path()] {
        if let Err(e) = watcher.watch(dir, RecursiveMode::NonRecursive) {
            tracing::warn!(dir = %dir.display(), error = %e, "plugin hot swap unavailable");
            return None;
        }
    }
    Some((watcher, nudge, rx))
}

/// Waits until no event came for [`QUIET`] (or [`MAX_WAIT`] passed), swallowing them.
async fn settle(rx: &mut mpsc::UnboundedReceiver<()>) {
    let started = Instant::now();
    while started.elapsed() < MAX_WAIT {
        match tokio::time::timeout(QUIET, rx.recv()).await {
            Ok(Some(())) => continue,
            Ok(None) | Err(_) => break,
        }
    }
}

/// Whether a changed path can change what loads: the policy or a plugin's bytes (not
/// the lock, staging files, or the serving reports, which start with a dot).
fn is_plugin_state(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    !name.starts_with('.') && (name == "policy.toml" || name.ends_with(".wasm"))
}

/// Loads the installed plugins again and swaps the result in. Holds the plugins lock
/// while reading, so a `scryer plugin` command is never seen half done.
async fn reload(live: &Live, runtime: &Runtime, home: &PluginHome) {
    let started = Instant::now();
    let lock_home = home.clone();
    let lock = match tokio::task::spawn_blocking(move || lock_home.lock()).await {
        Ok(Ok(file)) => Some(file),
        Ok(Err(e)) => {
            tracing::warn!("reloading plugins without the plugins lock: {e}");
            None
        }
        Err(e) => {
            tracing::warn!(error = %e, "reloading plugins without the plugins lock");
            None
        }
    };
    let wanted = live.wanted();
    let report = home
        .load_wanted(runtime, &|name, replaces| wanted.wants(name, replaces))
        .await;
    drop(lock);
    for problem in &report.problems {
        tracing::warn!("installed plugins: {problem}");
    }
    let swapped = live.update(|old| {
        let new = old.reloaded(report);
        new.log_installed();
        let changed = describe_changes(old, &new);
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            changes = %if changed.is_empty() { "none".to_string() } else { changed.join("; ") },
            "installed plugins reloaded"
        );
        Ok(new)
    });
    if let Err(e) = swapped {
        tracing::warn!("installed plugins not swapped in: {e:#}");
    }
}

/// What differs between two registries' installed plugins, for the log.
fn describe_changes(old: &Registry, new: &Registry) -> Vec<String> {
    let view = |r: &Registry| -> Vec<(String, String)> {
        r.statuses()
            .iter()
            .filter(|s| s.origin == Origin::Installed)
            .map(|s| (s.name.clone(), serving_state(s)))
            .collect()
    };
    let (old, new) = (view(old), view(new));
    let mut changes = Vec::new();
    for (name, state) in &new {
        match old.iter().find(|(n, _)| n == name) {
            Some((_, before)) if before == state => {}
            Some((_, before)) => changes.push(format!("{name}: {before} -> {state}")),
            None => changes.push(format!("{name}: {state} (new)")),
        }
    }
    for (name, _) in old.iter().filter(|(n, _)| !new.iter().any(|(m, _)| m == n)) {
        changes.push(format!("{name}: removed"));
    }
    changes
}

fn serving_state(s: &crate::plugins::registry::PluginStatus) -> String {
    let version = s
        .plugin
        .as_ref()
        .map(|p| p.description.version.clone())
        .or_else(|| s.version.clone())
        .unwrap_or_else(|| "?".into());
    match &s.status {
        Status::Loaded if s.note.is_some() => format!("{version} kept"),
        Status::Loaded => format!("{version} serving"),
        Status::Refused(_) => "refused".into(),
        Status::Replaced { by } => format!("replaced by {by}"),
    }
}

/// What one running server serves of the installed plugins.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ServingReport {
    pub pid: u32,
    /// The database the server holds.
    pub database: String,
    pub plugins: Vec<ServingPlugin>,
    /// Every plugin loaded now, built-in or installed: a plugin no live profile needs
    /// is not (ADR 0030).
    #[serde(default)]
    pub loaded: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ServingPlugin {
    pub name: String,
    /// The version answering calls; none when it serves nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<String>,
    /// Why it is not serving, or why an older version is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ServingReport {
    fn path(home: &PluginHome, pid: u32) -> PathBuf {
        home.plugins_dir().join(format!(".serving-{pid}.json"))
    }

    fn of(registry: &Registry, pid: u32, database: &str) -> ServingReport {
        ServingReport {
            pid,
            database: database.to_string(),
            plugins: registry
                .statuses()
                .iter()
                .filter(|s| s.origin == Origin::Installed)
                .map(|s| ServingPlugin {
                    name: s.name.clone(),
                    serving: s
                        .plugin
                        .as_ref()
                        .filter(|_| s.is_serving())
                        .map(|p| p.description.version.clone()),
                    note: match &s.status {
                        Status::Refused(why) => Some(why.clone()),
                        _ => s.note.clone(),
                    },
                })
                .collect(),
            loaded: registry.loaded_names(),
        }
    }

    /// The reports of the servers running now (reports of dead processes are skipped).
    pub fn running(home: &PluginHome) -> Vec<ServingReport> {
        let mut out: Vec<ServingReport> = reports(home)
            .into_iter()
            .filter(|(pid, _)| alive(*pid))
            .filter_map(|(_, path)| {
                let text = std::fs::read_to_string(path).ok()?;
                serde_json::from_str(&text).ok()
            })
            .collect();
        out.sort_by_key(|r| r.pid);
        out
    }
}

fn write_report(path: &Path, database: &str, registry: &Registry) {
    let report = ServingReport::of(registry, std::process::id(), database);
    let text = serde_json::to_string_pretty(&report).unwrap_or_default();
    if let Err(e) = scryer_runtime::policy::write_atomically(path, text.as_bytes()) {
        tracing::info!(path = %path.display(), error = %e, "cannot write the serving report");
    }
}

/// Every `.serving-<pid>.json` under the plugins directory.
fn reports(home: &PluginHome) -> Vec<(u32, PathBuf)> {
    let Ok(dir) = std::fs::read_dir(home.plugins_dir()) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let pid = name.strip_prefix(".serving-")?.strip_suffix(".json")?;
            Some((pid.parse().ok()?, e.path()))
        })
        .collect()
}

/// Reports left by servers that died without cleaning up.
fn remove_dead_reports(home: &PluginHome) {
    for (pid, path) in reports(home) {
        if !alive(pid) {
            let _ = std::fs::remove_file(path);
        }
    }
}

pub(crate) fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // Signal 0 checks existence; EPERM means it exists under another user.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Reports to delete when the process exits: the daemon ends with `process::exit`,
/// which runs no destructors but does run `atexit` handlers.
static AT_EXIT: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn remove_at_exit(path: PathBuf) {
    let mut paths = AT_EXIT.lock().unwrap_or_else(|p| p.into_inner());
    if paths.is_empty() {
        extern "C" fn remove_reports() {
            if let Ok(paths) = AT_EXIT.try_lock() {
                for p in paths.iter() {
                    let _ = std::fs::remove_file(p);
                }
            }
        }
        // Registration fails only when the handler table is full; the report of a
        // dead process is ignored by readers anyway.
        unsafe { libc::atexit(remove_reports) };
    }
    paths.push(path);
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The plugins directory holds code the host runs: only the user may write it (as
/// `PluginHome::lock` makes it).
fn create_private_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("making {} private: {e}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_policy_and_plugin_bytes_trigger_a_reload() {
        assert!(is_plugin_state(Path::new("/c/policy.toml")));
        assert!(is_plugin_state(Path::new("/c/plugins/nav.wasm")));
        assert!(is_plugin_state(Path::new("/c/plugins/nav.pending.wasm")));
        assert!(!is_plugin_state(Path::new("/c/plugins/.lock")));
        assert!(!is_plugin_state(Path::new("/c/plugins/.nav.wasm.tmp-12")));
        assert!(!is_plugin_state(Path::new("/c/.policy.toml.tmp-12")));
        assert!(!is_plugin_state(Path::new("/c/plugins/.serving-12.json")));
        assert!(!is_plugin_state(Path::new("/c/plugins/nav.toml")));
    }

    #[tokio::test]
    async fn a_burst_of_events_is_one_reload_after_the_quiet_period() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sender = tokio::spawn(async move {
            for _ in 0..5 {
                tx.send(()).unwrap();
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // Keeps the channel open past the quiet period.
            tokio::time::sleep(Duration::from_secs(2)).await;
            drop(tx);
        });
        rx.recv().await.unwrap();
        let started = Instant::now();
        settle(&mut rx).await;
        let waited = started.elapsed();
        // Four more events 50 ms apart, then QUIET of silence.
        assert!(waited >= QUIET + Duration::from_millis(150), "{waited:?}");
        assert!(waited < MAX_WAIT, "{waited:?}");
        assert!(
            rx.try_recv().is_err(),
            "every event of the burst was consumed"
        );
        sender.abort();
    }

    #[test]
    fn reports_of_dead_processes_are_not_running_and_are_cleaned() {
        let dir = tempfile::tempdir().unwrap();
        let home = PluginHome::new(dir.path());
        std::fs::create_dir_all(home.plugins_dir()).unwrap();
        let mine = ServingReport {
            pid: std::process::id(),
            database: "/db".into(),
            plugins: vec![ServingPlugin {
                name: "p".into(),
                serving: Some("1.0.0".into()),
                note: Some("kept".into()),
            }],
            loaded: vec!["p".into()],
        };
        let me = ServingReport::path(&home, mine.pid);
        std::fs::write(&me, serde_json::to_string(&mine).unwrap()).unwrap();
        // Pids wrap far below this on Linux: no process has it.
        let dead = ServingReport::path(&home, 999_999_999);
        std::fs::write(&dead, serde_json::to_string(&mine).unwrap()).unwrap();
        assert_eq!(ServingReport::running(&home), vec![mine]);
        remove_dead_reports(&home);
        assert!(me.exists() && !dead.exists());
    }
}
