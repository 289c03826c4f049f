//! A full disk, for real (issue 19, ADR 0025): small tmpfs mounts hold the project (for
//! `record_adr`) and the database (for indexing). Filled up, each call fails with an
//! error saying the disk is full, leaves nothing half-written (no ADR file without its
//! row, no row without its file), the server keeps serving, and once space returns the
//! same call succeeds. Mounting needs root (CAP_SYS_ADMIN); elsewhere the tests say so
//! and return.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::support::daemon::DaemonEnv;
use crate::support::{copy_dir, repo_root};

/// A tmpfs mounted for the test's lifetime.
struct Mount {
    dir: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Mount {
    fn new(size: &str) -> Option<Mount> {
        let tmp = tempfile::Builder::new()
            .prefix("scryer-full-")
            .tempdir()
            .unwrap();
        let dir = tmp.path().canonicalize().unwrap().join("disk");
        std::fs::create_dir_all(&dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("cannot mount a tmpfs here (needs root): the full-disk shape is skipped");
            return None;
        }
        Some(Mount { dir, _tmp: tmp })
    }

    fn resize(&self, size: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.dir)
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// Fills the mount with one file until a write fails; returns the file.
    fn fill(&self) -> PathBuf {
        use std::io::Write;
        let path = self.dir.join("filler");
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
        path
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

fn adr_files(root: &Path) -> BTreeSet<u64> {
    std::fs::read_dir(root.join("docs/adr"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.get(..4)?.parse::<u64>().ok()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn adr_rows(answer: &serde_json::Value) -> BTreeSet<u64> {
    answer["items"]
        .as_array()
        .map(|a| a.iter().filter_map(|i| i["number"].as_u64()).collect())
        .unwrap_or_default()
}

fn says_disk_full(text: &str) -> bool {
    let t = text.to_lowercase();
    t.contains("no space left") || t.contains("disk is full") || t.contains("disk full")
}

#[tokio::test]
async fn record_adr_on_a_full_disk_fails_cleanly_and_works_when_space_returns() {
    let Some(disk) = Mount::new("2m") else {
        return;
    };
    let root = disk.dir.join("demo");
    copy_dir(&repo_root().join("tests/fixtures/workspace"), &root);
    std::fs::create_dir_all(root.join("docs/adr")).unwrap();
    let env = DaemonEnv::new();
    let client = env.client(env.state.path(), &[]).await;
    let answer = client
        .call_json("index_workspace", json!({"path": root.to_str().unwrap()}))
        .await;
    assert_eq!(answer["state"], "ready", "{answer}");
    let project = root.to_str().unwrap();
    let filler = disk.fill();
    let long = "A decision that needs room to be written. ".repeat(200);
    let (text, is_error) = client
        .call(
            "record_adr",
            json!({"project": project, "title": "On a full disk", "decision": long}),
        )
        .await;
    assert!(is_error, "recorded on a full disk: {text}");
    assert!(says_disk_full(&text), "the error does not say why: {text}");
    let listed = client
        .call_json("query_adrs", json!({"project": project}))
        .await;
    assert_eq!(adr_rows(&listed), adr_files(&root), "{listed}");
    assert!(
        adr_files(&root).is_empty(),
        "a half-written ADR file is visible"
    );

    std::fs::remove_file(filler).unwrap();
    let recorded = client
        .call_json(
            "record_adr",
            json!({"project": project, "title": "On a full disk", "decision": long}),
        )
        .await;
    assert_eq!(recorded["recorded"]["number"], 1, "{recorded}");
    let listed = client
        .call_json("query_adrs", json!({"project": project}))
        .await;
    assert_eq!(adr_rows(&listed), BTreeSet::from([1]), "{listed}");
    assert_eq!(adr_files(&root), BTreeSet::from([1]));
    client.stop().await;
}

#[tokio::test]
async fn indexing_onto_a_full_disk_fails_cleanly_and_resumes_when_space_returns() {
    let Some(disk) = Mount::new("1m") else {
        return;
    };
    // The database lives on the small mount; the workspace does not fit its index.
    let ws = tempfile::Builder::new()
        .prefix("scryer-full-ws-")
        .tempdir()
        .unwrap();
    let root = ws.path().canonicalize().unwrap().join("wide");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"wide\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let mut lib = String::new();
    for i in 0..400 {
        lib.push_str(&format!("pub mod m{i};\n"));
        let body: String = (0..20)
            .map(|j| format!("/// Doc {i} {j}.\npub fn f_{i}_{j}(x: u32) -> u32 {{ x + {j} }}\n"))
            .collect();
        std::fs::write(root.join(format!("src/m{i}.rs")), body).unwrap();
    }
    std::fs::write(root.join("src/lib.rs"), lib).unwrap();
    let mut env = DaemonEnv::new();
    env.db = disk.dir.join("index.db");
    let client = env.client(env.state.path(), &[]).await;
    let (text, is_error) = client
        .call("index_workspace", json!({"path": root.to_str().unwrap()}))
        .await;
    // On a loaded machine the call may answer before the run meets the full disk: wait
    // (up to a minute) until the run has ended one way or the other.
    let mut status = (String::new(), false);
    for _ in 0..120 {
        status = client
            .call(
                "get_indexing_status",
                json!({"project": root.to_str().unwrap()}),
            )
            .await;
        if is_error || text.contains("\"error\"") || status.0.contains("error") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert!(
        is_error || text.contains("\"error\"") || status.0.contains("error"),
        "indexing onto a full disk did not fail: {text}\n{}",
        status.0
    );
    assert!(
        says_disk_full(&text) || says_disk_full(&status.0),
        "the failure does not say the disk is full: {text}\n{}",
        status.0
    );
    let (alive, is_error) = client.call("list_projects", json!({})).await;
    assert!(!is_error, "the server stopped serving: {alive}");

    disk.resize("256m");
    let answer = client
        .call_json("index_workspace", json!({"path": root.to_str().unwrap()}))
        .await;
    assert_eq!(answer["state"], "ready", "{answer}");
    let hits = client
        .call_json("search_symbols", json!({"query": "f_399_19"}))
        .await;
    assert!(hits.to_string().contains("f_399_19"), "{hits}");
    client.stop().await;
}

/// The end of a run that failed because the disk is full cannot always be written to that
/// disk: the failure is then kept in memory, and the project's row says it until the
/// next run starts, instead of reading as a run that never ended.
#[tokio::test]
async fn a_run_failure_the_full_disk_cannot_hold_is_still_reported() {
    let Some(disk) = Mount::new("2m") else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    let db = scryer_db::Db::open(&disk.dir.join("index.db"))
        .await
        .unwrap();
    let project = db
        .register_project(root.to_str().unwrap(), None)
        .await
        .unwrap();
    db.start_index_run(project.id).await.unwrap();
    let filler = disk.fill();
    let failure =
        "the disk is full (no storage space); free some space and run index_workspace again";
    let written = db.finish_index_run(project.id, 5, Some(failure)).await;
    assert!(written.is_err(), "the run's end was written to a full disk");
    let row = db.project(project.id).await.unwrap().unwrap();
    assert_eq!(row.last_error.as_deref(), Some(failure));
    assert!(!row.index_complete);
    let listed = db.projects().await.unwrap();
    assert_eq!(listed[0].last_error.as_deref(), Some(failure));

    std::fs::remove_file(filler).unwrap();
    db.start_index_run(project.id).await.unwrap();
    let row = db.project(project.id).await.unwrap().unwrap();
    assert_eq!(
        row.last_error, None,
        "a new run still shows the old failure"
    );
    db.finish_index_run(project.id, 5, None).await.unwrap();
    let row = db.project(project.id).await.unwrap().unwrap();
    assert!(row.index_complete && row.last_error.is_none(), "{row:?}");
}
