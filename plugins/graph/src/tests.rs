//! Both tools over an in-memory host modelling a small crate `k`: the demo fixture's
//! shapes and helpers, plus a two-function cycle, a diamond and a wide fan-out.

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::host::{Ctx, Format, Host, Sym};
use scryer_plugin_sdk::testing::{MemHost, edge, site};
use scryer_plugin_sdk::{ErrorKind, Router, ToolResult};
use serde_json::{Value, json};

use crate::Graph;

fn def(q: &str, kind: &str, file: &str, lines: (u32, u32)) -> Sym {
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
        ..Sym::default()
    }
}

fn demo() -> MemHost {
    let (lib, util, shapes) = ("src/lib.rs", "src/util.rs", "src/shapes.rs");
    let mut defs = vec![
        def("k::total_area", "function", lib, (9, 11)),
        def("k::unit_circle", "function", lib, (13, 15)),
        def("k::report", "function", lib, (17, 20)),
        def("k::util::describe", "function", util, (6, 8)),
        def("k::util::twice", "function", util, (10, 12)),
        def("k::util::ping", "function", util, (14, 16)),
        def("k::util::pong", "function", util, (17, 19)),
        def("k::util::top", "function", util, (20, 23)),
        def("k::util::left", "function", util, (24, 26)),
        def("k::util::right", "function", util, (27, 29)),
        def("k::util::bottom", "function", util, (30, 31)),
        def("k::util::fan", "function", util, (40, 80)),
        def("k::util::PI", "const", util, (3, 3)),
        def("k::shapes::Shape", "trait", shapes, (4, 6)),
        def("k::shapes::Shape::area", "method", shapes, (5, 5)),
        def("k::shapes::Circle", "struct", shapes, (9, 11)),
        def("k::shapes::Circle::new", "method", shapes, (15, 17)),
        def("k::shapes::Circle::area", "method", shapes, (21, 23)),
        def("k::shapes::Square", "struct", shapes, (26, 28)),
        def("k::shapes::Square::new", "method", shapes, (31, 33)),
        def("k::shapes::Square::area", "method", shapes, (37, 39)),
        def("k::shapes::both", "function", shapes, (42, 44)),
    ];
    let mut edges = vec![
        edge("calls", "k::total_area", "iter", "method_call", lib, 10),
        edge("calls", "k::total_area", "map", "method_call", lib, 10),
        edge("calls", "k::total_area", "area", "method_call", lib, 10),
        edge("calls", "k::total_area", "sum", "method_call", lib, 10),
        edge("calls", "k::unit_circle", "Circle::new", "call", lib, 14),
        edge("calls", "k::report", "unit_circle", "call", lib, 18),
        edge("calls", "k::report", "util::describe", "call", lib, 19),
        edge("calls", "k::report", "area", "method_call", lib, 19),
        edge("calls", "k::util::twice", "describe", "call", util, 11),
        edge("calls", "k::util::ping", "pong", "call", util, 15),
        edge("calls", "k::util::pong", "ping", "call", util, 18),
        edge("calls", "k::util::top", "left", "call", util, 21),
        edge("calls", "k::util::top", "right", "call", util, 22),
        edge("calls", "k::util::left", "bottom", "call", util, 25),
        edge("calls", "k::util::right", "bottom", "call", util, 28),
        edge(
            "instantiates",
            "k::shapes::Circle::new",
            "Circle",
            "type",
            shapes,
            16,
        ),
        edge(
            "instantiates",
            "k::shapes::Square::new",
            "Square",
            "type",
            shapes,
            32,
        ),
        edge(
            "implements",
            "k::shapes::Circle",
            "Shape",
            "type",
            shapes,
            20,
        ),
        edge(
            "implements",
            "k::shapes::Square",
            "Shape",
            "type",
            shapes,
            36,
        ),
        edge(
            "calls",
            "k::shapes::both",
            "Circle::new",
            "call",
            shapes,
            43,
        ),
        edge(
            "calls",
            "k::shapes::both",
            "Square::new",
            "call",
            shapes,
            43,
        ),
    ];
    // A wide fan-out for budget cuts: fan calls f0..f29.
    for i in 0..30 {
        defs.push(def(
            &format!("k::util::f{i}"),
            "function",
            util,
            (100 + i, 100 + i),
        ));
        edges.push(edge(
            "calls",
            "k::util::fan",
            &format!("f{i}"),
            "call",
            util,
            41 + i,
        ));
    }
    let sites = vec![
        site("Circle", "use", Some("shapes"), "k", lib, 6),
        site("Shape", "use", Some("shapes"), "k", lib, 6),
        site("Circle", "type", None, "k::unit_circle", lib, 13),
        site(
            "area",
            "implements",
            Some("Shape"),
            "k::shapes::Circle::area",
            shapes,
            21,
        ),
        site(
            "area",
            "implements",
            Some("Shape"),
            "k::shapes::Square::area",
            shapes,
            37,
        ),
    ];
    MemHost {
        symbols: defs,
        edges,
        edges_are_sites: true,
        sites,
        ..MemHost::default()
    }
}

