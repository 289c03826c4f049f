//! Interface versions and the portfolio plugin through the real binary.
//!
//! - A router built against the released WIT 0.1 (tests/fixtures/plugins/v0_1_echo) is
//!   installed, loaded and answers next to the 0.3 routers.
//! - So is one built against WIT 0.2 (tests/fixtures/plugins/v0_2_catalog), through an
//!   interface 0.2 added (`catalog`) and one 0.3 extended (`index`).
//! - So is one built against WIT 0.3 (tests/fixtures/plugins/v0_3_names), through the
//!   index reads 0.3 added; it has no 0.4 `answer`, so the host adds its notes to the
//!   body and reads the files it names from its JSON, as before 0.4.
//! - So is one built against WIT 0.4 (tests/fixtures/plugins/v0_4_precise), through its
//!   `answer` and 0.4's one-definition-at-a-time `precise-usages`, which 0.5 batches.
//! - The portfolio plugin (plugins/portfolio, built through the SDK) is installed as an
//!   external plugin; without `git-read` it is refused at load with the grant named, and
//!   once granted every tool answers over two temporary git repositories registered as
//!   projects (one with uncommitted work, one clean).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::json;

use crate::support::{Scryer, plugin, repo_root};

const PORTFOLIO: &str = "scryer-portfolio";
const LEGACY: &str = "scryer-fixture-v0-1-echo";
const CENSUS: &str = "scryer-fixture-v0-2-catalog";
const NAMES: &str = "scryer-fixture-v0-3-names";
const PRECISION: &str = "scryer-fixture-v0-4-precise";

/// Builds the five components for wasm32-wasip2 once per test binary.
fn component(package: &str) -> PathBuf {
    static BUILT: OnceLock<Vec<PathBuf>> = OnceLock::new();
    const PACKAGES: [&str; 5] = [PORTFOLIO, LEGACY, CENSUS, NAMES, PRECISION];
    let built = BUILT.get_or_init(|| {
        // `<target>/debug/deps/<test>`: the fixtures share the target dir's wasm folder.
        let exe = std::env::current_exe().unwrap();
        let target = exe.ancestors().nth(3).unwrap().join("scryer-fixtures");
        scryer_wasm_build::build_components(
            Path::new(env!("CARGO")),
            &repo_root(),
            &target,
            &PACKAGES,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    });
    built[PACKAGES.iter().position(|p| *p == package).unwrap()].clone()
}

/// Runs a plugin command that must succeed; returns stdout and stderr together.
fn ok(cfg: &Path, args: &[&str]) -> String {
    let o = plugin(cfg, args);
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "scryer plugin {args:?} failed: {out}");
    out
}

/// Installs the fixture component `package` into `cfg` with `grants`, after `verify`
/// (which refuses it, not granted yet) has read the WIT version `wit` it was built
/// against.
fn install(cfg: &Path, package: &str, wit: &str, grants: &str) {
    let wasm = component(package);
    let wasm = wasm.to_str().unwrap();
    let verified = String::from_utf8_lossy(&plugin(cfg, &["verify", wasm]).stdout).into_owned();
    assert!(verified.contains(&format!("(WIT {wit}")), "{verified}");
    ok(cfg, &["add", wasm, "--grant", grants]);
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?} in {}", dir.display());
}

/// A git repository with a README, a Rust file and one commit named `subject`.
fn repo(parent: &Path, name: &str, subject: &str) -> PathBuf {
    let root = parent.join(name);
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("README.md"),
        format!("# {name}\n\nThe {name} project keeps a marmalade recipe.\n"),
    )
    .unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn jam() -> u32 { 1 }\n").unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", subject]);
    root.canonicalize().unwrap()
}

#[tokio::test]
async fn a_router_built_against_wit_0_1_still_loads_and_answers() {
    let cfg = tempfile::tempdir().unwrap();
    install(cfg.path(), LEGACY, "0.1.0", "tokens,index-read,log");

    let s = Scryer::with_config_dir(cfg.path()).await;
    let work = tempfile::tempdir().unwrap();
    let root = repo(work.path(), "legacy-demo", "start");
    s.index(&root).await;
    let v = s
        .call_json(
            "legacy_echo",
            json!({"text": "hello", "project": root.to_str().unwrap()}),
        )
        .await;
    assert_eq!(v["echo"], "hello");
    assert_eq!(v["wit"], "0.1.0");
    assert_eq!(v["tokens"], 1, "tokens@0.1.0 is linked: {v}");
    assert_eq!(v["files"], 1, "index@0.1.0 answers records: {v}");
    // A 0.3 router (the SDK's) answers beside it.
    assert_eq!(s.call_json("list_projects", json!({})).await["total"], 1);
    s.stop().await;
}

