//! The sandbox holds: a router that loops, allocates without bound, panics or answers
//! too much gets a clear error naming the limit, and the next call works. A router
//! that imports an interface it is not granted is refused at load, naming the import.
//! Each fixture component is built for wasm32-wasip2 by the test suite itself.
//! Issue 19 adds host-call spam, a host-call chain past the wall timeout, unbounded
//! recursion, bodies that are not JSON or not UTF-8, a cut body claiming `complete`,
//! a 10 MB error message and memory kept across calls, and a second session served
//! while the first one's router spins; a `describe` over the router limits (10,000
//! tools, a 10 MB description), with `$ref`, invalid JSON or a built-in's tool name,
//! or one that traps, refused at load naming why (docs/learnings/reliability.md).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support;
use crate::support::{Scryer, fixture_component, scryer_bin, shared_compile_cache};

async fn hostile() -> Scryer {
    let wasm = fixture_component("scryer-fixture-hostile");
    Scryer::start(
        &["--plugin", wasm.to_str().unwrap()],
        &[
            ("SCRYER_PLUGIN_CPU_MS", "300"),
            ("SCRYER_PLUGIN_MEMORY_MIB", "32"),
            ("SCRYER_PLUGIN_TIMEOUT_MS", "10000"),
        ],
    )
    .await
}

/// Calls `tool`, expects an error containing `expected` well within the wall timeout,
/// then expects a normal call to succeed.
async fn misbehaves_then_recovers(s: &Scryer, tool: &str, expected: &str) {
    let started = Instant::now();
    let (text, is_error) = s.call(tool, json!({})).await;
    let took = started.elapsed();
    assert!(is_error, "{tool}: expected an error, got {text:.200}");
    assert!(
        text.contains(expected),
        "{tool}: {text:?} does not say {expected:?}"
    );
    assert!(
        took < Duration::from_secs(10),
        "{tool} took {took:?}: the wall timeout should have fired first"
    );
    let (ok, is_error) = s.call("ok", json!({})).await;
    assert!(!is_error && ok == "ok, 2 tokens", "after {tool}: {ok}");
}

#[tokio::test]
async fn an_infinite_loop_hits_the_cpu_deadline() {
    let s = hostile().await;
    misbehaves_then_recovers(&s, "spin", "exceeded its CPU deadline of 300ms").await;
    s.stop().await;
}

#[tokio::test]
async fn time_in_host_calls_does_not_count_against_the_cpu_deadline() {
    let s = hostile().await;
    // A second of host calls against a 300 ms CPU deadline.
    let (text, is_error) = s.call("host_bound", json!({})).await;
    assert!(!is_error, "{text}");
    assert!(text.contains(" host calls, "), "{text}");
    s.stop().await;
}

#[tokio::test]
async fn a_memory_bomb_hits_the_memory_cap() {
    let s = hostile().await;
    misbehaves_then_recovers(&s, "bomb", "exceeded its memory cap of 32 MiB").await;
    s.stop().await;
}

#[tokio::test]
async fn a_panic_is_reported_as_a_crash() {
    let s = hostile().await;
    misbehaves_then_recovers(&s, "panic", "router `hostile` crashed").await;
    s.stop().await;
}

#[tokio::test]
async fn an_oversized_answer_is_refused() {
    let s = hostile().await;
    misbehaves_then_recovers(&s, "oversized", "over the cap of 4194304 bytes").await;
    s.stop().await;
}

#[tokio::test]
async fn the_first_party_routers_keep_working_beside_a_hostile_one() {
    let s = hostile().await;
    let (_, is_error) = s.call("spin", json!({})).await;
    assert!(is_error);
    let list = s.call_json("list_projects", json!({})).await;
    assert_eq!(list["total"], 0);
    s.stop().await;
}

#[test]
fn a_router_importing_the_filesystem_is_refused_at_load() {
    let wasm = fixture_component("scryer-fixture-filesystem");
    let state = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(scryer_bin())
        .arg("--db")
        .arg(state.path().join("index.db"))
        .arg("--compile-cache")
        .arg(shared_compile_cache())
        .args(["plugin", "list", "--plugin"])
        .arg(&wasm)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "loading should fail; stderr: {stderr}"
    );
    assert!(
        stderr.contains("imports `wasi:filesystem/") && stderr.contains("not granted"),
        "the error should name the import: {stderr}"
    );
}

async fn hostile_with_wall(ms: &str) -> Scryer {
    let wasm = fixture_component("scryer-fixture-hostile");
    Scryer::start(
        &["--plugin", wasm.to_str().unwrap()],
        &[
            ("SCRYER_PLUGIN_CPU_MS", "300"),
            ("SCRYER_PLUGIN_MEMORY_MIB", "32"),
            ("SCRYER_PLUGIN_TIMEOUT_MS", ms),
        ],
    )
    .await
}

