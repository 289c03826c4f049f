//! Which project a call is about, decided per session (the context cascade):
//!
//! 1. `file_path`: the registered project with the longest canonical root holding it.
//!    An absolute path decides alone; a relative one is joined onto the session's cwd
//!    (not the daemon's) and decides when that file exists and no `project` is given.
//! 2. An explicit `project` (slug, id or root path); an unknown one is an error.
//! 3. The session's active project (`switch_active_project`, `--project`).
//! 4. The session roots: the client's `roots/list` when it offers roots, else the cwd.
//! 5. The only registered project, when there is exactly one.
//!
//! A tool that writes or deletes (`contract::needs_named_project`) stops after step 3:
//! with no `file_path`, no `project` and no active project it fails, asking for
//! `project`, rather than acting on a project nobody named.
//!
//! When nothing matches and the session root is a project directory, it is registered
//! and indexed in the background (once per session); the call then waits for the first
//! index like any call on a project being built.

use std::path::{Path, PathBuf};

use scryer_db::ProjectRow;
use serde_json::{Map, Value};

use crate::call::paths::{normalize, project_relative};
use crate::{Core, SessionState, unknown_project};

/// Whether `dir` holds a file that makes it a project root worth indexing unasked: a
/// `.git`, or one of some language's markers (`Cargo.toml`, `pyproject.toml`, ...).
fn has_project_marker(dir: &Path) -> bool {
    std::iter::once(".git")
        .chain(scryer_engine::lang::project_markers())
        .any(|m| dir.join(m).exists())
}

fn arg_str<'a>(args: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim())),
        Some(other) => Err(format!(
            "invalid argument: `{name}` must be a string, got {other}"
        )),
    }
}

/// What a session's first call would wait for, started as the session opens: for the
/// project it is about (its active one, else the registered project holding its working
/// directory), its counts and file paths are read (`ProjectManager::warm`), its precise
/// stage is looked at, and its precise data read into memory when it has some (the
/// scheduler's `prime`; ADR 0055). What the process holds already is not read again.
pub(crate) async fn prepare_session_project(
    projects: std::sync::Arc<crate::indexing::projects::ProjectManager>,
    cwd: PathBuf,
    active: Option<i64>,
) {
    let db = projects.db();
    let project = match active {
        Some(id) => db.project(id).await.ok().flatten(),
        None => db.projects().await.ok().and_then(|all| {
            let cwd = canonical(&cwd);
            longest_root(&all, &cwd).cloned()
        }),
    };
    if let Some(p) = project {
        // What nearly every call reads (its counts, its file paths), as each call's
        // dispatch asks too: the first call then finds it read.
        projects.warm(p.id);
        projects.precise().ensure(&p);
    }
}

/// The project whose root is the longest prefix of `path` (component-wise).
pub(crate) fn longest_root<'a>(all: &'a [ProjectRow], path: &Path) -> Option<&'a ProjectRow> {
    all.iter()
        .filter(|p| path.starts_with(&p.root))
        .max_by_key(|p| p.root.len())
}

/// `path` with symlinks resolved when it exists, else lexically normalized.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .ok()
        .or_else(|| normalize(path))
        .unwrap_or_else(|| path.to_path_buf())
}

