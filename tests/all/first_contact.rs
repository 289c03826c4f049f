//! First contact, through the real binary: what a new user meets before anything else.
//! Many first calls at once on a fresh project, from several sessions (several
//! `scryer serve` processes on one daemon), answer without an error and register the
//! project once; the README's "see it answer" pipe answers on the first try; clients
//! passing different environments find one daemon; a database in use names its holder.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::support;
use crate::support::daemon::DaemonEnv;
use crate::support::{fixture_workspace, scryer_bin, shared_compile_cache};

/// What one of the mixed first calls asks, by its number.
fn first_call(i: usize, root: &Path) -> (&'static str, Value) {
    match i % 4 {
        0 => (
            "index_workspace",
            json!({"path": root.to_str().unwrap(), "wait_seconds": 25}),
        ),
        1 => (
            "find_references",
            json!({"symbol": "Circle", "view": "files"}),
        ),
        2 => ("get_file_outline", json!({"file_path": "src/lib.rs"})),
        _ => ("get_indexing_status", json!({})),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_first_calls_from_five_sessions_answer_and_register_one_project() {
    let env = DaemonEnv::new();
    let ws = fixture_workspace();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    // Five `scryer serve` processes, each a session of one daemon, each started in the
    // fresh project (its cwd is the project, not yet registered).
    let mut clients = Vec::new();
    for _ in 0..5 {
        clients.push(Arc::new(env.client(&root, &[]).await));
    }
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..50 {
        let client = clients[i % clients.len()].clone();
        let (tool, args) = first_call(i / clients.len(), &root);
        calls.spawn(async move {
            let (text, is_error) = client.call(tool, args).await;
            (tool, text, is_error)
        });
    }
    let mut answered = 0;
    while let Some(done) = calls.join_next().await {
        let (tool, text, is_error) = done.unwrap();
        assert!(!is_error, "{tool} failed: {text}");
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{tool} answered non-JSON ({e}): {text}"));
        match tool {
            // Calls that read the index waited for the first index: real answers.
            "find_references" => {
                assert!(v["total_sites"].as_u64().unwrap_or(0) > 0, "{v}");
                assert!(!text.contains("INDEXING"), "{v}");
            }
            "get_file_outline" => {
                assert!(text.contains("total_area"), "{v}");
            }
            // Ready, or stale when another session's index_workspace re-indexes now.
            "index_workspace" => assert!(v["state"] == "ready" || v["state"] == "stale", "{v}"),
            _ => assert!(v["project"].is_string() || v["notes"].is_array(), "{v}"),
        }
        answered += 1;
    }
    assert_eq!(answered, 50);
    let listed = clients[0].call_json("list_projects", json!({})).await;
    assert_eq!(listed["total"], 1, "one project row: {listed}");
    assert_eq!(
        listed["projects"][0]["root"],
        root.to_str().unwrap(),
        "{listed}"
    );
    assert_eq!(
        env.status_field("sessions").as_deref(),
        Some("5 now, 5 since start"),
        "five sessions of one daemon"
    );
    for c in clients {
        if let Ok(c) = Arc::try_unwrap(c) {
            c.stop().await;
        }
    }
}

/// The README's "see it answer" block, with the binary and database of this test.
fn readme_demo() -> String {
    let readme = std::fs::read_to_string(support::repo_root().join("README.md")).unwrap();
    let section = readme
        .split("## See it answer")
        .nth(1)
        .expect("the README has a \"See it answer\" section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block in that section");
    assert!(
        block.contains("| cargo run --release -q -- serve"),
        "{block}"
    );
    block.replace(
        "| cargo run --release -q -- serve",
        "| \"$SCRYER\" --db \"$DB\" --compile-cache \"$CACHE\" serve",
    )
}

/// A fresh project that defines and uses `Limits`, with or without a `Cargo.toml`.
fn limits_project(with_manifest: bool) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("scryer-demo-")
        .tempdir()
        .unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    if with_manifest {
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
        )
        .unwrap();
    }
    std::fs::write(
        dir.path().join("src/lib.rs"),
        "pub mod run;\n/// Call limits.\npub struct Limits { pub cpu_ms: u64 }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("src/run.rs"),
        "use crate::Limits;\npub fn start(l: &Limits) -> u64 { l.cpu_ms }\n",
    )
    .unwrap();
    dir
}

