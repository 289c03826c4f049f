//! Shared test support: the real `scryer` binary driven over stdio by rmcp's client,
//! on a temporary database, against a copy of the fixture workspace.

#![allow(dead_code)]

pub mod daemon;
pub mod http;
pub mod plugin_build;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;

pub fn scryer_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_scryer"))
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The cargo target directory these tests run from (`<target>/debug/deps/<test>`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// A compile cache shared by the tests of one target dir, so each server start does
/// not recompile the routers (the compile-cache tests use their own).
pub fn shared_compile_cache() -> PathBuf {
    target_dir().join("scryer-test-compiled")
}

/// Copies a directory tree (fixtures into a temporary directory).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// A fresh copy of `tests/fixtures/workspace` (a small crate named `demo`).
pub fn fixture_workspace() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("scryer-demo-")
        .tempdir()
        .unwrap();
    copy_dir(&repo_root().join("tests/fixtures/workspace"), dir.path());
    dir
}

/// A fresh copy of `tests/fixtures/<name>`, in a directory called `name` (the project
/// name an index gives it), inside a temporary directory that is returned.
pub fn fixture_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("scryer-fixture-")
        .tempdir()
        .unwrap();
    let root = dir.path().join(name);
    copy_dir(&repo_root().join("tests/fixtures").join(name), &root);
    (dir, root)
}

/// `scryer --compile-cache <shared> --config-dir <cfg> plugin <args>`.
pub fn plugin(cfg: &Path, args: &[&str]) -> Output {
    Command::new(scryer_bin())
        .arg("--compile-cache")
        .arg(shared_compile_cache())
        .arg("--config-dir")
        .arg(cfg)
        .arg("plugin")
        .args(args)
        .env("SCRYER_LOG", "error")
        .output()
        .unwrap()
}

