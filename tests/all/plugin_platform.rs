//! The plugin platform through the real binary: installed plugins are linked only
//! against what the operator's policy grants, bytes that no longer match their receipt
//! are refused, refusals never stop the server, and `scryer plugin add` publishes
//! transactionally. Every test has its own configuration directory.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::json;

use crate::support;
use crate::support::{Scryer, fixture_component, plugin, plugin_ok};

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs a plugin command that must fail; returns stdout and stderr together.
fn fails(cfg: &Path, args: &[&str]) -> String {
    let o = plugin(cfg, args);
    assert!(
        !o.status.success(),
        "scryer plugin {args:?} should fail: {}",
        stdout(&o)
    );
    format!("{}{}", stdout(&o), stderr(&o))
}

fn hostile() -> String {
    fixture_component("scryer-fixture-hostile")
        .to_string_lossy()
        .into_owned()
}

/// The first-party navigation router as an external plugin file: it needs index-read,
/// file-read and more, and declares the built-in navigation tools.
fn navigation(dir: &Path) -> String {
    let wasm = scryer_builtin_plugins::router("navigation").unwrap();
    let path = dir.join("navigation.wasm");
    std::fs::write(&path, wasm).unwrap();
    path.to_string_lossy().into_owned()
}

/// The line of `scryer plugin list` for an installed plugin.
fn installed_line(cfg: &Path, name: &str) -> String {
    let list = plugin_ok(cfg, &["list"]);
    list.lines()
        .find(|l| l.starts_with(&format!("{name} ")) && l.contains("(installed"))
        .unwrap_or_else(|| panic!("no installed `{name}` in:\n{list}"))
        .to_string()
}