fn ctx(budget: Option<u32>) -> Ctx {
    Ctx {
        budget,
        project: Some("demo".into()),
        project_root: Some("/ws/demo".into()),
        ..Ctx::default()
    }
}

fn call(host: &MemHost, tool: &str, args: Value, ctx: &Ctx) -> ToolResult<String> {
    Graph::call(host, tool, &Args::from_value(args).unwrap(), ctx)
}

fn answer(host: &MemHost, tool: &str, args: Value) -> Value {
    let body = call(host, tool, args, &ctx(None)).unwrap();
    serde_json::from_str(&body).unwrap()
}

fn names(list: &Value) -> Vec<(u64, String)> {
    list.as_array()
        .map(|a| {
            a.iter()
                .map(|n| {
                    (
                        n["depth"].as_u64().unwrap(),
                        n["qualified_name"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn pairs(v: &[(u64, &str)]) -> Vec<(u64, String)> {
    v.iter().map(|(d, n)| (*d, n.to_string())).collect()
}

#[test]
fn callers_are_exact_with_their_call_sites() {
    let host = demo();
    let a = answer(&host, "trace_call_hierarchy", json!({"symbol": "describe"}));
    assert_eq!(
        a["callers"],
        json!([
            {"depth": 1, "qualified_name": "k::report", "kind": "function", "at": "src/lib.rs:17", "site": "src/lib.rs:19"},
            {"depth": 1, "qualified_name": "k::util::twice", "kind": "function", "at": "src/util.rs:10", "site": "src/util.rs:11"},
        ])
    );
    assert_eq!(a["definition"]["qualified_name"], "k::util::describe");
    assert_eq!(a["total_callers"], 2);
    assert_eq!(a["complete"], true, "{a}");
    assert!(a.get("callees").is_none() && a.get("total_callees").is_none());

    // Two hops: unit_circle's caller is report.
    let a = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "Circle::new"}),
    );
    assert_eq!(
        names(&a["callers"]),
        pairs(&[
            (1, "k::unit_circle"),
            (2, "k::report"),
            (1, "k::shapes::both")
        ])
    );
}

#[test]
fn callees_say_what_is_unresolved_and_what_lies_outside() {
    let host = demo();
    let a = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "report", "direction": "callees"}),
    );
    assert_eq!(a["direction"], "outgoing");
    assert_eq!(
        names(&a["callees"]),
        pairs(&[
            (1, "k::unit_circle"),
            (2, "k::shapes::Circle::new"),
            (1, "k::util::describe"),
            (1, "k::shapes::Shape::area"),
        ])
    );
    // `c.area()` on a receiver of unknown type: the trait's item, flagged.
    assert_eq!(a["callees"][3]["unresolved"], true);
    assert_eq!(a["unresolved"], 1);
    assert_eq!(a["complete"], false);
    let caveat = a["notes"][0].as_str().unwrap();
    assert!(
        caveat.starts_with("CAVEAT") && caveat.contains("1 call site(s) unresolved"),
        "{caveat}"
    );

    let a = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "total_area", "direction": "outgoing"}),
    );
    assert_eq!(a["external"], json!(["iter", "map", "sum"]));
    assert_eq!(a["external_calls"], 3);
}

