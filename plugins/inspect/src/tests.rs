//! `inspect_symbol` over an in-memory host: the demo fixture's shapes and helpers with
//! their source text, an ADR covering the shapes, and a dependency crate.

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::host::{Ctx, DepSym, Facts, Host, Sym};
use scryer_plugin_sdk::testing::{MemHost, edge, site};
use scryer_plugin_sdk::{ErrorKind, Router, ToolResult};
use serde_json::{Value, json};

use crate::Inspect;

const SHAPES: &str = "//! Shapes.

/// Anything with an area.
pub trait Shape {
    fn area(&self) -> f64;
}

/// A circle.
pub struct Circle {
    pub radius: f64,
}

impl Circle {
    /// Makes a circle.
    pub fn new(radius: f64) -> Circle {
        Circle { radius }
    }
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        crate::util::PI * self.radius * self.radius
    }
}
";

const LIB: &str = "//! Demo crate.

pub mod shapes;
pub mod util;

use shapes::{Circle, Shape};

/// Sums the areas of all shapes.
pub fn total_area(shapes: &[Box<dyn Shape>]) -> f64 {
    shapes.iter().map(|s| s.area()).sum()
}

pub fn unit_circle() -> Circle {
    Circle::new(1.0)
}

pub fn report() -> String {
    let c = unit_circle();
    util::describe(c.area())
}
";

fn def(q: &str, kind: &str, file: &str, lines: (u32, u32), sig: &str, doc: Option<&str>) -> Sym {
    let segs: Vec<&str> = q.split("::").collect();
    let owner = matches!(kind, "method" | "field").then(|| segs[segs.len() - 2].to_string());
    Sym {
        name: segs[segs.len() - 1].into(),
        kind: kind.into(),
        qualified_name: q.into(),
        owner,
        file_path: file.into(),
        start_line: lines.0,
        end_line: lines.1,
        signature: sig.into(),
        docstring: doc.map(Into::into),
    }
}

fn demo() -> MemHost {
    let (lib, shapes) = ("src/lib.rs", "src/shapes.rs");
    let mut defs = vec![
        def(
            "demo::total_area",
            "function",
            lib,
            (9, 11),
            "pub fn total_area(shapes: &[Box<dyn Shape>]) -> f64",
            Some("Sums the areas of all shapes."),
        ),
        def(
            "demo::unit_circle",
            "function",
            lib,
            (13, 15),
            "pub fn unit_circle() -> Circle",
            None,
        ),
        def(
            "demo::report",
            "function",
            lib,
            (17, 20),
            "pub fn report() -> String",
            None,
        ),
        def(
            "demo::shapes",
            "module",
            lib,
            (3, 3),
            "pub mod shapes",
            None,
        ),
        def(
            "demo::shapes::Shape",
            "trait",
            shapes,
            (4, 6),
            "pub trait Shape",
            Some("Anything with an area."),
        ),
        def(
            "demo::shapes::Shape::area",
            "method",
            shapes,
            (5, 5),
            "fn area(&self) -> f64",
            None,
        ),
        def(
            "demo::shapes::Circle",
            "struct",
            shapes,
            (9, 11),
            "pub struct Circle",
            Some("A circle."),
        ),
        def(
            "demo::shapes::Circle::radius",
            "field",
            shapes,
            (10, 10),
            "pub radius: f64",
            None,
        ),
        def(
            "demo::shapes::Circle::new",
            "method",
            shapes,
            (15, 17),
            "pub fn new(radius: f64) -> Circle",
            Some("Makes a circle."),
        ),
        def(
            "demo::shapes::Circle::area",
            "method",
            shapes,
            (21, 23),
            "fn area(&self) -> f64",
            None,
        ),
        def(
            "demo::shapes::Square",
            "struct",
            shapes,
            (26, 28),
            "pub struct Square",
            None,
        ),
        def(
            "demo::shapes::Square::new",
            "method",
            shapes,
            (30, 32),
            "pub fn new(side: f64) -> Self",
            None,
        ),
    ];
    defs.push(def(
        "demo::long",
        "function",
        lib,
        (30, 90),
        "pub fn long()",
        Some("One.\nTwo.\nThree.\nFour."),
    ));
    let edges = vec![
        edge("calls", "demo::unit_circle", "Circle::new", "call", lib, 14),
        edge("calls", "demo::report", "unit_circle", "call", lib, 18),
        edge("calls", "demo::report", "util::describe", "call", lib, 19),
        edge("calls", "demo::report", "area", "method_call", lib, 19),
        edge(
            "instantiates",
            "demo::shapes::Circle::new",
            "Circle",
            "type",
            shapes,
            16,
        ),
        edge(
            "implements",
            "demo::shapes::Circle",
            "Shape",
            "type",
            shapes,
            20,
        ),
        edge(
            "implements",
            "demo::shapes::Circle",
            "Debug",
            "type",
            shapes,
            8,
        ),
    ];
    let sites = vec![
        site("Circle", "use", Some("shapes"), "demo", lib, 6),
        site("Shape", "use", Some("shapes"), "demo", lib, 6),
        site("Circle", "type", None, "demo::unit_circle", lib, 13),
        site(
            "area",
            "implements",
            Some("Shape"),
            "demo::shapes::Circle::area",
            shapes,
            21,
        ),
    ];
    let adr = "---\nnumber: 1\ntitle: Shapes are immutable\nstatus: accepted\naffected_paths:\n  - src/shapes.rs\n---\n\n# Shapes are immutable\n\n## Decision\n\nNo setters on shapes.\n";
    let other = "---\nnumber: 2\ntitle: Reports are plain text\nstatus: accepted\naffected_paths:\n  - src/report/**\n---\n\n## Decision\n\nNo colours in reports.\n";
    MemHost {
        symbols: defs,
        edges,
        edges_are_sites: true,
        sites,
        facts: Some(Facts {
            files: 3,
            ..Facts::default()
        }),
        modified_ms: 1,
        deps: vec![DepSym {
            crate_name: "tokio".into(),
            crate_version: "1.40.0".into(),
            symbol: def(
                "tokio::sync::mutex::Mutex",
                "struct",
                "/home/u/.cargo/registry/src/tokio-1.40.0/src/sync/mutex.rs",
                (130, 140),
                "pub struct Mutex<T: ?Sized>",
                Some("An asynchronous Mutex-like type."),
            ),
        }],
        ..MemHost::default()
    }
    .with_file(shapes, SHAPES)
    .with_file(lib, LIB.to_string() + &"    let x = 1;\n".repeat(80))
    .with_file("docs/adr/0001-shapes.md", adr)
    .with_file("docs/adr/0002-report.md", other)
}

