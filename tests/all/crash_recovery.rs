//! Crash safety: `kill -9` while a project is being indexed, then start again. The
//! project is found incomplete, its index run is finished in the background, and the
//! first query waits for it instead of answering from the half-written state.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Scryer, scryer_bin, shared_compile_cache};

/// A workspace big enough that indexing it takes a while: `n` modules, each calling
/// `shared::hit` from `calls` places.
fn big_workspace(root: &Path, n: usize, calls: usize) {
    std::fs::create_dir_all(root.join("src/m")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"big\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let mut lib = String::from("pub mod shared;\npub mod m;\n");
    lib.push_str("pub fn entry() -> u32 { shared::hit(0) }\n");
    std::fs::write(root.join("src/lib.rs"), lib).unwrap();
    std::fs::write(
        root.join("src/shared.rs"),
        "pub fn hit(n: u32) -> u32 { n + 1 }\n",
    )
    .unwrap();
    let mut m = String::new();
    for i in 0..n {
        m.push_str(&format!("pub mod f{i};\n"));
        let mut body =
            format!("use crate::shared;\n\npub fn run_{i}() -> u32 {{\n    let mut x = 0;\n");
        for _ in 0..calls {
            body.push_str("    x = shared::hit(x);\n");
        }
        body.push_str("    x\n}\n");
        std::fs::write(root.join(format!("src/m/f{i}.rs")), body).unwrap();
    }
    std::fs::write(root.join("src/m/mod.rs"), m).unwrap();
}

#[tokio::test]
async fn a_run_killed_mid_write_is_finished_before_anything_answers() {
    let ws = tempfile::Builder::new()
        .prefix("scryer-big-")
        .tempdir()
        .unwrap();
    let (modules, calls) = (1500, 40);
    big_workspace(ws.path(), modules, calls);
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("index.db");

    // Index from the command line and kill it while it writes its first batches (the
    // schema alone makes ~100 KiB of WAL, a batch of 256 files ~1.7 MiB).
    let mut child = std::process::Command::new(scryer_bin())
        .arg("--db")
        .arg(&db)
        .arg("--compile-cache")
        .arg(shared_compile_cache())
        .arg("index")
        .arg(ws.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let wal = state.path().join("index.db-wal");
    let started = Instant::now();
    let mut killed_mid_run = false;
    while started.elapsed() < Duration::from_secs(60) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if std::fs::metadata(&wal)
            .map(|m| m.len() > 1 << 20)
            .unwrap_or(false)
        {
            child.kill().unwrap(); // SIGKILL
            killed_mid_run = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.wait();
    assert!(
        killed_mid_run,
        "the index run finished before it could be interrupted; make the workspace bigger"
    );

    // Start the server on the same database: the interrupted project is resumed, and a
    // query waits for it (SCRYER_FIRST_QUERY_WAIT) rather than answering partially.
    let s = Scryer::start_with_db(&db, &[], &[("SCRYER_FIRST_QUERY_WAIT", "120")]).await;
    let listed = s.call_json("list_projects", json!({})).await;
    assert_eq!(
        listed["total"], 1,
        "the interrupted project is still registered: {listed}"
    );
    // A common name reaches the router a window of usages at a time (ADR 0024): count
    // the sites over every window.
    let mut total = 0;
    let mut offset = 0;
    loop {
        let answer = s
            .call_json(
                "find_references",
                json!({"symbol": "hit", "view": "files", "no_truncate": true, "usage_offset": offset}),
            )
            .await;
        total += answer["total_sites"].as_u64().unwrap_or(0);
        match answer["next_usage_offset"].as_u64() {
            Some(next) if next > offset => offset = next,
            _ => break,
        }
    }
    assert_eq!(
        total,
        (modules * calls + 1) as u64,
        "sites over every window"
    );
    let status = s.call_json("get_indexing_status", json!({})).await;
    assert_eq!(status["state"], "ready", "{status}");
    assert_eq!(status["files"], modules + 3);
    s.stop().await;
}
