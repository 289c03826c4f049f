//! The daemon through the real binary: sessions of `scryer serve` share one daemon per
//! database yet keep their own context; a killed daemon is replaced on the next call;
//! the handshake keeps MCP bytes sent with it; `scryer daemon status|stop`.

// Roots are deprecated in rmcp (SEP-2577), yet clients in use send them.
#![allow(deprecated)]

use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, ListRootsResult, Root};
use rmcp::service::{RequestContext, RoleClient};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::daemon::DaemonEnv;
use crate::support::fixture_workspace;

/// A fixture workspace whose lib.rs also defines `marker`.
fn workspace_with(marker: &str) -> tempfile::TempDir {
    let ws = fixture_workspace();
    let lib = ws.path().join("src/lib.rs");
    let mut text = std::fs::read_to_string(&lib).unwrap();
    text.push_str(&format!("\npub fn {marker}() {{}}\n"));
    std::fs::write(lib, text).unwrap();
    ws
}

fn outline_names(outline: &Value) -> Vec<String> {
    outline["symbols"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn two_sessions_on_one_daemon_keep_their_own_active_project() {
    let env = DaemonEnv::new();
    let first = workspace_with("only_in_first");
    let second = workspace_with("only_in_second");
    let a = env.client(env.state.path(), &[]).await;
    let b = env.client(env.state.path(), &[]).await;
    for (c, ws) in [(&a, &first), (&b, &second)] {
        let answer = c
            .call_json(
                "index_workspace",
                json!({"path": ws.path().to_str().unwrap()}),
            )
            .await;
        assert_eq!(answer["state"], "ready", "{answer}");
    }
    assert_eq!(
        env.status_field("sessions").as_deref(),
        Some("2 now, 2 since start"),
        "both sessions go through one daemon"
    );
    // Interleaved calls from both sessions at once: each sees only its own project.
    for _ in 0..10 {
        let (oa, ob) = tokio::join!(
            a.call_json("get_file_outline", json!({"file_path": "src/lib.rs"})),
            b.call_json("get_file_outline", json!({"file_path": "src/lib.rs"})),
        );
        let (na, nb) = (outline_names(&oa), outline_names(&ob));
        assert!(
            na.contains(&"only_in_first".into()) && !na.contains(&"only_in_second".into()),
            "{oa}"
        );
        assert!(
            nb.contains(&"only_in_second".into()) && !nb.contains(&"only_in_first".into()),
            "{ob}"
        );
    }
    let (la, lb) = tokio::join!(
        a.call_json("list_projects", json!({})),
        b.call_json("list_projects", json!({})),
    );
    let active = |list: &Value| -> Vec<String> {
        list["projects"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["active"] == json!(true))
            .map(|p| p["root"].as_str().unwrap().to_string())
            .collect()
    };
    let root = |ws: &tempfile::TempDir| ws.path().canonicalize().unwrap().display().to_string();
    assert_eq!(active(&la), [root(&first)], "{la}");
    assert_eq!(active(&lb), [root(&second)], "{lb}");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_daemon_killed_mid_session_is_replaced_by_the_next_call() {
    let env = DaemonEnv::new();
    let ws = workspace_with("survives_the_crash");
    let c = env.client(env.state.path(), &[]).await;
    c.call_json(
        "index_workspace",
        json!({"path": ws.path().to_str().unwrap()}),
    )
    .await;
    let before = env.daemon_pid().expect("a daemon runs");
    let killed = std::process::Command::new("kill")
        .args(["-9", &before.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // Let the kill land: the client must notice a dead socket, not a slow one.
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The same MCP session goes on: the relay starts a daemon and replays initialize.
    let outline = c
        .call_json(
            "get_file_outline",
            json!({"file_path": ws.path().join("src/lib.rs").to_str().unwrap()}),
        )
        .await;
    assert!(
        outline_names(&outline).contains(&"survives_the_crash".into()),
        "{outline}"
    );
    let after = env.daemon_pid().expect("a new daemon runs");
    assert_ne!(before, after);
    // The session is a whole one again: later calls work too.
    let listed = c.call_json("list_projects", json!({})).await;
    assert_eq!(listed["total"], 1, "{listed}");
    c.stop().await;
}

/// Reads one line with a deadline.
async fn line<R: tokio::io::AsyncBufRead + Unpin>(r: &mut R) -> Value {
    let mut l = String::new();
    tokio::time::timeout(Duration::from_secs(60), r.read_line(&mut l))
        .await
        .expect("a line within 60 s")
        .unwrap();
    serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}"))
}

#[tokio::test]
async fn mcp_bytes_in_the_same_write_as_the_handshake_are_kept() {
    let env = DaemonEnv::new();
    // A first session starts the daemon.
    let c = env.client(env.state.path(), &[]).await;
    let stream = tokio::net::UnixStream::connect(env.socket()).await.unwrap();
    let (r, mut w) = stream.into_split();
    let hello = json!({"scryer": 1, "cwd": env.state.path(), "options": {"tools": "core"}});
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}});
    let initialized = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"});
    let bytes = format!("{hello}\n{init}\n{initialized}\n{list}\n");
    // One write, one segment: the daemon gets handshake and MCP together.
    w.write_all(bytes.as_bytes()).await.unwrap();
    let mut r = BufReader::new(r);
    let reply = line(&mut r).await;
    assert_eq!(reply["ok"], true, "{reply}");
    let init_answer = line(&mut r).await;
    assert_eq!(init_answer["id"], 1, "{init_answer}");
    assert_eq!(init_answer["result"]["serverInfo"]["name"], "scryer");
    let tools = line(&mut r).await;
    assert_eq!(tools["id"], 2, "{tools}");
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    // The handshake's options apply: the core profile.
    assert!(names.contains(&"find_references"), "{names:?}");
    assert!(!names.contains(&"delete_project"), "{names:?}");
    c.stop().await;
}

#[tokio::test]
async fn bad_handshakes_are_refused_with_the_reason() {
    let env = DaemonEnv::new();
    let c = env.client(env.state.path(), &[]).await;
    for (hello, expected) in [
        ("not json\n".to_string(), "not valid JSON"),
        (format!("{}\n", json!({"scryer": 99})), "version 99"),
        (format!("{}\n", json!({"scryer": 1})), "cwd"),
        (
            format!(
                "{}\n",
                json!({"scryer": 1, "cwd": "/", "options": {"project": "nope"}})
            ),
            "unknown project",
        ),
    ] {
        let stream = tokio::net::UnixStream::connect(env.socket()).await.unwrap();
        let (r, mut w) = stream.into_split();
        w.write_all(hello.as_bytes()).await.unwrap();
        let reply = line(&mut BufReader::new(r)).await;
        assert_eq!(reply["ok"], false, "{reply}");
        assert!(
            reply["error"].as_str().unwrap().contains(expected),
            "{expected}: {reply}"
        );
    }
    // The daemon is unharmed.
    c.call_json("list_projects", json!({})).await;
    c.stop().await;
}

#[tokio::test]
async fn daemon_status_and_stop() {
    let env = DaemonEnv::new();
    let none = env.command(&["daemon", "status"]).output().unwrap();
    assert!(!none.status.success());
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("no scryer daemon is running"),
        "{none:?}"
    );
    let c = env.client(env.state.path(), &[]).await;
    let status = env.status().expect("running");
    for field in ["pid", "socket", "uptime", "sessions 1 now"] {
        assert!(status.contains(field), "{field}: {status}");
    }
    // Only one daemon per database: a second one is refused, naming the first.
    let second = env.command(&["daemon", "run"]).output().unwrap();
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("already running"), "{err}");
    assert!(
        err.contains(&env.daemon_pid().unwrap().to_string()),
        "{err}"
    );

    let stop = env.command(&["daemon", "stop"]).output().unwrap();
    assert!(stop.status.success(), "{stop:?}");
    assert!(String::from_utf8_lossy(&stop.stdout).contains("stopped"));
    assert!(env.status().is_none());
    assert!(!env.socket_exists());
    // The client's session goes on with a new daemon.
    c.call_json("list_projects", json!({})).await;
    assert!(env.status().is_some());
    c.stop().await;
}

