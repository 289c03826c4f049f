//! Keeps registered projects fresh while nobody asks: file events under a project root
//! become re-parses of the changed source files (every language `scryer_engine::lang`
//! knows), and a burst (a branch switch, a pull, a formatter run) becomes one parallel
//! index run.
//!
//! Directories are watched one by one (not recursively) after a walk that honours
//! `.gitignore`, so a `target/` folder never costs inotify watches; a directory created
//! later is added when its creation is seen. Links are never followed, and a directory
//! replaced, moved or turned into a link re-indexes the project, so a parent swapped for
//! a link out of the root drops its files (the engine's `safe_fs` refuses to read them).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use scryer_db::ProjectRow;
use tokio::sync::mpsc;

use crate::indexing::projects::ProjectManager;

/// More changed files than this in one quiet period: re-index the project instead.
pub const BURST_FILES: usize = 32;
/// How long the files must stay quiet before the batch is applied.
const QUIET: Duration = Duration::from_millis(150);

pub struct ProjectWatcher {
    watcher: Mutex<Option<RecommendedWatcher>>,
    roots: Mutex<Vec<(PathBuf, ProjectRow)>>,
}

impl ProjectWatcher {
    /// Starts the event loop. Watching fails soft: without a watcher, answers still
    /// refresh the files they name.
    pub fn start(projects: Arc<ProjectManager>) -> Arc<ProjectWatcher> {
        let (tx, rx) = mpsc::unbounded_channel::<notify::Event>();
        let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            if let Ok(event) = res {
                let _ = tx.send(event);
            }
        })
        .map_err(|e| tracing::warn!(error = %e, "file watching unavailable"))
        .ok();
        let this = Arc::new(ProjectWatcher {
            watcher: Mutex::new(watcher),
            roots: Mutex::new(Vec::new()),
        });
        tokio::spawn(run(this.clone(), projects, rx));
        this
    }

    /// Watches every directory of `project` that indexing would walk.
    pub fn watch(&self, project: &ProjectRow) {
        let root = PathBuf::from(&project.root);
        {
            let mut roots = self.roots.lock().unwrap_or_else(|p| p.into_inner());
            if roots.iter().any(|(r, _)| *r == root) {
                return;
            }
            roots.push((root.clone(), project.clone()));
        }
        let dirs = walked_dirs(&root);
        let mut guard = self.watcher.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(w) = guard.as_mut() {
            for d in dirs {
                if let Err(e) = w.watch(&d, RecursiveMode::NonRecursive) {
                    tracing::warn!(dir = %d.display(), error = %e, "cannot watch directory");
                }
            }
        }
    }

    /// Stops watching a project (after it was deleted): its events are ignored from now on.
    pub fn unwatch(&self, project_id: i64) {
        let removed: Vec<PathBuf> = {
            let mut roots = self.roots.lock().unwrap_or_else(|p| p.into_inner());
            let (gone, kept): (Vec<_>, Vec<_>) =
                roots.drain(..).partition(|(_, p)| p.id == project_id);
            *roots = kept;
            gone.into_iter().map(|(r, _)| r).collect()
        };
        let mut guard = self.watcher.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(w) = guard.as_mut() {
            for root in removed {
                for d in walked_dirs(&root) {
                    let _ = w.unwatch(&d);
                }
            }
        }
    }

    fn project_of(&self, path: &Path) -> Option<(PathBuf, ProjectRow)> {
        let roots = self.roots.lock().unwrap_or_else(|p| p.into_inner());
        roots
            .iter()
            .filter(|(r, _)| path.starts_with(r))
            .max_by_key(|(r, _)| r.as_os_str().len())
            .cloned()
    }

    fn watch_new_dir(&self, dir: &Path) {
        let hidden_or_target = dir
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.') || c.as_os_str() == "target");
        if hidden_or_target {
            return;
        }
        if let Some(w) = self
            .watcher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            let _ = w.watch(dir, RecursiveMode::NonRecursive);
        }
    }
}

/// The directories under `root` that indexing walks (links not followed).
fn walked_dirs(root: &Path) -> Vec<PathBuf> {
    scryer_engine::walk::walker(root, scryer_engine::indexer::skipped_dir)
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
        .map(|e| e.into_path())
        .collect()
}

/// Whether an event on `path` may have moved a whole directory's files: a directory
/// removed, a directory or link created or renamed into place, or a path without an
/// extension renamed away. Such a change re-indexes the project.
fn changes_a_directory(kind: &EventKind, path: &Path) -> bool {
    use notify::event::{ModifyKind, RemoveKind};
    let dir_or_link =
        || std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir() || m.file_type().is_symlink());
    match kind {
        EventKind::Remove(RemoveKind::Folder) => true,
        EventKind::Create(_) => dir_or_link(),
        // A rename names no file type: a directory or link arriving, or a path without
        // an extension leaving.
        EventKind::Modify(ModifyKind::Name(_)) => {
            dir_or_link()
                || (path.extension().is_none() && std::fs::symlink_metadata(path).is_err())
        }
        _ => false,
    }
}

/// Relative `/`-separated path of a source file worth indexing, if it is one.
fn indexable(root: &Path, path: &Path) -> Option<String> {
    scryer_engine::lang::language_for(&path.to_string_lossy())?;
    watched(root, path)
}