/// Every file under `dir` with its bytes, to show that a failed command changed nothing.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                out.push((e.path(), Vec::new()));
                out.extend(snapshot(&e.path()));
            } else {
                out.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn an_ungranted_capability_is_refused_at_load_and_granting_it_makes_the_tool_answer() {
    let cfg = tempfile::tempdir().unwrap();
    let added = plugin_ok(cfg.path(), &["add", &hostile()]);
    assert!(
        added.contains("will not load") && added.contains("`scryer plugin grant hostile tokens`"),
        "{added}"
    );
    let line = installed_line(cfg.path(), "hostile");
    assert!(
        line.contains("not loaded")
            && line.contains("needs capability `tokens` (it imports `scryer:router/tokens@0.1.0`)")
            && line.contains("`scryer plugin grant hostile tokens`"),
        "{line}"
    );

    // The refusal does not stop the server: the built-in routers answer, `ok` is absent.
    let s = Scryer::with_config_dir(cfg.path()).await;
    let tools = s.tool_names().await;
    assert!(!tools.iter().any(|t| t == "ok"), "{tools:?}");
    assert_eq!(s.call_json("list_projects", json!({})).await["total"], 0);
    s.stop().await;

    let granted = plugin_ok(cfg.path(), &["grant", "hostile", "tokens"]);
    assert!(granted.contains("has everything it needs"), "{granted}");
    let line = installed_line(cfg.path(), "hostile");
    assert!(
        line.contains(", ok, ") && line.contains("[tokens] (installed"),
        "{line}"
    );
    let s = Scryer::with_config_dir(cfg.path()).await;
    let (answer, is_error) = s.call("ok", json!({})).await;
    assert!(!is_error && answer == "ok, 2 tokens", "{answer}");
    s.stop().await;
}

#[tokio::test]
async fn bytes_swapped_after_add_are_refused_and_the_rest_is_served() {
    let cfg = tempfile::tempdir().unwrap();
    plugin_ok(cfg.path(), &["add", &hostile(), "--grant", "tokens"]);
    let installed = cfg.path().join("plugins/hostile.wasm");
    let other = std::fs::read(fixture_component("scryer-fixture-filesystem")).unwrap();
    std::fs::write(&installed, other).unwrap();

    let line = installed_line(cfg.path(), "hostile");
    assert!(
        line.contains("not loaded") && line.contains("no longer match its receipt"),
        "{line}"
    );
    let s = Scryer::with_config_dir(cfg.path()).await;
    assert!(!s.tool_names().await.iter().any(|t| t == "ok"));
    assert_eq!(s.call_json("list_projects", json!({})).await["total"], 0);
    s.stop().await;
}

#[test]
fn a_failing_add_leaves_the_directory_and_the_policy_unchanged() {
    let cfg = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let nav = navigation(files.path());
    // Something installed already, so there is a policy and a plugins directory to keep.
    plugin_ok(cfg.path(), &["add", &nav, "--replaces", "navigation"]);
    let before = snapshot(cfg.path());
    assert!(before.len() >= 3, "{before:?}");

    // Not a component.
    let junk = files.path().join("junk.wasm");
    std::fs::write(&junk, b"\0asm not really").unwrap();
    let out = fails(cfg.path(), &["add", junk.to_str().unwrap()]);
    assert!(out.contains("not a valid router component"), "{out}");
    assert_eq!(snapshot(cfg.path()), before);

    // An unknown capability.
    let out = fails(
        cfg.path(),
        &["add", &hostile(), "--grant", "tokens,network"],
    );
    assert!(
        out.contains("\"network\"") && out.contains("index-read"),
        "{out}"
    );
    assert_eq!(snapshot(cfg.path()), before);

    // The same tools as a built-in router, without `replaces`: both are named.
    let cfg2 = tempfile::tempdir().unwrap();
    let out = fails(cfg2.path(), &["add", &nav]);
    assert!(
        out.contains("tool `resolve_definition` is declared by both plugin `navigation` and plugin `navigation`")
            && out.contains("--replaces navigation"),
        "{out}"
    );
    assert!(
        snapshot(cfg2.path()).is_empty(),
        "{:?}",
        snapshot(cfg2.path())
    );

    // Publishing fails at the last step (the destination is a directory): the policy
    // written just before is put back and the staged bytes are gone.
    std::fs::create_dir_all(cfg.path().join("plugins/hostile.wasm/occupied")).unwrap();
    let before = snapshot(cfg.path());
    let out = fails(cfg.path(), &["add", &hostile(), "--grant", "tokens"]);
    assert!(out.contains("nothing was changed"), "{out}");
    assert_eq!(snapshot(cfg.path()), before);
}

#[test]
fn a_replacement_needing_index_read_loads_once_granted_and_takes_over_the_builtin() {
    let cfg = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let nav = navigation(files.path());
    let added = plugin_ok(
        cfg.path(),
        &["add", &nav, "--replaces", "navigation", "--grant", "tokens"],
    );
    assert!(added.contains("needs capability `index-read`"), "{added}");
    let list = plugin_ok(cfg.path(), &["list"]);
    let builtin = list.lines().next().unwrap();
    assert!(
        builtin.starts_with("navigation 0.1.0: resolve_definition")
            && !builtin.contains("replaced"),
        "the built-in keeps serving while the replacement is refused:\n{list}"
    );

    // Run exactly the command the refusal names.
    let command = added
        .split("grant it with `scryer plugin ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .unwrap_or_else(|| panic!("no grant command in {added}"));
    assert!(command.contains("index-read"), "{command}");
    let args: Vec<&str> = command.split_whitespace().collect();
    plugin_ok(cfg.path(), &args);

    let list = plugin_ok(cfg.path(), &["list"]);
    assert!(
        list.lines()
            .next()
            .unwrap()
            .contains("replaced by installed plugin `navigation`"),
        "{list}"
    );
    assert!(
        installed_line(cfg.path(), "navigation").contains("replaces `navigation`"),
        "{list}"
    );
}

#[test]
fn remove_deletes_the_file_and_the_policy_entry() {
    let cfg = tempfile::tempdir().unwrap();
    plugin_ok(cfg.path(), &["add", &hostile(), "--grant", "tokens"]);
    assert!(cfg.path().join("plugins/hostile.wasm").is_file());
    let out = plugin_ok(cfg.path(), &["remove", "hostile"]);
    assert!(out.contains("removed hostile"), "{out}");
    assert!(!cfg.path().join("plugins/hostile.wasm").exists());
    let policy = std::fs::read_to_string(cfg.path().join("policy.toml")).unwrap();
    assert!(!policy.contains("hostile"), "{policy}");
    assert!(!plugin_ok(cfg.path(), &["list"]).contains("hostile"));

    let out = fails(cfg.path(), &["remove", "hostile"]);
    assert!(out.contains("no installed plugin `hostile`"), "{out}");
    let out = fails(cfg.path(), &["remove", "navigation"]);
    assert!(out.contains("built-in router"), "{out}");
}

#[test]
fn verify_reports_needs_and_policy_and_changes_nothing() {
    let cfg = tempfile::tempdir().unwrap();
    let o = plugin(cfg.path(), &["verify", &hostile()]);
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert!(!o.status.success(), "{out}");
    for part in [
        "hostile 0.0.0 (WIT 0.1.0, sha256 ",
        "tools: spin, bomb, panic, oversized, ok",
        "needs: tokens",
        "granted: nothing",
        "installed: no",
        "verdict: the policy does not allow it",
        "--grant tokens",
    ] {
        assert!(out.contains(part), "{part:?} missing in:\n{out}");
    }
    assert!(
        snapshot(cfg.path()).is_empty(),
        "verify wrote {:?}",
        snapshot(cfg.path())
    );

    plugin_ok(cfg.path(), &["add", &hostile(), "--grant", "tokens"]);
    let before = snapshot(cfg.path());
    let out = plugin_ok(cfg.path(), &["verify", &hostile()]);
    assert!(
        out.contains("installed: these exact bytes")
            && out.contains("verdict: the policy allows it"),
        "{out}"
    );
    assert_eq!(snapshot(cfg.path()), before);

    // A component importing the filesystem can never be granted.
    let out = fails(
        cfg.path(),
        &[
            "verify",
            fixture_component("scryer-fixture-filesystem")
                .to_str()
                .unwrap(),
        ],
    );
    assert!(out.contains("which no capability grants"), "{out}");
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone)]
struct ListChanged(std::sync::Arc<tokio::sync::watch::Sender<u32>>);

impl rmcp::ClientHandler for ListChanged {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.send_modify(|n| *n += 1);
    }
}

