//! Indexing against a real turso file: a second run over unchanged files parses
//! nothing; an edit re-parses exactly that file; a deletion removes its rows;
//! `.gitignore`d files are never read.

use std::path::Path;
use std::sync::Arc;

use scryer_db::Db;
use scryer_engine::indexer::{Progress, index_project};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[tokio::test]
async fn unchanged_files_are_skipped_and_changes_are_applied() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"tiny-demo\"\nversion = \"0.1.0\"\n",
    );
    write(root, ".gitignore", "generated/\n");
    write(
        root,
        "src/lib.rs",
        "pub mod a;\npub fn top() -> u32 { a::helper() }\n",
    );
    write(root, "src/a.rs", "pub fn helper() -> u32 { 1 }\n");
    write(root, "generated/big.rs", "pub fn never_indexed() {}\n");

    let state = tempfile::tempdir().unwrap();
    let db = Db::open(&state.path().join("index.db")).await.unwrap();
    let project = db
        .register_project(root.to_str().unwrap(), Some("tiny_demo"))
        .await
        .unwrap();

    let first = index_project(&db, &project, Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(
        (first.files_seen, first.files_parsed, first.files_removed),
        (2, 2, 0)
    );
    let helper = db.symbols_by_name(project.id, "helper").await.unwrap();
    assert_eq!(helper[0].qualified_name, "tiny_demo::a::helper");
    assert!(
        db.symbols_by_name(project.id, "never_indexed")
            .await
            .unwrap()
            .is_empty()
    );
    let refs = db.references_to_name(project.id, "helper").await.unwrap();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].enclosing_symbol, "tiny_demo::top");
    assert!(
        db.project(project.id)
            .await
            .unwrap()
            .unwrap()
            .index_complete
    );

    let second = index_project(&db, &project, Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(
        (second.files_seen, second.files_parsed, second.files_removed),
        (2, 0, 0)
    );
    // Every file the index holds is stamped, parsed this run or not, with the size and
    // mtime it has on disk: the freshness check trusts these stamps.
    let mut stamped: Vec<_> = first.stamps.iter().chain(&second.stamps).collect();
    stamped.sort_by(|a, b| a.0.cmp(&b.0));
    let paths: Vec<&str> = stamped.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["src/a.rs", "src/a.rs", "src/lib.rs", "src/lib.rs"]);
    for (rel, stamp) in stamped {
        assert_eq!(
            Some(*stamp),
            scryer_engine::indexer::file_stamp(&root.join(rel))
        );
    }

    write(
        root,
        "src/a.rs",
        "pub fn helper() -> u32 { 1 }\npub fn other() -> u32 { helper() }\n",
    );
    let third = index_project(&db, &project, Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!((third.files_seen, third.files_parsed), (2, 1));
    assert_eq!(
        db.references_to_name(project.id, "helper")
            .await
            .unwrap()
            .len(),
        2
    );

    std::fs::remove_file(root.join("src/a.rs")).unwrap();
    let fourth = index_project(&db, &project, Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(
        (fourth.files_seen, fourth.files_parsed, fourth.files_removed),
        (1, 0, 1)
    );
    assert!(
        db.symbols_by_name(project.id, "helper")
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(db.facts(project.id).await.unwrap().files, 1);
}