#[test]
fn cycles_are_cut_and_marked_and_shared_subtrees_walked_once() {
    let host = demo();
    let a = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "ping", "direction": "both", "depth": 5}),
    );
    assert_eq!(
        a["callers"],
        json!([
            {"depth": 1, "qualified_name": "k::util::pong", "kind": "function", "at": "src/util.rs:17", "site": "src/util.rs:18"},
            {"depth": 2, "qualified_name": "k::util::ping", "kind": "function", "at": "src/util.rs:14", "site": "src/util.rs:15", "cycle": true},
        ])
    );
    assert_eq!(
        names(&a["callees"]),
        pairs(&[(1, "k::util::pong"), (2, "k::util::ping")])
    );
    assert_eq!(a["callees"][1]["cycle"], true);
    assert_eq!(a["complete"], true);

    let a = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "top", "direction": "outgoing", "depth": 3}),
    );
    assert_eq!(
        names(&a["callees"]),
        pairs(&[
            (1, "k::util::left"),
            (2, "k::util::bottom"),
            (1, "k::util::right"),
            (2, "k::util::bottom")
        ])
    );
    assert!(a["callees"][1].get("repeated").is_none());
    assert_eq!(a["callees"][3]["repeated"], true);
    assert!(a["callees"][3].get("cycle").is_none());
}

#[test]
fn directions_take_aliases_and_a_bad_one_names_every_accepted_value() {
    let host = demo();
    let a = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "describe", "direction": "CALLERS"}),
    );
    assert_eq!(a["direction"], "incoming");
    let e = call(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "describe", "direction": "sideways"}),
        &ctx(None),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    for v in [
        "incoming",
        "outgoing",
        "both",
        "callers",
        "callees",
        "\"sideways\"",
    ] {
        assert!(e.message.contains(v), "{}", e.message);
    }
    for depth in [json!(6), json!(0), json!("deep")] {
        let e = call(
            &host,
            "trace_call_hierarchy",
            json!({"symbol": "describe", "depth": depth}),
            &ctx(None),
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgument);
        assert!(e.message.contains("from 1 to 5"), "{}", e.message);
    }
    let e = call(&host, "trace_call_hierarchy", json!({}), &ctx(None)).unwrap_err();
    assert!(e.message.contains("`symbol` is required"), "{}", e.message);
    let e = call(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "a\u{0}b"}),
        &ctx(None),
    )
    .unwrap_err();
    assert!(e.message.contains("U+0000"), "{}", e.message);
}

#[test]
fn same_named_definitions_are_candidates_ranked_by_usage_never_merged() {
    let host = demo();
    let a = answer(&host, "trace_call_hierarchy", json!({"symbol": "new"}));
    assert_eq!(a["ambiguous"], true);
    assert_eq!(a["candidate_count"], 2);
    assert_eq!(
        a["candidates"],
        json!([
            {"qualified_name": "k::shapes::Circle::new", "kind": "method", "at": "src/shapes.rs:15", "usages": 2},
            {"qualified_name": "k::shapes::Square::new", "kind": "method", "at": "src/shapes.rs:31", "usages": 1},
        ])
    );
    assert_eq!(a["complete"], false);
    assert!(a.get("callers").is_none());
    // A file narrows the choice; a qualified name picks one.
    let a = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "area", "file_path": "/ws/demo/src/shapes.rs"}),
    );
    assert_eq!(a["ambiguous"], true, "all three areas are in shapes.rs");
    let a = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "k::shapes::Square::new"}),
    );
    assert_eq!(names(&a["callers"]), pairs(&[(1, "k::shapes::both")]));
}

