//! The navigation router's `resolve_definition`, `get_enclosing_scope` and
//! `get_type_contract` through the real binary, against the fixture workspace
//! (`tests/fixtures/workspace`, crate `demo`). Every line number below was read off the
//! fixture's files.

use serde_json::{Value, json};

use crate::support::{Scryer, fixture_workspace};

async fn indexed() -> (tempfile::TempDir, Scryer) {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;
    (ws, s)
}

#[tokio::test]
async fn the_three_tools_are_published_with_short_portable_definitions() {
    let s = Scryer::start(&[], &[]).await;
    let tools = s.client.list_all_tools().await.unwrap();
    for name in [
        "resolve_definition",
        "get_enclosing_scope",
        "get_type_contract",
    ] {
        let t = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("{name} is not listed"));
        let description = t.description.as_deref().unwrap_or("");
        assert!(
            !description.is_empty() && description.len() <= 450,
            "{name}: {} chars",
            description.len()
        );
        assert_eq!(
            t.annotations.as_ref().and_then(|a| a.read_only_hint),
            Some(true),
            "{name}"
        );
    }
    s.stop().await;
}

#[tokio::test]
async fn resolve_definition_points_at_the_definition() {
    let (ws, s) = indexed().await;
    let describe = json!({
        "qualified_name": "demo::util::describe", "kind": "function",
        "file_path": "src/util.rs", "start_line": 6, "end_line": 8,
        "signature": "pub fn describe(area: f64) -> String",
        "doc": "Formats an area for people.",
    });
    for written in [
        "describe",
        "util::describe",
        "crate::util::describe",
        "demo::util::describe",
    ] {
        let v = s
            .call_json("resolve_definition", json!({"symbol": written}))
            .await;
        assert_eq!(
            v,
            json!({"symbol": written, "precision": "heuristic", "definition": describe}),
            "{written}"
        );
    }

    // `Type::method` picks one of two same-named methods; an absolute file_path narrows.
    let v = s
        .call_json("resolve_definition", json!({"symbol": "Circle::new"}))
        .await;
    assert_eq!(
        v["definition"]["qualified_name"],
        "demo::shapes::Circle::new"
    );
    assert_eq!(v["definition"]["start_line"], 15);
    assert_eq!(v["definition"]["end_line"], 17);
    let abs = ws.path().join("src/shapes.rs");
    let v = s
        .call_json(
            "resolve_definition",
            json!({"symbol": "Shape", "file_path": abs.to_str().unwrap()}),
        )
        .await;
    assert_eq!(
        v["definition"],
        json!({"qualified_name": "demo::shapes::Shape", "kind": "trait", "file_path": "src/shapes.rs",
               "start_line": 4, "end_line": 6, "signature": "pub trait Shape", "doc": "Anything with an area."})
    );
    s.stop().await;
}

#[tokio::test]
async fn resolve_definition_lists_same_named_definitions_as_ambiguous() {
    let (_ws, s) = indexed().await;
    let v = s
        .call_json("resolve_definition", json!({"symbol": "new"}))
        .await;
    assert_eq!(v["ambiguous"], true, "{v}");
    assert_eq!(v["candidate_count"], 2);
    assert_eq!(
        v["definitions"],
        json!([
            {"qualified_name": "demo::shapes::Circle::new", "kind": "method", "file_path": "src/shapes.rs",
             "start_line": 15, "end_line": 17, "signature": "pub fn new(radius: f64) -> Circle", "doc": "Makes a circle."},
            {"qualified_name": "demo::shapes::Square::new", "kind": "method", "file_path": "src/shapes.rs",
             "start_line": 31, "end_line": 33, "signature": "pub fn new(side: f64) -> Self"},
        ])
    );
    // The trait's method first, then its implementations in source order.
    let v = s
        .call_json("resolve_definition", json!({"symbol": "area"}))
        .await;
    let lines: Vec<u64> = v["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["start_line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [5, 21, 37]);
    s.stop().await;
}

#[tokio::test]
async fn resolve_definition_explains_what_it_cannot_find() {
    let (_ws, s) = indexed().await;
    // Unknown anywhere; the .gitignore'd file's function is unknown too.
    for name in ["ZzzNoSuchThing", "describe_ignored"] {
        let v = s
            .call_json("resolve_definition", json!({"symbol": name}))
            .await;
        let notice = v["notice"].as_str().unwrap_or_default();
        assert!(notice.starts_with("unknown name"), "{v}");
        assert!(v.get("definition").is_none());
    }
    // A known name under a path that matches nothing: the real definitions are listed.
    let v = s
        .call_json("resolve_definition", json!({"symbol": "Triangle::area"}))
        .await;
    assert!(
        v["notice"]
            .as_str()
            .unwrap()
            .contains("no definition matches `Triangle::area`"),
        "{v}"
    );
    assert_eq!(v["candidates"].as_array().unwrap().len(), 3);
    // Defined, but not in the file asked about.
    let v = s
        .call_json(
            "resolve_definition",
            json!({"symbol": "describe", "file_path": "src/lib.rs"}),
        )
        .await;
    let notice = v["notice"].as_str().unwrap();
    assert!(
        notice.contains("none in src/lib.rs") && notice.contains("src/util.rs:6"),
        "{v}"
    );
    let (text, is_error) = s.call("resolve_definition", json!({"symbol": "a-b"})).await;
    assert!(is_error && text.contains("not an identifier"), "{text}");
    s.stop().await;
}