fn ctx(budget: Option<u32>) -> Ctx {
    Ctx {
        budget,
        project: Some("demo".into()),
        project_root: Some("/ws/demo".into()),
        ..Ctx::default()
    }
}

fn call(host: &MemHost, args: Value, ctx: &Ctx) -> ToolResult<String> {
    Inspect::call(
        host,
        "inspect_symbol",
        &Args::from_value(args).unwrap(),
        ctx,
    )
}

fn answer(host: &MemHost, args: Value) -> Value {
    serde_json::from_str(&call(host, args, &ctx(Some(1000))).unwrap()).unwrap()
}

#[test]
fn a_function_comes_with_its_source_neighbours_references_and_decisions() {
    let host = demo();
    let a = answer(&host, json!({"symbol": "Circle::new"}));
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
            "callers": ["demo::unit_circle — src/lib.rs:14"],
            "caller_count": 1,
            "callees": ["demo::shapes::Circle — src/shapes.rs:9"],
            "callee_count": 1,
            "reference_count": 1,
            "invariants": [{"adr_number": 1, "title": "Shapes are immutable", "reason": a["invariants"][0]["reason"]}],
            "see_also": ["find_references(symbol: \"demo::shapes::Circle::new\") for the references"],
        })
    );
    let reason = a["invariants"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("covers src/shapes.rs"), "{reason}");

    // `report`'s `c.area()` on a receiver of unknown type is the trait's operation.
    let a = answer(&host, json!({"symbol": "report", "include": ["callees"]}));
    assert_eq!(
        a["callees"],
        json!([
            "demo::unit_circle — src/lib.rs:13",
            "demo::shapes::Shape::area — src/shapes.rs:5 (unresolved)",
        ])
    );
    // The call to `util::describe` has no definition here: outside the project.
    assert_eq!(a["callee_count"], 2);
    assert!(a.get("snippet").is_none() && a.get("reference_count").is_none());
}

