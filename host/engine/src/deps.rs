//! Dependency crates: what a Rust project locks in `Cargo.lock`, where the local cargo
//! registry keeps their sources, and indexing each crate version once into the shared
//! dependency index (offline: only sources already on disk are read).
//!
//! Each crate version is indexed as its own project row by [`indexer::index_project`],
//! rooted at `$CARGO_HOME/registry/src/<index-dir>/<name>-<version>`; every project
//! that locks the same version reuses it.
//!
//! `Cargo.lock` and `Cargo.toml` are read with the `toml` crate rather than `cargo-lock`
//! (which adds `semver`, `url` and its own error types): the fields read here are four
//! plain strings, and `toml` 0.8 is small and already in the local registry.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use scryer_db::{Db, DependencyRecord, PendingDependency, RecordOutcome};
use serde::Deserialize;

use crate::indexer::{self, IndexReport, Progress};

/// Note of a locked crate whose sources are not in the local registry.
pub const MISSING_NOTE: &str = "not in the local cargo registry: run `cargo fetch`";
/// Note of a locked crate whose sources were found and wait for their index run.
pub const QUEUED_NOTE: &str = "being indexed in the background: ask again shortly";

/// A crate version locked from a registry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LockedPackage {
    pub name: String,
    pub version: String,
    /// The lockfile's `source`, e.g. `registry+https://github.com/rust-lang/crates.io-index`.
    pub source: String,
}

#[derive(Deserialize)]
struct Lockfile {
    #[serde(default)]
    package: Vec<LockEntry>,
}

#[derive(Deserialize)]
struct LockEntry {
    name: String,
    version: String,
    source: Option<String>,
}

/// The registry packages a `Cargo.lock` names, sorted and without duplicates. Workspace
/// members and path dependencies (no `source`) and git dependencies (`git+`) are left
/// out: they have no registry sources.
pub fn parse_lockfile(text: &str) -> Result<Vec<LockedPackage>> {
    let lock: Lockfile = toml::from_str(text).context("Cargo.lock is not valid TOML")?;
    let mut out: Vec<LockedPackage> = lock
        .package
        .into_iter()
        .filter_map(|p| {
            let source = p.source?;
            is_registry_source(&source).then_some(LockedPackage {
                name: p.name,
                version: p.version,
                source,
            })
        })
        .collect();
    out.sort();
    out.dedup_by(|a, b| a.name == b.name && a.version == b.version);
    Ok(out)
}

/// `registry+…` (git-protocol index) or `sparse+…` (HTTP index) sources; crates.io shows
/// as `registry+https://github.com/rust-lang/crates.io-index` either way.
fn is_registry_source(source: &str) -> bool {
    source.starts_with("registry+") || source.starts_with("sparse+")
}

#[derive(Deserialize)]
struct Manifest {
    workspace: Option<WorkspaceTable>,
}

#[derive(Deserialize)]
struct WorkspaceTable {
    #[serde(default)]
    members: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
}

/// The `Cargo.lock` that pins `project_root`'s dependencies: its own, else the one of
/// the nearest enclosing workspace whose `members` take in the project (the project is
/// a member, or holds members) and whose `exclude` does not. `None` when there is none.
pub fn find_lockfile(project_root: &Path) -> Option<PathBuf> {
    let own = project_root.join("Cargo.lock");
    if own.is_file() {
        return Some(own);
    }
    for dir in project_root.ancestors().skip(1) {
        let Ok(text) =
            crate::safe_fs::read_text(&dir.join("Cargo.toml"), crate::file_limits::MAX_TEXT_BYTES)
        else {
            continue;
        };
        let Ok(manifest) = toml::from_str::<Manifest>(&text) else {
            continue;
        };
        let Some(ws) = manifest.workspace else {
            continue;
        };
        let Ok(rel) = project_root.strip_prefix(dir) else {
            continue;
        };
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let excluded = ws
            .exclude
            .iter()
            .any(|e| rel.starts_with(&path_segments(e)));
        let member = ws
            .members
            .iter()
            .any(|m| glob_takes_in(&path_segments(m), &rel));
        if member && !excluded {
            let lock = dir.join("Cargo.lock");
            return lock.is_file().then_some(lock);
        }
    }
    None
}

