//! The graph and inspection routers through the real binary: `trace_call_hierarchy`,
//! `calculate_blast_radius` and `inspect_symbol` over the fixture workspace, with
//! callers and callees checked by hand against its source.

use serde_json::{Value, json};

use crate::support::{Scryer, fixture_workspace};

/// The fixture plus `src/cycle.rs` (`ping` ⇄ `pong`), declared at the end of lib.rs so no
/// existing line moves, and an ADR about the shapes.
fn workspace() -> tempfile::TempDir {
    let ws = fixture_workspace();
    std::fs::write(
        ws.path().join("src/cycle.rs"),
        "//! A cycle.\n\npub fn ping(n: u32) -> u32 {\n    if n == 0 { 0 } else { pong(n - 1) }\n}\n\npub fn pong(n: u32) -> u32 {\n    ping(n)\n}\n",
    )
    .unwrap();
    let lib = std::fs::read_to_string(ws.path().join("src/lib.rs")).unwrap();
    std::fs::write(ws.path().join("src/lib.rs"), lib + "\npub mod cycle;\n").unwrap();
    std::fs::create_dir_all(ws.path().join("docs/adr")).unwrap();
    std::fs::write(
        ws.path().join("docs/adr/0001-shapes.md"),
        "---\nnumber: 1\ntitle: Shapes are immutable\nstatus: accepted\naffected_paths:\n  - src/shapes.rs\n---\n\n# Shapes are immutable\n\n## Decision\n\nNo setters on shapes.\n",
    )
    .unwrap();
    ws
}

async fn started() -> (tempfile::TempDir, Scryer) {
    let ws = workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;
    (ws, s)
}

fn node(depth: u64, name: &str, kind: &str, at: &str, site: &str) -> Value {
    json!({"depth": depth, "qualified_name": name, "kind": kind, "at": at, "site": site})
}

#[tokio::test]
async fn callers_and_callees_are_exact() {
    let (_ws, s) = started().await;

    // describe: called from report (lib.rs:19) and twice (util.rs:11); nobody calls those.
    let a = s
        .call_json("trace_call_hierarchy", json!({"symbol": "describe"}))
        .await;
    assert_eq!(
        a,
        json!({
            "symbol": "describe",
            "definition": {"qualified_name": "demo::util::describe", "kind": "function", "file_path": "src/util.rs", "line": 6, "end_line": 8},
            "direction": "incoming",
            "depth": 2,
            "total_callers": 2,
            "offset": 0,
            "returned": 2,
            "callers": [
                node(1, "demo::report", "function", "src/lib.rs:17", "src/lib.rs:19"),
                node(1, "demo::util::twice", "function", "src/util.rs:10", "src/util.rs:11"),
            ],
            "complete": true,
        })
    );

    // report → unit_circle → Circle::new → (constructs) Circle; report → describe;
    // `c.area()` on a receiver whose type is not written is Shape's operation, unresolved.
    let a = s
        .call_json(
            "trace_call_hierarchy",
            json!({"symbol": "report", "direction": "outgoing", "depth": 3}),
        )
        .await;
    let mut circle = node(
        3,
        "demo::shapes::Circle",
        "struct",
        "src/shapes.rs:9",
        "src/shapes.rs:16",
    );
    circle["via"] = json!("instantiates");
    let mut area = node(
        1,
        "demo::shapes::Shape::area",
        "method",
        "src/shapes.rs:5",
        "src/lib.rs:19",
    );
    area["unresolved"] = json!(true);
    assert_eq!(
        a["callees"],
        json!([
            node(
                1,
                "demo::unit_circle",
                "function",
                "src/lib.rs:13",
                "src/lib.rs:18"
            ),
            node(
                2,
                "demo::shapes::Circle::new",
                "method",
                "src/shapes.rs:15",
                "src/lib.rs:14"
            ),
            circle,
            node(
                1,
                "demo::util::describe",
                "function",
                "src/util.rs:6",
                "src/lib.rs:19"
            ),
            area,
        ])
    );
    assert_eq!(a["unresolved"], 1);
    assert_eq!(
        a["complete"], false,
        "an unresolved call site makes it partial"
    );
    assert!(
        a["notes"][0]
            .as_str()
            .unwrap()
            .contains("1 call site(s) unresolved"),
        "{a}"
    );

    // Both directions at once; std calls are counted, not listed as nodes.
    let a = s
        .call_json(
            "trace_call_hierarchy",
            json!({"symbol": "Circle::new", "direction": "both"}),
        )
        .await;
    assert_eq!(
        a["callers"],
        json!([
            node(
                1,
                "demo::unit_circle",
                "function",
                "src/lib.rs:13",
                "src/lib.rs:14"
            ),
            node(
                2,
                "demo::report",
                "function",
                "src/lib.rs:17",
                "src/lib.rs:18"
            ),
            node(
                1,
                "demo::shapes::both",
                "function",
                "src/shapes.rs:42",
                "src/shapes.rs:43"
            ),
        ])
    );
    assert_eq!(a["total_callees"], 1);
    assert_eq!(a["complete"], true);
    let a = s
        .call_json(
            "trace_call_hierarchy",
            json!({"symbol": "total_area", "direction": "outgoing"}),
        )
        .await;
    assert_eq!(a["external"], json!(["iter", "map", "sum"]));
    assert_eq!(a["external_calls"], 3);
    s.stop().await;
}