/// The daemon runs without transparent huge pages (with them, reusing memory mimalloc had
/// returned zeroed a 2 MiB page each time: half of a start's CPU).
#[tokio::test]
async fn the_daemon_runs_without_transparent_huge_pages() {
    let env = DaemonEnv::new();
    let c = env.client(env.state.path(), &[]).await;
    let pid = env.daemon_pid().expect("running");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let thp = status
        .lines()
        .find_map(|l| l.strip_prefix("THP_enabled:"))
        .map(str::trim);
    // Kernels before 5.0 do not report the flag; every machine this runs on does.
    assert_eq!(thp, Some("0"), "{status}");
    c.stop().await;
}

#[tokio::test]
async fn an_idle_daemon_exits_and_serve_no_daemon_uses_none() {
    let env = DaemonEnv::new();
    let c = env.client(env.state.path(), &[]).await;
    c.call_json("list_projects", json!({})).await;
    c.stop().await;
    // SCRYER_DAEMON_IDLE=1 for this daemon would race the status call above; instead
    // start one with a short idle time by hand.
    let stop = env.command(&["daemon", "stop"]).output().unwrap();
    assert!(stop.status.success());
    let mut run = env.command(&["daemon", "run"]);
    run.env("SCRYER_DAEMON_IDLE", "1");
    let started = std::time::Instant::now();
    let out = run.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Idle"),
        "{out:?}"
    );

    // In-process serving starts no daemon.
    let c = env.client(env.state.path(), &["--no-daemon"]).await;
    c.call_json("list_projects", json!({})).await;
    assert!(env.status().is_none());
    c.stop().await;
}