#[tokio::test]
async fn a_million_host_calls_end_within_the_limits() {
    let s = hostile_with_wall("4000").await;
    let started = Instant::now();
    let (text, is_error) = s.call("host_spam", json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(8), "{text:.200}");
    // Either it finished (a million cheap calls) or a limit stopped it, named.
    assert!(
        (!is_error && text.contains("1000000 tokens counted"))
            || text.contains("did not answer within 4s")
            || text.contains("CPU deadline"),
        "{text:.300}"
    );
    let (ok, is_error) = s.call("ok", json!({})).await;
    assert!(!is_error && ok == "ok, 2 tokens", "{ok}");
    s.stop().await;
}

#[tokio::test]
async fn host_calls_chained_past_the_wall_timeout_are_abandoned() {
    let s = hostile_with_wall("1500").await;
    misbehaves_then_recovers(&s, "slow_chain", "did not answer within 1.5s").await;
    s.stop().await;
}

#[tokio::test]
async fn unbounded_recursion_is_a_crash() {
    let s = hostile().await;
    misbehaves_then_recovers(&s, "recurse", "router `hostile` crashed").await;
    s.stop().await;
}

#[tokio::test]
async fn a_body_that_is_not_utf8_is_refused() {
    let s = hostile().await;
    misbehaves_then_recovers(&s, "bad_utf8", "router `hostile` crashed").await;
    s.stop().await;
}

#[tokio::test]
async fn bodies_that_are_not_json_or_claim_complete_while_cut_are_passed_as_text() {
    let s = hostile().await;
    // The body is the router's own: the host forwards it as text, flagged when cut.
    let (text, is_error) = s.call("not_json", json!({})).await;
    assert!(!is_error, "{text}");
    assert!(text.starts_with("{\"items\": [1, 2,"), "{text}");
    // Cut by the router itself (its flag says so), its body claiming `complete`: the
    // answer says it is cut and claims nothing.
    let (text, is_error) = s.call("cut_but_complete", json!({})).await;
    assert!(!is_error, "{text}");
    assert!(text.contains("marked this answer truncated"), "{text}");
    assert!(
        text.starts_with("{\"complete\": false, \"items\": [1, "),
        "{text}"
    );
    // Cut by the host to the call's budget: the kept part claims nothing either.
    let (text, is_error) = s.call("cut_but_complete", json!({"max_tokens": 40})).await;
    assert!(!is_error, "{text}");
    assert!(
        text.contains("cut by scryer") && text.starts_with("{\"complete\": false, "),
        "{text}"
    );
    let (ok, is_error) = s.call("ok", json!({})).await;
    assert!(!is_error && ok == "ok, 2 tokens", "{ok}");
    s.stop().await;
}

#[tokio::test]
async fn a_ten_megabyte_error_message_is_cut() {
    let s = hostile().await;
    let (text, is_error) = s.call("error_flood", json!({})).await;
    assert!(is_error);
    assert!(text.len() < 64 << 10, "{} bytes of error", text.len());
    assert!(text.contains("internal error: eee"), "{text:.200}");
    assert!(text.contains("bytes cut"), "{text:.200}");
    s.stop().await;
}

#[tokio::test]
async fn memory_kept_in_a_global_does_not_outlive_the_call() {
    let s = hostile().await;
    for _ in 0..12 {
        // 12 x 4 MiB against a 32 MiB cap: each call starts from a fresh store.
        let (text, is_error) = s.call("leak", json!({})).await;
        assert!(!is_error && text == "holding 4 MiB", "{text}");
    }
    s.stop().await;
}