#[test]
fn a_type_lists_members_and_traits_instead_of_callers() {
    let host = demo();
    let a = answer(&host, json!({"symbol": "Circle"}));
    assert_eq!(
        a["members"],
        json!([
            "10: pub radius: f64",
            "15: pub fn new(radius: f64) -> Circle",
            "21: fn area(&self) -> f64"
        ])
    );
    assert_eq!(a["member_count"], 3);
    assert_eq!(a["implements"], json!(["demo::shapes::Shape", "Debug"]));
    assert!(a.get("callers").is_none() && a.get("callees").is_none());
    let a = answer(&host, json!({"symbol": "Shape", "include": "members"}));
    assert_eq!(
        a["implemented_by"],
        json!(["demo::shapes::Circle — src/shapes.rs:20"])
    );
    assert_eq!(a["implementor_count"], 1);
}

#[test]
fn long_bodies_and_docs_are_cut_with_a_pointer_to_the_rest() {
    let host = demo();
    let a = answer(&host, json!({"symbol": "long"}));
    assert_eq!(a["docstring"], "One.\nTwo.\nThree.");
    assert_eq!(a["docstring_truncated"], true);
    assert_eq!(a["snippet"].as_str().unwrap().lines().count(), 25);
    assert_eq!(a["snippet_truncated"], true);
    assert_eq!(
        a["snippet_remaining"],
        json!({"file_path": "src/lib.rs", "start_line": 55, "end_line": 90})
    );
    assert!(
        a["see_also"]
            .as_array()
            .unwrap()
            .contains(&json!("rest of body: lines 55-90 in src/lib.rs"))
    );

    let a = answer(&host, json!({"symbol": "long", "snippet_lines": 3}));
    assert_eq!(a["snippet"].as_str().unwrap().lines().count(), 3);
    assert_eq!(a["snippet_remaining"]["start_line"], 33);
    // Lines over 200 characters are cut.
    let mut host = demo();
    host.add_file(
        "src/lib.rs",
        LIB.to_string() + &"\n".repeat(9) + &"x".repeat(300) + "\n",
    );
    let a = answer(&host, json!({"symbol": "long", "include": "snippet"}));
    let first = a["snippet"]
        .as_str()
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(first.chars().count(), 201);
    assert!(first.ends_with('…'));
}

#[test]
fn the_default_snippet_stops_at_1200_characters_unless_the_caller_sets_a_size() {
    let mut host = demo();
    host.add_file(
        "src/lib.rs",
        LIB.to_string() + &format!("{}\n", "y".repeat(150)).repeat(40),
    );
    let a = answer(&host, json!({"symbol": "long", "include": "snippet"}));
    let snippet = a["snippet"].as_str().unwrap();
    assert!(snippet.chars().count() <= 1200, "{}", snippet.len());
    assert_eq!(snippet.lines().count(), 7);
    assert_eq!(a["snippet_remaining"]["start_line"], 37);
    // An explicit budget or snippet_lines lifts the character cap.
    let mut c = ctx(Some(4000));
    c.budget_explicit = true;
    let a: Value = serde_json::from_str(
        &call(&host, json!({"symbol": "long", "include": "snippet"}), &c).unwrap(),
    )
    .unwrap();
    assert_eq!(a["snippet"].as_str().unwrap().lines().count(), 25);
}

#[test]
fn over_budget_the_snippet_shrinks_first_and_later_sections_stay() {
    let host = demo();
    let body = call(
        &host,
        json!({"symbol": "long", "snippet_lines": 60}),
        &ctx(Some(250)),
    )
    .unwrap();
    assert!(
        host.count_tokens(&body) <= 250,
        "{}",
        host.count_tokens(&body)
    );
    let a: Value = serde_json::from_str(&body).unwrap();
    let shown = a["snippet"].as_str().map_or(0, |s| s.lines().count());
    assert!(shown < 60, "{shown}");
    assert_eq!(a["snippet_remaining"]["start_line"], 30 + shown as u64);
    assert!(
        a["notes"]
            .as_array()
            .unwrap()
            .contains(&json!("snippet shortened to fit the token budget"))
    );
    assert!(a.get("reference_count").is_some(), "{a}");
    assert_eq!(a["qualified_name"], "demo::long");
}

