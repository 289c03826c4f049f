//! The tool contract, through the real binary: what tools/list publishes for each
//! profile, how big it is, how arguments are coerced, which mistakes are refused with a
//! message, and what usage telemetry keeps.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Scryer, fixture_component, fixture_workspace, plugin_ok, scryer_bin};

const ALL_TOOLS: [&str; 19] = [
    "calculate_blast_radius",
    "delete_adr",
    "delete_project",
    "find_references",
    "get_crate_outline",
    "get_enclosing_scope",
    "get_file_outline",
    "get_indexing_status",
    "get_token_savings_metrics",
    "get_type_contract",
    "index_workspace",
    "inspect_symbol",
    "list_projects",
    "query_adrs",
    "record_adr",
    "resolve_definition",
    "search_symbols",
    "switch_active_project",
    "trace_call_hierarchy",
];

const CORE: [&str; 6] = [
    "calculate_blast_radius",
    "find_references",
    "get_enclosing_scope",
    "get_file_outline",
    "inspect_symbol",
    "search_symbols",
];

/// Keywords strict function-calling validators reject, wherever they appear.
fn non_portable(schema: &Value, path: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                let here = format!("{path}/{k}");
                if !path.ends_with("/properties")
                    && [
                        "$ref",
                        "$defs",
                        "definitions",
                        "format",
                        "minimum",
                        "maximum",
                        "oneOf",
                        "anyOf",
                        "allOf",
                    ]
                    .contains(&k.as_str())
                {
                    out.push(here.clone());
                }
                if k == "type" && !v.is_string() && !path.ends_with("/properties") {
                    out.push(format!("{here} (type array)"));
                }
                non_portable(v, &here, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                non_portable(v, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn the_full_profile_lists_19_portable_tools_within_the_size_budget() {
    let s = Scryer::start(&[], &[]).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(names, ALL_TOOLS);

    let mut total = 0;
    for t in &tools {
        let schema = Value::Object((*t.input_schema).clone());
        let mut bad = Vec::new();
        non_portable(&schema, "", &mut bad);
        assert!(bad.is_empty(), "{}: {bad:?}", t.name);
        let description = t.description.as_deref().unwrap_or("");
        assert!(
            description.len() <= 600,
            "{}: {} chars",
            t.name,
            description.len()
        );
        let size = serde_json::to_string(t).unwrap().len();
        println!("{:<28} {:>5} chars", t.name, size);
        total += size;

        let props = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let budget = [
            "find_references",
            "search_symbols",
            "get_file_outline",
            "trace_call_hierarchy",
            "get_crate_outline",
        ]
        .contains(&t.name.as_ref());
        assert_eq!(
            props.contains_key("max_tokens"),
            budget,
            "{}: max_tokens",
            t.name
        );
        assert_eq!(
            props.contains_key("no_truncate"),
            budget,
            "{}: no_truncate",
            t.name
        );
        // Every tool whose answer depends on the project declares `project`.
        let project_tool = !["index_workspace", "list_projects"].contains(&t.name.as_ref());
        assert_eq!(
            props.contains_key("project"),
            project_tool,
            "{}: project",
            t.name
        );
        assert!(t.annotations.is_some(), "{} has no annotations", t.name);
    }
    println!("total {total} chars");
    // The evaluation suite's guide for all 19 definitions together (`mcp_eval.py`).
    assert!(total <= 13_600, "tool definitions take {total} characters");

    let instructions = s
        .client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    assert!(instructions.len() <= 1800, "{} chars", instructions.len());
    for t in ALL_TOOLS {
        assert!(instructions.contains(t), "instructions do not reach {t}");
    }
    s.stop().await;
}

#[tokio::test]
async fn the_core_profile_loads_four_routers_lists_six_always_loaded_tools_and_refuses_other_plugins()
 {
    let s = Scryer::start(&["--tools", "core"], &[]).await;
    let tools = s.client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(names, CORE);
    for t in &tools {
        let meta = t.meta.as_ref().map(|m| m.0.clone()).unwrap_or_default();
        assert_eq!(
            meta.get("anthropic/alwaysLoad"),
            Some(&json!(true)),
            "{}",
            t.name
        );
    }
    let instructions = s
        .client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    assert!(
        instructions.len() <= 1800,
        "core instructions take {} chars",
        instructions.len()
    );
    for t in CORE {
        assert!(
            instructions.contains(t),
            "core instructions do not reach {t}"
        );
    }
    assert!(!instructions.contains("index_workspace"), "{instructions}");
    // A profile is a set of plugins (ADR 0030): only the four routers with core tools
    // are loaded; their hidden tools are still answered, other plugins' are refused.
    let cfg = s.state.path().join("config");
    let loaded = loaded_plugins(&cfg, |l| l.len() >= 4).await;
    assert_eq!(loaded, ["graph", "inspect", "navigation", "search"]);
    let (text, _) = s
        .call("get_type_contract", json!({"symbol": "Circle"}))
        .await;
    assert!(
        !text.contains("profile") && !text.contains("unknown tool"),
        "a hidden tool of a loaded plugin is answered: {text}"
    );
    let (text, is_error) = s.call("list_projects", json!({})).await;
    assert!(
        is_error && text.contains("profile `core`") && text.contains("--tools full"),
        "{text}"
    );
    s.stop().await;

    let s = Scryer::start(&["--always-load", "none"], &[]).await;
    let tools = s.client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.meta.is_none()));
    s.stop().await;
}

#[tokio::test]
async fn arguments_are_coerced_and_mistakes_are_named() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    let slug = s.index(ws.path()).await["project"]
        .as_str()
        .unwrap()
        .to_string();

    // "12" for an integer, "true" for a boolean, null for an absent optional.
    let a = s
        .call_json(
            "find_references",
            json!({"symbol": "Circle", "limit": "1", "offset": null}),
        )
        .await;
    assert!(
        a.get("next_offset").is_some() || a["complete"] == json!(true),
        "{a}"
    );
    // A string that is not a number is still an error naming the argument.
    let (text, is_error) = s
        .call(
            "find_references",
            json!({"symbol": "area", "offset": "abc"}),
        )
        .await;
    assert!(is_error && text.contains("offset"), "{text}");
    // An explicit project must exist: no silent fallback.
    let (text, is_error) = s
        .call(
            "find_references",
            json!({"symbol": "area", "project": "no-such-project"}),
        )
        .await;
    assert!(
        is_error && text.contains("no-such-project") && text.contains("demo"),
        "{text}"
    );
    // An argument the tool does not know is named in the answer, with the accepted ones;
    // host parameters (`project`, `format`) are known to every tool.
    let a = s
        .call_json(
            "find_references",
            json!({"symbol": "Circle", "veiw": "files", "project": slug}),
        )
        .await;
    let notes = a["notes"].to_string();
    assert!(
        notes.contains("ignored unknown argument `veiw`")
            && notes.contains("find_references accepts")
            && notes.contains("view"),
        "{a}"
    );
    assert!(!notes.contains("`project`"), "{notes}");
    let (text, is_error) = s
        .call("get_file_outline", json!({"path": "src/lib.rs"}))
        .await;
    assert!(
        is_error && text.contains("ignored unknown argument `path`") && text.contains("file_path"),
        "an error answer names it too: {text}"
    );
    let (text, is_error) = s
        .call(
            "find_references",
            json!({"symbol": "Circle", "format": "text", "colour": 1}),
        )
        .await;
    assert!(
        !is_error && text.contains("note: ignored unknown argument `colour`"),
        "{text}"
    );
    // Lines are 1-based.
    let (text, is_error) = s
        .call(
            "get_enclosing_scope",
            json!({"file_path": "src/lib.rs", "line": 0}),
        )
        .await;
    assert!(is_error && text.contains("line"), "{text}");
    let (text, is_error) = s
        .call(
            "get_enclosing_scope",
            json!({"file_path": "src/lib.rs", "line": "3"}),
        )
        .await;
    assert!(!is_error, "{text}");
    s.stop().await;
}