#[test]
fn empty_answers_say_why() {
    let host = demo();
    let a = answer(&host, "trace_call_hierarchy", json!({"symbol": "nope"}));
    assert!(
        a["notes"][0].as_str().unwrap().starts_with("unknown name"),
        "{a}"
    );
    assert_eq!(a["complete"], false);
    let a = answer(&host, "trace_call_hierarchy", json!({"symbol": "iter"}));
    assert!(
        a["notes"][0]
            .as_str()
            .unwrap()
            .contains("no definition in demo"),
        "{a}"
    );
    let a = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "describe", "file_path": "src/lib.rs"}),
    );
    assert!(
        a["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("no definition matches `describe` in src/lib.rs"),
        "{a}"
    );
    assert_eq!(a["candidates"][0]["qualified_name"], "k::util::describe");
    // Known, but nobody calls it: said so, and complete.
    let a = answer(&host, "trace_call_hierarchy", json!({"symbol": "report"}));
    assert_eq!(a["total_callers"], 0);
    assert_eq!(
        a["notes"][0],
        "`k::report` has no callers in the 3 indexed files"
    );
    assert_eq!(a["complete"], true);
    let a = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "describe", "direction": "outgoing"}),
    );
    assert_eq!(a["notes"][0], "`k::util::describe` calls nothing");
}

#[test]
fn a_budget_cut_pages_and_the_next_page_continues() {
    let host = demo();
    let all = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "fan", "direction": "outgoing"}),
    );
    assert_eq!(all["returned"], 30);
    let body = call(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "fan", "direction": "outgoing"}),
        &ctx(Some(300)),
    )
    .unwrap();
    assert!(host.count_tokens(&body) <= 300);
    let cut: Value = serde_json::from_str(&body).unwrap();
    let k = cut["returned"].as_u64().unwrap();
    assert!(k > 0 && k < 30, "{cut}");
    assert_eq!(cut["complete"], false);
    assert_eq!(cut["next_offset"], k);
    assert!(
        cut["see_also"]
            .as_str()
            .unwrap()
            .contains(&format!("offset: {k}"))
    );
    let rest = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "fan", "direction": "outgoing", "offset": k}),
    );
    assert_eq!(rest["returned"].as_u64().unwrap(), 30 - k);
    assert_eq!(rest["callees"][0], all["callees"][k as usize]);
    assert_eq!(rest["complete"], true);
    let past = answer(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "fan", "direction": "outgoing", "offset": 99}),
    );
    assert_eq!(past["returned"], 0);
    assert!(
        past["notes"][0]
            .as_str()
            .unwrap()
            .contains("past the last of the 30 nodes"),
        "{past}"
    );
}

#[test]
fn text_is_a_header_and_an_indented_line_per_node() {
    let host = demo();
    let mut c = ctx(None);
    c.format = Format::Text;
    let t = call(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "Circle::new"}),
        &c,
    )
    .unwrap();
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(
        lines,
        [
            "trace_call_hierarchy Circle::new: 3 callers (incoming, depth 2) | 1-3 of 3 nodes | complete | index: 3 files, 0 parse failures",
            "definition: method k::shapes::Circle::new src/shapes.rs:15",
            "← k::unit_circle (function) src/lib.rs:13 | site src/lib.rs:14",
            "  ← k::report (function) src/lib.rs:17 | site src/lib.rs:18",
            "← k::shapes::both (function) src/shapes.rs:42 | site src/shapes.rs:43",
        ]
    );
    let mut small = c.clone();
    small.budget = Some(60);
    let t = call(
        &host,
        "trace_call_hierarchy",
        json!({"symbol": "fan", "direction": "outgoing"}),
        &small,
    )
    .unwrap();
    assert!(
        t.lines()
            .next()
            .unwrap()
            .contains("TRUNCATED: call again with offset="),
        "{t}"
    );
}

#[test]
fn parse_errors_make_an_answer_partial() {
    let mut host = demo();
    host.parse_errors.push("src/util.rs".into());
    let a = answer(&host, "trace_call_hierarchy", json!({"symbol": "describe"}));
    assert_eq!(a["complete"], false);
    assert!(
        a["notes"][0]
            .as_str()
            .unwrap()
            .contains("parse errors in src/util.rs"),
        "{a}"
    );
}