#[tokio::test]
async fn get_enclosing_scope_answers_with_the_scope_its_parents_and_its_source() {
    let (_ws, s) = indexed().await;
    let v = s
        .call_json(
            "get_enclosing_scope",
            json!({"file_path": "src/shapes.rs", "line": 22}),
        )
        .await;
    assert_eq!(
        v,
        json!({
            "file_path": "src/shapes.rs",
            "line": 22,
            "scope": {"qualified_name": "demo::shapes::Circle::area", "kind": "method",
                      "start_line": 21, "end_line": 23, "signature": "fn area(&self) -> f64"},
            "parents": [
                {"qualified_name": "demo::shapes", "kind": "module"},
                {"qualified_name": "demo::shapes::Circle", "kind": "struct", "start_line": 9, "end_line": 11},
            ],
            "snippet": "    fn area(&self) -> f64 {\n        crate::util::PI * self.radius * self.radius\n    }",
        })
    );

    // A field's line is inside its struct; the line number may come as a string.
    let v = s
        .call_json(
            "get_enclosing_scope",
            json!({"file_path": "src/shapes.rs", "line": "27"}),
        )
        .await;
    assert_eq!(v["scope"]["qualified_name"], "demo::shapes::Square");
    assert_eq!(v["snippet"], "pub struct Square {\n    pub side: f64,\n}");

    // A `use` line is file-level: the module, the definitions around it, the lines near it.
    let v = s
        .call_json(
            "get_enclosing_scope",
            json!({"file_path": "src/lib.rs", "line": 6}),
        )
        .await;
    assert_eq!(
        v["scope"],
        json!({"qualified_name": "demo", "kind": "module"})
    );
    assert_eq!(v["previous"]["qualified_name"], "demo::util");
    assert_eq!(v["next"]["qualified_name"], "demo::total_area");
    assert_eq!(v["snippet_start_line"], 3);
    assert!(
        v["snippet"]
            .as_str()
            .unwrap()
            .contains("use shapes::{Circle, Shape};")
    );
    assert!(
        v["notes"][0]
            .as_str()
            .unwrap()
            .contains("outside every definition"),
        "{v}"
    );
    s.stop().await;
}

#[tokio::test]
async fn get_enclosing_scope_cuts_a_long_body_to_the_budget() {
    let (_ws, s) = indexed().await;
    let all = s
        .call_json(
            "get_enclosing_scope",
            json!({"file_path": "src/util.rs", "line": 25, "no_truncate": true}),
        )
        .await;
    assert_eq!(
        all["scope"]["qualified_name"], "demo::util::count_up",
        "{all}"
    );
    assert_eq!(all["snippet"].as_str().unwrap().lines().count(), 16);
    assert!(all.get("snippet_truncated").is_none(), "{all}");

    // Every budget gets a whole JSON answer (never the host's last-resort cut), and a
    // cut snippet says exactly which lines remain. Small budgets drop the parents before
    // the source; large ones show everything.
    let (mut cut_with_parents, mut cut_lean, mut whole) = (false, false, false);
    for budget in (100..=240).step_by(10) {
        let v = s
            .call_json(
                "get_enclosing_scope",
                json!({"file_path": "src/util.rs", "line": 25, "max_tokens": budget}),
            )
            .await;
        assert_eq!(v["scope"]["qualified_name"], "demo::util::count_up", "{v}");
        let snippet = v["snippet"].as_str().unwrap_or_default();
        let shown = snippet.lines().count() as u64;
        if v["snippet_truncated"] == true {
            assert!(shown < 16, "{v}");
            assert_eq!(v["complete"], false);
            assert_eq!(
                v["snippet_remaining"],
                json!({"file_path": "src/util.rs", "start_line": 18 + shown, "end_line": 33}),
                "{v}"
            );
            if shown > 0 {
                assert!(snippet.starts_with("pub fn count_up() -> u32 {"), "{v}");
                if v.get("parents").is_some() {
                    cut_with_parents = true;
                } else {
                    cut_lean = true;
                }
            }
        } else {
            assert_eq!(v, all, "budget {budget}");
            whole = true;
        }
    }
    assert!(cut_with_parents && cut_lean && whole);
    s.stop().await;
}

#[tokio::test]
async fn get_enclosing_scope_refuses_lines_outside_the_file() {
    let (_ws, s) = indexed().await;
    for line in [json!(0), json!(-3), json!(45), json!(100000)] {
        let (text, is_error) = s
            .call(
                "get_enclosing_scope",
                json!({"file_path": "src/shapes.rs", "line": line}),
            )
            .await;
        assert!(
            is_error && text.contains("src/shapes.rs has 44 lines") && text.contains("1 to 44"),
            "line {line}: {text}"
        );
    }
    let (text, is_error) = s
        .call(
            "get_enclosing_scope",
            json!({"file_path": "src/nope.rs", "line": 3}),
        )
        .await;
    assert!(is_error && text.contains("src/nope.rs"), "{text}");
    s.stop().await;
}