/// The JSON-RPC answers a run printed, by id.
fn answers(stdout: &str) -> std::collections::BTreeMap<u64, Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| Some((v["id"].as_u64()?, v)))
        .collect()
}

/// The text of a `tools/call` answer, which must not be an error.
fn tool_text(answer: &Value) -> String {
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_readme_demo_answers_on_the_first_try_in_a_fresh_project() {
    let state = tempfile::tempdir().unwrap();
    let project = limits_project(true);
    // PWD is what the demo's `$PWD` reads: the project, as when a user runs it there.
    let out = Command::new("sh")
        .arg("-c")
        .arg(readme_demo())
        .current_dir(project.path())
        .env("PWD", project.path())
        .env("SCRYER", scryer_bin())
        .env("DB", state.path().join("index.db"))
        .env("CACHE", shared_compile_cache())
        .env("SCRYER_CONFIG_DIR", state.path().join("config"))
        .env("SCRYER_DAEMON_IDLE", "20")
        .env_remove("SCRYER_RUN_DIR")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let by_id = answers(&stdout);
    assert!(
        by_id[&2]["result"]["tools"].as_array().is_some(),
        "{stdout}"
    );
    let indexed: Value = serde_json::from_str(&tool_text(&by_id[&3])).unwrap();
    assert!(indexed["project"].is_string(), "{indexed}");
    let found: Value = serde_json::from_str(&tool_text(&by_id[&4])).unwrap();
    assert_eq!(
        found["definition"]["qualified_name"], "demo::Limits",
        "{found}"
    );
    assert_eq!(found["view"], "files", "{found}");
    let _ = Command::new(scryer_bin())
        .arg("--db")
        .arg(state.path().join("index.db"))
        .args(["daemon", "stop"])
        .env_remove("SCRYER_RUN_DIR")
        .output();
}

/// The demo's requests written at once (no sleeps), in a directory with no project
/// marker: `find_references`, received after `index_workspace`, waits for it.
#[test]
fn calls_piped_after_index_workspace_wait_for_it_even_without_a_project_marker() {
    let state = tempfile::tempdir().unwrap();
    let project = limits_project(false);
    let path = project.path().to_str().unwrap();
    let mut child = Command::new(scryer_bin())
        .arg("--db")
        .arg(state.path().join("index.db"))
        .arg("--compile-cache")
        .arg(shared_compile_cache())
        .arg("serve")
        .current_dir(project.path())
        .env("SCRYER_CONFIG_DIR", state.path().join("config"))
        .env("SCRYER_DAEMON_IDLE", "20")
        .env("SCRYER_LOG", "warn")
        .env_remove("SCRYER_RUN_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (by_id, stdin) = pipe_calls(
        &mut child,
        &[
            json!({"name":"index_workspace","arguments":{"path":path}}),
            json!({"name":"find_references","arguments":{"symbol":"Limits","view":"files"}}),
            json!({"name":"get_file_outline","arguments":{"file_path":"src/run.rs"}}),
        ],
    );
    drop(stdin);
    let found: Value = serde_json::from_str(&tool_text(&by_id[&4])).unwrap();
    let name = found["definition"]["qualified_name"].as_str().unwrap_or("");
    assert!(name.ends_with("Limits"), "{found}");
    assert_eq!(found["total_files"], 1, "{found}");
    let outline = tool_text(&by_id[&5]);
    assert!(outline.contains("start"), "{outline}");
    let _ = child.wait();
    let _ = Command::new(scryer_bin())
        .arg("--db")
        .arg(state.path().join("index.db"))
        .args(["daemon", "stop"])
        .env_remove("SCRYER_RUN_DIR")
        .output();
}

/// Writes the handshake and then `calls` (`tools/call` requests numbered from 3) to a
/// piped `scryer serve`'s stdin at once, and reads its stdout until every call is
/// answered. Returns the answers by id and the still open stdin (dropping it ends the
/// session).
fn pipe_calls(
    child: &mut std::process::Child,
    calls: &[Value],
) -> (
    std::collections::BTreeMap<u64, Value>,
    std::process::ChildStdin,
) {
    let mut lines = vec![
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"by-hand","version":"0"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    ];
    let ids: Vec<u64> = (3..3 + calls.len() as u64).collect();
    for (id, params) in ids.iter().zip(calls) {
        lines.push(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params}));
    }
    let mut stdin = child.stdin.take().unwrap();
    let all: String = lines.iter().map(|l| format!("{l}\n")).collect();
    stdin.write_all(all.as_bytes()).unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut by_id = std::collections::BTreeMap::new();
    for line in stdout.lines().map_while(Result::ok) {
        if let Ok(v) = serde_json::from_str::<Value>(&line)
            && let Some(id) = v["id"].as_u64()
        {
            by_id.insert(id, v);
        }
        if ids.iter().all(|id| by_id.contains_key(id)) {
            break;
        }
    }
    (by_id, stdin)
}

