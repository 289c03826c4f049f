//! The whole path, for real: the `scryer` binary over stdio, rmcp's client, a turso
//! database file, the embedded router components, and a small fixture workspace.

use serde_json::{Value, json};

use crate::support;
use crate::support::daemon::DaemonEnv;
use crate::support::{Scryer, fixture_workspace};

#[tokio::test]
async fn tools_list_is_the_union_of_the_routers_with_annotations() {
    let s = Scryer::start(&[], &[]).await;
    let info = s.client.peer_info().expect("initialize result");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(
        !instructions.is_empty() && instructions.len() <= 1800,
        "{instructions}"
    );
    let tools = s.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "find_references",
        "get_file_outline",
        "get_indexing_status",
        "index_workspace",
        "list_projects",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for t in &tools {
        assert!(
            instructions.contains(t.name.as_ref()),
            "instructions do not reach {}",
            t.name
        );
        let a = t
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no annotations", t.name));
        let writes = [
            "index_workspace",
            "switch_active_project",
            "delete_project",
            "record_adr",
            "delete_adr",
        ];
        let read_only = !writes.contains(&t.name.as_ref());
        assert_eq!(a.read_only_hint, Some(read_only), "{}", t.name);
        let destructive = ["delete_project", "delete_adr"].contains(&t.name.as_ref());
        let expected = (!read_only).then_some(destructive);
        assert_eq!(a.destructive_hint, expected, "{}", t.name);
        assert!(t.description.as_ref().unwrap().len() <= 600);
    }
    s.stop().await;
}

fn site(file: &str, line: u64, column: u64, kind: &str, enclosing: &str, text: &str) -> Value {
    json!({"file_path": file, "line": line, "column": column, "kind": kind, "enclosing_symbol": enclosing, "text": text})
}

#[tokio::test]
async fn find_references_answers_exactly_in_all_three_views() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    let indexed = s.index(ws.path()).await;
    assert_eq!(
        indexed["project"],
        ws.path().file_name().unwrap().to_str().unwrap()
    );
    assert_eq!(
        indexed["files"], 3,
        "the .gitignore'd file is not indexed: {indexed}"
    );

    let definition = json!({"qualified_name": "demo::util::describe", "kind": "function", "file_path": "src/util.rs", "line": 6, "end_line": 8});
    let sites = s
        .call_json(
            "find_references",
            json!({"symbol": "describe", "view": "sites"}),
        )
        .await;
    assert_eq!(
        sites,
        json!({
            "symbol": "describe",
            "definition": definition,
            "view": "sites",
            "total_sites": 2, "total_files": 2, "total_callers": 2,
            "offset": 0, "returned": 2,
            "items": [
                site("src/lib.rs", 19, 11, "call", "demo::report", "util::describe(c.area())"),
                site("src/util.rs", 11, 5, "call", "demo::util::twice", "describe(2.0)"),
            ],
            "complete": true,
            "precision": "heuristic",
        })
    );

    let callers = s
        .call_json("find_references", json!({"symbol": "describe"}))
        .await;
    assert_eq!(callers["view"], "callers");
    assert_eq!(
        callers["items"],
        json!([
            {"enclosing_symbol": "demo::report", "file_path": "src/lib.rs", "line": 19, "text": "util::describe(c.area())", "count": 1},
            {"enclosing_symbol": "demo::util::twice", "file_path": "src/util.rs", "line": 11, "text": "describe(2.0)", "count": 1},
        ])
    );

    let files = s
        .call_json(
            "find_references",
            json!({"symbol": "util::describe", "view": "files"}),
        )
        .await;
    assert_eq!(
        files["items"],
        json!([{"file_path": "src/lib.rs", "count": 1}, {"file_path": "src/util.rs", "count": 1}])
    );
    assert_eq!(files["complete"], true);
    s.stop().await;
}