/// A `roots/list` URI as a local path: `file://` URIs only, percent-escapes decoded.
pub(crate) fn root_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path`: only the local host (empty or `localhost`) is a local path.
    let path = match rest.strip_prefix("localhost") {
        Some(p) if p.starts_with('/') => p,
        _ if rest.starts_with('/') => rest,
        _ => return None,
    };
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Some(b) = std::str::from_utf8(&bytes[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let decoded = String::from_utf8(out).ok()?;
    if decoded.contains('\0') {
        return None;
    }
    Some(PathBuf::from(decoded))
}

/// Whether `dir` looks like a project root (and is not the home directory or `/`, which
/// would make an accidental index of everything).
fn is_project_root(dir: &Path) -> bool {
    if dir.parent().is_none() || std::env::home_dir().is_some_and(|h| h == dir) {
        return false;
    }
    dir.is_dir() && has_project_marker(dir)
}

/// Step 1 of the cascade: the project holding the call's `file_path`, and the
/// project-relative path to put in its place when it was relative to the session's cwd
/// (which decides only when the file exists and no `project` is given).
fn by_file_path(
    all: &[ProjectRow],
    session: &SessionState,
    args: &Map<String, Value>,
    explicit: bool,
) -> Option<(ProjectRow, Option<String>)> {
    let fp = arg_str(args, "file_path").ok()??;
    if fp.contains('\0') {
        return None;
    }
    let path = Path::new(fp.strip_prefix("file://").unwrap_or(fp));
    if path.is_absolute() {
        return longest_root(all, &canonical(path)).map(|p| (p.clone(), None));
    }
    let joined = session.cwd.join(path);
    if explicit || !joined.exists() {
        return None;
    }
    let real = canonical(&joined);
    let p = longest_root(all, &real)?;
    let rel = project_relative(Path::new(&p.root), &real.to_string_lossy()).ok()?;
    Some((p.clone(), Some(rel)))
}

/// The project a call is about (the cascade in this module's header). May rewrite a
/// cwd-relative `file_path` to the project-relative path routers read.
pub(crate) async fn session_project(
    core: &Core,
    session_id: u64,
    session: &SessionState,
    args: &mut Map<String, Value>,
    writes: Option<&str>,
) -> Result<Option<ProjectRow>, String> {
    let db = core.projects.db();
    let all = db
        .projects()
        .await
        .map_err(|e| format!("internal error: {e:#}"))?;
    // A row another call is registering is read only once its first index run has
    // started, so this call waits for that run like any call on a project building.
    core.projects.settle_registrations().await;
    let explicit = arg_str(args, "project")?;

    // 1. file_path.
    if let Some((p, rewritten)) = by_file_path(&all, session, args, explicit.is_some()) {
        if let Some(rel) = rewritten {
            // Routers read relative paths against the project root.
            args.insert("file_path".into(), Value::String(rel));
        }
        return Ok(Some(p));
    }

    // 2. explicit project.
    if let Some(sel) = explicit {
        // From the rows read above (reading them again for every call was 1.7% of the
        // daemon's CPU under load: docs/learnings/scale.md, stop 45); read again only
        // for a project registered since.
        let found = match scryer_db::select_project(&all, sel) {
            Some(p) => Some(p.clone()),
            None => db
                .project_by_selector(sel)
                .await
                .map_err(|e| format!("internal error: {e:#}"))?,
        };
        return match found {
            Some(p) => Ok(Some(p)),
            None => {
                let known: Vec<String> = all.iter().map(|p| p.slug.clone()).collect();
                Err(unknown_project(sel, &known))
            }
        };
    }

    // 3. the session's active project.
    if let Some(id) = session.active_project
        && let Some(p) = all.iter().find(|p| p.id == id)
    {
        return Ok(Some(p.clone()));
    }

    if let Some(tool) = writes {
        let known: Vec<&str> = all.iter().map(|p| p.slug.as_str()).collect();
        return Err(format!(
            "`{tool}` writes or deletes a project's records, so it acts only on a project this call or session names: \
                 pass `project` (slug, id or root path), or call switch_active_project first; registered projects: {}",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ));
    }

    // 4. the session roots, else its cwd.
    let roots: Vec<PathBuf> = if session.roots.is_empty() {
        vec![canonical(&session.cwd)]
    } else {
        session.roots.iter().map(|r| canonical(r)).collect()
    };
    if let Some(p) = roots.iter().find_map(|r| longest_root(&all, r)) {
        return Ok(Some(p.clone()));
    }

    // 5. the only project.
    if all.len() == 1 {
        return Ok(all.into_iter().next());
    }

    match roots.iter().find(|r| is_project_root(r)) {
        Some(root) => register_session_root(core, session_id, session, root).await,
        None => Ok(None),
    }
}

/// A session root that is a project directory: registered (and its first index
/// started) once per session, so a project deleted later is not registered again
/// by the same session. A call that finds that registration begun by another call
/// (of any session) waits for it and answers about the project it registered.
async fn register_session_root(
    core: &Core,
    session_id: u64,
    session: &SessionState,
    root: &Path,
) -> Result<Option<ProjectRow>, String> {
    let internal = |e: String| format!("internal error: {e}");
    if !session.cwd_registered {
        // Claim the registration, then mark the session: a call that sees the mark
        // finds the claim (or its row).
        let registration = core.projects.register_once(root.to_path_buf(), true);
        core.update_session(session_id, |s| s.cwd_registered = true);
        let project = registration.await.map_err(internal)?;
        tracing::info!(project = %project.slug, root = %root.display(), "registered the session's project");
        if let Some(w) = &core.watcher {
            w.watch(&project);
        }
        return Ok(Some(project));
    }
    if let Some(answer) = core.projects.in_flight(root).await {
        return answer.map(Some).map_err(internal);
    }
    core.projects
        .db()
        .project_by_root(&root.to_string_lossy())
        .await
        .map_err(|e| format!("internal error: {e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: i64, root: &str) -> ProjectRow {
        ProjectRow {
            id,
            slug: format!("p{id}"),
            root: root.into(),
            crate_name: None,
            indexed_at: None,
            index_complete: true,
            last_index_ms: None,
            last_error: None,
        }
    }

    #[test]
    fn the_longest_root_wins_component_wise() {
        let all = [row(1, "/w/a"), row(2, "/w/a/inner"), row(3, "/w/ab")];
        let of = |p: &str| longest_root(&all, Path::new(p)).map(|r| r.id);
        assert_eq!(of("/w/a/src/lib.rs"), Some(1));
        assert_eq!(of("/w/a/inner/src/lib.rs"), Some(2));
        // `/w/ab` is not inside `/w/a`.
        assert_eq!(of("/w/ab/x.rs"), Some(3));
        assert_eq!(of("/elsewhere"), None);
    }

    #[test]
    fn root_uris_become_local_paths() {
        assert_eq!(
            root_uri_path("file:///home/u/my%20proj"),
            Some(PathBuf::from("/home/u/my proj"))
        );
        assert_eq!(
            root_uri_path("file://localhost/srv/x"),
            Some(PathBuf::from("/srv/x"))
        );
        assert_eq!(root_uri_path("file://otherhost/srv/x"), None);
        assert_eq!(root_uri_path("https://example.com/x"), None);
        assert_eq!(root_uri_path("file:///a/%00b"), None);
        // A stray percent sign stays as written.
        assert_eq!(
            root_uri_path("file:///a/100%"),
            Some(PathBuf::from("/a/100%"))
        );
    }

    #[test]
    fn project_roots_are_recognised_but_not_home_or_slash() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_project_root(dir.path()));
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
        assert!(is_project_root(dir.path()));
        assert!(!is_project_root(Path::new("/")));
    }
}