/// `scryer <args>` on `db` as a client with only HOME and PATH would run it.
fn bare_command(db: &Path, home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(scryer_bin());
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("--db")
        .arg(db)
        .arg("--compile-cache")
        .arg(shared_compile_cache())
        .args(args);
    cmd
}

/// The same with `XDG_RUNTIME_DIR` and the rest of a desktop session's variables.
fn desktop_command(db: &Path, home: &Path, xdg: &Path, args: &[&str]) -> Command {
    let mut cmd = bare_command(db, home, args);
    cmd.env("XDG_RUNTIME_DIR", xdg)
        .env("SCRYER_DAEMON_IDLE", "20")
        .env("SCRYER_LOG", "warn");
    cmd
}

fn status_pid(cmd: &mut Command) -> Option<u32> {
    let out = cmd.output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("pid"))
        .and_then(|p| p.trim().parse().ok())
}

async fn tool_list(
    cmd: Command,
    cwd: &Path,
) -> (
    rmcp::service::RunningService<rmcp::RoleClient, ()>,
    Vec<String>,
) {
    let program = cmd.get_program().to_owned();
    let transport = TokioChildProcess::new(tokio::process::Command::new(program).configure(|c| {
        c.env_clear();
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                c.env(k, v);
            }
        }
        c.args(cmd.get_args()).current_dir(cwd);
    }))
    .unwrap();
    let client = ().serve(transport).await.expect("MCP handshake");
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    (client, names)
}

