//! Hot swap through the real binary: a plugin replaced while a stream of calls runs
//! fails no call, its new tool is listed after `notifications/tools/list_changed`
//! reaches the client, a broken replacement (bytes that are no component and do not
//! match the receipt) leaves the loaded version serving, and a removal takes the tools
//! away. Once in-process (`serve --no-daemon`) and once through the daemon.
//!
//! The plugin is a `scryer plugin new` project, built as version 0.1.0 and again as
//! 0.2.0 with an extra tool.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::support;
use crate::support::daemon::DaemonEnv;
use crate::support::plugin_build::{build_plugin, edit, new_plugin};
use crate::support::{plugin_ok, scryer_bin, shared_compile_cache};

/// Counts `notifications/tools/list_changed`.
#[derive(Clone)]
struct ListChanged(Arc<watch::Sender<u32>>);

impl ClientHandler for ListChanged {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.send_modify(|n| *n += 1);
    }
}

/// The bytes of version 0.1.0 (one tool, `greeter_words`) and 0.2.0 (also
/// `greeter_version`) of one plugin, built once per test binary beside the shared
/// template target dir. The project path must stay fixed: cargo names a path
/// package's build without its location but checks freshness against the files it was
/// last built from, so a 0.2.0 built elsewhere would be "fresh" and copied as v2. A
/// lock keeps another run of this suite on the same target dir from deleting or editing
/// the project meanwhile, and the tests use the bytes, not files another run removes.
fn builds() -> &'static (Vec<u8>, Vec<u8>) {
    static BUILT: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let _lock = support::plugin_build::lock_template_dir("hot-swap-fixture");
        let dir = support::plugin_build::template_target_dir().join("hot-swap-fixture");
        let _ = std::fs::remove_dir_all(&dir);
        let project = new_plugin("greeter", &dir.join("greeter"));
        // Built without the manifest beside it: these tests are about swapping.
        let v1 = build_plugin(&project, "greeter", &dir.join("v1/greeter.wasm"));
        edit(
            &project.join("Cargo.toml"),
            "version = \"0.1.0\"",
            "version = \"0.2.0\"",
        );
        let lib = project.join("src/lib.rs");
        edit(
            &lib,
            "            WORDS => words(host, args, ctx),",
            "            WORDS => words(host, args, ctx),\n            \
             \"greeter_version\" => Ok(format!(\"{{\\\"version\\\":\\\"{}\\\"}}\", Self::VERSION)),",
        );
        edit(
            &lib,
            "                1000,\n            )\n        }]",
            "                1000,\n            )\n        }, ToolSpec::query(\"greeter_version\", \
             \"The plugin's version.\", json!({\"type\": \"object\", \"properties\": {}}), 100)]",
        );
        let v2 = build_plugin(&project, "greeter", &dir.join("v2/greeter.wasm"));
        (std::fs::read(v1).unwrap(), std::fs::read(v2).unwrap())
    })
}

