//! How long until an edit is reflected: a file is changed on disk (no index_workspace,
//! no watcher), then the next `find_references` whose answer names it re-parses it and
//! answers again. Compared in one run against the same call when nothing changed.
//!
//!   cargo bench -p scryer --bench freshness -- [PROJECT_DIR] [FILE] [SYMBOL] [ROUNDS]
//!
//! Defaults: a copy of the regex-automata corpus, `src/dfa/dense.rs` (5,000+ lines),
//! `alphabet_len`, 30 rounds. The project is copied to a temporary directory first.

use std::path::{Path, PathBuf};

#[path = "common/mod.rs"]
mod common;
use std::time::{Duration, Instant};

use scryer_server::SessionOptions;
use serde_json::json;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != "target" {
                copy_dir(&e.path(), &dest);
            }
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let home = std::env::var("HOME").unwrap_or_default();
    let source = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(home).join(".cache/scryer-eval/corpus/regex-automata"));
    let file = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "src/dfa/dense.rs".into());
    let symbol = args
        .get(2)
        .cloned()
        .unwrap_or_else(|| "alphabet_len".into());
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(30);

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let work = tempfile::tempdir()?;
        let project = work.path().join("project");
        copy_dir(&source, &project);
        let server = common::start_server(work.path()).await?;
        let indexed = server.index_path(&project).await?;
        let session = server.open_session(project.clone(), SessionOptions::default()).await?;
        server.activate(session, &indexed.slug).await?;
        let args = json!({"symbol": symbol, "view": "files"});
        let path = project.join(&file);
        let original = std::fs::read_to_string(&path)?;
        let lines = original.lines().count();

        let (mut unchanged, mut edited) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            let t = Instant::now();
            let a = server.call_tool(session, "find_references", args.as_object().cloned()).await;
            unchanged.push(t.elapsed());
            assert!(!a.is_error, "{}", a.text);

            // Add a new use at the end of the file; the next answer must count it. With
            // FRESHNESS_EDIT=top a comment line goes first too, so every line moves and
            // every stored row of the file changes.
            let added = format!("#[allow(dead_code)]\nfn bench_edit_{round}(t: &TransitionTable) -> usize {{ t.{symbol}() }}\n");
            let body = if std::env::var("FRESHNESS_EDIT").as_deref() == Ok("top") {
                format!("// bench edit {round}\n{original}\n{added}")
            } else {
                format!("{original}\n{added}")
            };
            std::fs::write(&path, body)?;
            let t = Instant::now();
            let b = server.call_tool(session, "find_references", args.as_object().cloned()).await;
            edited.push(t.elapsed());
            assert!(b.text.contains("refreshed 1 file(s)"), "edit not seen: {}", b.text);
            std::fs::write(&path, &original)?;
            let _ = server.call_tool(session, "find_references", args.as_object().cloned()).await; // back to the original
        }
        let (u, e) = (median(unchanged), median(edited));
        println!("{} ({file}: {lines} lines), find_references {symbol:?} view=files, {rounds} rounds", indexed.slug);
        println!("nothing changed:                       median {u:?}");
        println!("file edited just before the call:      median {e:?} (check, re-parse, write, answer twice)");
        println!("cost of seeing the edit: {:?}", e.saturating_sub(u));
        anyhow::Ok(())
    })
}
