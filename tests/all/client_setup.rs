//! Client setup, the usage report and the doctor, through the real binary: `scryer init`
//! merges and is idempotent, refuses malformed files untouched, writes TOML Codex reads;
//! `scryer report` shows what `get_token_savings_metrics` shows; `scryer doctor` passes a
//! healthy setup and names a broken client entry.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Scryer, fixture_workspace, scryer_bin, shared_compile_cache};

/// A private HOME, working directory and run directory for one test.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::Builder::new()
                .prefix("scryer-clients-")
                .tempdir()
                .unwrap(),
        }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn cwd(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// Runs `scryer <args>` with this sandbox's HOME, cwd and run directory.
    fn scryer(&self, args: &[&str]) -> Output {
        for d in [self.home(), self.cwd(), self.dir.path().join("run")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::process::Command::new(scryer_bin())
            .args(args)
            .current_dir(self.cwd())
            .env("HOME", self.home())
            .env("SCRYER_RUN_DIR", self.dir.path().join("run"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env_remove("SCRYER_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("SCRYER_DB")
            .env_remove("SCRYER_COMPILE_CACHE")
            .env("SCRYER_LOG", "warn")
            .output()
            .expect("running scryer")
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn binary() -> String {
    scryer_bin()
        .canonicalize()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn init_merges_keeps_a_backup_and_changes_nothing_the_second_time() {
    let sb = Sandbox::new();
    let config = sb.home().join(".claude.json");
    let original = "{\n  \"numStartups\": 12,\n  \"mcpServers\": {\n    \"github\": {\n      \"type\": \"stdio\",\n      \"command\": \"gh-mcp\",\n      \"args\": []\n    }\n  },\n  \"projects\": {}\n}\n";
    sb.write(&config, original);

    let first = sb.scryer(&["init", "--client", "claude-code"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let said = stdout(&first);
    assert!(said.contains("added mcpServers.scryer"), "{said}");
    assert!(said.contains(".claude.json.bak"), "{said}");
    let after_first = std::fs::read_to_string(&config).unwrap();
    assert_eq!(
        std::fs::read_to_string(sb.home().join(".claude.json.bak")).unwrap(),
        original
    );
    // The foreign entry and the other keys stay, in their order; ours is added last.
    let expected = format!(
        "{{\n  \"numStartups\": 12,\n  \"mcpServers\": {{\n    \"github\": {{\n      \"type\": \"stdio\",\n      \"command\": \"gh-mcp\",\n      \"args\": []\n    }},\n    \"scryer\": {{\n      \"type\": \"stdio\",\n      \"command\": {},\n      \"args\": [\n        \"serve\"\n      ]\n    }}\n  }},\n  \"projects\": {{}}\n}}\n",
        json!(binary())
    );
    assert_eq!(after_first, expected);

    let second = sb.scryer(&["init", "--client", "claude-code"]);
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(
        stdout(&second).contains("nothing changed"),
        "{}",
        stdout(&second)
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), after_first);
    assert_eq!(
        std::fs::read_to_string(sb.home().join(".claude.json.bak")).unwrap(),
        original,
        "an unchanged run leaves the backup alone"
    );
}

#[test]
fn project_scope_and_dry_run_write_where_and_what_they_say() {
    let sb = Sandbox::new();
    let dry = sb.scryer(&["init", "--client", "cursor", "--project", "--dry-run"]);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert!(stdout(&dry).contains("would add"), "{}", stdout(&dry));
    let path = sb.cwd().join(".cursor/mcp.json");
    assert!(!path.exists(), "a dry run writes nothing");

    let real = sb.scryer(&["init", "--client", "cursor", "--project"]);
    assert!(real.status.success(), "{}", stderr(&real));
    assert!(
        stdout(&real).contains("no file to back up"),
        "{}",
        stdout(&real)
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({"mcpServers": {"scryer": {"command": binary(), "args": ["serve"]}}})
    );
    assert!(!sb.home().join(".cursor/mcp.json").exists());

    let claude = sb.scryer(&["init", "--client", "claude-code", "--project"]);
    assert!(claude.status.success(), "{}", stderr(&claude));
    let mcp: Value =
        serde_json::from_str(&std::fs::read_to_string(sb.cwd().join(".mcp.json")).unwrap())
            .unwrap();
    assert_eq!(mcp["mcpServers"]["scryer"]["type"], "stdio");
}

#[test]
fn malformed_files_are_refused_and_left_untouched() {
    let sb = Sandbox::new();
    let cursor = sb.home().join(".cursor/mcp.json");
    let bad_json = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n  }\n}\n";
    sb.write(&cursor, bad_json);
    let out = sb.scryer(&["init", "--client", "cursor"]);
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(
        e.contains(cursor.to_str().unwrap()) && e.contains("line 4"),
        "{e}"
    );
    assert!(e.contains("nothing was changed"), "{e}");
    assert_eq!(std::fs::read_to_string(&cursor).unwrap(), bad_json);
    assert!(!sb.home().join(".cursor/mcp.json.bak").exists());

    let codex = sb.home().join(".codex/config.toml");
    let bad_toml = "model = \"o3\"\n[mcp_servers.other\ncommand = \"x\"\n";
    sb.write(&codex, bad_toml);
    let out = sb.scryer(&["init", "--client", "codex"]);
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(
        e.contains(codex.to_str().unwrap()) && e.contains("line 2"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), bad_toml);
}

#[test]
fn codex_gets_a_toml_table_it_can_parse_with_the_rest_kept() {
    let sb = Sandbox::new();
    let codex = sb.home().join(".codex/config.toml");
    let original = "# personal settings\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # pinned\nargs = [\"--stdio\"]\n";
    sb.write(&codex, original);
    let out = sb.scryer(&["init", "--client", "codex"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&codex).unwrap();
    assert!(
        text.starts_with(original),
        "comments and entries kept: {text}"
    );
    let parsed: toml::Table = text.parse().expect("the written config parses as TOML");
    let scryer = &parsed["mcp_servers"]["scryer"];
    assert_eq!(scryer["command"].as_str(), Some(binary().as_str()));
    assert_eq!(
        scryer["args"].as_array().unwrap()[0].as_str(),
        Some("serve")
    );
    assert_eq!(
        parsed["mcp_servers"]["docs"]["command"].as_str(),
        Some("docs-mcp")
    );

    let again = sb.scryer(&["init", "--client", "codex"]);
    assert!(
        stdout(&again).contains("nothing changed"),
        "{}",
        stdout(&again)
    );
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), text);
}

/// `scryer report --json` once the server has let go of the database.
fn report_json(sb: &Sandbox, db: &Path, extra: &[&str]) -> Value {
    let db = db.to_str().unwrap();
    let mut args = vec!["--db", db, "report", "--json"];
    args.extend_from_slice(extra);
    for _ in 0..100 {
        let out = sb.scryer(&args);
        if out.status.success() {
            return serde_json::from_slice(&out.stdout).unwrap();
        }
        // The stopped server may still be exiting with the lock held.
        assert!(stderr(&out).contains("is held by"), "{}", stderr(&out));
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the database stayed locked after the server stopped");
}

#[tokio::test]
async fn report_shows_what_get_token_savings_metrics_shows() {
    let sb = Sandbox::new();
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("index.db");
    let ws = fixture_workspace();
    // In-process serving: the server process is the one holding the database.
    let s = Scryer::start_with_db(&db, &[], &[("SCRYER_DAEMON", "off")]).await;
    s.index(ws.path()).await;
    let root = ws.path().to_str().unwrap();
    for _ in 0..2 {
        s.call_json(
            "get_file_outline",
            json!({"file_path": format!("{root}/src/lib.rs")}),
        )
        .await;
    }
    s.call_json("find_references", json!({"symbol": "describe"}))
        .await;
    let (_, failed) = s
        .call("get_file_outline", json!({"file_path": "src/nope.rs"}))
        .await;
    assert!(failed, "an unknown file is an error");
    // The call the compared ones are followed by in both views.
    s.call_json("list_projects", json!({})).await;
    let mut metrics = json!({});
    for _ in 0..100 {
        metrics = s.call_json("get_token_savings_metrics", json!({})).await;
        let tools = metrics["tools"].as_array().cloned().unwrap_or_default();
        if tools.iter().any(|t| t["tool"] == "list_projects") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // While the server runs, the report names it instead of failing on the lock.
    let held = sb.scryer(&["--db", db.to_str().unwrap(), "report"]);
    assert!(!held.status.success());
    let e = stderr(&held);
    assert!(
        e.contains("is held by a scryer server") && e.contains("process "),
        "{e}"
    );

    s.stop().await;
    let report = report_json(&sb, &db, &[]);
    let by_tool = |v: &Value, name: &str| -> Value {
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tool"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} missing in {v}"))
    };
    let compared = ["index_workspace", "get_file_outline", "find_references"];
    for tool in compared {
        let (m, r) = (by_tool(&metrics, tool), by_tool(&report, tool));
        for field in [
            "calls",
            "errors",
            "tokens_mean",
            "tokens_p95",
            "truncated_pct",
            "latency_p50_ms",
            "latency_p95_ms",
            "follow_up_pct",
        ] {
            assert_eq!(m[field], r[field], "{tool}.{field}: metrics {m} report {r}");
        }
    }
    assert_eq!(by_tool(&report, "get_file_outline")["calls"], 3);
    assert_eq!(by_tool(&report, "get_file_outline")["errors"], 1);
    assert_eq!(by_tool(&report, "find_references")["errors"], 0);

    // Both views count the failed call; the metrics tool carries "errors" too.
    assert_eq!(by_tool(&metrics, "get_file_outline")["errors"], 1);

    // The project filter and the window narrow; an unknown project is named.
    let scoped = report_json(&sb, &db, &["--project", root, "--since", "1h"]);
    let slug = scoped["project"].as_str().unwrap().to_string();
    assert!(slug.starts_with("scryer-demo-"), "{scoped}");
    assert_eq!(by_tool(&scoped, "find_references")["calls"], 1);
    let unknown = sb.scryer(&[
        "--db",
        db.to_str().unwrap(),
        "report",
        "--project",
        "nosuch",
    ]);
    assert!(!unknown.status.success());
    assert!(
        stderr(&unknown).contains(&format!("registered: {slug}")),
        "{}",
        stderr(&unknown)
    );

    // The table has a row per tool.
    let table = sb.scryer(&["--db", db.to_str().unwrap(), "report"]);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    let row = text
        .lines()
        .find(|l| l.starts_with("get_file_outline"))
        .unwrap_or_else(|| panic!("no row: {text}"));
    assert_eq!(row.split_whitespace().nth(1), Some("3"), "{row}");
    let mut lines = text.lines();
    assert!(
        lines.next().unwrap().starts_with("usage all projects"),
        "{text}"
    );
    assert!(lines.next().unwrap().ends_with("follow-up"), "{text}");
}

#[test]
fn doctor_passes_a_healthy_setup_and_names_a_broken_client_entry() {
    let sb = Sandbox::new();
    let db = sb.dir.path().join("index.db");
    let cache = shared_compile_cache();
    let (db, cache) = (db.to_str().unwrap(), cache.to_str().unwrap());
    assert!(
        sb.scryer(&["init", "--client", "claude-code"])
            .status
            .success()
    );

    let healthy = sb.scryer(&["--db", db, "--compile-cache", cache, "doctor"]);
    let said = stdout(&healthy);
    assert!(healthy.status.success(), "{said}\n{}", stderr(&healthy));
    assert!(!said.contains("FAIL"), "{said}");
    assert!(said.contains("plugin(s) loaded (7 built in)"), "{said}");
    assert!(
        said.contains("plugin navigation") && said.contains("5 tool(s)"),
        "{said}"
    );
    assert!(
        said.lines().any(|l| l.starts_with("ok")
            && l.contains("claude-code")
            && l.contains("runs this binary")),
        "{said}"
    );
    assert!(
        said.contains("daemon") && said.contains("not running"),
        "{said}"
    );

    let cursor = sb.home().join(".cursor/mcp.json");
    sb.write(
        &cursor,
        r#"{"mcpServers": {"scryer": {"command": "/nonexistent/bin/scryer", "args": ["serve"]}}}"#,
    );
    let broken = sb.scryer(&["--db", db, "--compile-cache", cache, "doctor"]);
    assert!(!broken.status.success(), "{}", stdout(&broken));
    let said = stdout(&broken);
    let line = said
        .lines()
        .find(|l| l.starts_with("FAIL"))
        .unwrap_or_else(|| panic!("no FAIL line: {said}"));
    assert!(
        line.contains("cursor") && line.contains("/nonexistent/bin/scryer"),
        "{line}"
    );
    assert!(
        line.contains("does not exist") && line.contains("scryer init --client cursor"),
        "{line}"
    );
    assert!(
        stderr(&broken).contains("1 problem(s)"),
        "{}",
        stderr(&broken)
    );
}
