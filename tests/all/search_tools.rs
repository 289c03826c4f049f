//! `search_symbols` and `get_crate_outline` through the real binary: the embedded search
//! and dependency routers over the host's BM25 index and dependency index, on the
//! fixture workspace and on a temporary project that locks one crate from the local
//! cargo registry.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Scryer, fixture_workspace};

fn names(v: &Value) -> Vec<String> {
    v["hits"]
        .as_array()
        .map(|hits| {
            hits.iter()
                .map(|h| h["qualified_name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn search_finds_a_function_by_a_word_of_its_name() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;

    let v = s
        .call_json("search_symbols", json!({"query": "count"}))
        .await;
    let hit = &v["hits"][0];
    assert_eq!(hit["qualified_name"], "demo::util::count_up", "{v}");
    assert_eq!(hit["matched_terms"], json!(["count"]), "{v}");
    assert_eq!(hit["kind"], "function");
    assert_eq!(hit["file_path"], "src/util.rs");
    assert_eq!(hit["line"], 18);
    assert_eq!(hit["signature"], "pub fn count_up() -> u32");
    let score = hit["score"].as_f64().unwrap();
    assert!(score > 0.0 && (score * 100.0).fract() == 0.0, "{score}");
    assert!(v.get("crate_name").is_none() && hit.get("crate_name").is_none());

    // a word inside a snake_case name, and the kind filter keeping only methods
    let v = s
        .call_json("search_symbols", json!({"query": "circle unit"}))
        .await;
    assert_eq!(names(&v)[0], "demo::unit_circle", "{v}");
    let v = s
        .call_json("search_symbols", json!({"query": "area", "kind": "method"}))
        .await;
    let found = names(&v);
    assert!(!found.is_empty(), "{v}");
    assert!(
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["kind"] == "method"),
        "{v}"
    );
    assert!(found.iter().all(|n| n.ends_with("::area")), "{v}");

    let v = s
        .call_json("search_symbols", json!({"query": "frobnicate"}))
        .await;
    assert_eq!(v["total"], 0);
    assert!(
        v["notes"]
            .to_string()
            .contains("nothing matched the terms: frobnicate"),
        "{v}"
    );
    s.stop().await;
}

#[tokio::test]
async fn like_symbol_leaves_the_symbol_itself_out() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;

    let v = s
        .call_json(
            "search_symbols",
            json!({"like_symbol": "util::describe", "limit": 50}),
        )
        .await;
    assert_eq!(
        v["like_symbol"]["qualified_name"], "demo::util::describe",
        "{v}"
    );
    assert_eq!(v["like_symbol"]["file_path"], "src/util.rs");
    let found = names(&v);
    assert!(!found.is_empty(), "{v}");
    assert!(!found.contains(&"demo::util::describe".to_string()), "{v}");
    assert_eq!(v["total"].as_u64().unwrap() as usize, found.len(), "{v}");

    let (text, is_error) = s
        .call("search_symbols", json!({"like_symbol": "Hexagon"}))
        .await;
    assert!(is_error && text.contains("\"Hexagon\""), "{text}");
    s.stop().await;
}

#[tokio::test]
async fn exactly_one_of_query_and_like_symbol_and_nothing_unsearchable() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;

    for args in [
        json!({"query": "area", "like_symbol": "describe"}),
        json!({}),
        json!({"limit": 5}),
    ] {
        let (text, is_error) = s.call("search_symbols", args.clone()).await;
        assert!(is_error, "{args} should be refused, got {text}");
        assert!(
            text.contains("`query`") && text.contains("`like_symbol`"),
            "{args}: {text}"
        );
    }
    let (text, is_error) = s
        .call("search_symbols", json!({"query": "\u{301}\u{302}\u{ffff}"}))
        .await;
    assert!(is_error && text.contains("nothing searchable"), "{text}");
    let (text, is_error) = s
        .call(
            "search_symbols",
            json!({"query": "area", "scope_level": "galaxy"}),
        )
        .await;
    assert!(
        is_error && text.contains("workspace, dependencies"),
        "{text}"
    );

    // a megabyte of query is cut before the host sees it, and answered quickly
    let started = Instant::now();
    let huge = format!("tick {}", "lorem ipsum ".repeat(90_000));
    let v = s.call_json("search_symbols", json!({"query": huge})).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(names(&v).contains(&"demo::util::tick".to_string()), "{v}");
    assert!(v["notes"].to_string().contains("only its first"), "{v}");
    s.stop().await;
}

#[tokio::test]
async fn pages_follow_next_offset_and_agree_with_one_big_page() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;

    let all = s
        .call_json(
            "search_symbols",
            json!({"query": "area shape circle", "limit": 50}),
        )
        .await;
    let every = names(&all);
    let total = all["total"].as_u64().unwrap();
    assert!(total >= 4, "{all}");
    assert_eq!(every.len() as u64, total);
    assert_eq!(all["has_more"], false);

    let mut paged = Vec::new();
    let mut offset = 0;
    loop {
        let v = s
            .call_json(
                "search_symbols",
                json!({"query": "area shape circle", "limit": 2, "offset": offset}),
            )
            .await;
        assert_eq!(v["total"].as_u64(), Some(total), "{v}");
        paged.extend(names(&v));
        if v["has_more"] == true {
            let next = v["next_offset"].as_u64().unwrap();
            assert_eq!(next, offset + 2);
            assert!(
                v["see_also"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("offset: {next}")),
                "{v}"
            );
            offset = next;
        } else {
            assert!(v.get("next_offset").is_none(), "{v}");
            break;
        }
    }
    assert_eq!(paged, every);

    let past = s
        .call_json("search_symbols", json!({"query": "area", "offset": 500}))
        .await;
    assert!(
        past["notes"]
            .to_string()
            .contains("offset 500 is past the last hit"),
        "{past}"
    );
    let (text, is_error) = s
        .call("search_symbols", json!({"query": "area", "limit": 51}))
        .await;
    assert!(is_error && text.contains("from 1 to 50"), "{text}");
    s.stop().await;
}

