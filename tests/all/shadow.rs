//! Shadow-run and promote through the real binary (ADR 0030): a candidate installed with
//! `scryer plugin add --shadow` runs beside the plugin it would replace on every call,
//! never changing the live answer; `scryer plugin shadow-report` counts how often the
//! two differ (by key, never content), their latencies and errors; `promote` swaps it
//! in while the server runs, `drop` removes it.
//!
//! The plugins are one `scryer plugin new` project, built as is (serving) and again
//! counting words case-sensitively (the candidate).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support;
use crate::support::plugin_build::{build_plugin, edit, new_plugin};
use crate::support::{Scryer, plugin, plugin_ok};

/// The serving build and the candidate's bytes, built once per test binary.
fn builds() -> &'static (Vec<u8>, Vec<u8>) {
    static BUILT: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let _lock = support::plugin_build::lock_template_dir("shadow-fixture");
        let dir = support::plugin_build::template_target_dir().join("shadow-fixture");
        let _ = std::fs::remove_dir_all(&dir);
        let project = new_plugin("wordy", &dir.join("wordy"));
        let serving = build_plugin(&project, "wordy", &dir.join("v1/wordy.wasm"));
        edit(
            &project.join("Cargo.toml"),
            "version = \"0.1.0\"",
            "version = \"0.2.0\"",
        );
        edit(
            &project.join("src/lib.rs"),
            "*counts.entry(word.to_lowercase()).or_default() += 1;",
            "*counts.entry(word.to_string()).or_default() += 1;",
        );
        let candidate = build_plugin(&project, "wordy", &dir.join("v2/wordy.wasm"));
        (
            std::fs::read(serving).unwrap(),
            std::fs::read(candidate).unwrap(),
        )
    })
}

fn write(dir: &Path, version: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(version).join("wordy.wasm");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `scryer plugin shadow-report` once it contains `want` (or after 30 s).
fn report_with(cfg: &Path, want: &str) -> String {
    let started = Instant::now();
    loop {
        let r = plugin_ok(cfg, &["shadow-report"]);
        if r.contains(want) || started.elapsed() > Duration::from_secs(30) {
            return r;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_candidate_shadow_runs_is_reported_and_is_promoted_or_dropped() {
    let (v1, v2) = builds();
    let work = tempfile::tempdir().unwrap();
    let cfg = work.path().join("config");
    let serving = write(work.path(), "v1", v1);
    let candidate = write(work.path(), "v2", v2);
    let added = plugin_ok(
        &cfg,
        &["add", serving.to_str().unwrap(), "--grant", "tokens"],
    );
    assert!(added.contains("added wordy 0.1.0"), "{added}");

    // A candidate must be granted what it imports, and answer a serving router's tools.
    let refused = plugin(&cfg, &["add", "--shadow", candidate.to_str().unwrap()]);
    let e = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && e.contains("--grant tokens"),
        "{e}"
    );
    let added = plugin_ok(
        &cfg,
        &[
            "add",
            "--shadow",
            candidate.to_str().unwrap(),
            "--grant",
            "tokens",
        ],
    );
    assert!(added.contains("to shadow wordy"), "{added}");
    let list = plugin_ok(&cfg, &["list"]);
    assert!(
        list.contains("wordy 0.2.0: shadow candidate of wordy (loaded): wordy_words"),
        "{list}"
    );
    let none_yet = plugin_ok(&cfg, &["shadow-report"]);
    assert!(none_yet.contains("wordy 0.2.0 shadows wordy"), "{none_yet}");

    let s = Scryer::with_config_dir(&cfg).await;
    // Live answers are the serving router's: it folds case, the candidate does not.
    for _ in 0..2 {
        let v = s
            .call_json("wordy_words", json!({"text": "The the cat"}))
            .await;
        assert_eq!(v["words"][0], json!({"word": "the", "count": 2}), "{v}");
        let v = s
            .call_json("wordy_words", json!({"text": "a cat and a hat"}))
            .await;
        assert_eq!(v["words"][0], json!({"word": "a", "count": 2}), "{v}");
    }
    let (e, is_error) = s.call("wordy_words", json!({})).await;
    assert!(is_error && e.contains("`text` is required"), "{e}");

    let r = report_with(&cfg, "errors: candidate 1, serving 1");
    assert!(
        r.contains("wordy_words: 4 compared, 2 same, 2 different; errors: candidate 1, serving 1; skipped 0"),
        "{r}"
    );
    assert!(r.contains("2 × keys returned, total, words"), "{r}");
    assert!(r.contains("median") && r.contains(" ms serving"), "{r}");
    // Differences are summarised, never the answers' content.
    assert!(
        !r.contains("cat") && !r.contains("hat") && !r.contains("The"),
        "{r}"
    );

    // Promoted, the candidate answers: the running server swaps it in.
    let promoted = plugin_ok(&cfg, &["promote", "wordy"]);
    assert!(promoted.contains("promoted wordy 0.2.0"), "{promoted}");
    let started = Instant::now();
    loop {
        let v = s.call_json("wordy_words", json!({"text": "The the"})).await;
        if v["words"].as_array().is_some_and(|w| w.len() == 2) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never swapped: {v}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let list = plugin_ok(&cfg, &["list"]);
    assert!(list.contains("wordy 0.2.0"), "{list}");
    let after = plugin_ok(&cfg, &["shadow-report"]);
    assert!(
        after.contains("no shadow candidate is installed"),
        "{after}"
    );

    // A new candidate (the old build) can be dropped: the serving one is untouched.
    plugin_ok(
        &cfg,
        &[
            "add",
            "--shadow",
            serving.to_str().unwrap(),
            "--grant",
            "tokens",
        ],
    );
    assert!(cfg.join("plugins/wordy.shadow.wasm").is_file());
    let dropped = plugin_ok(&cfg, &["drop", "wordy"]);
    assert!(
        dropped.contains("dropped the candidate wordy 0.1.0; wordy keeps serving"),
        "{dropped}"
    );
    assert!(!cfg.join("plugins/wordy.shadow.wasm").exists());
    let e = plugin(&cfg, &["promote", "wordy"]);
    let e = String::from_utf8_lossy(&e.stderr);
    assert!(
        e.contains("no shadow candidate `wordy` (none is installed)"),
        "{e}"
    );
    s.stop().await;
}
