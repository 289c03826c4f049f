//! Compiled router code. The first-party routers load from the native code built into
//! the binary, so a first start with an empty compile cache compiles nothing; when that
//! code cannot be used they are compiled, through the cache. The cache: the first start
//! compiles and stores, the second loads from it, and a corrupted entry is detected and
//! recompiled, never trusted.

use std::path::Path;

use crate::support::{Scryer, scryer_bin};

/// `SCRYER_PRECOMPILED=off`: the code built into the binary is treated as not fitting
/// this engine, the path a binary run on another CPU than the one it was built on takes.
const PRECOMPILED_OFF: (&str, &str) = ("SCRYER_PRECOMPILED", "off");

/// Runs `scryer plugin list` against `cache` (with `env`) and returns its stdout.
fn plugin_list_with(cache: &Path, state: &Path, env: &[(&str, &str)]) -> String {
    let mut cmd = std::process::Command::new(scryer_bin());
    cmd.arg("--db")
        .arg(state.join("index.db"))
        .arg("--compile-cache")
        .arg(cache)
        .args(["plugin", "list"])
        // The test's own plugin home: a user's installed plugins never reach it.
        .env("SCRYER_CONFIG_DIR", state.join("config"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `scryer plugin list` with the built-in routers compiled (their code built into the
/// binary not used), so they go through the compile cache.
fn plugin_list(cache: &Path, state: &Path) -> String {
    plugin_list_with(cache, state, &[PRECOMPILED_OFF])
}

fn entries(cache: &Path) -> Vec<std::path::PathBuf> {
    let Ok(dir) = std::fs::read_dir(cache) else {
        return Vec::new();
    };
    let mut v: Vec<_> = dir
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    v.sort();
    v
}

#[test]
fn second_start_loads_from_cache_and_a_corrupt_entry_is_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("compiled");

    let first = plugin_list(&cache, dir.path());
    // One line per embedded router: the seven first-party ones.
    let routers = first.lines().count();
    assert_eq!(routers, 7, "{first}");
    assert_eq!(first.matches("(compiled").count(), routers, "{first}");
    assert_eq!(entries(&cache).len(), routers);

    let second = plugin_list(&cache, dir.path());
    assert_eq!(second.matches("cache hit").count(), routers, "{second}");

    // Flip one byte in the middle of one entry: its checksum no longer matches.
    let victim = entries(&cache)[0].clone();
    let mut bytes = std::fs::read(&victim).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&victim, &bytes).unwrap();

    let third = plugin_list(&cache, dir.path());
    assert_eq!(
        third.matches("corrupt cache entry, recompiled").count(),
        1,
        "{third}"
    );
    assert_eq!(third.matches("cache hit").count(), routers - 1, "{third}");
    assert_ne!(
        std::fs::read(&victim).unwrap(),
        bytes,
        "the entry was rewritten"
    );

    let fourth = plugin_list(&cache, dir.path());
    assert_eq!(fourth.matches("cache hit").count(), routers, "{fourth}");
}

#[cfg(unix)]
#[test]
fn the_cache_directory_is_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("compiled");
    plugin_list(&cache, dir.path());
    let mode = std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

/// Every tool the seven first-party routers serve.
const FIRST_PARTY_TOOLS: usize = 19;

#[tokio::test]
async fn a_first_start_with_an_empty_cache_serves_from_the_code_built_in_and_compiles_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("compiled");
    let scryer = Scryer::start_with_cache(&cache, &[], &[("SCRYER_DAEMON", "off")]).await;
    let tools = scryer.tool_names().await;
    assert_eq!(tools.len(), FIRST_PARTY_TOOLS, "{tools:?}");
    // A call runs on the loaded router, not on a description only.
    let (answer, is_error) = scryer.call("list_projects", serde_json::json!({})).await;
    assert!(!is_error, "{answer}");
    scryer.stop().await;
    assert!(
        entries(&cache).is_empty(),
        "nothing was compiled into the cache: {:?}",
        entries(&cache)
    );
    let listed = plugin_list_with(&cache, dir.path(), &[]);
    assert_eq!(
        listed.matches("built into the binary").count(),
        7,
        "{listed}"
    );
    assert!(entries(&cache).is_empty(), "{:?}", entries(&cache));
}

#[tokio::test]
async fn code_that_does_not_fit_the_engine_is_compiled_and_the_same_tools_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("compiled");
    let scryer =
        Scryer::start_with_cache(&cache, &[], &[("SCRYER_DAEMON", "off"), PRECOMPILED_OFF]).await;
    // `initialize` answered before the routers were compiled (seconds): its instructions
    // say the tools are arriving (their traits come with the compiled routers).
    let instructions = scryer
        .client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    assert!(
        instructions.contains("Tools are arriving"),
        "{instructions}"
    );
    // tools/list waits for the routers compiled in the background.
    let tools = scryer.tool_names().await;
    assert_eq!(tools.len(), FIRST_PARTY_TOOLS, "{tools:?}");
    let (answer, is_error) = scryer.call("list_projects", serde_json::json!({})).await;
    assert!(!is_error, "{answer}");
    scryer.stop().await;
    assert_eq!(
        entries(&cache).len(),
        7,
        "each router compiled once, into the cache"
    );

    // doctor says why the built-in code was not used, and loads them from the cache now.
    let out = std::process::Command::new(scryer_bin())
        .arg("--db")
        .arg(dir.path().join("index.db"))
        .arg("--compile-cache")
        .arg(&cache)
        .arg("doctor")
        .env("SCRYER_CONFIG_DIR", dir.path().join("config"))
        .env(PRECOMPILED_OFF.0, PRECOMPILED_OFF.1)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        report
            .matches(
                "from the compile cache (its built-in code was not used: SCRYER_PRECOMPILED=off)"
            )
            .count(),
        7,
        "{report}"
    );
}