#[tokio::test]
async fn switching_and_deleting_projects_and_usage_without_content() {
    let ws = fixture_workspace();
    let s = Scryer::start(&[], &[]).await;
    let indexed = s.index(ws.path()).await;
    let slug = indexed["project"].as_str().unwrap().to_string();
    let (text, is_error) = s
        .call(
            "switch_active_project",
            json!({"project": "no-such-project"}),
        )
        .await;
    assert!(is_error && text.contains("no-such-project"), "{text}");
    let a = s
        .call_json("switch_active_project", json!({"project": slug}))
        .await;
    assert_eq!(a["active"], json!(true), "{a}");

    let secret = "ZzSecretArgumentQq";
    let _ = s.call("find_references", json!({"symbol": secret})).await;
    let usage = usage_with(&s, "find_references").await;
    let tools: Vec<&str> = usage["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["tool"].as_str())
        .collect();
    assert!(tools.contains(&"find_references"), "{usage}");
    s.stop().await;

    // Telemetry rows hold no argument text: the database file never sees it.
    let state = tempfile::tempdir().unwrap();
    let db_path = state.path().join("index.db");
    let s = Scryer::start_with_db(&db_path, &[], &[]).await;
    s.index(ws.path()).await;
    let _ = s.call("find_references", json!({"symbol": secret})).await;
    let usage = usage_with(&s, "find_references").await;
    assert!(usage["calls"].as_u64().unwrap_or(0) >= 2, "{usage}");
    let deleted = s
        .call_json("delete_project", json!({"project": slug}))
        .await;
    assert_eq!(deleted["deleted"], json!(slug), "{deleted}");
    let listed = s.call_json("list_projects", json!({})).await;
    assert_eq!(listed["total"], 0, "{listed}");
    s.stop().await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let mut bytes = std::fs::read(&db_path).unwrap();
    if let Ok(wal) = std::fs::read(db_path.with_extension("db-wal")) {
        bytes.extend(wal);
    }
    let hay = String::from_utf8_lossy(&bytes);
    assert!(
        hay.contains("find_references"),
        "telemetry rows are written"
    );
    assert!(!hay.contains(secret), "an argument reached the database");
}

/// Usage once a row for `tool` is there: rows are written off the call path, so the
/// last call's row may land a moment after its answer.
async fn usage_with(s: &Scryer, tool: &str) -> Value {
    let mut usage = json!({});
    for _ in 0..100 {
        usage = s.call_json("get_token_savings_metrics", json!({})).await;
        if usage.to_string().contains(tool) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    usage
}

/// The plugins the one server serving with configuration directory `cfg` has loaded
/// (its serving report's `loaded`, sorted), once `enough` says so or 60 s passed.
async fn loaded_plugins(cfg: &Path, enough: impl Fn(&[String]) -> bool) -> Vec<String> {
    let started = Instant::now();
    loop {
        let mut loaded: Vec<String> = std::fs::read_dir(cfg.join("plugins"))
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().contains(".serving-"))
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .filter_map(|t| serde_json::from_str::<Value>(&t).ok())
            .flat_map(|v| v["loaded"].as_array().cloned().unwrap_or_default())
            .filter_map(|n| n.as_str().map(String::from))
            .collect();
        loaded.sort();
        if enough(&loaded) || started.elapsed() > Duration::from_secs(60) {
            return loaded;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `scryer serve` with `args` that must fail before serving: its stderr.
fn serve_fails(cfg: &Path, args: &[&str]) -> String {
    use std::io::Write as _;
    let state = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(scryer_bin())
        .arg("--db")
        .arg(state.path().join("index.db"))
        .arg("serve")
        .args(args)
        .env("SCRYER_CONFIG_DIR", cfg)
        .env("SCRYER_PRECISE", "off")
        .env("SCRYER_DAEMON", "off")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let _ = writeln!(child.stdin.take().unwrap(), "{init}");
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success(), "serve {args:?} did not fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn instructions_of(s: &Scryer) -> String {
    s.client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profile_from_the_config_dir_loads_only_its_plugins_and_bad_names_are_named() {
    let work = tempfile::tempdir().unwrap();
    let cfg = work.path().join("config");
    let hostile = fixture_component("scryer-fixture-hostile");
    plugin_ok(
        &cfg,
        &["add", hostile.to_str().unwrap(), "--grant", "tokens"],
    );
    std::fs::write(
        cfg.join("profiles.toml"),
        "[profiles.tiny]\nplugins = [\"search\"]\n\n[profiles.lean]\nplugins = [\"search\", \"hostile\"]\n",
    )
    .unwrap();
    let db = work.path().join("index.db");
    let env = [("SCRYER_CONFIG_DIR", cfg.to_str().unwrap())];

    // `tiny`: one built-in router; the installed plugin is not compiled.
    let tiny = Scryer::start_with_db(&db, &["--tools", "tiny"], &env).await;
    assert_eq!(tiny.tool_names().await, ["search_symbols"]);
    let instructions = instructions_of(&tiny);
    assert!(
        instructions.len() <= 1800 && instructions.contains("search_symbols"),
        "{instructions}"
    );
    assert!(!instructions.contains("find_references"), "{instructions}");
    assert_eq!(loaded_plugins(&cfg, |l| !l.is_empty()).await, ["search"]);

    // A second session of the same daemon with `lean` loads the installed plugin.
    let lean = Scryer::start_with_db(&db, &["--tools", "lean"], &env).await;
    let (text, is_error) = lean.call("ok", json!({})).await;
    assert!(!is_error, "{text}");
    assert_eq!(
        loaded_plugins(&cfg, |l| l.len() >= 2).await,
        ["hostile", "search"]
    );
    let instructions = instructions_of(&lean);
    assert!(instructions.len() <= 1800, "{instructions}");
    // `tiny` still lists only its plugin, and may not call the other's tools.
    assert_eq!(tiny.tool_names().await, ["search_symbols"]);
    let (text, is_error) = tiny.call("ok", json!({})).await;
    assert!(is_error && text.contains("profile `tiny`"), "{text}");
    tiny.stop().await;
    lean.stop().await;

    // Unknown names, and a broken profile file, are errors naming what is accepted.
    let e = serve_fails(&cfg, &["--tools", "nosuch"]);
    assert!(
        e.contains("`nosuch`, which is no profile, plugin or tool")
            && e.contains("core, full, lean, tiny")
            && e.contains("hostile"),
        "{e}"
    );
    std::fs::write(
        cfg.join("profiles.toml"),
        "[profiles.tiny]\nplugins = [\"serch\"]\n",
    )
    .unwrap();
    let e = serve_fails(&cfg, &["--tools", "tiny"]);
    assert!(
        e.contains("profile `tiny` names plugin `serch`") && e.contains("navigation"),
        "{e}"
    );
    std::fs::write(cfg.join("profiles.toml"), "[profiles.tiny]\nplugins = []\n").unwrap();
    let e = serve_fails(&cfg, &["--tools", "tiny"]);
    assert!(
        e.contains("profiles.toml") && e.contains("profiles.tiny.plugins is empty"),
        "{e}"
    );
}

#[tokio::test]
async fn plugin_names_in_tools_load_those_plugins() {
    let s = Scryer::start(&["--tools", "navigation,search"], &[]).await;
    let mut names = s.tool_names().await;
    names.sort();
    assert_eq!(
        names,
        [
            "find_references",
            "get_enclosing_scope",
            "get_file_outline",
            "get_type_contract",
            "resolve_definition",
            "search_symbols"
        ]
    );
    let instructions = instructions_of(&s);
    assert!(instructions.len() <= 1800, "{instructions}");
    let cfg = s.state.path().join("config");
    assert_eq!(
        loaded_plugins(&cfg, |l| l.len() >= 2).await,
        ["navigation", "search"]
    );
    // A tool name loads its plugin too.
    let t = Scryer::start(&["--tools", "list_projects"], &[]).await;
    assert_eq!(t.tool_names().await, ["list_projects"]);
    s.stop().await;
    t.stop().await;
}