#[test]
fn blast_radius_of_a_trait_grows_by_hop() {
    let host = demo();
    let a = answer(&host, "calculate_blast_radius", json!({"symbol": "Shape"}));
    assert_eq!(
        names(&a["affected"]),
        pairs(&[
            (1, "k::shapes::Circle"),
            (1, "k::shapes::Square"),
            (2, "k::shapes::Circle::new"),
            (2, "k::shapes::Square::new"),
            (3, "k::unit_circle"),
            (3, "k::shapes::both"),
        ])
    );
    assert_eq!(a["affected"][0]["via"], "implements");
    assert_eq!(a["affected"][2]["via"], "instantiates");
    assert!(a["affected"][4].get("via").is_none());
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
    assert_eq!(
        (a["total_symbols"].as_u64(), a["total_files"].as_u64()),
        (Some(6), Some(2))
    );
    assert_eq!(a["complete"], true);
    assert!(a["notes"][0].as_str().unwrap().contains("as a type"), "{a}");

    let a = answer(
        &host,
        "calculate_blast_radius",
        json!({"symbol": "Shape", "depth": 1}),
    );
    assert_eq!(a["total_symbols"], 2);
    let e = call(
        &host,
        "calculate_blast_radius",
        json!({"symbol": "Shape", "depth": 4}),
        &ctx(None),
    )
    .unwrap_err();
    assert!(e.message.contains("from 1 to 3"), "{}", e.message);
}

#[test]
fn blast_radius_of_a_file_counts_only_what_lies_outside_it() {
    let host = demo();
    let a = answer(
        &host,
        "calculate_blast_radius",
        json!({"file_path": "/ws/demo/src/util.rs"}),
    );
    assert_eq!(a["file_path"], "src/util.rs");
    assert_eq!(a["symbols_in_file"], 40);
    assert_eq!(names(&a["affected"]), pairs(&[(1, "k::report")]));
    assert_eq!(
        a["files"],
        json!([{"file_path": "src/lib.rs", "symbols": 1}])
    );
    assert_eq!(a["complete"], true);

    // `s.area()` could be any of the three `area`s, but all three are in shapes.rs:
    // the file is certainly reached, and Square's uses are not "left out".
    let a = answer(
        &host,
        "calculate_blast_radius",
        json!({"file_path": "src/shapes.rs"}),
    );
    assert_eq!(
        names(&a["affected"]),
        pairs(&[
            (1, "k::total_area"),
            (1, "k::report"),
            (1, "k::unit_circle")
        ])
    );
    assert!(a.get("unresolved").is_none(), "{a}");
    assert!(a.get("notes").is_none(), "{a}");
    assert_eq!(a["complete"], true);

    let a = answer(
        &host,
        "calculate_blast_radius",
        json!({"file_path": "src/lib.rs"}),
    );
    assert_eq!(a["total_symbols"], 0);
    assert_eq!(
        a["notes"][0],
        "nothing outside the file calls, implements, constructs or re-exports the 3 symbols of src/lib.rs in the 3 indexed files"
    );

    let e = call(
        &host,
        "calculate_blast_radius",
        json!({"file_path": "src/none.rs"}),
        &ctx(None),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert!(e.message.contains("src/none.rs"), "{}", e.message);
}

#[test]
fn blast_radius_needs_a_symbol_or_a_file_and_pages_under_a_budget() {
    let host = demo();
    let e = call(&host, "calculate_blast_radius", json!({}), &ctx(None)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    assert!(
        e.message.contains("`symbol`") && e.message.contains("`file_path`"),
        "{}",
        e.message
    );
    let a = answer(&host, "calculate_blast_radius", json!({"symbol": "new"}));
    assert_eq!(a["ambiguous"], true);

    let body = call(
        &host,
        "calculate_blast_radius",
        json!({"symbol": "Shape"}),
        &ctx(Some(230)),
    )
    .unwrap();
    assert!(host.count_tokens(&body) <= 230, "{body}");
    let cut: Value = serde_json::from_str(&body).unwrap();
    let k = cut["returned"].as_u64().unwrap();
    assert!(k > 0 && k < 8, "{cut}");
    assert_eq!(cut["complete"], false);
    assert_eq!(cut["next_offset"], k);
    // The summary survives the cut.
    assert_eq!(cut["total_symbols"], 6);
}

#[test]
fn tool_definitions_stay_small_and_portable() {
    let problems = scryer_plugin_sdk::host::definition_problems(&Graph::tools(), 1000);
    assert!(problems.is_empty(), "{problems:#?}");
}