/// A manifest path's segments, `.` dropped.
fn path_segments(path: &str) -> Vec<String> {
    Path::new(path)
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

/// Whether a path matching the member glob `pattern` is `rel` or lies inside it (the
/// project is a member, or holds one). `*`, `?` within a segment, `**` across segments.
fn glob_takes_in(pattern: &[String], rel: &[String]) -> bool {
    match (pattern.split_first(), rel.split_first()) {
        // The project holds whatever the rest of the pattern matches.
        (_, None) => true,
        (None, Some(_)) => false,
        (Some((p, rest)), Some((r, rel_rest))) => {
            if p == "**" {
                glob_takes_in(rest, rel) || glob_takes_in(pattern, rel_rest)
            } else {
                segment_matches(p.as_bytes(), r.as_bytes()) && glob_takes_in(rest, rel_rest)
            }
        }
    }
}

fn segment_matches(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.split_first(), name.split_first()) {
        (None, None) => true,
        (Some((b'*', rest)), _) => {
            segment_matches(rest, name)
                || (!name.is_empty() && segment_matches(pattern, &name[1..]))
        }
        (Some((b'?', rest)), Some((_, name_rest))) => segment_matches(rest, name_rest),
        (Some((p, rest)), Some((n, name_rest))) => p == n && segment_matches(rest, name_rest),
        _ => false,
    }
}

/// `$CARGO_HOME`, else `~/.cargo`: where cargo keeps the registry sources.
pub fn default_cargo_home() -> Option<PathBuf> {
    let non_empty = |v: std::ffi::OsString| (!v.is_empty()).then(|| PathBuf::from(v));
    std::env::var_os("CARGO_HOME")
        .and_then(non_empty)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(non_empty)
                .map(|h| h.join(".cargo"))
        })
}

/// The index directories under `<cargo_home>/registry/src` (one per registry).
fn registry_dirs(cargo_home: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cargo_home.join("registry").join("src"))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// Whether a registry directory holds crates.io sources (sparse or git index).
fn is_crates_io_dir(dir: &Path) -> bool {
    dir.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("index.crates.io-") || n.starts_with("github.com-"))
}

/// The source directory of `package` among `registry_dirs`: the first
/// `<dir>/<name>-<version>` holding a `Cargo.toml`, looking first in the directories of
/// the package's own registry (crates.io or not), canonical.
fn source_dir(registry_dirs: &[PathBuf], package: &LockedPackage) -> Option<PathBuf> {
    let from_crates_io = package.source.contains("crates.io");
    let dir_name = format!("{}-{}", package.name, package.version);
    let (own, other): (Vec<&PathBuf>, Vec<&PathBuf>) = registry_dirs
        .iter()
        .partition(|d| is_crates_io_dir(d) == from_crates_io);
    own.into_iter()
        .chain(other)
        .map(|d| d.join(&dir_name))
        .find(|d| d.join("Cargo.toml").is_file())
        .and_then(|d| std::fs::canonicalize(d).ok())
}

/// What [`record_locked_crates`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockReport {
    /// The lockfile read; `None` when the project has none (it then locks nothing).
    pub lockfile: Option<PathBuf>,
    /// Registry crates locked.
    pub locked: usize,
    /// Locked crates whose sources are not in the local registry.
    pub missing: usize,
    pub recorded: RecordOutcome,
}