#[test]
fn several_names_at_once_each_within_its_share() {
    let host = demo();
    let body = call(
        &host,
        json!({"symbols": "report, Circle, nope"}),
        &ctx(Some(1000)),
    )
    .unwrap();
    let a: Value = serde_json::from_str(&body).unwrap();
    let results = a["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["qualified_name"], "demo::report");
    assert_eq!(results[1]["qualified_name"], "demo::shapes::Circle");
    assert!(
        results[2]["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("unknown name")
    );
    for r in results {
        assert!(host.count_tokens(&r.to_string()) <= 500);
    }
    let a = answer(&host, json!({"symbols": ["report"]}));
    assert_eq!(a["results"][0]["qualified_name"], "demo::report");
}

#[test]
fn same_named_definitions_are_listed_never_merged() {
    let host = demo();
    let a = answer(&host, json!({"symbol": "new"}));
    assert_eq!(a["ambiguous"], true);
    assert_eq!(a["candidate_count"], 2);
    assert_eq!(
        a["candidates"],
        json!([
            {"qualified_name": "demo::shapes::Circle::new", "kind": "method", "location": "src/shapes.rs:15"},
            {"qualified_name": "demo::shapes::Square::new", "kind": "method", "location": "src/shapes.rs:30"},
        ])
    );
    assert!(a.get("snippet").is_none() && a.get("callers").is_none());
    // The module `shapes` never shadows an item; a file narrows.
    let a = answer(
        &host,
        json!({"symbol": "new", "file_path": "/ws/demo/src/shapes.rs"}),
    );
    assert_eq!(a["ambiguous"], true);
    let a = answer(&host, json!({"symbol": "shapes"}));
    assert_eq!(a["kind"], "module");
}

#[test]
fn names_outside_the_project_come_from_its_dependencies() {
    let host = demo();
    let a = answer(&host, json!({"symbol": "tokio::sync::Mutex"}));
    assert_eq!(a["qualified_name"], "tokio::sync::mutex::Mutex");
    assert_eq!(a["crate"], "tokio 1.40.0");
    assert_eq!(a["docstring"], "An asynchronous Mutex-like type.");
    assert!(
        a["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("snippet unavailable"),
        "{a}"
    );

    let mut host = demo();
    host.missing.insert("dependencies");
    let a = answer(&host, json!({"symbol": "Mutex"}));
    let notes = a["notes"].as_array().unwrap();
    assert!(
        notes[0].as_str().unwrap().starts_with("unknown name"),
        "{a}"
    );
    assert!(
        notes[1]
            .as_str()
            .unwrap()
            .contains("dependency index could not be searched"),
        "{a}"
    );

    let a = answer(&host, json!({"symbol": "Triangle::new"}));
    assert!(
        a["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("no definition matches `Triangle::new`"),
        "{a}"
    );
    assert_eq!(a["candidates"].as_array().unwrap().len(), 2);
}

#[test]
fn bad_input_is_refused_with_what_is_accepted() {
    let host = demo();
    let err = |args: Value| call(&host, args, &ctx(Some(1000))).unwrap_err();
    for bad in [
        "a\u{0}b",
        "\u{feff}Circle",
        "Circle\u{202e}",
        &"😀".repeat(4000),
    ] {
        let e = err(json!({"symbol": bad}));
        assert_eq!(e.kind, ErrorKind::InvalidArgument, "{bad:?}");
    }
    let e = err(json!({}));
    assert!(e.message.contains("`symbol` is required"), "{}", e.message);
    let e = err(json!({"symbol": "a", "symbols": ["b"]}));
    assert!(e.message.contains("not both"), "{}", e.message);
    let e = err(json!({"symbol": "Circle", "include": ["snippet", "everything"]}));
    assert!(
        e.message
            .contains("snippet, callers, callees, references, invariants, members"),
        "{}",
        e.message
    );
    let e = err(json!({"symbol": "Circle", "snippet_lines": 0}));
    assert!(e.message.contains("snippet_lines"), "{}", e.message);
    let many: Vec<String> = (0..21).map(|i| format!("n{i}")).collect();
    let e = err(json!({"symbols": many}));
    assert!(e.message.contains("at most 20"), "{}", e.message);
}

#[test]
fn the_tool_definition_is_small_and_portable() {
    let problems = scryer_plugin_sdk::host::definition_problems(&Inspect::tools(), 1000);
    assert!(problems.is_empty(), "{problems:#?}");
}
