//! A checked-out repository is untrusted input; an agent may be confused. Through the
//! real binary, class by class (ADR 0017, docs/learnings/reliability.md):
//! - nothing outside a project root enters the index: links to files and directories,
//!   a parent directory swapped for a link, a link appearing after the first index, and
//!   an indexed file replaced by a link, on the walk, the watcher, refresh and re-index;
//! - special files are never opened and reads are capped: FIFOs, a character device, a
//!   FIFO named like an ignore file or an ADR, a file over the source cap;
//! - tools that write or delete act only on a project the call or session named;
//! - concurrent `record_adr` from several sessions give one file per number;
//! - every malformed JSON-RPC line gets its JSON-RPC error, over stdio (daemon and
//!   in-process) and HTTP, and the session keeps serving.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support;
use crate::support::daemon::DaemonEnv;
use crate::support::{Scryer, scryer_bin, shared_compile_cache};

/// `<tmp>/proj` (a crate) and `<tmp>/outside` (files the project must never index).
fn project_and_outside() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::Builder::new()
        .prefix("scryer-security-")
        .tempdir()
        .unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("proj");
    let outside = base.join("outside");
    std::fs::create_dir_all(root.join("src/inner")).unwrap();
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::create_dir_all(outside.join("inner")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"secdemo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "pub mod inner;\npub fn inside_fn() {}\n",
    )
    .unwrap();
    std::fs::write(root.join("src/victim.rs"), "pub fn victim_original() {}\n").unwrap();
    std::fs::write(
        root.join("src/inner/mod.rs"),
        "pub fn inner_original() {}\n",
    )
    .unwrap();
    let leak = |name: &str| format!("/// LEAKED-DOC\npub fn leak_{name}() {{}}\n");
    std::fs::write(outside.join("secret.rs"), leak("file")).unwrap();
    std::fs::write(outside.join("dir/deep.rs"), leak("dir")).unwrap();
    std::fs::write(outside.join("inner/mod.rs"), leak("inner")).unwrap();
    std::fs::write(outside.join("late.rs"), leak("late")).unwrap();
    (tmp, root, outside)
}