#[tokio::test]
async fn a_cycle_is_cut_and_marked() {
    let (_ws, s) = started().await;
    let a = s
        .call_json(
            "trace_call_hierarchy",
            json!({"symbol": "ping", "direction": "both", "depth": 5}),
        )
        .await;
    let mut back = node(
        2,
        "demo::cycle::ping",
        "function",
        "src/cycle.rs:3",
        "src/cycle.rs:4",
    );
    back["cycle"] = json!(true);
    assert_eq!(
        a["callers"],
        json!([
            node(
                1,
                "demo::cycle::pong",
                "function",
                "src/cycle.rs:7",
                "src/cycle.rs:8"
            ),
            back
        ])
    );
    let mut back = node(
        2,
        "demo::cycle::ping",
        "function",
        "src/cycle.rs:3",
        "src/cycle.rs:8",
    );
    back["cycle"] = json!(true);
    assert_eq!(
        a["callees"],
        json!([
            node(
                1,
                "demo::cycle::pong",
                "function",
                "src/cycle.rs:7",
                "src/cycle.rs:4"
            ),
            back
        ])
    );
    assert_eq!(a["complete"], true);

    // Text: a header, the definition, one indented line per node.
    let (text, is_error) = s
        .call(
            "trace_call_hierarchy",
            json!({"symbol": "ping", "depth": 5, "format": "text"}),
        )
        .await;
    assert!(!is_error, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        [
            "trace_call_hierarchy ping: 2 callers (incoming, depth 5) | 1-2 of 2 nodes | complete | index: 4 files, 0 parse failures",
            "definition: function demo::cycle::ping src/cycle.rs:3",
            "← demo::cycle::pong (function) src/cycle.rs:7 | site src/cycle.rs:8",
            "  ← demo::cycle::ping (function) src/cycle.rs:3 | site src/cycle.rs:4 [cycle]",
        ]
    );
    s.stop().await;
}

#[tokio::test]
async fn directions_take_aliases_and_a_bad_one_is_named() {
    let (_ws, s) = started().await;
    let a = s
        .call_json(
            "trace_call_hierarchy",
            json!({"symbol": "count_up", "direction": "callees"}),
        )
        .await;
    assert_eq!(a["direction"], "outgoing");
    let mut tick = node(
        1,
        "demo::util::tick",
        "function",
        "src/util.rs:14",
        "src/util.rs:20",
    );
    tick["count"] = json!(12);
    assert_eq!(a["callees"], json!([tick]));
    let a = s
        .call_json(
            "trace_call_hierarchy",
            json!({"symbol": "tick", "direction": "Callers"}),
        )
        .await;
    assert_eq!(a["direction"], "incoming");
    assert_eq!(a["callers"][0]["qualified_name"], "demo::util::count_up");

    let (text, is_error) = s
        .call(
            "trace_call_hierarchy",
            json!({"symbol": "describe", "direction": "sideways"}),
        )
        .await;
    assert!(is_error);
    for accepted in ["incoming", "outgoing", "both", "callers", "callees"] {
        assert!(text.contains(accepted), "{text}");
    }
    let (text, is_error) = s
        .call(
            "trace_call_hierarchy",
            json!({"symbol": "describe", "depth": 6}),
        )
        .await;
    assert!(is_error && text.contains("from 1 to 5"), "{text}");

    // Same-named definitions: candidates with their usage counts, largest first.
    let a = s
        .call_json("trace_call_hierarchy", json!({"symbol": "new"}))
        .await;
    assert_eq!(a["ambiguous"], true);
    assert_eq!(
        a["candidates"],
        json!([
            {"qualified_name": "demo::shapes::Circle::new", "kind": "method", "at": "src/shapes.rs:15", "usages": 2},
            {"qualified_name": "demo::shapes::Square::new", "kind": "method", "at": "src/shapes.rs:31", "usages": 1},
        ])
    );
    let a = s
        .call_json("trace_call_hierarchy", json!({"symbol": "ZzzNoSuchThing"}))
        .await;
    assert!(
        a["notes"][0].as_str().unwrap().starts_with("unknown name"),
        "{a}"
    );
    s.stop().await;
}