#[tokio::test]
async fn clients_passing_different_environments_share_one_daemon() {
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("index.db");
    let home = state.path().join("home");
    let xdg = state.path().join("xdg-run");
    for d in [&home, &xdg] {
        std::fs::create_dir_all(d).unwrap();
    }
    // A desktop client (its XDG_RUNTIME_DIR set) starts the daemon; a client passing
    // only HOME and PATH finds the same one.
    let (desktop, desktop_tools) =
        tool_list(desktop_command(&db, &home, &xdg, &["serve"]), state.path()).await;
    let (bare, bare_tools) = tool_list(bare_command(&db, &home, &["serve"]), state.path()).await;
    assert!(desktop_tools.len() >= 19, "{desktop_tools:?}");
    assert_eq!(desktop_tools, bare_tools);
    let pid_desktop = status_pid(&mut desktop_command(
        &db,
        &home,
        &xdg,
        &["daemon", "status"],
    ));
    let pid_bare = status_pid(&mut bare_command(&db, &home, &["daemon", "status"]));
    assert!(pid_desktop.is_some(), "a daemon runs");
    assert_eq!(pid_desktop, pid_bare, "one daemon for both environments");
    let out = bare_command(&db, &home, &["daemon", "status"])
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(status.contains("sessions 2 now"), "{status}");
    // The rendezvous sits beside the database, private.
    let run = PathBuf::from(format!("{}-run", db.display()));
    assert!(run.join("daemon.sock").exists(), "{}", run.display());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&run).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert!(
        std::fs::read_dir(&xdg).unwrap().next().is_none(),
        "nothing in XDG_RUNTIME_DIR"
    );
    let _ = desktop.cancel().await;
    let _ = bare.cancel().await;
    // Stopped from the bare environment, it is gone for the desktop one too.
    let out = bare_command(&db, &home, &["daemon", "stop"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("stopped the scryer daemon"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(
        status_pid(&mut desktop_command(
            &db,
            &home,
            &xdg,
            &["daemon", "status"]
        )),
        None
    );
}

#[tokio::test]
async fn a_database_in_use_names_its_holder_and_how_to_stop_it() {
    // Held by a daemon: its pid, its socket and `daemon stop`.
    let env = DaemonEnv::new();
    let client = env.client(env.state.path(), &[]).await;
    let pid = env.daemon_pid().expect("a daemon runs");
    let out = env
        .command(&["serve", "--no-daemon"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("is in use by another scryer process")
            && stderr.contains(&format!("pid {pid}"))
            && stderr.contains(&env.socket().display().to_string())
            && stderr.contains("daemon stop"),
        "{stderr}"
    );
    client.stop().await;

    // Held by an in-process server: its pid, its command and how to stop it.
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("index.db");
    let holder =
        TokioChildProcess::new(tokio::process::Command::new(scryer_bin()).configure(|c| {
            c.arg("--db")
                .arg(&db)
                .arg("--compile-cache")
                .arg(shared_compile_cache())
                .args(["serve", "--no-daemon"])
                .env("SCRYER_CONFIG_DIR", state.path().join("config"))
                .env("SCRYER_LOG", "warn")
                .env_remove("SCRYER_RUN_DIR");
        }))
        .unwrap();
    let holder_pid = holder.id().unwrap();
    let holder = ().serve(holder).await.unwrap();
    let out = Command::new(scryer_bin())
        .arg("--db")
        .arg(&db)
        .args(["serve", "--no-daemon"])
        .env("SCRYER_CONFIG_DIR", state.path().join("config"))
        .env_remove("SCRYER_RUN_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("pid {holder_pid}"))
            && stderr.contains("serve --no-daemon")
            && stderr.contains(&format!("kill {holder_pid}")),
        "{stderr}"
    );
    let _ = holder.cancel().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// The file a clean exit leaves beside the database (`seal_clean_exit`).
fn seal_of(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".clean");
    PathBuf::from(name)
}

/// Whether a write-ahead log with frames stands beside `db`.
fn has_log(db: &Path) -> bool {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    std::fs::metadata(PathBuf::from(name)).is_ok_and(|m| m.len() > 0)
}

/// `scryer index` and an in-process `scryer serve` fold their log into the file and
/// seal it at a clean exit, as the daemon does, so the next start skips the check of
/// every page (seconds on a large database); the next start takes the seal.
#[test]
fn scryer_index_and_an_in_process_serve_leave_the_database_sealed() {
    let state = tempfile::tempdir().unwrap();
    let db = state.path().join("index.db");
    let project = limits_project(true);
    let config = state.path().join("config");
    let indexed = Command::new(scryer_bin())
        .arg("--db")
        .arg(&db)
        .arg("--compile-cache")
        .arg(shared_compile_cache())
        .arg("index")
        .arg(project.path())
        .env("SCRYER_CONFIG_DIR", &config)
        .env("SCRYER_DAEMON", "off")
        .env("SCRYER_DEPENDENCIES", "off")
        .env("SCRYER_PRECISE", "off")
        .env_remove("SCRYER_RUN_DIR")
        .output()
        .unwrap();
    assert!(indexed.status.success(), "{indexed:?}");
    assert!(seal_of(&db).exists(), "`scryer index` sealed the file");
    assert!(!has_log(&db), "and left no log");

    // A piped session on that database answers, and its own clean exit seals again.
    let path = project.path().to_str().unwrap();
    let mut child = Command::new(scryer_bin())
        .arg("--db")
        .arg(&db)
        .arg("--compile-cache")
        .arg(shared_compile_cache())
        .args(["serve", "--no-daemon"])
        .current_dir(project.path())
        .env("SCRYER_CONFIG_DIR", &config)
        .env("SCRYER_DEPENDENCIES", "off")
        .env("SCRYER_PRECISE", "off")
        .env("SCRYER_LOG", "warn")
        .env_remove("SCRYER_RUN_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (by_id, stdin) = pipe_calls(
        &mut child,
        &[
            json!({"name":"find_references","arguments":{"symbol":"Limits","view":"files","project":path}}),
        ],
    );
    // The session's start took the seal: it speaks of one exit.
    assert!(!seal_of(&db).exists(), "the start took the seal");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let found: Value = serde_json::from_str(&tool_text(&by_id[&3])).unwrap();
    assert_eq!(
        found["definition"]["qualified_name"], "demo::Limits",
        "{found}"
    );
    assert!(
        seal_of(&db).exists(),
        "the session's clean exit sealed the file"
    );
    assert!(!has_log(&db), "and left no log");
}
