//! The sandbox holds: a router that loops, allocates without bound, panics or answers
//! too much gets a clear error naming the limit, and the next call works. A router
//! that imports an interface it is not granted is refused at load, naming the import.
//! Each fixture component is built for wasm32-wasip2 by the test suite itself.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{Scryer, fixture_component, scryer_bin, shared_compile_cache};

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
