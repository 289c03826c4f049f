//! Daemon test support: a database and a private run directory per test (so each test
//! has its own daemon), MCP clients of `scryer serve` going through that daemon, and
//! the daemon's pid. Dropping the environment stops its daemon, so no process outlives
//! the test.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;

use crate::support::{call_tool, call_tool_json, scryer_bin, shared_compile_cache};

pub struct DaemonEnv {
    pub state: tempfile::TempDir,
    pub db: PathBuf,
    pub run_dir: PathBuf,
}

impl DaemonEnv {
    pub fn new() -> DaemonEnv {
        let state = tempfile::Builder::new()
            .prefix("scryer-daemon-")
            .tempdir()
            .unwrap();
        let db = state.path().join("index.db");
        let run_dir = state.path().join("run");
        DaemonEnv { state, db, run_dir }
    }

    /// Variables every scryer process of this environment gets. The idle time is short
    /// so a daemon left behind by a failed test exits on its own.
    pub fn vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("SCRYER_RUN_DIR", self.run_dir.display().to_string()),
            ("SCRYER_DAEMON_IDLE", "20".into()),
            ("SCRYER_LOG", "warn".into()),
            ("SCRYER_DAEMON", "on".into()),
            // The test's own plugin home: a user's installed plugins never reach it.
            (
                "SCRYER_CONFIG_DIR",
                self.state.path().join("config").display().to_string(),
            ),
        ]
    }

    /// `scryer --db <db> --compile-cache <shared> <args>` with this environment.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(scryer_bin());
        cmd.arg("--db")
            .arg(&self.db)
            .arg("--compile-cache")
            .arg(shared_compile_cache())
            .args(args)
            .current_dir(self.state.path());
        for (k, v) in self.vars() {
            cmd.env(k, v);
        }
        cmd
    }

    /// A client running `scryer serve <extra>` from `cwd`, with rmcp's default client.
    pub async fn client(&self, cwd: &Path, extra: &[&str]) -> Client<()> {
        self.client_with(cwd, extra, ()).await
    }

    /// A client with its own handler (e.g. one that offers roots).
    pub async fn client_with<H: ClientHandler>(
        &self,
        cwd: &Path,
        extra: &[&str],
        handler: H,
    ) -> Client<H> {
        let transport =
            TokioChildProcess::new(tokio::process::Command::new(scryer_bin()).configure(|cmd| {
                cmd.arg("--db")
                    .arg(&self.db)
                    .arg("--compile-cache")
                    .arg(shared_compile_cache())
                    .arg("serve")
                    .args(extra)
                    .current_dir(cwd);
                for (k, v) in self.vars() {
                    cmd.env(k, v);
                }
            }))
            .expect("spawning scryer serve");
        let client = handler
            .serve(transport)
            .await
            .expect("MCP handshake through the daemon");
        Client { client }
    }

    /// `scryer daemon status` output, or `None` when no daemon runs.
    pub fn status(&self) -> Option<String> {
        let out = self.command(&["daemon", "status"]).output().unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// A field of `scryer daemon status` (`pid`, `sessions`, …): the rest of its line.
    pub fn status_field(&self, field: &str) -> Option<String> {
        self.status()?
            .lines()
            .find_map(|l| l.strip_prefix(field).map(|v| v.trim().to_string()))
    }

    pub fn daemon_pid(&self) -> Option<u32> {
        self.status_field("pid")?.parse().ok()
    }

    pub fn socket_exists(&self) -> bool {
        std::fs::read_dir(&self.run_dir).is_ok_and(|d| {
            d.filter_map(|e| e.ok())
                .any(|e| e.path().extension().is_some_and(|x| x == "sock"))
        })
    }

    /// The daemon's socket (the only one in this environment's run directory).
    pub fn socket(&self) -> PathBuf {
        std::fs::read_dir(&self.run_dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|x| x == "sock"))
            .expect("a daemon socket in the run directory")
    }
}

impl Drop for DaemonEnv {
    fn drop(&mut self) {
        let _ = self.command(&["daemon", "stop"]).output();
    }
}

/// An MCP client session of `scryer serve`.
pub struct Client<H: ClientHandler> {
    pub client: RunningService<RoleClient, H>,
}

impl<H: ClientHandler> Client<H> {
    /// Calls a tool; the answer text and whether it is an error.
    pub async fn call(&self, tool: &str, args: Value) -> (String, bool) {
        call_tool(&self.client, tool, args).await
    }

    pub async fn call_json(&self, tool: &str, args: Value) -> Value {
        call_tool_json(&self.client, tool, args).await
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}