#[tokio::test]
async fn same_named_definitions_are_grouped_and_a_qualified_query_picks_one() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;

    let one = s
        .call_json(
            "find_references",
            json!({"symbol": "Circle::new", "view": "sites"}),
        )
        .await;
    assert_eq!(
        one["definition"]["qualified_name"],
        "demo::shapes::Circle::new"
    );
    let lines: Vec<(String, u64)> = one["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["file_path"].as_str().unwrap().to_string(),
                i["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            ("src/lib.rs".to_string(), 14),
            ("src/shapes.rs".to_string(), 43)
        ]
    );
    assert_eq!(one["complete"], true, "{one}");

    let both = s
        .call_json("find_references", json!({"symbol": "new"}))
        .await;
    assert_eq!(both["ambiguous"], true, "{both}");
    assert_eq!(both["candidate_count"], 2);
    let mut defs: Vec<&str> = both["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["definition"]["qualified_name"].as_str().unwrap())
        .collect();
    defs.sort();
    assert_eq!(
        defs,
        ["demo::shapes::Circle::new", "demo::shapes::Square::new"]
    );
    assert_eq!(both["complete"], false);
    s.stop().await;
}

#[tokio::test]
async fn an_unknown_name_is_told_apart_from_a_name_without_usages() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;

    let unknown = s
        .call_json("find_references", json!({"symbol": "ZzzNoSuchThing"}))
        .await;
    let note = unknown["notes"][0].as_str().unwrap();
    assert!(note.starts_with("unknown name"), "{note}");

    let ignored = s
        .call_json("find_references", json!({"symbol": "describe_ignored"}))
        .await;
    assert!(
        ignored["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("unknown name"),
        "{ignored}"
    );

    let unused = s
        .call_json("find_references", json!({"symbol": "count_up"}))
        .await;
    assert_eq!(unused["total_sites"], 0);
    let note = unused["notes"][0].as_str().unwrap();
    assert!(
        note.contains("defined at src/util.rs:18") && note.contains("no usages"),
        "{note}"
    );
    s.stop().await;
}

#[tokio::test]
async fn pages_and_budget_cuts_say_where_the_rest_is() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;

    let all = s
        .call_json(
            "find_references",
            json!({"symbol": "tick", "view": "sites", "no_truncate": true}),
        )
        .await;
    assert_eq!(all["total_sites"], 12);
    assert_eq!(all["returned"], 12);
    assert_eq!(all["complete"], true);
    let lines: Vec<u64> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, (20..=31).collect::<Vec<u64>>());

    // An explicit page.
    let page = s
        .call_json(
            "find_references",
            json!({"symbol": "tick", "view": "sites", "offset": 10, "limit": 5}),
        )
        .await;
    assert_eq!(page["returned"], 2);
    assert_eq!(page["items"][0]["line"], 30);
    assert_eq!(page["complete"], true);

    // A budget cut: the largest prefix that fits, then the next page continues it.
    let cut = s
        .call_json(
            "find_references",
            json!({"symbol": "tick", "view": "sites", "max_tokens": "300"}),
        )
        .await;
    let returned = cut["returned"].as_u64().unwrap();
    assert!(returned > 0 && returned < 12, "{cut}");
    assert_eq!(cut["complete"], false);
    assert_eq!(cut["next_offset"], returned);
    assert!(
        cut["see_also"]
            .as_str()
            .unwrap()
            .contains(&format!("offset: {returned}"))
    );
    let rest = s
        .call_json(
            "find_references",
            json!({"symbol": "tick", "view": "sites", "offset": returned, "no_truncate": true}),
        )
        .await;
    assert_eq!(rest["items"][0]["line"], 20 + returned);
    assert_eq!(rest["returned"].as_u64().unwrap(), 12 - returned);
    s.stop().await;
}