/// Every hit of `search_symbols(query)` as `file_path: qualified_name`.
async fn hits(s: &Scryer, query: &str) -> Vec<String> {
    let v = s.call_json("search_symbols", json!({"query": query})).await;
    v["hits"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|h| {
                    format!(
                        "{}: {}",
                        h["file_path"].as_str().unwrap_or(""),
                        h["qualified_name"]
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The hits of `search_symbols(name)` that are `name` itself (the search also finds
/// symbols sharing a word with it).
async fn named(s: &Scryer, name: &str) -> Vec<String> {
    let suffix = format!("::{name}\"");
    hits(s, name)
        .await
        .into_iter()
        .filter(|h| h.ends_with(&suffix))
        .collect()
}

/// Hits of a search for `leak` that are outside symbols (`leak_*`).
async fn leaks(s: &Scryer) -> Vec<String> {
    hits(s, "leak")
        .await
        .into_iter()
        .filter(|h| h.contains("leak_"))
        .collect()
}

/// Polls `check` every 200 ms for up to 20 s; panics with `what` if it never holds.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let started = Instant::now();
    loop {
        match check().await {
            Ok(()) => return,
            Err(last) if started.elapsed() > Duration::from_secs(20) => {
                panic!("{what}: still not true after 20 s; last: {last}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

async fn status_text(s: &Scryer, root: &Path) -> String {
    let (text, is_error) = s
        .call(
            "get_indexing_status",
            json!({"project": root.to_str().unwrap()}),
        )
        .await;
    assert!(!is_error, "{text}");
    text
}

#[tokio::test]
async fn links_leaving_the_root_never_enter_the_index_on_any_path() {
    let (_tmp, root, outside) = project_and_outside();
    // At the first index: a file link and a directory link out of the root, and a link
    // inside the root (not counted: its target is indexed under its own path).
    symlink(outside.join("secret.rs"), root.join("src/out_file.rs")).unwrap();
    symlink(outside.join("dir"), root.join("src/out_dir")).unwrap();
    symlink(root.join("src/victim.rs"), root.join("src/in_link.rs")).unwrap();
    let s = Scryer::start(&[], &[]).await;
    let first = s.index(&root).await;
    let notes = first["notes"].to_string();
    assert!(
        notes.contains("skipped: 2 links leaving the root"),
        "{first}"
    );
    assert!(
        notes.contains("src/out_dir") && notes.contains("src/out_file.rs"),
        "{notes}"
    );
    assert_eq!(leaks(&s).await, Vec::<String>::new());
    assert_eq!(named(&s, "victim_original").await.len(), 1);

    // After it: an indexed file replaced by a link, a parent directory swapped for one,
    // a new link appearing. The watcher, refreshes and a re-index all see them.
    std::fs::remove_file(root.join("src/victim.rs")).unwrap();
    symlink(outside.join("secret.rs"), root.join("src/victim.rs")).unwrap();
    std::fs::remove_dir_all(root.join("src/inner")).unwrap();
    symlink(outside.join("inner"), root.join("src/inner")).unwrap();
    symlink(outside.join("late.rs"), root.join("src/late.rs")).unwrap();
    eventually(
        "the replaced and swapped files are dropped, the new link counted",
        || async {
            let status = status_text(&s, &root).await;
            let victim = named(&s, "victim_original").await;
            let inner = named(&s, "inner_original").await;
            if status.contains("src/late.rs") && victim.is_empty() && inner.is_empty() {
                Ok(())
            } else {
                Err(format!("{status}\nvictim: {victim:?}\ninner: {inner:?}"))
            }
        },
    )
    .await;
    assert_eq!(leaks(&s).await, Vec::<String>::new());

    // A call naming the link (a refresh of a named file) is refused and indexes nothing.
    for path in [
        "src/victim.rs",
        "src/inner/mod.rs",
        "src/late.rs",
        "src/out_dir/deep.rs",
    ] {
        let (text, is_error) = s.call("get_file_outline", json!({"file_path": path})).await;
        assert!(is_error, "{path}: {text}");
        assert!(!text.contains("leak_"), "{path}: {text}");
    }
    let again = s.index(&root).await;
    let notes = again["notes"].to_string();
    // The link inside the root now leads out too, through the replaced file.
    assert!(
        notes.contains("skipped: 6 links leaving the root"),
        "{again}"
    );
    for name in [
        "src/inner",
        "src/late.rs",
        "src/victim.rs",
        "src/in_link.rs",
    ] {
        assert!(notes.contains(name), "{name} is not named: {notes}");
    }
    assert_eq!(leaks(&s).await, Vec::<String>::new());
    let (text, _) = s.call("inspect_symbol", json!({"name": "leak_file"})).await;
    assert!(!text.contains("LEAKED-DOC"), "{text}");
    s.stop().await;
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// A character device like `/dev/zero` named like a source file, when this user may
/// make one (root); `false` otherwise.
fn mknod_zero(path: &Path) -> bool {
    let made = Command::new("mknod")
        .arg(path)
        .args(["c", "1", "5"])
        .status()
        .is_ok_and(|s| s.success());
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    assert!(made || !root, "root could not mknod {}", path.display());
    made
}

/// Calls `tool`, which must answer an error within 20 s (a read of a FIFO would block,
/// one of /dev/zero would never end).
async fn refused_quickly(s: &Scryer, tool: &str, args: Value) -> String {
    let call = s.call(tool, args.clone());
    let (text, is_error) = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .unwrap_or_else(|_| panic!("{tool} {args} did not answer: a special file was read"));
    assert!(is_error, "{tool} {args}: {text}");
    text
}

#[tokio::test]
async fn special_files_are_never_opened_and_reads_are_capped() {
    let (_tmp, root, _outside) = project_and_outside();
    std::fs::create_dir_all(root.join("docs/adr")).unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(
        root.join("docs/adr/0001-real.md"),
        "---\nnumber: 1\ntitle: Real decision\nstatus: accepted\n---\n\n# Real decision\n",
    )
    .unwrap();
    mkfifo(&root.join("src/pipe.rs"));
    mkfifo(&root.join("sub/.gitignore"));
    mkfifo(&root.join("docs/adr/0002-fifo.md"));
    let device = mknod_zero(&root.join("src/zero.rs"));
    std::fs::write(root.join("sub/ok.rs"), "pub fn in_sub() {}\n").unwrap();
    // Over the 4 MiB source cap.
    let huge = "pub fn huge_fn() {}\n".repeat(250_000);
    std::fs::write(root.join("src/huge.rs"), &huge).unwrap();

    let s = Scryer::start(&[], &[]).await;
    let first = tokio::time::timeout(Duration::from_secs(60), s.index(&root))
        .await
        .expect("indexing a tree with FIFOs and devices finishes");
    let notes = first["notes"].to_string();
    assert!(
        notes.contains("too large (over 4 MiB), not indexed: src/huge.rs"),
        "{first}"
    );
    assert_eq!(
        named(&s, "in_sub").await.len(),
        1,
        "the FIFO .gitignore blocked nothing"
    );
    assert!(named(&s, "huge_fn").await.is_empty());

    let mut specials = vec!["src/pipe.rs", "src/huge.rs"];
    if device {
        specials.push("src/zero.rs");
    }
    for path in &specials {
        let text = refused_quickly(&s, "get_file_outline", json!({"file_path": path})).await;
        let expected = if *path == "src/huge.rs" {
            "too large"
        } else {
            "not a regular file"
        };
        assert!(text.contains(expected), "{path}: {text}");
        refused_quickly(
            &s,
            "get_enclosing_scope",
            json!({"file_path": path, "line": 1}),
        )
        .await;
    }
    // A FIFO appearing after the first index (the watcher sees it) and one named like an
    // ADR: the server goes on answering, and the ADR listing skips the FIFO.
    mkfifo(&root.join("src/late_pipe.rs"));
    tokio::time::sleep(Duration::from_secs(2)).await;
    refused_quickly(
        &s,
        "get_file_outline",
        json!({"file_path": "src/late_pipe.rs"}),
    )
    .await;
    let adrs = tokio::time::timeout(
        Duration::from_secs(20),
        s.call_json("query_adrs", json!({})),
    )
    .await
    .expect("query_adrs answers beside a FIFO in docs/adr");
    assert_eq!(adrs["items"].as_array().map(Vec::len), Some(1), "{adrs}");
    let again = tokio::time::timeout(Duration::from_secs(60), s.index(&root))
        .await
        .expect("re-indexing beside FIFOs finishes");
    assert_eq!(again["state"], "ready");
    s.stop().await;
}

/// Two projects, each with one decision record, indexed by one session.
fn two_projects(base: &Path) -> Vec<PathBuf> {
    ["alpha", "beta"]
        .iter()
        .map(|name| {
            let root = base.join(name);
            std::fs::create_dir_all(root.join("src")).unwrap();
            std::fs::create_dir_all(root.join("docs/adr")).unwrap();
            std::fs::write(
                root.join("Cargo.toml"),
                format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n"),
            )
            .unwrap();
            std::fs::write(root.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
            std::fs::write(
                root.join("docs/adr/0001-first.md"),
                "---\nnumber: 1\ntitle: First\nstatus: accepted\n---\n\n# First\n",
            )
            .unwrap();
            root
        })
        .collect()
}

fn adr_files(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root.join("docs/adr"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn writing_tools_act_only_on_a_project_the_call_or_session_named() {
    let env = DaemonEnv::new();
    let base = env.state.path().canonicalize().unwrap().join("work");
    let roots = two_projects(&base);
    let first = env.client(&base, &[]).await;
    for root in &roots {
        first
            .call_json("index_workspace", json!({"path": root.to_str().unwrap()}))
            .await;
    }
    // A second session that names nothing (its cwd is no project).
    let second = env.client(&base, &[]).await;
    let writes = [
        ("record_adr", json!({"title": "Unnamed", "decision": "d"})),
        ("delete_adr", json!({"adr_number": 1})),
        ("delete_project", json!({})),
    ];
    for (tool, args) in &writes {
        let (text, is_error) = second.call(tool, args.clone()).await;
        assert!(is_error, "{tool} acted without a named project: {text}");
        assert!(text.contains("pass `project`"), "{tool}: {text}");
    }
    // The active project of the first session is deleted: one project is left, and a
    // write without `project` still does not fall back to it.
    first
        .call_json(
            "delete_project",
            json!({"project": roots[1].to_str().unwrap()}),
        )
        .await;
    for (tool, args) in &writes[..2] {
        let (text, is_error) = first.call(tool, args.clone()).await;
        assert!(is_error, "{tool} fell back to the only project: {text}");
        assert!(text.contains("pass `project`"), "{tool}: {text}");
    }
    assert_eq!(adr_files(&roots[0]), ["0001-first.md"]);
    assert_eq!(adr_files(&roots[1]), ["0001-first.md"]);
    // Reads keep the fallback; a named project is written.
    let read = second.call_json("query_adrs", json!({})).await;
    assert_eq!(read["items"].as_array().map(Vec::len), Some(1), "{read}");
    let named = json!({"title": "Named", "decision": "d", "project": roots[0].to_str().unwrap()});
    let recorded = second.call_json("record_adr", named).await;
    assert_eq!(recorded["recorded"]["number"], 2, "{recorded}");
    first.stop().await;
    second.stop().await;
}

#[tokio::test]
async fn concurrent_record_adr_from_several_sessions_gives_one_file_per_number() {
    let env = DaemonEnv::new();
    let base = env.state.path().canonicalize().unwrap().join("work");
    let root = two_projects(&base).remove(0);
    let project = root.to_str().unwrap().to_string();
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(env.client(&base, &[]).await);
    }
    clients[0]
        .call_json("index_workspace", json!({"path": project}))
        .await;
    // Four sessions record three decisions each at once, reading (and purging orphans)
    // between their writes.
    let run = |c: usize| {
        let client = &clients[c];
        let project = project.clone();
        async move {
            let mut out = Vec::new();
            for k in 0..3 {
                let title = format!("Session {c} decision {k}");
                let args = json!({"title": title, "decision": "d", "project": project});
                out.push(client.call("record_adr", args).await);
                let (text, is_error) = client.call("query_adrs", json!({"project": project})).await;
                assert!(!is_error, "{text}");
            }
            out
        }
    };
    let (a, b, c, d) = tokio::join!(run(0), run(1), run(2), run(3));
    let answers: Vec<(String, bool)> = [a, b, c, d].into_iter().flatten().collect();
    let mut numbers = Vec::new();
    for (text, is_error) in &answers {
        assert!(!is_error, "{text}");
        if let Ok(v) = serde_json::from_str::<Value>(text)
            && let Some(n) = v["recorded"]["number"].as_u64()
        {
            numbers.push(n);
        }
    }
    numbers.sort_unstable();
    assert_eq!(numbers, (2..=13).collect::<Vec<u64>>());
    let files = adr_files(&root);
    assert_eq!(files.len(), 13, "{files:?}");
    let mut prefixes: Vec<&str> = files.iter().map(|f| &f[..4]).collect();
    prefixes.dedup();
    assert_eq!(prefixes.len(), 13, "two files share a number: {files:?}");
    let all = clients[1]
        .call_json("query_adrs", json!({"project": project}))
        .await;
    assert_eq!(all["total"], 13, "{all}");
    for c in clients {
        c.stop().await;
    }
}

/// `scryer serve` spoken to line by line, without an MCP client.
struct RawServe {
    child: Child,
    stdin: ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl RawServe {
    fn start(state: &Path, vars: &[(&'static str, String)], extra: &[&str]) -> RawServe {
        let mut cmd = Command::new(scryer_bin());
        cmd.arg("--db")
            .arg(state.join("index.db"))
            .arg("--compile-cache")
            .arg(shared_compile_cache())
            .arg("serve")
            .args(extra)
            .env("SCRYER_LOG", "warn")
            .env("SCRYER_CONFIG_DIR", state.join("config"))
            .current_dir(state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawning scryer serve");
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut raw = RawServe {
            child,
            stdin,
            lines,
        };
        raw.send(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#);
        assert!(raw.recv()["result"]["serverInfo"].is_object());
        raw.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    fn send(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message, within 30 s.
    fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("an answer within 30 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }
}

impl Drop for RawServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Malformed lines of every class: the line, the expected error code, the id to echo
/// and a word the message must contain.
fn malformed() -> Vec<(Vec<u8>, i64, Value, &'static str)> {
    let msg = |id: &str, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{params}}}"#).into_bytes()
    };
    let deep = format!("{{\"a\":{}{}}}", "[".repeat(200), "]".repeat(200));
    let call = |id: u64, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
            .into_bytes()
    };
    let mut bad_utf8 = msg("16", r#"{"x":"?"}"#);
    let at = bad_utf8.iter().position(|&b| b == b'?').unwrap();
    bad_utf8[at] = 0xff;
    vec![
        (msg("10", &deep), -32700, json!(10), "128"),
        (msg("11", r#"{"x":NaN}"#), -32700, json!(11), "parse error"),
        (
            msg("12", r#"{"x":1e400}"#),
            -32700,
            json!(12),
            "parse error",
        ),
        (
            msg("13", &format!(r#"{{"x":{}}}"#, "7".repeat(5000))),
            -32700,
            json!(13),
            "parse error",
        ),
        (
            msg("\"s14\"", r#"{"x":"\ud800"}"#),
            -32700,
            json!("s14"),
            "parse error",
        ),
        (
            br#"{"jsonrpc":"2.0","id":15,"method":"tools/li"#.to_vec(),
            -32700,
            json!(15),
            "truncated",
        ),
        (bad_utf8, -32700, json!(16), "UTF-8"),
        (
            br#"{"id":1,"method":"ping"}]"#.to_vec(),
            -32700,
            json!(1),
            "parse error",
        ),
        (
            br#"[{"jsonrpc":"2.0","id":17,"method":"ping"}]"#.to_vec(),
            -32600,
            Value::Null,
            "batch",
        ),
        (br#""hello""#.to_vec(), -32600, Value::Null, "object"),
        (
            br#"{"jsonrpc":"1.0","id":18,"method":"ping"}"#.to_vec(),
            -32600,
            json!(18),
            "jsonrpc",
        ),
        (
            br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#.to_vec(),
            -32600,
            Value::Null,
            "id",
        ),
        (
            call(19, r#"{"name":"list_projects","arguments":[1,2]}"#),
            -32602,
            json!(19),
            "params.arguments",
        ),
        (
            call(20, r#"{"name":"list_projects","arguments":"all"}"#),
            -32602,
            json!(20),
            "params.arguments",
        ),
        (
            call(21, r#"{"arguments":{}}"#),
            -32602,
            json!(21),
            "params.name",
        ),
        (call(22, r#""list_projects""#), -32602, json!(22), "params"),
    ]
}

/// Sends every malformed line, expects its error, then a normal request still works.
fn every_malformed_line_is_answered(raw: &mut RawServe) {
    for (line, code, id, word) in malformed() {
        raw.send(&line);
        let answer = raw.recv();
        let shown = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
        assert_eq!(answer["error"]["code"], code, "{shown}: {answer}");
        assert_eq!(answer["id"], id, "{shown}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or("");
        assert!(
            message.contains(word),
            "{shown}: {message:?} does not say {word:?}"
        );
    }
    raw.send(br#"{"jsonrpc":"2.0","id":99,"method":"tools/list"}"#);
    let list = raw.recv();
    assert_eq!(list["id"], 99, "{list}");
    assert!(
        list["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{list}"
    );
}

#[test]
fn malformed_json_rpc_gets_its_error_through_the_daemon_relay() {
    let env = DaemonEnv::new();
    let mut raw = RawServe::start(env.state.path(), &env.vars(), &[]);
    every_malformed_line_is_answered(&mut raw);
}

#[test]
fn malformed_json_rpc_gets_its_error_in_process() {
    let state = tempfile::tempdir().unwrap();
    let mut raw = RawServe::start(state.path(), &[("SCRYER_DAEMON", "off".into())], &[]);
    every_malformed_line_is_answered(&mut raw);
}

#[test]
fn malformed_json_rpc_gets_its_error_over_http() {
    let server = support::http::HttpServer::start();
    let session = server.session();
    for (line, code, id, word) in malformed() {
        let r = support::http::post(
            &server.addr,
            &server.addr,
            Some(&server.token),
            Some(&session.id),
            &line,
        );
        let shown = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
        assert_eq!(r.status, 400, "{shown}: {}", r.body);
        let answer: Value =
            serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{e}: {}", r.body));
        assert_eq!(answer["error"]["code"], code, "{shown}: {answer}");
        assert_eq!(answer["id"], id, "{shown}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains(word),
            "{answer}"
        );
    }
    let listed = session.request("tools/list", json!({}));
    assert!(
        listed["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{listed}"
    );
}

/// A fake cargo home whose registry holds `evil 0.1.0`: `src/lib.rs` defines `evil_ok`,
/// `src/leak.rs` and `src/linked/` are links to files outside the crate's directory.
fn cargo_home_with_a_linking_crate(base: &Path, outside: &Path) -> PathBuf {
    let home = base.join("cargo-home");
    let krate = home.join("registry/src/index.crates.io-0000000000000000/evil-0.1.0");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"evil\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::write(
        krate.join("src/lib.rs"),
        "pub mod leak;\npub mod linked;\npub fn evil_ok() {}\n",
    )
    .unwrap();
    symlink(outside.join("secret.rs"), krate.join("src/leak.rs")).unwrap();
    symlink(outside.join("dir"), krate.join("src/linked")).unwrap();
    home
}

#[tokio::test]
async fn a_dependency_crate_is_rooted_at_its_own_directory() {
    let (tmp, root, outside) = project_and_outside();
    let base = tmp.path().canonicalize().unwrap();
    let home = cargo_home_with_a_linking_crate(&base, &outside);
    std::fs::write(
        root.join("Cargo.lock"),
        "version = 4\n\n[[package]]\nname = \"evil\"\nversion = \"0.1.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"secdemo\"\nversion = \"0.1.0\"\ndependencies = [\n \"evil\",\n]\n",
    )
    .unwrap();
    let s = Scryer::start(&[], &[("CARGO_HOME", home.to_str().unwrap())]).await;
    s.index(&root).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let outline = loop {
        let (text, is_error) = s
            .call("get_crate_outline", json!({"crate_name": "evil"}))
            .await;
        if !is_error && text.contains("\"modules\"") {
            break text;
        }
        assert!(
            Instant::now() < deadline,
            "evil was not indexed within 60 s: {text}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    assert!(outline.contains("evil_ok"), "{outline}");
    assert!(
        !outline.contains("leak_") && !outline.contains("LEAKED"),
        "{outline}"
    );
    s.stop().await;
}