#[tokio::test]
async fn the_session_cwd_decides_relative_paths_and_is_registered_when_a_project() {
    let env = DaemonEnv::new();
    let ws = workspace_with("found_from_the_cwd");
    // The daemon runs from `/`; this session's cwd is the workspace's src directory's
    // parent, a project root nobody registered.
    let c = env.client(ws.path(), &[]).await;
    let outline = c
        .call_json("get_file_outline", json!({"file_path": "src/lib.rs"}))
        .await;
    assert!(
        outline_names(&outline).contains(&"found_from_the_cwd".into()),
        "{outline}"
    );
    let listed = c.call_json("list_projects", json!({})).await;
    assert_eq!(listed["total"], 1, "{listed}");
    c.stop().await;

    // From a subdirectory, a relative path joins onto the session's cwd.
    let c = env.client(&ws.path().join("src"), &[]).await;
    let outline = c
        .call_json("get_file_outline", json!({"file_path": "lib.rs"}))
        .await;
    assert!(
        outline_names(&outline).contains(&"found_from_the_cwd".into()),
        "{outline}"
    );
    c.stop().await;
}

/// A client that offers roots and lists one directory.
#[derive(Clone)]
struct RootsClient {
    root: String,
}

impl ClientHandler for RootsClient {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities = ClientCapabilities::builder().enable_roots().build();
        info
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        Ok(ListRootsResult::new(vec![Root::new(self.root.clone())]))
    }
}

#[tokio::test]
async fn client_roots_stand_in_for_the_cwd() {
    let env = DaemonEnv::new();
    let first = workspace_with("only_in_first");
    let second = workspace_with("only_in_second");
    let indexer = env.client(env.state.path(), &[]).await;
    for ws in [&first, &second] {
        indexer
            .call_json(
                "index_workspace",
                json!({"path": ws.path().to_str().unwrap()}),
            )
            .await;
    }
    indexer.stop().await;
    let uri = format!("file://{}", second.path().canonicalize().unwrap().display());
    let c = env
        .client_with(env.state.path(), &[], RootsClient { root: uri })
        .await;
    let outline = c
        .call_json("get_file_outline", json!({"file_path": "src/lib.rs"}))
        .await;
    let names = outline_names(&outline);
    assert!(names.contains(&"only_in_second".into()), "{outline}");
    assert!(!names.contains(&"only_in_first".into()), "{outline}");
    c.stop().await;
}
