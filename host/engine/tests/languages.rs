//! A project mixing languages: every source file is indexed with its language, the
//! dependency and build directories are skipped, and single-file refreshes accept every
//! supported extension.

use std::path::Path;
use std::sync::Arc;

use scryer_db::Db;
use scryer_engine::indexer::{Progress, index_project, refresh_files};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[tokio::test]
async fn a_mixed_project_indexes_every_language() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().join("mixed-proj");
    let root = root.as_path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"core-lib\"\nversion = \"0.1.0\"\n",
    );
    write(root, "src/lib.rs", "pub mod build;\npub fn rust_fn() {}\n");
    // Under `src`, a `build` directory is an ordinary module.
    write(root, "src/build/mod.rs", "pub fn in_build_module() {}\n");
    write(
        root,
        "app/service.py",
        "class Service:\n    def run(self):\n        return helper()\n",
    );
    write(root, "app/__init__.py", "VERSION = '1'\n");
    write(
        root,
        "web/src/api.ts",
        "export interface Api { get(): string }\nexport function fetchAll(): void {}\n",
    );
    write(
        root,
        "web/src/view.tsx",
        "export const View = () => <div>{fetchAll()}</div>;\n",
    );
    write(root, "web/legacy.js", "function legacy() { return 1; }\n");
    write(root, "node_modules/dep/index.js", "function depJs() {}\n");
    write(
        root,
        "cmd/server/main.go",
        "package main\n\nfunc Serve() { start() }\n",
    );
    write(root, "vendor/x/x.go", "package x\n\nfunc Vendored() {}\n");
    // A Go module in a subdirectory: its packages are named after the module.
    write(
        root,
        "services/geo/go.mod",
        "module github.com/acme/geo-svc\n\ngo 1.22\n",
    );
    write(
        root,
        "services/geo/internal/calc/calc.go",
        "package calc\n\nfunc Distance() int { return 0 }\n",
    );
    // Dependencies, build output and caches are skipped.
    write(
        root,
        "node_modules/dep/index.py",
        "def dependency(): pass\n",
    );
    write(root, "dist/out.py", "def built(): pass\n");
    write(root, "build/gen.py", "def generated(): pass\n");
    write(root, "app/__pycache__/x.py", "def cached(): pass\n");
    write(root, "vendor/lib.rs", "pub fn vendored() {}\n");
    write(root, "notes.txt", "not code\n");

    let state = tempfile::tempdir().unwrap();
    let db = Db::open(&state.path().join("index.db")).await.unwrap();
    let project = db
        .register_project(root.to_str().unwrap(), Some("mixed"))
        .await
        .unwrap();
    let report = index_project(&db, &project, Arc::new(Progress::default()))
        .await
        .unwrap();
    let files = db.files(project.id).await.unwrap();
    let mut langs: Vec<(String, String)> = files
        .values()
        .map(|f| (f.path.clone(), f.language.clone()))
        .collect();
    langs.sort();
    let expected = [
        ("app/__init__.py", "python"),
        ("app/service.py", "python"),
        ("cmd/server/main.go", "go"),
        ("services/geo/internal/calc/calc.go", "go"),
        ("src/build/mod.rs", "rust"),
        ("src/lib.rs", "rust"),
        ("web/legacy.js", "javascript"),
        ("web/src/api.ts", "typescript"),
        ("web/src/view.tsx", "typescript"),
    ];
    let langs: Vec<(&str, &str)> = langs
        .iter()
        .map(|(p, l)| (p.as_str(), l.as_str()))
        .collect();
    assert_eq!(langs, expected);
    assert_eq!(report.files_seen, expected.len());

    let run = db.symbols_by_name(project.id, "run").await.unwrap();
    assert_eq!(run.len(), 1);
    assert_eq!(
        run[0].qualified_name,
        "mixed_proj::app::service::Service::run"
    );
    assert_eq!(run[0].kind, "method");
    let version = db.symbols_by_name(project.id, "VERSION").await.unwrap();
    assert_eq!(version[0].qualified_name, "mixed_proj::app::VERSION");
    let rust_fn = db.symbols_by_name(project.id, "rust_fn").await.unwrap();
    assert_eq!(rust_fn[0].qualified_name, "core_lib::rust_fn");
    for skipped in [
        "dependency",
        "built",
        "generated",
        "cached",
        "vendored",
        "depJs",
        "Vendored",
    ] {
        assert!(
            db.symbols_by_name(project.id, skipped)
                .await
                .unwrap()
                .is_empty(),
            "{skipped} should not be indexed"
        );
    }
    let helper = db.references_to_name(project.id, "helper").await.unwrap();
    assert_eq!(helper.len(), 1);
    assert_eq!(helper[0].kind, "call");
    assert_eq!(
        helper[0].enclosing_symbol,
        "mixed_proj::app::service::Service::run"
    );

    let api = db.symbols_by_name(project.id, "Api").await.unwrap();
    assert_eq!(api[0].kind, "interface");
    assert_eq!(api[0].qualified_name, "mixed_proj::web::src::api::Api");
    let calls = db.references_to_name(project.id, "fetchAll").await.unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].file_path, "web/src/view.tsx");
    assert_eq!(
        calls[0].enclosing_symbol,
        "mixed_proj::web::src::view::View"
    );
    let legacy = db.symbols_by_name(project.id, "legacy").await.unwrap();
    assert_eq!(legacy[0].qualified_name, "mixed_proj::web::legacy::legacy");

    let serve = db.symbols_by_name(project.id, "Serve").await.unwrap();
    assert_eq!(serve[0].qualified_name, "mixed_proj::cmd::server::Serve");
    let distance = db.symbols_by_name(project.id, "Distance").await.unwrap();
    assert_eq!(
        distance[0].qualified_name,
        "geo_svc::internal::calc::Distance"
    );
    let start = db.references_to_name(project.id, "start").await.unwrap();
    assert_eq!(start[0].enclosing_symbol, "mixed_proj::cmd::server::Serve");

    // Single-file refreshes: a new Python file is added, one under node_modules is not.
    write(root, "app/extra.py", "def extra(): pass\n");
    write(root, "node_modules/dep/more.py", "def more(): pass\n");
    let r = refresh_files(
        &db,
        &project,
        &["app/extra.py".into(), "node_modules/dep/more.py".into()],
    )
    .await
    .unwrap();
    assert_eq!(r.updated, ["app/extra.py"]);
    let extra = db.file(project.id, "app/extra.py").await.unwrap().unwrap();
    assert_eq!(extra.language, "python");
    let sym = db.symbols_by_name(project.id, "extra").await.unwrap();
    assert_eq!(sym[0].qualified_name, "mixed_proj::app::extra::extra");

    // A Go file refreshed alone finds its module too.
    write(
        root,
        "services/geo/internal/calc/more.go",
        "package calc\n\nfunc Bearing() int { return 1 }\n",
    );
    let r = refresh_files(
        &db,
        &project,
        &["services/geo/internal/calc/more.go".into()],
    )
    .await
    .unwrap();
    assert_eq!(r.updated, ["services/geo/internal/calc/more.go"]);
    let bearing = db.symbols_by_name(project.id, "Bearing").await.unwrap();
    assert_eq!(
        bearing[0].qualified_name,
        "geo_svc::internal::calc::Bearing"
    );
}