/// `path` relative to `root` when the index run's walk would enter it: no hidden
/// component and no directory the walk skips (`target`, `node_modules`, `vendor` outside
/// `src`, ...: `scryer_engine::indexer::skipped_dir`).
fn watched(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut parts: Vec<String> = Vec::new();
    let mut so_far = std::path::PathBuf::new();
    for c in rel.components() {
        let part = c.as_os_str().to_string_lossy().into_owned();
        so_far.push(&part);
        if part.starts_with('.') || scryer_engine::indexer::skipped_dir(&so_far) {
            return None;
        }
        parts.push(part);
    }
    Some(parts.join("/"))
}

async fn run(
    this: Arc<ProjectWatcher>,
    projects: Arc<ProjectManager>,
    mut rx: mpsc::UnboundedReceiver<notify::Event>,
) {
    // Per project: the changed files, and whether a directory changed (re-index).
    let mut pending: HashMap<i64, (ProjectRow, BTreeSet<String>, bool)> = HashMap::new();
    // When to apply what is pending: QUIET after the last change (reads, which answers
    // cause all the time, do not count), and never later than a second after the first.
    let mut due: Option<(tokio::time::Instant, tokio::time::Instant)> = None;
    loop {
        let event = match due {
            None => match rx.recv().await {
                Some(e) => Some(e),
                None => return,
            },
            Some((quiet, latest)) => {
                match tokio::time::timeout_at(quiet.min(latest), rx.recv()).await {
                    Ok(Some(e)) => Some(e),
                    Ok(None) => return,
                    Err(_) => None,
                }
            }
        };
        let Some(event) = event else {
            due = None;
            apply(&projects, pending.drain().map(|(_, v)| v).collect()).await;
            continue;
        };
        if matches!(event.kind, EventKind::Access(_) | EventKind::Other) {
            continue;
        }
        let mut relevant = false;
        for path in &event.paths {
            // `symlink_metadata`: a link to a directory outside the root is not watched.
            if matches!(event.kind, EventKind::Create(_))
                && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
            {
                this.watch_new_dir(path);
            }
            if let Some((root, project)) = this.project_of(path)
                && changes_a_directory(&event.kind, path)
                && watched(&root, path).is_some()
            {
                // Like a burst: the batch becomes one index run.
                pending
                    .entry(project.id)
                    .or_insert_with(|| (project, BTreeSet::new(), false))
                    .2 = true;
                relevant = true;
                continue;
            }
            if let Some((root, project)) = this.project_of(path)
                && let Some(rel) = indexable(&root, path)
            {
                pending
                    .entry(project.id)
                    .or_insert_with(|| (project, BTreeSet::new(), false))
                    .1
                    .insert(rel);
                relevant = true;
            }
        }
        if relevant {
            let now = tokio::time::Instant::now();
            let latest = due.map(|(_, l)| l).unwrap_or(now + Duration::from_secs(1));
            due = Some((now + QUIET, latest));
        }
    }
}

async fn apply(projects: &Arc<ProjectManager>, batches: Vec<(ProjectRow, BTreeSet<String>, bool)>) {
    for (project, files, dir_changed) in batches {
        if dir_changed || files.len() > BURST_FILES {
            tracing::info!(project = %project.slug, files = files.len(), "burst of changes: re-indexing");
            projects.start_index(&project).await;
            continue;
        }
        let files: Vec<String> = files.into_iter().collect();
        match projects.refresh(&project, &files).await {
            Ok(r) if !r.is_empty() => tracing::info!(
                project = %project.slug,
                updated = r.updated.len(),
                removed = r.removed.len(),
                "applied file changes"
            ),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(project = %project.slug, error = %format!("{e:#}"), "applying file changes failed")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_source_files_outside_hidden_and_target_dirs_count() {
        let root = Path::new("/p");
        assert_eq!(
            indexable(root, Path::new("/p/src/a.rs")).as_deref(),
            Some("src/a.rs")
        );
        assert_eq!(indexable(root, Path::new("/p/target/debug/x.rs")), None);
        assert_eq!(indexable(root, Path::new("/p/.git/x.rs")), None);
        assert_eq!(indexable(root, Path::new("/p/src/a.txt")), None);
        assert_eq!(
            indexable(root, Path::new("/p/web/app.tsx")).as_deref(),
            Some("web/app.tsx")
        );
        assert_eq!(indexable(root, Path::new("/q/src/a.rs")), None);
        // The walk's skipped directories, for every language, are the watcher's too.
        assert_eq!(indexable(root, Path::new("/p/web/node_modules/x.ts")), None);
        assert_eq!(indexable(root, Path::new("/p/pkg/__pycache__/m.py")), None);
        assert_eq!(indexable(root, Path::new("/p/vendor/lib.go")), None);
        assert_eq!(
            indexable(root, Path::new("/p/src/vendor/lib.rs")).as_deref(),
            Some("src/vendor/lib.rs")
        );
        // A directory is watched where the walk would enter it.
        assert_eq!(
            watched(root, Path::new("/p/src/new")).as_deref(),
            Some("src/new")
        );
        assert_eq!(watched(root, Path::new("/p/target/debug")), None);
    }
}
