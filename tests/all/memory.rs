//! Architectural memory through the real binary: record_adr writes a row and an escaped
//! file, query_adrs finds it, delete_adr removes both and refuses every path outside
//! docs/adr, and a file deleted on disk takes its row with it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{Scryer, repo_root};

/// `<tmp>/outer/proj`: a one-file crate with one decision record. Canaries sit where the
/// escapes a delete could try would land: `<tmp>/CANARY.md` (two levels above the root),
/// `proj/CANARY.md` and `proj/docs/CANARY.md`.
fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::Builder::new()
        .prefix("scryer-memory-")
        .tempdir()
        .unwrap();
    let root = tmp.path().join("outer/proj");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("docs/adr")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"memdemo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn connect() {}\n").unwrap();
    std::fs::write(
        root.join("docs/adr/0001-retry-network-calls.md"),
        "---\nnumber: 1\ntitle: Network calls retry three times\nstatus: accepted\ndate: 2026-01-02\naffected_paths:\n  - src/net/**\n---\n\n# Network calls retry three times\n\n## Decision\n\nEvery client call retries with backoff.\n",
    )
    .unwrap();
    for canary in [
        tmp.path().join("CANARY.md"),
        root.join("CANARY.md"),
        root.join("docs/CANARY.md"),
    ] {
        std::fs::write(canary, "do not delete\n").unwrap();
    }
    let root = root.canonicalize().unwrap();
    (tmp, root)
}

fn numbers(answer: &Value) -> Vec<u64> {
    answer["items"]
        .as_array()
        .map(|a| a.iter().filter_map(|i| i["number"].as_u64()).collect())
        .unwrap_or_default()
}

fn canaries_alive(tmp: &Path, root: &Path) {
    for canary in [
        tmp.join("CANARY.md"),
        root.join("CANARY.md"),
        root.join("docs/CANARY.md"),
    ] {
        assert_eq!(
            std::fs::read_to_string(&canary).unwrap_or_default(),
            "do not delete\n",
            "{} was touched",
            canary.display()
        );
    }
}

