//! A common name on a large generated project, through the real binary: `new` has more
//! usages than the host hands one router call, so every large-answer tool answers within
//! its budget with `complete: false`, and the next window is one call away
//! (`usage_offset`, ADR 0024). A name with thousands of definitions (`fmt`) gets a
//! window sized by them (ADR 0029).

use serde_json::{Value, json};

use crate::support::daemon::DaemonEnv;
use crate::support::{Scryer, fixture_workspace};

/// Files, each with one `T<k>` and its `new`, and functions calling `new` on two types.
const FILES: usize = 250;
const FNS_PER_FILE: usize = 50;
/// `T::new()` calls in all: two per function.
const NEW_CALLS: usize = FILES * FNS_PER_FILE * 2;
/// The rows a window of `new` holds: 10,000 (`USAGE_WINDOW_ROWS`), or fewer for a name
/// with many definitions (`ATTRIBUTION_PAIRS` over its `FILES` definitions; ADR 0029).
const NEW_WINDOW: usize = if 1_000_000 / FILES < 10_000 {
    1_000_000 / FILES
} else {
    10_000
};

fn large_project() -> tempfile::TempDir {
    let ws = tempfile::Builder::new()
        .prefix("scryer-big-")
        .tempdir()
        .unwrap();
    let src = ws.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        ws.path().join("Cargo.toml"),
        "[package]\nname = \"big\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    let mut lib = String::from("//! Generated.\n");
    for k in 0..FILES {
        lib.push_str(&format!("pub mod m{k:03};\n"));
        let next = (k + 1) % FILES;
        let mut f = format!(
            "use crate::m{next:03}::T{next};\n\npub struct T{k} {{\n    pub n: usize,\n}}\n\nimpl T{k} {{\n    pub fn new() -> Self {{\n        T{k} {{ n: {k} }}\n    }}\n}}\n"
        );
        for j in 0..FNS_PER_FILE {
            f.push_str(&format!(
                "\npub fn use_{k}_{j}() -> usize {{\n    let a = T{k}::new();\n    let b = T{next}::new();\n    a.n + b.n\n}}\n"
            ));
        }
        std::fs::write(src.join(format!("m{k:03}.rs")), f).unwrap();
    }
    std::fs::write(src.join("lib.rs"), lib).unwrap();
    ws
}

/// Files of `Display` types (`S<k>` with its `fmt`) and functions calling `.fmt(f)` on
/// receivers of unknown type: every call could be any of the definitions.
const FMT_FILES: usize = 200;
const FMT_TYPES_PER_FILE: usize = 10;
/// Distinct `fmt` definitions.
const FMT_DEFS: usize = FMT_FILES * FMT_TYPES_PER_FILE;
/// `.fmt(f)` calls in all.
const FMT_CALLS: usize = FMT_FILES * 20;
/// The rows a window of `fmt` holds: the host's (row × definition) limit over the
/// definitions (`ATTRIBUTION_PAIRS` in host/runtime/src/limits.rs).
const FMT_WINDOW: usize = 1_000_000 / FMT_DEFS;
// The fixture needs more than two windows of `fmt`.
const _: () = assert!(FMT_CALLS > 2 * FMT_WINDOW);

fn many_definitions_project() -> tempfile::TempDir {
    let ws = tempfile::Builder::new()
        .prefix("scryer-fmt-")
        .tempdir()
        .unwrap();
    let src = ws.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        ws.path().join("Cargo.toml"),
        "[package]\nname = \"shows\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    let mut lib = String::from("//! Generated.\n");
    for k in 0..FMT_FILES {
        lib.push_str(&format!("pub mod s{k:03};\n"));
        let mut f = String::from("use std::fmt;\n");
        for t in 0..FMT_TYPES_PER_FILE {
            f.push_str(&format!(
                "\npub struct S{t};\n\nimpl fmt::Display for S{t} {{\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{\n        f.write_str(\"s\")\n    }}\n}}\n"
            ));
        }
        for j in 0..FMT_CALLS / FMT_FILES {
            f.push_str(&format!(
                "\npub fn show_{j}(v: &dyn fmt::Display, f: &mut fmt::Formatter<'_>) -> fmt::Result {{\n    v.fmt(f)\n}}\n"
            ));
        }
        std::fs::write(src.join(format!("s{k:03}.rs")), f).unwrap();
    }
    std::fs::write(src.join("lib.rs"), lib).unwrap();
    ws
}

fn notes(v: &Value) -> String {
    v["notes"].to_string()
}