#[tokio::test]
async fn installed_plugins_load_after_the_handshake_and_arrive_with_list_changed() {
    use rmcp::ServiceExt;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let state = tempfile::tempdir().unwrap();
    let cfg = state.path().join("config");
    plugin_ok(&cfg, &["add", &hostile(), "--grant", "tokens"]);
    // The server reads the installed plugins under the plugins lock: holding it holds
    // their load, so whatever the server answers meanwhile it answers without them.
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(cfg.join("plugins/.lock"))
        .unwrap();
    lock.lock().unwrap();
    let (tx, mut changes) = tokio::sync::watch::channel(0);
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(support::scryer_bin()).configure(|cmd| {
            cmd.arg("--db")
                .arg(state.path().join("index.db"))
                .arg("--compile-cache")
                .arg(support::shared_compile_cache())
                .args(["serve", "--no-daemon"])
                .env("SCRYER_LOG", "warn")
                .env("SCRYER_CONFIG_DIR", &cfg)
                .env("SCRYER_PRECISE", "off")
                .current_dir(state.path());
        }),
    )
    .unwrap();
    let client = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        ListChanged(std::sync::Arc::new(tx)).serve(transport),
    )
    .await
    .expect("initialize answered while the installed plugin waits")
    .unwrap();
    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name.to_string()).collect()
    };
    let before = names(client.list_all_tools().await.unwrap());
    assert_eq!(
        before.len(),
        19,
        "the built-in tools are listed: {before:?}"
    );
    assert!(!before.iter().any(|t| t == "ok"), "{before:?}");

    lock.unlock().unwrap();
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        changes.wait_for(|n| *n > 0),
    )
    .await
    .expect("tools/list_changed once the installed plugin loaded")
    .unwrap();
    let after = names(client.list_all_tools().await.unwrap());
    assert!(after.iter().any(|t| t == "ok"), "{after:?}");
    let (answer, is_error) = support::call_tool(&client, "ok", json!({})).await;
    assert!(!is_error && answer == "ok, 2 tokens", "{answer}");
    let _ = client.cancel().await;
}
