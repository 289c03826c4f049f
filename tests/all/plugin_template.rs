//! `scryer plugin new` through the real binary: the project it writes passes its own
//! tests, builds for wasm32-wasip2 with the command its README gives, is accepted by
//! `scryer plugin verify` and `add` with its manifest beside it, and answers through MCP.

use serde_json::json;

use crate::support;
use crate::support::plugin_build::{build_plugin, cargo, new_plugin, template_target_dir};
use crate::support::{Scryer, plugin, plugin_ok};

#[tokio::test(flavor = "multi_thread")]
async fn a_new_plugin_builds_verifies_installs_and_answers() {
    let work = tempfile::Builder::new()
        .prefix("scryer-plugin-new-")
        .tempdir()
        .unwrap();
    let project = new_plugin("word-stats", &work.path().join("word-stats"));
    let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
    assert!(
        readme.contains("cargo build --target wasm32-wasip2 --release")
            && readme.contains("scryer plugin add word-stats.wasm --grant tokens"),
        "{readme}"
    );

    // Its own tests pass natively.
    let test = cargo(&project, &["test", "--quiet"]);
    assert!(
        test.status.success(),
        "cargo test in the new plugin failed:\n{}{}",
        String::from_utf8_lossy(&test.stdout),
        String::from_utf8_lossy(&test.stderr)
    );

    // Built as the README says, copied beside its manifest.
    let wasm = build_plugin(&project, "word_stats", &project.join("word-stats.wasm"));
    assert!(template_target_dir().join("wasm32-wasip2/release").is_dir());

    let cfg = work.path().join("config");
    let file = wasm.to_str().unwrap();
    let verify = plugin(&cfg, &["verify", file]);
    let report = String::from_utf8_lossy(&verify.stdout).into_owned();
    assert!(
        report.contains("word-stats 0.1.0")
            && report.contains("tools: word_stats_words")
            && report.contains("needs: tokens"),
        "{report}"
    );
    assert!(!report.contains("note:"), "the manifest agrees: {report}");
    assert!(!verify.status.success(), "not granted yet: {report}");

    let added = plugin_ok(&cfg, &["add", file, "--grant", "tokens"]);
    assert!(added.contains("added word-stats 0.1.0"), "{added}");
    let verify = plugin_ok(&cfg, &["verify", file]);
    assert!(verify.contains("verdict: the policy allows it"), "{verify}");

    let s = Scryer::start(
        &[],
        &[
            ("SCRYER_CONFIG_DIR", cfg.to_str().unwrap()),
            ("SCRYER_DAEMON", "off"),
        ],
    )
    .await;
    let v = s
        .call_json(
            "word_stats_words",
            json!({"text": "the cat and the hat and the bat"}),
        )
        .await;
    assert_eq!(v["words"][0], json!({"word": "the", "count": 3}), "{v}");
    assert_eq!(v["words"][1], json!({"word": "and", "count": 2}), "{v}");
    assert_eq!(v["complete"], true, "{v}");
    // Bad input is the plugin's clear error.
    let (e, is_error) = s.call("word_stats_words", json!({"min_length": 3})).await;
    assert!(is_error && e.contains("`text` is required"), "{e}");
    // Text format, and a budget that cuts the list.
    let text: String = (0..400).map(|i| format!("w{i} ")).collect();
    let (t, is_error) = s
        .call(
            "word_stats_words",
            json!({"text": text, "format": "text", "max_tokens": 150}),
        )
        .await;
    assert!(!is_error, "{t}");
    let header = t.lines().next().unwrap();
    assert!(
        header.starts_with("word_stats_words: 400 distinct of 400 words | 1-")
            && header.contains("TRUNCATED: call again with offset="),
        "{header}"
    );
    s.stop().await;
}

/// `cargo package -p scryer-plugin-sdk` into `target`, unpacked into `into`; returns the
/// unpacked crate's folder (no scryer tree in it: its WIT is inside).
fn packaged_sdk(target: &std::path::Path, into: &std::path::Path) -> std::path::PathBuf {
    let out = std::process::Command::new(env!("CARGO"))
        .current_dir(support::repo_root())
        .args([
            "package",
            "-p",
            "scryer-plugin-sdk",
            "--no-verify",
            "--allow-dirty",
            "--offline",
            "--target-dir",
        ])
        .arg(target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo package failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let version = env!("CARGO_PKG_VERSION");
    let krate = target.join(format!("package/scryer-plugin-sdk-{version}.crate"));
    let untar = std::process::Command::new("tar")
        .arg("xzf")
        .arg(&krate)
        .arg("-C")
        .arg(into)
        .status()
        .unwrap();
    assert!(untar.success(), "unpacking {}", krate.display());
    into.join(format!("scryer-plugin-sdk-{version}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_plugin_builds_from_the_packaged_sdk_alone() {
    let work = tempfile::Builder::new()
        .prefix("scryer-plugin-pkg-")
        .tempdir()
        .unwrap();
    let sdk = packaged_sdk(&work.path().join("target"), work.path());
    assert!(
        sdk.join("wit/router.wit").is_file(),
        "the WIT is inside the package"
    );
    let manifest = std::fs::read_to_string(sdk.join("Cargo.toml")).unwrap();
    assert!(
        manifest
            .lines()
            .filter(|l| l.trim_start().starts_with("path ="))
            .all(|l| l.contains("src/lib.rs")),
        "no path dependencies (only the lib's own path): {manifest}"
    );

    let project = work.path().join("pkg-words");
    let out = std::process::Command::new(support::scryer_bin())
        .args(["plugin", "new", "pkg-words", "--dir"])
        .arg(&project)
        .arg("--sdk-path")
        .arg(&sdk)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let toml = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        toml.contains(&format!("scryer-plugin-sdk = \"{version}\""))
            && toml.contains("[patch.crates-io]"),
        "the SDK by version, the package by path override: {toml}"
    );

    let wasm = build_plugin(&project, "pkg_words", &project.join("pkg-words.wasm"));
    let cfg = work.path().join("config");
    let verify = plugin(&cfg, &["verify", wasm.to_str().unwrap()]);
    let report = String::from_utf8_lossy(&verify.stdout).into_owned();
    assert!(
        report.contains("pkg-words 0.1.0 (WIT 0.5.0") && report.contains("tools: pkg_words_words"),
        "{report}"
    );
}