#[tokio::test]
async fn a_common_name_answers_a_window_and_the_next_is_one_call_away() {
    let ws = large_project();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;
    let root = ws.path().to_str().unwrap();

    // Every view of find_references: a first window, then the next.
    for view in ["sites", "callers", "files"] {
        let first = s
            .call_json(
                "find_references",
                json!({"symbol": "new", "view": view, "project": root}),
            )
            .await;
        assert_eq!(first["complete"], false, "{view}: {first}");
        assert_eq!(first["next_usage_offset"], NEW_WINDOW, "{view}: {first}");
        assert!(
            notes(&first).contains(&format!("usage_offset: {NEW_WINDOW}")),
            "{view}: {first}"
        );
        let second = s
            .call_json(
                "find_references",
                json!({"symbol": "new", "view": view, "usage_offset": NEW_WINDOW, "project": root}),
            )
            .await;
        assert_eq!(
            second["next_usage_offset"],
            2 * NEW_WINDOW,
            "{view}: {second}"
        );
        assert_ne!(first, second, "{view}: the second window is another answer");
    }

    // One definition of `new`: its sites in the window, paged, the window's next one call away.
    let one = s
        .call_json(
            "find_references",
            json!({"symbol": "m000::T0::new", "view": "sites", "limit": 20, "project": root}),
        )
        .await;
    assert_eq!(one["complete"], false, "{one}");
    assert_eq!(one["next_usage_offset"], NEW_WINDOW, "{one}");
    let shown = one["items"].as_array().map_or(0, Vec::len);
    assert!(shown > 0 && shown <= 20, "{one}");
    // The last window says so and points nowhere further.
    let last_start = NEW_CALLS / NEW_WINDOW * NEW_WINDOW;
    let last = s
        .call_json(
            "find_references",
            json!({"symbol": "new", "view": "files", "usage_offset": last_start, "project": root}),
        )
        .await;
    assert!(last.get("next_usage_offset").is_none(), "{last}");
    assert!(notes(&last).contains("last window"), "{last}");

    // The graph and inspection tools answer too, each saying it saw a window.
    // (`inspect_symbol new` lists candidates and reads no usages, so no window to name.)
    for (tool, args, windowed) in [
        ("trace_call_hierarchy", json!({"symbol": "new"}), true),
        (
            "trace_call_hierarchy",
            json!({"symbol": "m001::T1::new"}),
            true,
        ),
        (
            "calculate_blast_radius",
            json!({"symbol": "m001::T1::new"}),
            true,
        ),
        ("inspect_symbol", json!({"symbol": "m001::T1::new"}), true),
        ("inspect_symbol", json!({"symbol": "new"}), false),
    ] {
        let mut args = args;
        args["project"] = json!(root);
        let (text, is_error) = s.call(tool, args.clone()).await;
        assert!(!is_error, "{tool} {args}: {text}");
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{tool} {args}: not JSON ({e}): {text}"));
        assert_eq!(v["complete"], false, "{tool} {args}: {text}");
        if windowed {
            assert!(notes(&v).contains("usage_offset"), "{tool} {args}: {text}");
            assert!(
                v.get("next_usage_offset").is_some(),
                "{tool} {args}: {text}"
            );
        }
    }
    s.stop().await;
}

#[tokio::test]
async fn a_name_with_many_definitions_gets_a_window_sized_by_them() {
    let ws = many_definitions_project();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;
    let root = ws.path().to_str().unwrap();
    for view in ["sites", "callers", "files"] {
        let first = s
            .call_json(
                "find_references",
                json!({"symbol": "fmt", "view": view, "project": root}),
            )
            .await;
        assert_eq!(first["complete"], false, "{view}: {first}");
        assert_eq!(first["next_usage_offset"], FMT_WINDOW, "{view}: {first}");
        assert!(
            notes(&first).contains(&format!("{FMT_DEFS} definitions")),
            "{view}: {first}"
        );
        let second = s
            .call_json(
                "find_references",
                json!({"symbol": "fmt", "view": view, "usage_offset": FMT_WINDOW, "project": root}),
            )
            .await;
        assert_eq!(
            second["next_usage_offset"],
            2 * FMT_WINDOW,
            "{view}: {second}"
        );
    }
    // One definition of the name: the same window, its next one call away.
    for (tool, args) in [
        ("find_references", json!({"symbol": "s007::S3::fmt"})),
        ("trace_call_hierarchy", json!({"symbol": "s007::S3::fmt"})),
        ("calculate_blast_radius", json!({"symbol": "s007::S3::fmt"})),
        ("trace_call_hierarchy", json!({"symbol": "fmt"})),
        ("calculate_blast_radius", json!({"symbol": "fmt"})),
    ] {
        let mut args = args;
        args["project"] = json!(root);
        let (text, is_error) = s.call(tool, args.clone()).await;
        assert!(!is_error, "{tool} {args}: {text}");
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{tool} {args}: not JSON ({e}): {text}"));
        assert_eq!(v["complete"], false, "{tool} {args}: {text}");
        assert_eq!(v["next_usage_offset"], FMT_WINDOW, "{tool} {args}: {text}");
    }
    s.stop().await;
}

/// Fifty sessions through one daemon at once, each asking the everyday read tools: every
/// call gets an answer, none an error.
#[tokio::test]
async fn fifty_concurrent_sessions_all_get_answers() {
    let env = DaemonEnv::new();
    let ws = fixture_workspace();
    let first = env.client(ws.path(), &[]).await;
    let ready = first
        .call_json(
            "index_workspace",
            json!({"path": ws.path().to_str().unwrap()}),
        )
        .await;
    assert_eq!(ready["state"], "ready", "{ready}");
    let mut clients = vec![first];
    for _ in 1..50 {
        clients.push(env.client(ws.path(), &[]).await);
    }
    let calls = [
        (
            "find_references",
            json!({"symbol": "describe", "view": "callers"}),
        ),
        ("search_symbols", json!({"query": "shape area"})),
        ("inspect_symbol", json!({"symbol": "describe"})),
        ("get_file_outline", json!({"file_path": "src/lib.rs"})),
    ];
    let mut set = tokio::task::JoinSet::new();
    for (i, c) in clients.into_iter().enumerate() {
        let (tool, args) = calls[i % calls.len()].clone();
        set.spawn(async move {
            let answer = c.call(tool, args).await;
            (c, tool, answer)
        });
    }
    let mut clients = Vec::new();
    while let Some(done) = set.join_next().await {
        let (c, tool, (text, is_error)) = done.unwrap();
        assert!(!is_error && !text.is_empty(), "{tool}: {text}");
        clients.push(c);
    }
    assert_eq!(clients.len(), 50);
    for c in clients {
        c.stop().await;
    }
}