#[tokio::test]
async fn a_router_built_against_wit_0_2_still_loads_and_answers() {
    let cfg = tempfile::tempdir().unwrap();
    install(cfg.path(), CENSUS, "0.2.0", "catalog-read,index-read");

    let s = Scryer::with_config_dir(cfg.path()).await;
    let work = tempfile::tempdir().unwrap();
    let root = repo(work.path(), "census-demo", "start");
    s.index(&root).await;
    let v = s
        .call_json("catalog_census", json!({"project": root.to_str().unwrap()}))
        .await;
    assert_eq!(v["wit"], "0.2.0");
    assert_eq!(
        v["projects"],
        json!(["census-demo"]),
        "catalog@0.2.0 is linked: {v}"
    );
    assert_eq!(
        v["files"], 1,
        "index@0.2.0 is served by the 0.3 functions: {v}"
    );
    assert_eq!(v["symbols"], 1, "{v}");
    // The SDK's 0.3 routers answer beside it, with 0.3's new index reads.
    let refs = s
        .call_json(
            "find_references",
            json!({"symbol": "jam", "project": root.to_str().unwrap()}),
        )
        .await;
    assert!(refs.to_string().contains("src/lib.rs"), "{refs}");
    s.stop().await;
}

#[tokio::test]
async fn a_router_built_against_wit_0_3_still_loads_and_answers_with_host_notes_and_freshness() {
    let cfg = tempfile::tempdir().unwrap();
    install(cfg.path(), NAMES, "0.3.0", "index-read");

    let s = Scryer::with_config_dir(cfg.path()).await;
    let work = tempfile::tempdir().unwrap();
    let root = repo(work.path(), "names-demo", "start");
    std::fs::write(root.join("src/main.rs"), "fn main() { jam(); }\n").unwrap();
    s.index(&root).await;
    let project = root.to_str().unwrap();
    let v = s
        .call_json(
            "name_files",
            json!({"name": "jam", "project": project, "nmae": 1}),
        )
        .await;
    assert_eq!(v["wit"], "0.3.0");
    assert_eq!(v["calls"], 1, "references-of-kinds@0.3.0 is linked: {v}");
    assert_eq!(
        v["files"],
        json!([{"file_path": "src/main.rs"}]),
        "files-naming@0.3.0 is linked: {v}"
    );
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("ignored unknown argument `nmae`: name_files accepts name, project"),
        "the host's note is in a 0.3 answer: {v}"
    );
    // A file the answer names changes behind the index: the host refreshes it (read from
    // the answer's `file_path` keys) and asks again.
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    let v = s
        .call_json("name_files", json!({"name": "jam", "project": project}))
        .await;
    assert_eq!(v["calls"], 0, "answered again on the fresh index: {v}");
    assert!(
        v["notes"].to_string().contains("refreshed 1 file(s)"),
        "{v}"
    );
    assert_eq!(v["complete"], false, "{v}");
    s.stop().await;
}

#[tokio::test]
async fn a_router_built_against_wit_0_4_still_loads_and_answers_through_its_0_4_reads() {
    let cfg = tempfile::tempdir().unwrap();
    install(cfg.path(), PRECISION, "0.4.0", "index-read");

    let s = Scryer::with_config_dir(cfg.path()).await;
    let work = tempfile::tempdir().unwrap();
    let root = repo(work.path(), "precision-demo", "start");
    std::fs::write(
        root.join("src/main.rs"),
        "fn marmalade() {}\nmod inner {\n    pub fn marmalade() {}\n}\nfn main() { marmalade(); }\n",
    )
    .unwrap();
    s.index(&root).await;
    let project = root.to_str().unwrap();
    let v = s
        .call_json(
            "name_precision",
            json!({"name": "marmalade", "project": project, "nmae": 1}),
        )
        .await;
    assert_eq!(v["wit"], "0.4.0", "{v}");
    // Each definition asked about on its own through 0.4's `precise-usages`, answered by
    // the host that batches them for 0.5 routers (precise mode is off in tests).
    assert_eq!(
        v["definitions"],
        json!([
            {"file_path": "src/main.rs", "precision": "heuristic"},
            {"file_path": "src/main.rs", "precision": "heuristic"},
        ]),
        "{v}"
    );
    assert!(
        v["notes"]
            .to_string()
            .contains("ignored unknown argument `nmae`: name_precision accepts name, project"),
        "the host's notes reach a 0.4 `answer`: {v}"
    );
    s.stop().await;
}