/// The local cargo registry's copy of `hex` 0.4.3, which the workspace itself locks.
fn registry_has_hex() -> bool {
    let Some(home) = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
    else {
        return false;
    };
    std::fs::read_dir(home.join("registry/src"))
        .map(|dirs| {
            dirs.flatten()
                .any(|d| d.path().join("hex-0.4.3/src/lib.rs").is_file())
        })
        .unwrap_or(false)
}

/// A project that locks `hex` 0.4.3 and uses it.
fn project_locking_hex() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("scryer-uses-hex-")
        .tempdir()
        .unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"uses-hex\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nhex = \"0.4\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "/// Hex of a greeting.\npub fn greeting_hex() -> String {\n    hex::encode(\"hi\")\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("Cargo.lock"),
        r#"# This file is automatically @generated by Cargo.
# It is not intended for manual editing.
version = 4

[[package]]
name = "hex"
version = "0.4.3"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "7f24254aa9a54b5c858eaee2f5bccdb46aaf0e486a595ed5fd8f86ba55232a70"

[[package]]
name = "uses-hex"
version = "0.1.0"
dependencies = [
 "hex",
]
"#,
    )
    .unwrap();
    dir
}

/// Polls `get_crate_outline` until the crate's dependency index is built: until then
/// the answer says the crate is locked but not indexed yet.
async fn wait_for_outline(s: &Scryer, args: Value) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (text, is_error) = s.call("get_crate_outline", args.clone()).await;
        if !is_error {
            let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            if v.get("modules").is_some() {
                return v;
            }
            assert_eq!(v["indexed"], false, "neither an outline nor a wait: {text}");
            assert!(
                text.contains("locked but not indexed"),
                "a wait that does not say why: {text}"
            );
        }
        assert!(
            Instant::now() < deadline,
            "hex was not indexed within 120 s: {text}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test]
async fn crate_outline_of_a_locked_dependency_and_dependency_search() {
    if !registry_has_hex() {
        panic!(
            "this test needs hex 0.4.3 in the local cargo registry (run `cargo fetch` in the repository)"
        );
    }
    let project = project_locking_hex();
    let s = Scryer::start(&[], &[]).await;
    s.index(project.path()).await;

    let v = wait_for_outline(&s, json!({"crate_name": "hex"})).await;
    assert_eq!(
        (v["crate_name"].as_str(), v["version"].as_str()),
        (Some("hex"), Some("0.4.3")),
        "{v}"
    );
    assert!(v["root"].as_str().unwrap().ends_with("/hex-0.4.3"), "{v}");
    let modules = v["modules"].as_array().unwrap();
    let paths: Vec<&str> = modules
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths[0], "hex", "{v}");
    assert!(
        paths.contains(&"hex::error") && paths.contains(&"hex::serde"),
        "{v}"
    );
    assert!(
        !paths
            .iter()
            .any(|p| p.ends_with("::test") || p.ends_with("::tests")),
        "{v}"
    );
    let root_items: Vec<&str> = modules[0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    for wanted in ["ToHex", "FromHex", "encode", "decode", "encode_to_slice"] {
        assert!(root_items.contains(&wanted), "{wanted} missing: {v}");
    }
    let encode = modules[0]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "encode")
        .unwrap();
    assert_eq!(encode["line"], 259);
    assert_eq!(
        encode["signature"],
        "pub fn encode<T: AsRef<[u8]>>(data: T) -> String"
    );
    assert_eq!(modules[0]["file"], "src/lib.rs");
    let error = modules.iter().find(|m| m["path"] == "hex::error").unwrap();
    assert_eq!(error["private"], true);
    assert_eq!(error["items"][0]["name"], "FromHexError");
    assert_eq!(v["complete"], true);

    // one module, a tight budget, an unknown crate
    let serde = s
        .call_json(
            "get_crate_outline",
            json!({"crate_name": "hex", "module": "serde"}),
        )
        .await;
    let serde_paths: Vec<&str> = serde["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    assert_eq!(serde_paths, ["hex::serde"], "{serde}");
    let tight = s
        .call_json(
            "get_crate_outline",
            json!({"crate_name": "hex", "max_tokens": 250}),
        )
        .await;
    assert_eq!(tight["complete"], false, "{tight}");
    assert!(tight["omitted"]["items"].as_u64().unwrap() > 0, "{tight}");
    assert!(tight["next_offset"].as_u64().unwrap() > 0, "{tight}");
    let (text, is_error) = s
        .call("get_crate_outline", json!({"crate_name": "hexx"}))
        .await;
    assert!(is_error && text.contains("closest: hex"), "{text}");

    // the dependency scope of search_symbols finds hex's functions, with crate and version
    let deps = s
        .call_json(
            "search_symbols",
            json!({"query": "decode", "scope_level": "dependencies"}),
        )
        .await;
    let hit = deps["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["qualified_name"] == "hex::decode")
        .unwrap_or_else(|| panic!("hex::decode not found: {deps}"));
    assert_eq!(
        (hit["crate_name"].as_str(), hit["version"].as_str()),
        (Some("hex"), Some("0.4.3"))
    );
    assert!(
        hit["file_path"]
            .as_str()
            .unwrap()
            .ends_with("hex-0.4.3/src/lib.rs"),
        "{hit}"
    );
    let (text, _) = s
        .call(
            "search_symbols",
            json!({"query": "decode", "crate_name": "hexx"}),
        )
        .await;
    assert!(text.contains("`hexx` is not among"), "{text}");
    s.stop().await;
}

#[tokio::test]
async fn a_project_without_cargo_lock_is_told_what_dependency_indexing_needs() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;
    let (text, is_error) = s
        .call("get_crate_outline", json!({"crate_name": "serde"}))
        .await;
    assert!(is_error, "{text}");
    assert!(
        text.contains("Cargo.lock") && text.contains("cargo fetch"),
        "{text}"
    );
    let v = s
        .call_json(
            "search_symbols",
            json!({"query": "serialize", "scope_level": "dependencies"}),
        )
        .await;
    assert_eq!(v["total"], 0);
    assert!(v["notes"].to_string().contains("locks no crates"), "{v}");
    s.stop().await;
}