#[tokio::test]
async fn get_file_outline_is_exact() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;
    let outline = s
        .call_json("get_file_outline", json!({"file_path": "src/shapes.rs"}))
        .await;
    let area = |line: u64, end: u64| json!({"name": "area", "kind": "method", "line": line, "end_line": end, "signature": "fn area(&self) -> f64"});
    assert_eq!(
        outline,
        json!({
            "file_path": "src/shapes.rs",
            "total_symbols": 11,
            "complete": true,
            "symbols": [
                {"name": "Shape", "kind": "trait", "line": 4, "end_line": 6, "signature": "pub trait Shape", "doc": "Anything with an area.",
                 "children": [area(5, 5)]},
                {"name": "Circle", "kind": "struct", "line": 9, "end_line": 11, "signature": "pub struct Circle", "doc": "A circle.",
                 "children": [
                    {"name": "radius", "kind": "field", "line": 10, "end_line": 10, "signature": "pub radius: f64"},
                    {"name": "new", "kind": "method", "line": 15, "end_line": 17, "signature": "pub fn new(radius: f64) -> Circle", "doc": "Makes a circle."},
                    area(21, 23),
                 ]},
                {"name": "Square", "kind": "struct", "line": 26, "end_line": 28, "signature": "pub struct Square",
                 "children": [
                    {"name": "side", "kind": "field", "line": 27, "end_line": 27, "signature": "pub side: f64"},
                    {"name": "new", "kind": "method", "line": 31, "end_line": 33, "signature": "pub fn new(side: f64) -> Self"},
                    area(37, 39),
                 ]},
                {"name": "both", "kind": "function", "line": 42, "end_line": 44, "signature": "pub fn both() -> (Circle, Square)"},
            ],
        })
    );

    // Absolute paths work too; a file that is not there is explained.
    let abs = ws.path().join("src/util.rs");
    let util = s
        .call_json(
            "get_file_outline",
            json!({"file_path": abs.to_str().unwrap()}),
        )
        .await;
    assert_eq!(util["file_path"], abs.to_str().unwrap());
    assert_eq!(util["total_symbols"], 5);
    let (text, is_error) = s
        .call("get_file_outline", json!({"file_path": "src/nope.rs"}))
        .await;
    assert!(is_error && text.contains("no file src/nope.rs"), "{text}");
    s.stop().await;
}

#[tokio::test]
async fn bad_input_is_explained_and_the_server_keeps_serving() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;
    let cases = [
        ("find_references", json!({}), "`symbol` is required"),
        (
            "find_references",
            json!({"symbol": 12345}),
            "must be a string",
        ),
        (
            "find_references",
            json!({"symbol": "describe", "view": "everything"}),
            "accepted: callers, files, sites",
        ),
        (
            "find_references",
            json!({"symbol": "describe", "offset": "abc"}),
            "`offset`",
        ),
        (
            "find_references",
            json!({"symbol": "describe", "project": "no-such-project"}),
            "unknown project",
        ),
        ("find_references", json!({"symbol": "x\u{0}y"}), "U+0000"),
        (
            "get_file_outline",
            json!({"file_path": "../../../../etc/passwd"}),
            "outside the project root",
        ),
        (
            "index_workspace",
            json!({"path": "/nonexistent/qq"}),
            "does not exist",
        ),
        (
            "index_workspace",
            json!({"path": ws.path().join("src/lib.rs").to_str().unwrap()}),
            "not a directory",
        ),
        ("no_such_tool", json!({}), "unknown tool"),
        (
            "find_references",
            json!({"symbol": "describe", "max_tokens": "lots"}),
            "`max_tokens`",
        ),
    ];
    for (tool, args, expected) in cases {
        let (text, is_error) = s.call(tool, args.clone()).await;
        assert!(is_error, "{tool} {args} should be an error, got {text}");
        assert!(
            text.contains(expected),
            "{tool} {args}: {text:?} does not say {expected:?}"
        );
    }
    // Coercion: numbers and booleans as strings, null for absent.
    let ok = s
        .call_json(
            "find_references",
            json!({"symbol": "describe", "limit": "1", "no_truncate": "false", "offset": null}),
        )
        .await;
    assert_eq!(ok["returned"], 1);
    // Still serving.
    let list = s.call_json("list_projects", json!({})).await;
    assert_eq!(list["total"], 1);
    s.stop().await;
}