/// Reads the project's `Cargo.lock`, finds each registry crate's sources under
/// `cargo_home`, and records what the project locks (see
/// [`Db::record_project_dependencies`]). Quick: no crate is indexed here.
pub async fn record_locked_crates(
    db: &Db,
    project_id: i64,
    project_root: &Path,
    cargo_home: Option<&Path>,
) -> Result<LockReport> {
    let root = project_root.to_path_buf();
    let cargo_home = cargo_home.map(Path::to_path_buf);
    // File system work (reading manifests, probing hundreds of directories) off the runtime.
    let (lockfile, records) = tokio::task::spawn_blocking(move || -> Result<_> {
        let Some(lockfile) = find_lockfile(&root) else {
            return Ok((None, Vec::new()));
        };
        let text = crate::safe_fs::read_text(&lockfile, crate::file_limits::MAX_LOCKFILE_BYTES)
            .map_err(|why| anyhow::anyhow!("reading {}: {why}", lockfile.display()))?;
        let packages =
            parse_lockfile(&text).with_context(|| format!("reading {}", lockfile.display()))?;
        let dirs = cargo_home.as_deref().map(registry_dirs).unwrap_or_default();
        let records = packages
            .iter()
            .map(|p| {
                let source_root = source_dir(&dirs, p).map(|d| d.to_string_lossy().into_owned());
                let note = if source_root.is_some() {
                    QUEUED_NOTE
                } else {
                    MISSING_NOTE
                };
                DependencyRecord {
                    name: p.name.clone(),
                    version: p.version.clone(),
                    source_root,
                    note: Some(note.to_string()),
                }
            })
            .collect::<Vec<_>>();
        Ok((Some(lockfile), records))
    })
    .await??;
    let recorded = db.record_project_dependencies(project_id, &records).await?;
    Ok(LockReport {
        lockfile,
        locked: records.len(),
        missing: records.iter().filter(|r| r.source_root.is_none()).count(),
        recorded,
    })
}

/// Indexes one crate's sources into its own index project and marks it complete. An
/// interrupted earlier run is picked up where it stopped: files already stored with the
/// same content are not parsed again. A failure is returned as it is, recording nothing:
/// the caller tries again (another writer held the database, see [`scryer_db::is_busy`])
/// or gives up with [`record_failure`].
pub async fn index_dependency(db: &Db, crate_: &PendingDependency) -> Result<IndexReport> {
    let report = index_dependency_sources(db, crate_).await?;
    db.finish_dependency_index(crate_.crate_id, None).await?;
    Ok(report)
}

/// Stores why a crate's index run failed as its note, and takes it out of the pending
/// crates until the next index run of a project that locks it.
pub async fn record_failure(
    db: &Db,
    crate_: &PendingDependency,
    error: &anyhow::Error,
) -> Result<()> {
    db.finish_dependency_index(crate_.crate_id, Some(&format!("{error:#}")))
        .await
        .with_context(|| {
            format!(
                "recording that indexing {} {} failed",
                crate_.name, crate_.version
            )
        })
}

async fn index_dependency_sources(db: &Db, crate_: &PendingDependency) -> Result<IndexReport> {
    // Sources removed since they were recorded would index as an empty crate.
    if !Path::new(&crate_.source_root).join("Cargo.toml").is_file() {
        anyhow::bail!(
            "its sources at {} are gone; run `cargo fetch`",
            crate_.source_root
        );
    }
    let project = db.dependency_index_project(crate_.crate_id).await?;
    indexer::index_project_as(
        db,
        &project,
        Arc::new(Progress::default()),
        indexer::Extent::DefinitionsOnly,
    )
    .await
}

/// What [`index_locked_crates`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepsReport {
    pub lock: LockReport,
    /// Crates indexed by this call.
    pub indexed: Vec<(String, String)>,
    /// Crates that failed, with why.
    pub failed: Vec<(String, String, String)>,
    pub files_parsed: usize,
    pub symbols_written: usize,
    pub elapsed_ms: u64,
}