#[tokio::test]
async fn blast_radius_by_symbol_and_by_file() {
    let (_ws, s) = started().await;
    // Shape ← implemented by Circle, Square ← constructed in their `new`s ← called by
    // unit_circle and both.
    let a = s
        .call_json("calculate_blast_radius", json!({"symbol": "Shape"}))
        .await;
    let names: Vec<(u64, &str)> = a["affected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["depth"].as_u64().unwrap(),
                n["qualified_name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            (1, "demo::shapes::Circle"),
            (1, "demo::shapes::Square"),
            (2, "demo::shapes::Circle::new"),
            (2, "demo::shapes::Square::new"),
            (3, "demo::unit_circle"),
            (3, "demo::shapes::both"),
        ]
    );
    assert_eq!(
        a["by_depth"],
        json!([
            {"depth": 1, "symbols": 2, "files": 1},
            {"depth": 2, "symbols": 2, "files": 1},
            {"depth": 3, "symbols": 2, "files": 2},
        ])
    );
    assert_eq!(
        a["files"],
        json!([{"file_path": "src/shapes.rs", "symbols": 5}, {"file_path": "src/lib.rs", "symbols": 1}])
    );
    assert_eq!(a["complete"], true);

    // A budget cut keeps the summary and says where the rest is.
    let cut = s
        .call_json(
            "calculate_blast_radius",
            json!({"symbol": "Shape", "max_tokens": 300}),
        )
        .await;
    let k = cut["returned"].as_u64().unwrap();
    assert!(k > 0 && k < 8, "{cut}");
    assert_eq!(cut["complete"], false);
    assert_eq!(cut["next_offset"], k);
    assert_eq!(cut["total_symbols"], 6);
    let rest = s
        .call_json(
            "calculate_blast_radius",
            json!({"symbol": "Shape", "offset": k, "no_truncate": true}),
        )
        .await;
    assert_eq!(rest["returned"].as_u64().unwrap(), 8 - k);
    assert_eq!(rest["complete"], true);

    // util.rs: only report (lib.rs) calls into it from outside.
    let a = s
        .call_json(
            "calculate_blast_radius",
            json!({"file_path": "src/util.rs"}),
        )
        .await;
    assert_eq!(a["symbols_in_file"], 5);
    assert_eq!(
        a["affected"],
        json!([{"depth": 1, "qualified_name": "demo::report", "kind": "function", "at": "src/lib.rs:17"}])
    );
    assert_eq!(
        a["files"],
        json!([{"file_path": "src/lib.rs", "symbols": 1}])
    );
    assert_eq!(a["complete"], true);

    // shapes.rs: `s.area()` could be any `area`, but every `area` is in shapes.rs.
    let a = s
        .call_json(
            "calculate_blast_radius",
            json!({"file_path": "src/shapes.rs"}),
        )
        .await;
    let names: Vec<&str> = a["affected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["qualified_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["demo::total_area", "demo::report", "demo::unit_circle"]
    );
    assert_eq!(a["complete"], true, "{a}");

    let (text, is_error) = s.call("calculate_blast_radius", json!({})).await;
    assert!(is_error, "{text}");
    assert!(
        text.contains("`symbol`") && text.contains("`file_path`"),
        "{text}"
    );
    s.stop().await;
}

#[tokio::test]
async fn inspect_symbol_answers_what_a_symbol_is() {
    let (_ws, s) = started().await;
    let a = s
        .call_json("inspect_symbol", json!({"symbol": "Circle::new"}))
        .await;
    assert_eq!(
        a,
        json!({
            "symbol": "Circle::new",
            "qualified_name": "demo::shapes::Circle::new",
            "kind": "method",
            "file_path": "src/shapes.rs",
            "start_line": 15,
            "end_line": 17,
            "signature": "pub fn new(radius: f64) -> Circle",
            "docstring": "Makes a circle.",
            "snippet": "    pub fn new(radius: f64) -> Circle {\n        Circle { radius }\n    }",
            "callers": ["demo::unit_circle — src/lib.rs:14", "demo::shapes::both — src/shapes.rs:43"],
            "caller_count": 2,
            "callees": ["demo::shapes::Circle — src/shapes.rs:9"],
            "callee_count": 1,
            "reference_count": 2,
            "invariants": [{"adr_number": 1, "title": "Shapes are immutable", "reason": a["invariants"][0]["reason"]}],
            "see_also": ["find_references(symbol: \"demo::shapes::Circle::new\") for the references"],
        })
    );
    assert!(
        a["invariants"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("covers src/shapes.rs"),
        "{a}"
    );

    let a = s
        .call_json(
            "inspect_symbol",
            json!({"symbols": ["Circle", "nope"], "include": ["members"]}),
        )
        .await;
    let circle = &a["results"][0];
    assert_eq!(
        circle["members"],
        json!([
            "10: pub radius: f64",
            "15: pub fn new(radius: f64) -> Circle",
            "21: fn area(&self) -> f64"
        ])
    );
    assert_eq!(circle["implements"], json!(["demo::shapes::Shape"]));
    assert!(circle.get("snippet").is_none());
    assert!(
        a["results"][1]["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("unknown name"),
        "{a}"
    );

    let a = s
        .call_json("inspect_symbol", json!({"symbol": "new"}))
        .await;
    assert_eq!(a["ambiguous"], true);
    assert_eq!(a["candidate_count"], 2);
    let (text, is_error) = s
        .call("inspect_symbol", json!({"symbol": "Circle\u{202e}"}))
        .await;
    assert!(is_error && text.contains("U+202E"), "{text}");
    s.stop().await;
}