#[tokio::test]
async fn reindexing_picks_up_edits_and_skips_unchanged_files() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;
    std::fs::write(
        ws.path().join("src/util.rs"),
        std::fs::read_to_string(ws.path().join("src/util.rs")).unwrap()
            + "\npub fn thrice() -> String {\n    describe(3.0)\n}\n",
    )
    .unwrap();
    s.index(ws.path()).await;
    let sites = s
        .call_json(
            "find_references",
            json!({"symbol": "describe", "view": "sites"}),
        )
        .await;
    assert_eq!(sites["total_sites"], 3);
    assert_eq!(sites["items"][2]["enclosing_symbol"], "demo::util::thrice");
    s.stop().await;
}

#[tokio::test]
async fn answers_see_edits_made_after_indexing() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;
    // Edit without re-indexing: the next answer that names the file refreshes it.
    let util = ws.path().join("src/util.rs");
    std::fs::write(
        &util,
        std::fs::read_to_string(&util).unwrap()
            + "\npub fn thrice() -> String {\n    describe(3.0)\n}\n",
    )
    .unwrap();
    let sites = s
        .call_json(
            "find_references",
            json!({"symbol": "describe", "view": "sites"}),
        )
        .await;
    assert_eq!(sites["total_sites"], 3, "{sites}");
    assert_eq!(sites["items"][2]["enclosing_symbol"], "demo::util::thrice");
    let notes = sites["notes"].to_string();
    assert!(
        notes.contains("refreshed 1 file(s) changed since indexing: src/util.rs"),
        "{notes}"
    );

    // The file a call names is checked before the call.
    std::fs::write(
        &util,
        std::fs::read_to_string(&util).unwrap() + "\npub fn fourth() {}\n",
    )
    .unwrap();
    let outline = s
        .call_json("get_file_outline", json!({"file_path": "src/util.rs"}))
        .await;
    assert_eq!(outline["total_symbols"], 7, "{outline}");

    // Unchanged files are not reported.
    let again = s
        .call_json(
            "find_references",
            json!({"symbol": "describe", "view": "sites"}),
        )
        .await;
    assert!(!again.to_string().contains("refreshed"), "{again}");
    s.stop().await;
}

/// Polls `find_references(symbol, view: files)` until `want` files hold usages.
async fn wait_for_files(s: &Scryer, symbol: &str, want: u64) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let answer = s
            .call_json(
                "find_references",
                json!({"symbol": symbol, "view": "files", "no_truncate": true}),
            )
            .await;
        if answer["total_files"] == want || std::time::Instant::now() > deadline {
            return answer;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_watcher_indexes_files_nobody_asked_about() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    s.index(ws.path()).await;

    // A new file in a new directory: no answer names it, only the watcher can see it.
    std::fs::create_dir_all(ws.path().join("src/extra")).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    std::fs::write(
        ws.path().join("src/extra/mod.rs"),
        "pub fn again() -> u32 {\n    crate::util::tick(1)\n}\n",
    )
    .unwrap();
    let answer = wait_for_files(&s, "tick", 2).await;
    assert_eq!(
        answer["items"][0]["file_path"], "src/extra/mod.rs",
        "{answer}"
    );

    // A burst of more than 32 files becomes one re-index of the project.
    for i in 0..40 {
        std::fs::write(
            ws.path().join(format!("src/burst{i}.rs")),
            format!("pub fn b{i}() -> u32 {{ crate::util::tick({i}) }}\n"),
        )
        .unwrap();
    }
    let answer = wait_for_files(&s, "tick", 42).await;
    assert_eq!(answer["total_files"], 42, "{answer}");
    s.stop().await;
}