/// Records what the project locks, then indexes, one after the other, each of its
/// crates whose sources were found and that no earlier run indexed (failed ones too: this
/// is an index run of the project). A crate that fails is recorded as failed.
pub async fn index_locked_crates(
    db: &Db,
    project_id: i64,
    project_root: &Path,
    cargo_home: Option<&Path>,
) -> Result<DepsReport> {
    let started = Instant::now();
    let lock = record_locked_crates(db, project_id, project_root, cargo_home).await?;
    let mut report = DepsReport {
        lock,
        ..DepsReport::default()
    };
    db.retry_failed_dependencies(project_id, QUEUED_NOTE)
        .await?;
    for crate_ in db.pending_dependencies(Some(project_id)).await? {
        let id = (crate_.name.clone(), crate_.version.clone());
        match index_dependency(db, &crate_).await {
            Ok(r) => {
                report.files_parsed += r.files_parsed;
                report.symbols_written += r.symbols_written;
                report.indexed.push(id);
            }
            Err(e) => {
                record_failure(db, &crate_, &e).await?;
                report.failed.push((id.0, id.1, format!("{e:#}")));
            }
        }
    }
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Orders version strings the way semver does for the parts that matter here: numeric
/// `major.minor.patch` first, then a release above its pre-releases (`1.0.0` >
/// `1.0.0-rc.1`); build metadata (`+…`) is ignored.
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    fn split(v: &str) -> (Vec<u64>, Option<&str>) {
        let v = v.split('+').next().unwrap_or(v);
        let (core, pre) = match v.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (v, None),
        };
        (
            core.split('.').map(|n| n.parse().unwrap_or(0)).collect(),
            pre,
        )
    }
    let (core_a, pre_a) = split(a);
    let (core_b, pre_b) = split(b);
    core_a.cmp(&core_b).then_with(|| match (pre_a, pre_b) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (Some(_), None) => std::cmp::Ordering::Less,
        (Some(x), Some(y)) => x.cmp(y),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    const LOCK: &str = r#"
# This file is automatically @generated by Cargo.
version = 4

[[package]]
name = "app"
version = "0.1.0"
dependencies = ["foo", "bar", "gitdep"]

[[package]]
name = "bar"
version = "0.9.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "00"

[[package]]
name = "foo"
version = "1.2.3"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "00"

[[package]]
name = "gitdep"
version = "0.3.0"
source = "git+https://example.com/gitdep?branch=main#abc"

[[package]]
name = "local"
version = "0.2.0"
"#;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A cargo home whose crates.io registry holds `foo 1.2.3` (not `bar 0.9.0`), and two
    /// projects locking foo, bar and a git dependency.
    fn fixture() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("cargo-home");
        let foo = home.join("registry/src/index.crates.io-1949cf8c6b5b557f/foo-1.2.3");
        write(
            &foo.join("Cargo.toml"),
            "[package]\nname = \"foo\"\nversion = \"1.2.3\"\n",
        );
        write(
            &foo.join("src/lib.rs"),
            "//! Foo.\n\n/// Adds one.\npub fn add_one(x: u32) -> u32 {\n    x + 1\n}\n\npub struct Widget;\n",
        );
        // A directory without its manifest (an interrupted unpack) is not bar's sources.
        write(
            &home.join("registry/src/index.crates.io-1949cf8c6b5b557f/bar-0.9.0/src/lib.rs"),
            "pub fn half() {}\n",
        );
        let mut projects = Vec::new();
        for name in ["one", "two"] {
            let root = dir.path().join(name);
            write(
                &root.join("Cargo.toml"),
                &format!("[package]\nname = \"{name}\"\n"),
            );
            write(&root.join("Cargo.lock"), LOCK);
            write(&root.join("src/main.rs"), "fn main() {}\n");
            projects.push(root);
        }
        let two = projects.pop().unwrap();
        let one = projects.pop().unwrap();
        (dir, home, one, two)
    }

    async fn symbol_rows(db: &Db) -> i64 {
        let conn = db.connect().await.unwrap();
        let mut rows = conn.query("SELECT COUNT(*) FROM symbol", ()).await.unwrap();
        let row = rows.next().await.unwrap().unwrap();
        row.get::<i64>(0).unwrap()
    }

    #[test]
    fn only_registry_packages_are_locked() {
        let got = parse_lockfile(LOCK).unwrap();
        let names: Vec<(&str, &str)> = got
            .iter()
            .map(|p| (p.name.as_str(), p.version.as_str()))
            .collect();
        assert_eq!(names, vec![("bar", "0.9.0"), ("foo", "1.2.3")]);
        let sparse = "[[package]]\nname = \"x\"\nversion = \"1.0.0\"\nsource = \"sparse+https://my.example/index/\"\n";
        assert_eq!(parse_lockfile(sparse).unwrap().len(), 1);
        assert!(parse_lockfile("version = 3\n").unwrap().is_empty());
        let err = parse_lockfile("[[package]\n").unwrap_err().to_string();
        assert!(err.contains("Cargo.lock is not valid TOML"), "{err}");
    }

    #[test]
    fn a_member_uses_its_workspace_lockfile_and_an_outsider_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        write(
            &ws.join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/*\", \"tools/gen\"]\nexclude = [\"crates/skip\"]\n",
        );
        write(&ws.join("Cargo.lock"), LOCK);
        for member in [
            "crates/a",
            "crates/skip",
            "tools/gen",
            "tools/other",
            "crates",
        ] {
            std::fs::create_dir_all(ws.join(member)).unwrap();
        }
        let lock = Some(ws.join("Cargo.lock"));
        assert_eq!(find_lockfile(&ws.join("crates/a")), lock);
        assert_eq!(find_lockfile(&ws.join("tools/gen")), lock);
        // A directory holding members shares their lockfile.
        assert_eq!(find_lockfile(&ws.join("crates")), lock);
        assert_eq!(find_lockfile(&ws.join("crates/skip")), None);
        assert_eq!(find_lockfile(&ws.join("tools/other")), None);
        // A project's own lockfile wins.
        write(&ws.join("tools/other/Cargo.lock"), LOCK);
        assert_eq!(
            find_lockfile(&ws.join("tools/other")),
            Some(ws.join("tools/other/Cargo.lock"))
        );
    }

    #[test]
    fn member_globs() {
        let seg = |s: &str| path_segments(s);
        assert!(glob_takes_in(&seg("crates/*"), &seg("crates/a")));
        assert!(glob_takes_in(&seg("./crates/a*"), &seg("crates/abc")));
        assert!(!glob_takes_in(&seg("crates/a*"), &seg("crates/b")));
        assert!(glob_takes_in(&seg("crates/?"), &seg("crates/b")));
        assert!(!glob_takes_in(&seg("crates/*"), &seg("crates/a/src")));
        assert!(glob_takes_in(&seg("**/x"), &seg("a/b/x")));
        assert!(glob_takes_in(&seg("crates/*"), &seg("crates")));
        assert!(!glob_takes_in(&seg("crates/*"), &seg("lib")));
    }

    #[test]
    fn versions_order_like_semver() {
        assert_eq!(compare_versions("1.10.0", "1.9.9"), Ordering::Greater);
        assert_eq!(compare_versions("1.0.0", "1.0.0-rc.1"), Ordering::Greater);
        assert_eq!(compare_versions("0.2.0+build", "0.2.0"), Ordering::Equal);
        assert_eq!(compare_versions("0.1.9", "0.2.0"), Ordering::Less);
    }

    #[tokio::test]
    async fn locked_crates_are_indexed_once_and_shared_between_projects() {
        let (dir, home, one, two) = fixture();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p1 = db
            .register_project(&one.to_string_lossy(), None)
            .await
            .unwrap();
        let p2 = db
            .register_project(&two.to_string_lossy(), None)
            .await
            .unwrap();

        let first = index_locked_crates(&db, p1.id, &one, Some(&home))
            .await
            .unwrap();
        assert_eq!(first.lock.lockfile, Some(one.join("Cargo.lock")));
        assert_eq!((first.lock.locked, first.lock.missing), (2, 1));
        assert_eq!(
            first.indexed,
            vec![("foo".to_string(), "1.2.3".to_string())]
        );
        assert!(first.failed.is_empty(), "{:?}", first.failed);

        let locked = db.dependency_indexes(p1.id).await.unwrap();
        assert_eq!(locked.len(), 2);
        let (bar, foo) = (&locked[0], &locked[1]);
        assert_eq!(
            (bar.crate_name.as_str(), bar.index_project_id),
            ("bar", None)
        );
        assert_eq!(bar.source_root, None);
        assert_eq!(bar.note.as_deref(), Some(MISSING_NOTE));
        assert_eq!(foo.crate_name, "foo");
        assert_eq!(foo.note, None);
        let foo_root = std::fs::canonicalize(
            home.join("registry/src/index.crates.io-1949cf8c6b5b557f/foo-1.2.3"),
        )
        .unwrap();
        assert_eq!(
            foo.source_root.as_deref(),
            Some(&*foo_root.to_string_lossy())
        );
        let index_id = foo.index_project_id.expect("foo is indexed");
        let syms = db.all_symbols(index_id).await.unwrap();
        let names: Vec<&str> = syms.iter().map(|s| s.name.as_str()).collect();
        assert!(
            names.contains(&"add_one") && names.contains(&"Widget"),
            "{names:?}"
        );
        let add_one = syms.iter().find(|s| s.name == "add_one").unwrap();
        assert_eq!(add_one.qualified_name, "foo::add_one");
        assert_eq!(add_one.file_path, "src/lib.rs");
        let rows_after_first = symbol_rows(&db).await;

        // The second project reuses foo's index: no row is written twice.
        let second = index_locked_crates(&db, p2.id, &two, Some(&home))
            .await
            .unwrap();
        assert!(second.indexed.is_empty(), "{:?}", second.indexed);
        assert_eq!(second.lock.recorded.new_crates, 0);
        assert_eq!(symbol_rows(&db).await, rows_after_first);
        assert_eq!(db.dependency_indexes(p2.id).await.unwrap(), locked);
        assert_eq!(db.all_dependency_indexes().await.unwrap().len(), 2);

        // The index project is not a user project.
        let slugs: Vec<String> = db
            .projects()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.slug)
            .collect();
        assert_eq!(slugs, vec!["one", "two"]);
    }

    #[tokio::test]
    async fn no_lockfile_locks_nothing_and_a_missing_cargo_home_finds_nothing() {
        let (dir, _home, one, _two) = fixture();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db
            .register_project(&one.to_string_lossy(), None)
            .await
            .unwrap();
        let report = index_locked_crates(&db, p.id, &one, Some(&dir.path().join("nowhere")))
            .await
            .unwrap();
        assert_eq!((report.lock.locked, report.lock.missing), (2, 2));
        assert!(report.indexed.is_empty());
        assert!(
            db.dependency_indexes(p.id)
                .await
                .unwrap()
                .iter()
                .all(|d| d.note.as_deref() == Some(MISSING_NOTE))
        );

        // The lockfile goes away: the project no longer locks anything.
        std::fs::remove_file(one.join("Cargo.lock")).unwrap();
        let report = record_locked_crates(&db, p.id, &one, None).await.unwrap();
        assert_eq!(report.lockfile, None);
        assert!(db.dependency_indexes(p.id).await.unwrap().is_empty());
        // The crates stay cached for other projects.
        assert_eq!(db.all_dependency_indexes().await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn sources_gone_since_recording_fail_with_a_reason_instead_of_indexing_nothing() {
        let (dir, home, one, _two) = fixture();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let p = db
            .register_project(&one.to_string_lossy(), None)
            .await
            .unwrap();
        record_locked_crates(&db, p.id, &one, Some(&home))
            .await
            .unwrap();
        let pending = db.pending_dependencies(Some(p.id)).await.unwrap();
        assert_eq!(pending.len(), 1);
        let foo_src = PathBuf::from(&pending[0].source_root);
        let kept = dir.path().join("kept");
        std::fs::rename(&foo_src, &kept).unwrap();
        let err = index_dependency(&db, &pending[0]).await.unwrap_err();
        assert!(
            err.to_string().contains("are gone; run `cargo fetch`"),
            "{err}"
        );
        // Nothing recorded yet: the caller decides whether to try again.
        assert_eq!(db.pending_dependencies(Some(p.id)).await.unwrap().len(), 1);
        record_failure(&db, &pending[0], &err).await.unwrap();
        let foo = &db.dependency_indexes(p.id).await.unwrap()[1];
        assert_eq!(foo.index_project_id, None);
        let note = foo.note.as_deref().unwrap();
        assert!(
            note.starts_with("indexing failed: its sources") && note.contains("index_workspace"),
            "{note}"
        );
        assert!(db.pending_dependencies(None).await.unwrap().is_empty());

        // Back in place: the project's next run retries the failed crate.
        std::fs::rename(&kept, &foo_src).unwrap();
        let report = index_locked_crates(&db, p.id, &one, Some(&home))
            .await
            .unwrap();
        assert_eq!(
            report.indexed,
            vec![("foo".to_string(), "1.2.3".to_string())]
        );
        let foo = &db.dependency_indexes(p.id).await.unwrap()[1];
        assert!(foo.index_project_id.is_some());
        assert_eq!(foo.note, None);
    }

    /// Measures indexing a real project's locked crates from the real cargo home, into a
    /// fresh database, then the same lockfile for a second project (all reused):
    /// `SCRYER_DEPS_MEASURE=/path/to/project cargo test -p scryer-engine --lib
    /// deps::tests::measure -- --ignored --nocapture`.
    #[tokio::test(flavor = "multi_thread")]
    #[ignore = "reads the real cargo registry; run by hand to measure"]
    async fn measure() {
        let Some(root) = std::env::var_os("SCRYER_DEPS_MEASURE").map(PathBuf::from) else {
            panic!("set SCRYER_DEPS_MEASURE to a project directory with a Cargo.lock");
        };
        let home = default_cargo_home();
        let dir = tempfile::tempdir().unwrap();
        // SCRYER_DEPS_MEASURE_DB keeps the database, to time queries again without indexing.
        let db_path = std::env::var_os("SCRYER_DEPS_MEASURE_DB")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.path().join("index.db"));
        let db = Db::open(&db_path).await.unwrap();
        let p = db
            .register_project(&root.to_string_lossy(), None)
            .await
            .unwrap();

        let started = Instant::now();
        let lock = record_locked_crates(&db, p.id, &root, home.as_deref())
            .await
            .unwrap();
        let record_ms = started.elapsed().as_millis();
        let mut per_crate = Vec::new();
        let (mut files, mut symbols) = (0, 0);
        for c in db.pending_dependencies(Some(p.id)).await.unwrap() {
            let t = Instant::now();
            let r = index_dependency(&db, &c).await.unwrap();
            files += r.files_parsed;
            symbols += r.symbols_written;
            per_crate.push((
                t.elapsed().as_millis(),
                r.files_parsed,
                format!("{} {}", c.name, c.version),
            ));
        }
        let total_ms = started.elapsed().as_millis();
        per_crate.sort_by(|a, b| b.cmp(a));
        println!(
            "lockfile {:?}: {} registry crates, {} missing; recorded in {record_ms} ms",
            lock.lockfile, lock.locked, lock.missing
        );
        println!(
            "indexed {} crates, {files} files, {symbols} symbols in {total_ms} ms; database {} MiB",
            per_crate.len(),
            std::fs::metadata(&db_path)
                .map(|m| m.len() >> 20)
                .unwrap_or(0)
        );
        for (ms, files, name) in per_crate.iter().take(8) {
            println!("  {name}: {files} files, {ms} ms");
        }
        let conn = db.connect().await.unwrap();
        for table in ["source_file", "symbol", "ref_site", "edge"] {
            let Ok(mut rows) = conn
                .query(format!("SELECT COUNT(*) FROM {table}"), ())
                .await
            else {
                continue;
            };
            let n: i64 = rows.next().await.unwrap().unwrap().get(0).unwrap();
            println!("  {table}: {n} rows");
        }

        // What a `dependencies` call costs over this many crates.
        let locked = db.dependency_indexes(p.id).await.unwrap();
        let ids: Vec<i64> = locked.iter().filter_map(|d| d.index_project_id).collect();
        let t = Instant::now();
        db.symbol_counts(&ids).await.unwrap();
        println!(
            "symbol counts of {} crates: {} ms",
            ids.len(),
            t.elapsed().as_millis()
        );
        let t = Instant::now();
        let hits = db.symbols_by_name_in(&ids, "Mutex").await.unwrap();
        println!(
            "symbols named Mutex across them: {} in {} ms",
            hits.len(),
            t.elapsed().as_millis()
        );
        if let Some(id) = locked
            .iter()
            .find(|d| d.crate_name == "tokio")
            .and_then(|d| d.index_project_id)
        {
            let t = Instant::now();
            let all = db.all_symbols(id).await.unwrap();
            println!(
                "every symbol of tokio: {} in {} ms",
                all.len(),
                t.elapsed().as_millis()
            );
        }

        // A second project locking the same crates reuses every index.
        let other = dir.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::copy(lock.lockfile.as_ref().unwrap(), other.join("Cargo.lock")).unwrap();
        let q = db
            .register_project(&other.to_string_lossy(), None)
            .await
            .unwrap();
        let t = Instant::now();
        let again = index_locked_crates(&db, q.id, &other, home.as_deref())
            .await
            .unwrap();
        println!(
            "second project, same lockfile: {} crates indexed, {} ms",
            again.indexed.len(),
            t.elapsed().as_millis()
        );
        assert!(again.indexed.is_empty());
    }
}