#[tokio::test]
async fn get_type_contract_of_a_struct_and_of_a_trait() {
    let (_ws, s) = indexed().await;
    let v = s
        .call_json("get_type_contract", json!({"symbol": "Circle"}))
        .await;
    assert_eq!(
        v,
        json!({
            "symbol": "Circle",
            "type": {"qualified_name": "demo::shapes::Circle", "kind": "struct", "file_path": "src/shapes.rs",
                     "start_line": 9, "end_line": 11, "signature": "pub struct Circle", "doc": "A circle."},
            "fields": [{"name": "radius", "line": 10, "signature": "pub radius: f64"}],
            "methods": [
                {"name": "new", "line": 15, "signature": "pub fn new(radius: f64) -> Circle"},
                {"name": "area", "line": 21, "signature": "fn area(&self) -> f64", "trait": "Shape"},
            ],
            "implements": [{"trait": "Shape", "file_path": "src/shapes.rs", "line": 20}],
            "complete": true,
        })
    );

    let v = s
        .call_json("get_type_contract", json!({"symbol": "shapes::Shape"}))
        .await;
    assert_eq!(
        v,
        json!({
            "symbol": "shapes::Shape",
            "type": {"qualified_name": "demo::shapes::Shape", "kind": "trait", "file_path": "src/shapes.rs",
                     "start_line": 4, "end_line": 6, "signature": "pub trait Shape", "doc": "Anything with an area."},
            "required": [{"name": "area", "line": 5, "signature": "fn area(&self) -> f64"}],
            "implementors": [
                {"type": "demo::shapes::Circle", "file_path": "src/shapes.rs", "line": 20},
                {"type": "demo::shapes::Square", "file_path": "src/shapes.rs", "line": 36},
            ],
            "complete": true,
        })
    );
    s.stop().await;
}

#[tokio::test]
async fn get_type_contract_refuses_non_types_and_explains_unknown_names() {
    let (_ws, s) = indexed().await;
    let (text, is_error) = s
        .call("get_type_contract", json!({"symbol": "describe"}))
        .await;
    assert!(
        is_error
            && text.contains("is a function (src/util.rs:6), not a type")
            && text.contains("resolve_definition"),
        "{text}"
    );
    let (text, is_error) = s
        .call("get_type_contract", json!({"symbol": "radius"}))
        .await;
    assert!(
        is_error && text.contains("get_type_contract(symbol: \"Circle\")"),
        "{text}"
    );
    let v: Value = s
        .call_json("get_type_contract", json!({"symbol": "ZzzNoSuchType"}))
        .await;
    assert!(
        v["notes"][0].as_str().unwrap().starts_with("unknown name"),
        "{v}"
    );
    assert!(v.get("type").is_none());
    s.stop().await;
}

#[tokio::test]
async fn find_references_honours_view_inside_an_ambiguous_answer() {
    let (_ws, s) = indexed().await;
    let groups = |v: &Value| v["definitions"].as_array().cloned().unwrap_or_default();
    let sites = s
        .call_json("find_references", json!({"symbol": "new", "view": "sites"}))
        .await;
    assert_eq!(sites["ambiguous"], true, "{sites}");
    assert!(
        groups(&sites)
            .iter()
            .any(|g| g["total_sites"].as_u64() > Some(0)),
        "{sites}"
    );
    for view in ["files", "callers"] {
        let v = s
            .call_json("find_references", json!({"symbol": "new", "view": view}))
            .await;
        assert_eq!(v["ambiguous"], true, "{v}");
        assert_eq!(v["view"], view, "{v}");
        for (g, by_site) in groups(&v).iter().zip(groups(&sites)) {
            assert_eq!(g["definition"], by_site["definition"]);
            let items = g["items"].as_array().unwrap();
            let counted: u64 = items.iter().map(|i| i["count"].as_u64().unwrap()).sum();
            assert_eq!(counted, by_site["total_sites"].as_u64().unwrap(), "{g}");
            for i in items {
                match view {
                    "files" => {
                        assert!(i.get("line").is_none() && i["file_path"].is_string(), "{i}")
                    }
                    _ => assert!(
                        i["enclosing_symbol"].is_string() && i["line"].is_u64(),
                        "{i}"
                    ),
                }
            }
        }
    }
    // The text format shows each definition's rows in the view asked for.
    let (text, is_error) = s
        .call(
            "find_references",
            json!({"symbol": "new", "view": "files", "format": "text"}),
        )
        .await;
    assert!(
        !is_error && text.contains("AMBIGUOUS") && text.contains(" files)"),
        "{text}"
    );
    assert!(text.contains("src/lib.rs ("), "{text}");
}
