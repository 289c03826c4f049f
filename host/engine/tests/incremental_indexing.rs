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

/// `into` called 520 times in each of `files` files.
fn into_calls(root: &Path, files: usize) {
    for k in 0..files {
        let mut text = format!("pub fn f{k}(v: u32) -> u64 {{\n    let mut t: u64 = 0;\n");
        for _ in 0..520 {
            text.push_str("    t += v.into();\n");
        }
        text.push_str("    t\n}\n");
        write(root, &format!("src/f{k:02}.rs"), &text);
    }
}

/// How many usage rows `name`'s record holds, and its files' order (`None`: no record).
async fn recorded_uses(db: &Db, project_id: i64, name: &str) -> Option<(u32, Vec<i64>)> {
    let uses = db.dense_uses(project_id, name).await.unwrap()?;
    Some((
        uses.iter().map(|u| u.rows).sum(),
        uses.iter().map(|u| u.file_id).collect(),
    ))
}

/// A name used more than a window's worth (`USES_RECORD_MIN_ROWS`) gets a record of its
/// usages per file at a full run's end, in path order; a later run that parses only an
/// edited file keeps it (from the names that had one) with the edit counted, and drops it
/// once the name is used less.
#[tokio::test]
async fn a_name_used_more_than_a_window_gets_a_record_of_its_usages() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"calls\"\nversion = \"0.1.0\"\n",
    );
    // 20 files × 520: 10,400 usages, just over the line.
    into_calls(root, 20);
    assert!(20 * 520 >= scryer_db::USES_RECORD_MIN_ROWS);
    let state = tempfile::tempdir().unwrap();
    let db = Db::open(&state.path().join("index.db")).await.unwrap();
    let project = db
        .register_project(root.to_str().unwrap(), Some("calls"))
        .await
        .unwrap();

    let first = index_project(&db, &project, Arc::new(Progress::default()))
        .await
        .unwrap();
    assert!(
        first.many_usages.contains(&"into".to_string()),
        "{:?}",
        first.many_usages
    );
    assert!(!first.many_usages.contains(&"f3".to_string()));
    let (rows, files) = recorded_uses(&db, project.id, "into")
        .await
        .expect("a record");
    assert_eq!(rows, 20 * 520);
    let paths = db.file_paths(project.id).await.unwrap();
    let ordered: Vec<&str> = files.iter().map(|f| paths[f].as_str()).collect();
    let mut sorted = ordered.clone();
    sorted.sort();
    assert_eq!(ordered, sorted, "in path order");
    assert_eq!(ordered.len(), 20);

    // One file edited: the run parses it alone (520 usages, under the line), and the
    // record is written again from the names that had one, with the edit counted.
    let mut edited = std::fs::read_to_string(root.join("src/f07.rs")).unwrap();
    edited = edited.replacen("    t\n}", "    t += v.into();\n    t\n}", 1);
    write(root, "src/f07.rs", &edited);
    let second = index_project(&db, &project, Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(second.files_parsed, 1);
    assert!(second.many_usages.is_empty(), "{:?}", second.many_usages);
    let (rows, _) = recorded_uses(&db, project.id, "into").await.expect("kept");
    assert_eq!(rows, 20 * 520 + 1);

    // Two files gone: under the line, no record; the rows answer.
    std::fs::remove_file(root.join("src/f00.rs")).unwrap();
    std::fs::remove_file(root.join("src/f01.rs")).unwrap();
    index_project(&db, &project, Arc::new(Progress::default()))
        .await
        .unwrap();
    assert_eq!(recorded_uses(&db, project.id, "into").await, None);
    let uses = db.uses_per_file(project.id, "into").await.unwrap();
    assert_eq!(uses.iter().map(|u| u.rows).sum::<u32>(), 18 * 520 + 1);
}