#[tokio::test]
async fn the_portfolio_plugin_needs_git_read_and_then_answers_over_every_project() {
    let cfg = tempfile::tempdir().unwrap();
    let wasm = component(PORTFOLIO);
    let wasm = wasm.to_str().unwrap();

    // Installed without git-read: kept, but refused at load with the grant named.
    let added = ok(cfg.path(), &["add", wasm, "--grant", "catalog-read,tokens"]);
    assert!(
        added.contains("will not load")
            && added.contains("`scryer plugin grant portfolio git-read`"),
        "{added}"
    );
    let s = Scryer::with_config_dir(cfg.path()).await;
    let tools = s.tool_names().await;
    assert!(
        !tools.iter().any(|t| t.starts_with("portfolio_")),
        "{tools:?}"
    );
    s.stop().await;

    let granted = ok(cfg.path(), &["grant", "portfolio", "git-read"]);
    assert!(granted.contains("has everything it needs"), "{granted}");

    let work = tempfile::tempdir().unwrap();
    let busy = repo(work.path(), "busy", "Half of the parser");
    std::fs::write(busy.join("src/lib.rs"), "pub fn jam() -> u32 { 2 }\n").unwrap();
    std::fs::write(busy.join("TODO.txt"), "finish the marmalade\n").unwrap();
    let calm = repo(work.path(), "calm", "Release 1.0");

    let s = Scryer::with_config_dir(cfg.path()).await;
    let tools = s.tool_names().await;
    for t in [
        "portfolio_projects",
        "portfolio_next",
        "portfolio_context",
        "portfolio_search",
        "portfolio_pulse",
    ] {
        assert!(tools.iter().any(|n| n == t), "{t} missing from {tools:?}");
    }
    // Nothing registered yet: the answer says so.
    let empty = s.call_json("portfolio_projects", json!({})).await;
    assert!(
        empty["notes"][0].as_str().unwrap().contains("no projects"),
        "{empty}"
    );

    s.index(&busy).await;
    s.index(&calm).await;

    let v = s.call_json("portfolio_projects", json!({})).await;
    let projects = v["projects"].as_array().unwrap();
    assert_eq!(projects.len(), 2, "{v}");
    let by = |slug: &str| {
        projects
            .iter()
            .find(|p| p["project"] == slug)
            .unwrap()
            .clone()
    };
    assert_eq!(by("busy")["status"], "active");
    assert_eq!(by("busy")["uncommitted"], 2, "{v}");
    assert_eq!(by("busy")["branch"], "main");
    assert_eq!(by("calm")["status"], "active", "committed just now: {v}");
    assert!(by("calm").get("uncommitted").is_none());
    let dormant = s
        .call_json("portfolio_projects", json!({"status": "dormant"}))
        .await;
    assert!(
        dormant["notes"][0]
            .as_str()
            .unwrap()
            .contains("none of the 2 projects is dormant")
    );

    let v = s.call_json("portfolio_next", json!({})).await;
    assert_eq!(v["next"][0]["project"], "busy", "{v}");
    let why = v["next"][0]["why"].as_str().unwrap();
    assert!(
        why.contains("2 uncommitted file(s) (1 untracked) on main"),
        "{why}"
    );
    assert!(why.contains("Half of the parser"), "{why}");

    let v = s
        .call_json("portfolio_context", json!({"name": "busy"}))
        .await;
    assert!(
        v["readme"]["excerpt"]
            .as_str()
            .unwrap()
            .contains("marmalade recipe"),
        "{v}"
    );
    assert_eq!(v["commits"][0]["subject"], "Half of the parser");
    assert_eq!(v["commits"][0]["author"], "Ada");
    let files: Vec<(&str, &str)> = v["uncommitted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap(), f["change"].as_str().unwrap()))
        .collect();
    assert_eq!(
        files,
        [("src/lib.rs", "modified"), ("TODO.txt", "untracked")]
    );
    let (e, is_error) = s.call("portfolio_context", json!({"name": "nope"})).await;
    assert!(is_error && e.contains("busy, calm"), "{e}");

    let v = s
        .call_json("portfolio_search", json!({"query": "MARMALADE"}))
        .await;
    let hits: Vec<String> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            format!(
                "{}:{}:{}",
                m["project"].as_str().unwrap(),
                m["path"].as_str().unwrap(),
                m["line"]
            )
        })
        .collect();
    assert_eq!(
        hits,
        ["busy:README.md:3", "busy:TODO.txt:1", "calm:README.md:3"],
        "{v}"
    );

    let v = s.call_json("portfolio_pulse", json!({})).await;
    assert_eq!(v["projects"], 2);
    assert_eq!(v["uncommitted_projects"], 1);
    let summary = v["summary"].as_str().unwrap();
    assert!(
        summary.contains("uncommitted work in 1: busy (2)"),
        "{summary}"
    );

    // Text format, through the host's `format` parameter.
    let (text, is_error) = s
        .call("portfolio_projects", json!({"format": "text"}))
        .await;
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with("portfolio_projects all: 2 project(s) | 1-2 of 2 | complete"),
        "{text}"
    );
    s.stop().await;
}