/// A `scryer plugin` command that must succeed: its stdout.
pub fn plugin_ok(cfg: &Path, args: &[&str]) -> String {
    let o = plugin(cfg, args);
    assert!(
        o.status.success(),
        "scryer plugin {args:?} failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Builds a fixture router component (a package under tests/fixtures) for wasm32-wasip2,
/// once per test binary, and returns its path.
pub fn fixture_component(package: &str) -> PathBuf {
    static BUILT: OnceLock<Vec<PathBuf>> = OnceLock::new();
    const PACKAGES: [&str; 8] = [
        "scryer-fixture-hostile",
        "scryer-fixture-filesystem",
        "scryer-fixture-describe-trap",
        "scryer-fixture-describe-many",
        "scryer-fixture-describe-huge",
        "scryer-fixture-describe-ref",
        "scryer-fixture-describe-badjson",
        "scryer-fixture-describe-clash",
    ];
    let built = BUILT.get_or_init(|| {
        scryer_wasm_build::build_components(
            Path::new(env!("CARGO")),
            &repo_root(),
            &target_dir().join("scryer-fixtures"),
            &PACKAGES,
        )
        .unwrap_or_else(|e| panic!("{e}"))
    });
    let i = PACKAGES
        .iter()
        .position(|p| *p == package)
        .expect("known fixture package");
    built[i].clone()
}

/// Calls `tool` over an MCP client session; the answer text and whether it is an error.
pub async fn call_tool<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> (String, bool) {
    let args: JsonObject = match args {
        Value::Object(m) => m,
        Value::Null => JsonObject::new(),
        other => panic!("arguments must be an object, got {other}"),
    };
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"));
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (text, result.is_error.unwrap_or(false))
}

/// Calls `tool`, which must succeed with a JSON answer.
pub async fn call_tool_json<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> Value {
    let (text, is_error) = call_tool(client, tool, args).await;
    assert!(!is_error, "{tool} failed: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{tool} answered non-JSON ({e}): {text}"))
}

/// A running `scryer serve` with its own database.
pub struct Scryer {
    pub client: RunningService<RoleClient, ()>,
    pub state: tempfile::TempDir,
}

impl Scryer {
    /// `find_references` in the `sites` view, uncut.
    pub async fn reference_sites(&self, symbol: &str) -> Value {
        self.call_json(
            "find_references",
            serde_json::json!({"symbol": symbol, "view": "sites", "no_truncate": true}),
        )
        .await
    }

    /// Starts `scryer --db <tmp> serve <extra>` with `env` set.
    pub async fn start(extra: &[&str], env: &[(&str, &str)]) -> Scryer {
        let state = tempfile::Builder::new()
            .prefix("scryer-state-")
            .tempdir()
            .unwrap();
        let db = state.path().join("index.db");
        Self::spawn(&db, &shared_compile_cache(), state, extra, env).await
    }

    /// Starts `scryer --db <tmp> --compile-cache <cache> serve <extra>` with `env` set.
    pub async fn start_with_cache(cache: &Path, extra: &[&str], env: &[(&str, &str)]) -> Scryer {
        let state = tempfile::Builder::new()
            .prefix("scryer-state-")
            .tempdir()
            .unwrap();
        let db = state.path().join("index.db");
        Self::spawn(&db, cache, state, extra, env).await
    }

    /// Starts `scryer --db <db> serve <extra>` on an existing database.
    pub async fn start_with_db(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> Scryer {
        let state = tempfile::Builder::new()
            .prefix("scryer-state-")
            .tempdir()
            .unwrap();
        Self::spawn(db, &shared_compile_cache(), state, extra, env).await
    }

    async fn spawn(
        db: &Path,
        cache: &Path,
        state: tempfile::TempDir,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Scryer {
        let transport =
            TokioChildProcess::new(tokio::process::Command::new(scryer_bin()).configure(|cmd| {
                cmd.arg("--db")
                    .arg(db)
                    .arg("--compile-cache")
                    .arg(cache)
                    .arg("serve")
                    .args(extra)
                    .env("SCRYER_LOG", "warn")
                    // The test's own plugin home: a user's installed plugins never
                    // reach a test run (a test may still pass its own).
                    .env("SCRYER_CONFIG_DIR", state.path().join("config"))
                    // Precise mode runs real indexers in the background: only the suites
                    // about it (tests/precise.rs) turn it on.
                    .env("SCRYER_PRECISE", "off")
                    .current_dir(state.path());
                for (k, v) in env {
                    cmd.env(k, v);
                }
            }))
            .expect("spawning scryer serve");
        let client = ().serve(transport).await.expect("MCP handshake with scryer serve");
        Scryer { client, state }
    }

    /// Starts `scryer serve` on the plugin configuration directory `cfg`, in-process
    /// (no daemon), so installed plugins load exactly as `cfg` says, and waits until
    /// they have (they load after the handshake; the server then writes its serving
    /// report, `<cfg>/plugins/.serving-<pid>.json`).
    pub async fn with_config_dir(cfg: &Path) -> Scryer {
        let reports = || -> Vec<PathBuf> {
            std::fs::read_dir(cfg.join("plugins"))
                .map(|d| {
                    d.filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.to_string_lossy().contains(".serving-"))
                        .collect()
                })
                .unwrap_or_default()
        };
        // A stopped server's report may be left behind: only a new one counts.
        for old in reports() {
            let _ = std::fs::remove_file(old);
        }
        let dir = cfg.to_str().unwrap();
        let s = Self::start(&[], &[("SCRYER_CONFIG_DIR", dir), ("SCRYER_DAEMON", "off")]).await;
        let waited = std::time::Instant::now();
        while reports().is_empty() {
            assert!(
                waited.elapsed() < std::time::Duration::from_secs(60),
                "no serving report under {}/plugins within 60 s",
                cfg.display()
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        s
    }

    /// The names of the tools the server lists.
    pub async fn tool_names(&self) -> Vec<String> {
        self.client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    /// Calls a tool; returns the answer text and whether it is an error.
    pub async fn call(&self, tool: &str, args: Value) -> (String, bool) {
        call_tool(&self.client, tool, args).await
    }

    /// Calls a tool that must succeed with a JSON answer.
    pub async fn call_json(&self, tool: &str, args: Value) -> Value {
        call_tool_json(&self.client, tool, args).await
    }

    /// Indexes `root` and waits until it is ready.
    pub async fn index(&self, root: &Path) -> Value {
        let answer = self
            .call_json(
                "index_workspace",
                serde_json::json!({"path": root.to_str().unwrap()}),
            )
            .await;
        assert_eq!(answer["state"], "ready", "{answer}");
        answer
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}
