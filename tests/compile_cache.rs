//! The compiled-code cache: the first start compiles and stores, the second loads from
//! the cache, and a corrupted entry is detected and recompiled, never trusted.

mod support;

use std::path::Path;

use support::scryer_bin;

/// Runs `scryer plugin list` against `cache` and returns its stdout.
fn plugin_list(cache: &Path, state: &Path) -> String {
    let out = std::process::Command::new(scryer_bin())
        .arg("--db")
        .arg(state.join("index.db"))
        .arg("--compile-cache")
        .arg(cache)
        .args(["plugin", "list"])
        // The test's own plugin home: a user's installed plugins never reach it.
        .env("SCRYER_CONFIG_DIR", state.join("config"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn entries(cache: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(cache)
        .unwrap()
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