/// Writes one built version into the test's state directory (beside `cfg`), for
/// `scryer plugin add`.
fn fixture(cfg: &Path, version: &str, bytes: &[u8]) -> PathBuf {
    let path = cfg.parent().unwrap().join(version).join("greeter.wasm");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

async fn call(peer: &Peer<RoleClient>, tool: &str, args: Value) -> Result<String, String> {
    let Value::Object(args) = args else {
        unreachable!()
    };
    let args: JsonObject = args;
    match peer
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
    {
        Err(e) => Err(format!("protocol error: {e}")),
        Ok(r) => {
            let text = r
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect::<Vec<_>>()
                .join("\n");
            if r.is_error.unwrap_or(false) {
                Err(text)
            } else {
                Ok(text)
            }
        }
    }
}

async fn tool_names(peer: &Peer<RoleClient>) -> Vec<String> {
    peer.list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// Waits until the client has seen more than `seen` list_changed notifications.
async fn next_list_changed(rx: &mut watch::Receiver<u32>, seen: u32) -> u32 {
    tokio::time::timeout(Duration::from_secs(20), rx.wait_for(|n| *n > seen))
        .await
        .expect("no notifications/tools/list_changed within 20 s")
        .map(|n| *n)
        .unwrap()
}

/// Waits for the server's first load of the installed plugins (done after the
/// handshake; its serving report is written then) and for the list_changed it may have
/// sent this session; returns the notifications seen so far.
async fn first_load(cfg: &Path, rx: &mut watch::Receiver<u32>) -> u32 {
    let reported = || {
        std::fs::read_dir(cfg.join("plugins")).is_ok_and(|d| {
            d.filter_map(|e| e.ok())
                .any(|e| e.file_name().to_string_lossy().starts_with(".serving-"))
        })
    };
    tokio::time::timeout(Duration::from_secs(30), async {
        while !reported() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("no serving report within 30 s");
    // The notification of that load, if this session was open before it, is in flight.
    let _ = tokio::time::timeout(Duration::from_secs(1), rx.wait_for(|n| *n > 0)).await;
    *rx.borrow()
}

/// Calls `greeter_words` from 3 tasks until stopped; counts answers and failures.
struct Stream {
    stop: Arc<AtomicBool>,
    ok: Arc<AtomicU32>,
    failures: Arc<std::sync::Mutex<Vec<String>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Stream {
    fn start(peer: &Peer<RoleClient>) -> Stream {
        let stop = Arc::new(AtomicBool::new(false));
        let ok = Arc::new(AtomicU32::new(0));
        let failures = Arc::new(std::sync::Mutex::new(Vec::new()));
        let tasks = (0..3)
            .map(|i| {
                let (peer, stop, ok, failures) =
                    (peer.clone(), stop.clone(), ok.clone(), failures.clone());
                tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        let text = format!("swap {i} swap call");
                        let answer = call(&peer, "greeter_words", json!({"text": text})).await;
                        let counted = answer.as_ref().ok().and_then(|t| {
                            let v: Value = serde_json::from_str(t).ok()?;
                            (v["words"][0] == json!({"word": "swap", "count": 2})).then_some(())
                        });
                        if counted.is_some() {
                            ok.fetch_add(1, Ordering::Relaxed);
                        } else {
                            // One failure is enough to fail the test: stop the stream.
                            failures.lock().unwrap().push(format!("{answer:?}"));
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        Stream {
            stop,
            ok,
            failures,
            tasks,
        }
    }

    fn answered(&self) -> u32 {
        self.ok.load(Ordering::Relaxed)
    }

    /// Waits until the stream answered `more` further calls.
    async fn advance(&self, more: u32) {
        let target = self.answered() + more;
        tokio::time::timeout(Duration::from_secs(30), async {
            while self.answered() < target && self.failures.lock().unwrap().is_empty() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the stream of calls stalled");
        let failures = self.failures.lock().unwrap();
        assert!(failures.is_empty(), "a call failed: {failures:?}");
    }

    async fn finish(self) -> (u32, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.tasks {
            t.await.unwrap();
        }
        let failures = self.failures.lock().unwrap().clone();
        (self.ok.load(Ordering::Relaxed), failures)
    }
}

/// The whole scenario against one running session whose plugins live in `cfg`.
async fn swap_scenario(
    cfg: &Path,
    client: &RunningService<RoleClient, ListChanged>,
    mut changes: watch::Receiver<u32>,
) {
    let v2 = fixture(cfg, "v2", &builds().1);
    let peer = client.peer().clone();
    let base = first_load(cfg, &mut changes).await;
    let names = tool_names(&peer).await;
    assert!(names.iter().any(|n| n == "greeter_words"), "{names:?}");
    assert!(!names.iter().any(|n| n == "greeter_version"), "{names:?}");

    let stream = Stream::start(&peer);
    stream.advance(20).await;

    // A newer version, with an extra tool, added while calls run.
    plugin_ok(cfg, &["add", v2.to_str().unwrap()]);
    let seen = next_list_changed(&mut changes, base).await;
    let names = tool_names(&peer).await;
    assert!(
        names.iter().any(|n| n == "greeter_version"),
        "the new tool is listed after the notification: {names:?}"
    );
    assert_eq!(
        call(&peer, "greeter_version", json!({})).await.unwrap(),
        r#"{"version":"0.2.0"}"#
    );
    stream.advance(20).await;

    // A broken replacement by hand: not a component, not the approved bytes.
    std::fs::write(cfg.join("plugins/greeter.wasm"), b"not a component").unwrap();
    let list = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let list = plugin_ok(cfg, &["list"]);
            // Until the server reloads, its report says it serves 0.2.0 without a
            // note; afterwards the note says why it kept it.
            if list.contains("keeps serving") {
                return list;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("plugin list never showed the running server keeping greeter");
    assert!(
        list.contains("serves greeter 0.2.0")
            && list.contains("keeps serving")
            && list.contains("no longer match its receipt"),
        "{list}"
    );
    // The doctor shows the running server's reason too (the files alone say refused).
    let state = cfg.parent().unwrap();
    let doctor = std::process::Command::new(scryer_bin())
        .arg("--db")
        .arg(state.join("index.db"))
        .arg("--compile-cache")
        .arg(shared_compile_cache())
        .arg("--config-dir")
        .arg(cfg)
        .arg("doctor")
        .env("SCRYER_RUN_DIR", state.join("run"))
        .env("SCRYER_LOG", "error")
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        report.lines().any(|l| l.starts_with("warn")
            && l.contains("plugin greeter (installed)")
            && l.contains("serves 0.2.0: its replacement was refused")),
        "{report}"
    );
    stream.advance(20).await;
    assert_eq!(
        call(&peer, "greeter_version", json!({})).await.unwrap(),
        r#"{"version":"0.2.0"}"#,
        "the loaded version keeps serving"
    );
    assert_eq!(
        *changes.borrow(),
        seen,
        "no tool changed, so no notification"
    );

    let (answered, failures) = stream.finish().await;
    assert!(
        failures.is_empty(),
        "failed calls during the swaps: {failures:?}"
    );
    assert!(answered >= 60, "{answered} calls answered");

    // Removing it takes its tools away, and says so.
    plugin_ok(cfg, &["remove", "greeter"]);
    next_list_changed(&mut changes, seen).await;
    let names = tool_names(&peer).await;
    assert!(
        !names.iter().any(|n| n.starts_with("greeter_")),
        "{names:?}"
    );
    let e = call(&peer, "greeter_words", json!({"text": "a"}))
        .await
        .unwrap_err();
    assert!(e.contains("unknown tool"), "{e}");
}

fn install_v1(cfg: &Path) {
    let v1 = fixture(cfg, "v1", &builds().0);
    let out = plugin_ok(cfg, &["add", v1.to_str().unwrap(), "--grant", "tokens"]);
    assert!(out.contains("added greeter 0.1.0"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_in_process_server_swaps_a_plugin_under_a_stream_of_calls() {
    let state = tempfile::Builder::new()
        .prefix("scryer-state-")
        .tempdir()
        .unwrap();
    let cfg = state.path().join("config");
    install_v1(&cfg);
    let (tx, rx) = watch::channel(0);
    let transport =
        TokioChildProcess::new(tokio::process::Command::new(scryer_bin()).configure(|cmd| {
            cmd.arg("--db")
                .arg(state.path().join("index.db"))
                .arg("--compile-cache")
                .arg(shared_compile_cache())
                .args(["serve", "--no-daemon"])
                .env("SCRYER_LOG", "warn")
                .env("SCRYER_CONFIG_DIR", &cfg)
                .current_dir(state.path());
        }))
        .unwrap();
    let client = ListChanged(Arc::new(tx)).serve(transport).await.unwrap();
    let caps = client.peer_info().unwrap().capabilities.tools.clone();
    assert_eq!(caps.and_then(|t| t.list_changed), Some(true));
    swap_scenario(&cfg, &client, rx).await;
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_daemon_swaps_a_plugin_and_tells_its_sessions() {
    let env = DaemonEnv::new();
    let cfg = env.state.path().join("config");
    install_v1(&cfg);
    let (tx, rx) = watch::channel(0);
    let client = env
        .client_with(env.state.path(), &[], ListChanged(Arc::new(tx)))
        .await;
    swap_scenario(&cfg, &client.client, rx).await;
    // A running server's report is gone with it.
    let _ = client.client.cancel().await;
    let stop = env.command(&["daemon", "stop"]).output().unwrap();
    assert!(stop.status.success());
    let reports: Vec<_> = std::fs::read_dir(cfg.join("plugins"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".serving-"))
        .collect();
    // The daemon may still be shutting down when `stop` returns.
    for _ in 0..50 {
        if reports.iter().all(|r| !r.path().exists()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        reports.iter().all(|r| !r.path().exists()),
        "serving reports left behind"
    );
}
