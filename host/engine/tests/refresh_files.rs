//! Refreshing the files a call names: an edit is re-parsed, a deletion dropped, a new
//! file added, and nothing is written when nothing changed.

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
async fn named_files_are_brought_in_line_with_the_disk() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"fresh\"\nversion = \"0.1.0\"\n",
    );
    write(
        root,
        "src/lib.rs",
        "pub mod a;\npub fn top() -> u32 { a::helper() }\n",
    );
    write(root, "src/a.rs", "pub fn helper() -> u32 { 1 }\n");
    let state = tempfile::tempdir().unwrap();
    let db = Db::open(&state.path().join("index.db")).await.unwrap();
    let project = db
        .register_project(root.to_str().unwrap(), Some("fresh"))
        .await
        .unwrap();
    index_project(&db, &project, Arc::new(Progress::default()))
        .await
        .unwrap();

    let none = refresh_files(&db, &project, &["src/a.rs".into(), "src/lib.rs".into()])
        .await
        .unwrap();
    assert!(none.is_empty(), "{none:?}");

    write(
        root,
        "src/a.rs",
        "pub fn helper() -> u32 { 1 }\npub fn again() -> u32 { helper() }\n",
    );
    write(
        root,
        "src/b.rs",
        "pub fn b() -> u32 { crate::a::helper() }\n",
    );
    let r = refresh_files(
        &db,
        &project,
        &["src/a.rs".into(), "src/b.rs".into(), "src/nope.rs".into()],
    )
    .await
    .unwrap();
    assert_eq!(r.updated, ["src/a.rs", "src/b.rs"]);
    assert!(r.removed.is_empty());
    let refs = db.references_to_name(project.id, "helper").await.unwrap();
    let sites: Vec<(&str, u32)> = refs
        .iter()
        .map(|r| (r.file_path.as_str(), r.line))
        .collect();
    assert_eq!(sites, [("src/a.rs", 2), ("src/b.rs", 1), ("src/lib.rs", 2)]);
    let b = db.symbols_by_name(project.id, "b").await.unwrap();
    assert_eq!(b[0].qualified_name, "fresh::b::b");

    std::fs::remove_file(root.join("src/b.rs")).unwrap();
    let r = refresh_files(&db, &project, &["src/b.rs".into()])
        .await
        .unwrap();
    assert_eq!(r.removed, ["src/b.rs"]);
    assert!(
        db.symbols_by_name(project.id, "b")
            .await
            .unwrap()
            .is_empty()
    );
}