#[tokio::test]
async fn record_query_delete_round_trip_with_escaped_frontmatter() {
    let (_tmp, root) = project();
    let s = Scryer::start(&[], &[]).await;
    s.index(&root).await;

    let recorded = s
        .call_json(
            "record_adr",
            json!({
                "title": "Cache \"hot\" lookups\n---\nstatus: accepted",
                "decision": "Keep an LRU of 1024 entries in front of the resolver.",
                "context": "Lookups repeat.",
                "affected_paths": "src/cache/**",
            }),
        )
        .await;
    assert_eq!(recorded["recorded"]["number"], 2, "{recorded}");
    assert_eq!(recorded["recorded"]["status"], "proposed");
    let rel = recorded["recorded"]["path"].as_str().unwrap().to_string();
    assert!(rel.starts_with("docs/adr/0002-cache-hot-lookups"), "{rel}");

    // The file: frontmatter of exactly the lines written, every scalar escaped.
    let text = std::fs::read_to_string(root.join(&rel)).unwrap();
    let frontmatter: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(frontmatter[0], "---");
    assert_eq!(
        frontmatter[2],
        r#"title: "Cache \"hot\" lookups --- status: accepted""#
    );
    assert_eq!(frontmatter[3], r#"status: "proposed""#);
    assert_eq!(frontmatter[6], r#"  - "src/cache/**""#);
    assert_eq!(frontmatter.last(), Some(&"---"));
    assert_eq!(
        frontmatter.iter().filter(|l| **l == "---").count(),
        2,
        "{text}"
    );

    let found = s
        .call_json("query_adrs", json!({"query": "LRU resolver cache"}))
        .await;
    assert_eq!(numbers(&found), [2], "{found}");
    assert_eq!(
        found["items"][0]["title"],
        "Cache \"hot\" lookups --- status: accepted"
    );
    assert_eq!(found["items"][0]["path"], rel);
    let by_path = s
        .call_json("query_adrs", json!({"path": "src/net/client.rs"}))
        .await;
    assert_eq!(numbers(&by_path), [1], "{by_path}");
    let accepted = s
        .call_json("query_adrs", json!({"status": "accepted"}))
        .await;
    assert_eq!(
        numbers(&accepted),
        [1],
        "the forged status did not take: {accepted}"
    );

    let deleted = s.call_json("delete_adr", json!({"adr_number": 2})).await;
    assert_eq!(deleted["deleted"]["rows_deleted"], 1, "{deleted}");
    assert_eq!(deleted["deleted"]["file_deleted"], true);
    assert!(!root.join(&rel).exists());
    let after = s.call_json("query_adrs", json!({})).await;
    assert_eq!(numbers(&after), [1], "{after}");
    let gone = s
        .call_json("query_adrs", json!({"query": "LRU resolver cache"}))
        .await;
    assert_eq!(gone["total"], 0);
    assert!(
        gone["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("no document matches"),
        "{gone}"
    );
    s.stop().await;
}

#[tokio::test]
async fn delete_adr_refuses_every_path_outside_docs_adr() {
    let (tmp, root) = project();
    // Links inside docs/adr: one to a file elsewhere in the project (listed, so the
    // host's own check must refuse it), one out of the project (never listed).
    std::os::unix::fs::symlink(root.join("CANARY.md"), root.join("docs/adr/0008-inside.md"))
        .unwrap();
    std::os::unix::fs::symlink(
        tmp.path().join("CANARY.md"),
        root.join("docs/adr/0009-outside.md"),
    )
    .unwrap();
    let s = Scryer::start(&[], &[]).await;
    s.index(&root).await;

    let outside_abs = tmp.path().join("CANARY.md");
    let via_dotdot = format!("{}/docs/adr/../CANARY.md", root.display());
    for path in [
        "../../CANARY.md",
        "docs/adr/../CANARY.md",
        "docs/adr/../../CANARY.md",
        outside_abs.to_str().unwrap(),
        via_dotdot.as_str(),
        "docs/CANARY.md",
        "CANARY",
    ] {
        let (text, is_error) = s.call("delete_adr", json!({"file_path": path})).await;
        assert!(is_error, "{path}: {text}");
        assert!(text.contains("docs/adr"), "{path}: {text}");
    }
    let (text, is_error) = s
        .call(
            "delete_adr",
            json!({"file_path": "docs/adr/0008-inside.md"}),
        )
        .await;
    assert!(is_error && text.contains("outside docs/adr"), "{text}");
    let (text, is_error) = s
        .call(
            "delete_adr",
            json!({"file_path": "docs/adr/0009-outside.md"}),
        )
        .await;
    assert!(is_error, "{text}");
    let (text, is_error) = s
        .call("delete_adr", json!({"adr_number": 1, "title": "x"}))
        .await;
    assert!(
        is_error && text.contains("exactly one of adr_number, file_path or title"),
        "{text}"
    );

    canaries_alive(tmp.path(), &root);
    assert!(
        root.join("docs/adr/0008-inside.md")
            .symlink_metadata()
            .is_ok()
    );
    assert!(root.join("docs/adr/0001-retry-network-calls.md").exists());
    s.stop().await;
}

#[tokio::test]
async fn a_record_deleted_on_disk_leaves_query_adrs_and_its_row_is_purged() {
    let (_tmp, root) = project();
    let s = Scryer::start(&[], &[]).await;
    s.index(&root).await;
    let recorded = s
        .call_json(
            "record_adr",
            json!({"title": "Short lived", "decision": "Nothing lasts."}),
        )
        .await;
    let rel = recorded["recorded"]["path"].as_str().unwrap().to_string();
    assert_eq!(numbers(&s.call_json("query_adrs", json!({})).await), [2, 1]);

    std::fs::remove_file(root.join(&rel)).unwrap();
    let after = s.call_json("query_adrs", json!({})).await;
    assert_eq!(numbers(&after), [1], "{after}");
    let notes = after["notes"].to_string();
    assert!(
        notes.contains("purged recorded decision 2 (Short lived)"),
        "{notes}"
    );
    // The row is gone: the next read purges nothing, and number 2 is free again.
    let again = s.call_json("query_adrs", json!({})).await;
    assert!(again.get("notes").is_none(), "{again}");
    let next = s
        .call_json("record_adr", json!({"title": "Next one", "decision": "d"}))
        .await;
    assert_eq!(next["recorded"]["number"], 2);
    s.stop().await;
}

/// This repository's own records parse: every file in docs/adr has a number, a title
/// and a status, and query_adrs ranks them.
#[tokio::test]
async fn this_repository_s_docs_parse() {
    let tmp = tempfile::Builder::new()
        .prefix("scryer-dogfood-")
        .tempdir()
        .unwrap();
    let root = tmp.path().join("repo");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let mut adr_files = Vec::new();
    for dir in ["docs/adr", "docs/learnings", "docs/plans"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        let Ok(entries) = std::fs::read_dir(repo_root().join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".md") {
                std::fs::copy(e.path(), root.join(dir).join(&name)).unwrap();
                if dir == "docs/adr" {
                    adr_files.push(format!("{dir}/{name}"));
                }
            }
        }
    }
    assert!(
        !adr_files.is_empty(),
        "this repository has decision records"
    );
    let s = Scryer::start(&[], &[]).await;
    s.index(&root).await;
    // Every page: the records outgrow one (50 items) as the project goes on.
    let mut items: Vec<Value> = Vec::new();
    let mut offset = 0;
    loop {
        let page = s
            .call_json(
                "query_adrs",
                json!({"limit": 50, "offset": offset, "max_tokens": 20000}),
            )
            .await;
        eprintln!("query_adrs on this repository's docs, offset {offset}: {page}");
        assert!(page.get("notes").is_none(), "unreadable parts: {page}");
        items.extend(page["items"].as_array().unwrap().iter().cloned());
        match page["next_offset"].as_u64() {
            Some(next) if next as usize > offset => offset = next as usize,
            _ => break,
        }
    }
    let all = json!({ "items": items });
    for f in &adr_files {
        let item = all["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["path"] == f.as_str())
            .unwrap_or_else(|| panic!("{f} missing from {all}"));
        assert!(item["number"].as_u64().is_some_and(|n| n > 0), "{item}");
        assert!(item["status"].is_string(), "{item}");
        assert!(
            item["excerpt"].as_str().is_some_and(|e| !e.is_empty()),
            "{item}"
        );
        let file_stem = f.rsplit('/').next().unwrap().trim_end_matches(".md");
        assert_ne!(
            item["title"], file_stem,
            "title came from the frontmatter or H1: {item}"
        );
    }
    let ranked = s
        .call_json(
            "query_adrs",
            json!({"query": "sandbox WIT deny by default"}),
        )
        .await;
    eprintln!("query_adrs(sandbox WIT deny by default): {ranked}");
    assert_eq!(ranked["items"][0]["number"], 1, "{ranked}");
    let by_path = s
        .call_json(
            "query_adrs",
            json!({"path": "host/runtime/src/limits.rs", "limit": 50, "max_tokens": 20000}),
        )
        .await;
    // ADR 0001 covers it by `host/runtime/**`; ADRs naming the file itself rank first
    // (more of them than a default page holds, as the records grow: ask for them all).
    let numbers: Vec<i64> = by_path["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["number"].as_i64())
        .collect();
    assert!(numbers.contains(&1), "{by_path}");
    s.stop().await;
}