/// Two sessions of one daemon (the only way two sessions share routers: `serve
/// --plugin` serves in-process, so a second such process on the same database could
/// not open it, which is why this test once found "the handshake closed"). The hostile
/// router is installed, so the daemon serves it; while one session's call spins to its
/// CPU deadline (5 s by default), the other session connects, lists and is answered.
#[tokio::test]
async fn another_session_is_served_while_a_router_spins() {
    let env = support::daemon::DaemonEnv::new();
    let cfg = env.state.path().join("config");
    let wasm = fixture_component("scryer-fixture-hostile");
    support::plugin_ok(&cfg, &["add", wasm.to_str().unwrap(), "--grant", "tokens"]);
    let cwd = env.state.path();
    let first = env.client(cwd, &[]).await;
    let (ok, is_error) = first.call("ok", json!({})).await;
    assert!(!is_error && ok == "ok, 2 tokens", "{ok}");
    let spinning = tokio::spawn(async move {
        let started = Instant::now();
        let r = first.call("spin", json!({})).await;
        (first, r, started.elapsed())
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let other = env.client(cwd, &[]).await;
    let list = other.call_json("list_projects", json!({})).await;
    assert_eq!(list["total"], 0);
    let (ok, is_error) = other.call("ok", json!({})).await;
    assert!(!is_error && ok == "ok, 2 tokens", "{ok}");
    let waited = started.elapsed();
    assert!(
        !spinning.is_finished(),
        "the spin ended before the other session was served ({waited:?}), so this proves nothing"
    );
    let (first, (text, is_error), spun) = spinning.await.unwrap();
    assert!(is_error && text.contains("CPU deadline"), "{text}");
    assert!(
        waited < spun,
        "served in {waited:?}, the spin took {spun:?}"
    );
    // Both sessions go on being served.
    let (ok, is_error) = first.call("ok", json!({})).await;
    assert!(!is_error && ok == "ok, 2 tokens", "{ok}");
    other.stop().await;
    first.stop().await;
}

/// `scryer plugin list --plugin <fixture>`: whether it loaded, and what it said.
fn list_with(package: &str) -> (bool, String) {
    let wasm = fixture_component(package);
    let state = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = std::process::Command::new(scryer_bin())
        .arg("--db")
        .arg(state.path().join("index.db"))
        .arg("--compile-cache")
        .arg(shared_compile_cache())
        .args(["plugin", "list", "--plugin"])
        .arg(&wasm)
        .env("SCRYER_CONFIG_DIR", state.path().join("config"))
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{package}: loading took {:?}",
        started.elapsed()
    );
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn a_router_whose_describe_goes_wrong_is_refused_at_load_naming_why() {
    let shapes = [
        ("scryer-fixture-describe-trap", "crashed"),
        (
            "scryer-fixture-describe-many",
            "10000 tools, over the limit of 256",
        ),
        (
            "scryer-fixture-describe-huge",
            "description of 10485760 bytes, over the limit",
        ),
        ("scryer-fixture-describe-ref", "$ref"),
        ("scryer-fixture-describe-badjson", "JSON"),
        ("scryer-fixture-describe-clash", "search_symbols"),
    ];
    let mut wrong = Vec::new();
    for (package, expected) in shapes {
        let (loaded, text) = list_with(package);
        if loaded || !text.contains(expected) {
            wrong.push(format!(
                "{package}: loaded={loaded}, expected {expected:?} in: {}",
                text.chars().take(400).collect::<String>()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Installing is where an operator meets a router over the limits: `scryer plugin add`
/// refuses it naming the limit and leaves the installed plugins as they were, and a
/// server on that plugin home serves them and the built-in routers.
#[tokio::test]
async fn a_describe_over_the_limits_is_refused_by_plugin_add_and_the_rest_is_served() {
    let cfg = tempfile::tempdir().unwrap();
    let hostile = fixture_component("scryer-fixture-hostile");
    support::plugin_ok(
        cfg.path(),
        &["add", hostile.to_str().unwrap(), "--grant", "tokens"],
    );
    for (package, expected) in [
        (
            "scryer-fixture-describe-many",
            "over the limit of 256 tools",
        ),
        (
            "scryer-fixture-describe-huge",
            "over the limit of 4096 bytes",
        ),
    ] {
        let wasm = fixture_component(package);
        let out = support::plugin(cfg.path(), &["add", wasm.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{package} was added: {text:.400}");
        assert!(text.contains(expected), "{package}: {text:.400}");
    }
    let s = Scryer::with_config_dir(cfg.path()).await;
    let names = s.tool_names().await;
    assert!(
        !names.iter().any(|t| t.starts_with("t1") || t == "huge"),
        "{names:?}"
    );
    let (ok, is_error) = s.call("ok", json!({})).await;
    assert!(!is_error && ok == "ok, 2 tokens", "{ok}");
    assert_eq!(s.call_json("list_projects", json!({})).await["total"], 0);
    s.stop().await;
}

/// The hostile fixture with every `scryer:router/…@0.1.0` name renamed to `@0.9.0` (the
/// same length, so the component stays well formed): a WIT version no host knows.
fn unknown_version_component(dir: &std::path::Path) -> std::path::PathBuf {
    let mut bytes = std::fs::read(fixture_component("scryer-fixture-hostile")).unwrap();
    let (name, old, new) = (b"scryer:router/", b"@0.1.0", b"@0.9.0");
    let mut patched = 0;
    let mut i = 0;
    while i + name.len() < bytes.len() {
        if bytes[i..].starts_with(name) {
            let end = (i + 64).min(bytes.len());
            if let Some(at) = bytes[i..end].windows(old.len()).position(|w| w == old) {
                bytes[i + at..i + at + new.len()].copy_from_slice(new);
                patched += 1;
            }
        }
        i += 1;
    }
    assert!(patched > 0, "no versioned name found to patch");
    let path = dir.join("unknown-version.wasm");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_router_built_against_an_unknown_wit_version_is_refused_naming_the_versions() {
    let state = tempfile::tempdir().unwrap();
    let wasm = unknown_version_component(state.path());
    let out = std::process::Command::new(scryer_bin())
        .arg("--db")
        .arg(state.path().join("index.db"))
        .arg("--compile-cache")
        .arg(shared_compile_cache())
        .args(["plugin", "list", "--plugin"])
        .arg(&wasm)
        .env("SCRYER_CONFIG_DIR", state.path().join("config"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "loaded: {stderr}");
    assert!(
        stderr.contains("0.9.0") && stderr.contains("0.1"),
        "the error should name the version and the supported ones: {stderr}"
    );
}