#[tokio::test]
async fn python_projects_are_indexed_and_answered_too() {
    let ws = tempfile::Builder::new()
        .prefix("scryer-py-")
        .tempdir()
        .unwrap();
    std::fs::create_dir_all(ws.path().join("app")).unwrap();
    std::fs::write(ws.path().join("app/__init__.py"), "").unwrap();
    std::fs::write(
        ws.path().join("app/util.py"),
        "def helper(x):\n    \"\"\"Doubles.\"\"\"\n    return x * 2\n\n\nclass Greeter:\n    def greet(self):\n        return helper(1)\n",
    )
    .unwrap();
    std::fs::write(
        ws.path().join("main.py"),
        "from app.util import helper\nprint(helper(3))\n",
    )
    .unwrap();
    let s = Scryer::start(&[], &[]).await;
    let indexed = s.index(ws.path()).await;
    assert_eq!(indexed["files"], 3, "{indexed}");

    let sites = s
        .call_json(
            "find_references",
            json!({"symbol": "helper", "view": "sites"}),
        )
        .await;
    let got: Vec<(String, u64, String)> = sites["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["file_path"].as_str().unwrap().to_string(),
                i["line"].as_u64().unwrap(),
                i["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("app/util.py", 8, "call"),
        ("main.py", 1, "use"),
        ("main.py", 2, "call"),
    ];
    assert_eq!(
        got,
        want.map(|(f, l, k)| (f.to_string(), l, k.to_string())),
        "{sites}"
    );
    assert_eq!(sites["definition"]["file_path"], "app/util.py");

    let outline = s
        .call_json("get_file_outline", json!({"file_path": "app/util.py"}))
        .await;
    assert_eq!(outline["symbols"][0]["doc"], "Doubles.", "{outline}");
    assert_eq!(outline["symbols"][1]["kind"], "class");
    assert_eq!(outline["symbols"][1]["children"][0]["name"], "greet");
    s.stop().await;
}

#[tokio::test]
async fn a_second_process_on_the_same_database_is_told_why_it_cannot_start() {
    let s = Scryer::start(&[], &[]).await;
    let db = s.state.path().join("index.db");
    // The daemon holds the database; an in-process server on it opens the file itself
    // (one-shot commands go through the daemon instead).
    let out = std::process::Command::new(support::scryer_bin())
        .arg("--db")
        .arg(&db)
        .args(["serve", "--no-daemon"])
        .env("SCRYER_CONFIG_DIR", s.state.path().join("config"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("is in use by another scryer process") && stderr.contains("--db PATH"),
        "{stderr}"
    );
    assert!(!stderr.contains("Stack backtrace"), "{stderr}");
    // The first server is unharmed.
    let list = s.call_json("list_projects", json!({})).await;
    assert_eq!(list["total"], 0);
    s.stop().await;
}

/// `scryer report --json` parsed, failing the test on an error exit.
fn report_json(env: &DaemonEnv) -> Value {
    let out = env.command(&["report", "--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn report_and_index_go_through_a_running_daemon_and_open_the_file_without_one() {
    let env = DaemonEnv::new();
    let (first, second) = (fixture_workspace(), fixture_workspace());

    // No daemon: the commands open the database themselves and start none.
    let out = env
        .command(&["index", first.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("indexed"));
    assert_eq!(report_json(&env)["calls"], 0);
    assert!(env.status().is_none(), "one-shot commands start no daemon");

    // A session's daemon now holds the database.
    let c = env.client(first.path(), &[]).await;
    assert_eq!(c.call_json("list_projects", json!({})).await["total"], 1);
    let out = env
        .command(&["index", second.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The daemon indexed it: its session sees the second project at once.
    assert_eq!(c.call_json("list_projects", json!({})).await["total"], 2);

    let mut report = Value::Null;
    for _ in 0..100 {
        report = report_json(&env);
        let tools = report["tools"].as_array().cloned().unwrap_or_default();
        if tools
            .iter()
            .any(|t| t["tool"] == "list_projects" && t["calls"] == 2)
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(report["calls"], 2, "{report}");
    // An unknown project is named as such, through the daemon too.
    let out = env
        .command(&["report", "--project", "nope"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        e.contains("--project \"nope\"") && e.contains("registered:"),
        "{e}"
    );
    assert!(env.status().is_some(), "the daemon serves on");
    c.stop().await;
}
