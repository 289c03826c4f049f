//! Property tests of ADR parsing and writing (issue 19, ADR 0025): any Markdown with
//! any frontmatter parses without panicking; YAML alias bombs and deep nesting finish
//! quickly; and a decision written by `record_adr` reads back as written whatever its
//! title and text hold (quotes, `---`, control characters, Unicode line breaks).
//! `PROPTEST_CASES` sets the number of cases (128 by default here).

use std::time::Duration;

use proptest::prelude::*;
use scryer_decisions::parse::{one_line, parse_document};
use scryer_decisions::write::{NewAdr, render};

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Markdown-ish and YAML-ish pieces mixed with arbitrary text.
fn markdownish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("---\n".to_string()),
        Just("# ".to_string()),
        Just("## Decision\n".to_string()),
        Just("## Context\n".to_string()),
        Just("## Status\n".to_string()),
        Just("title: ".to_string()),
        Just("number: ".to_string()),
        Just("status: ".to_string()),
        Just("affected_paths:\n  - ".to_string()),
        Just("date: 2026-12-01\n".to_string()),
        Just("&a ".to_string()),
        Just("*a ".to_string()),
        Just("[".to_string()),
        Just("{".to_string()),
        Just("\"".to_string()),
        Just("`".to_string()),
        Just("\n".to_string()),
        Just("  ".to_string()),
        Just("- ".to_string()),
        "[a-z0-9 ./*]{0,12}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..80).prop_map(|v| v.concat())
}

/// Runs `f` in a thread and fails when it takes longer than `limit`.
fn within<F: FnOnce() + Send + 'static>(limit: Duration, what: &str, f: F) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            f();
            let _ = tx.send(());
        })
        .unwrap();
    match rx.recv_timeout(limit) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} took longer than {limit:?}")
        }
        Err(_) => panic!("{what} panicked or overflowed its stack"),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_document_parses(text in markdownish()) {
        let _ = parse_document(&text);
        let _ = scryer_decisions::number_in_file_name(&text);
        let _ = scryer_decisions::date::parse_ms(&text);
        let _ = scryer_decisions::globs::normalize_path(&text);
    }

    #[test]
    fn a_written_decision_reads_back_as_written(
        number in 1u32..10_000,
        title in any::<String>().prop_filter("a title", |t| !one_line(t).is_empty()),
        decision in any::<String>(),
        context in prop::option::of(any::<String>()),
    ) {
        let text = render(&NewAdr {
            number,
            title: &title,
            status: "proposed",
            date: "2026-12-01",
            context: context.as_deref(),
            decision: &decision,
            consequences: None,
            affected_paths: &[],
        });
        let parsed = parse_document(&text);
        prop_assert_eq!(parsed.number, Some(number));
        let expected = one_line(&title);
        prop_assert_eq!(parsed.title.as_deref(), Some(expected.as_str()));
        prop_assert_eq!(parsed.status.as_deref(), Some("proposed"));
        prop_assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    }
}

/// Ten levels of ten aliases would expand to 10^10 nodes if aliases were copied.
/// Found by this suite: gray_matter's YAML reader copied them and did not finish (an ADR
/// file in a checkout stalled the memory router until its CPU deadline). Now the copies
/// stop at `frontmatter::MAX_ALIAS_NODES`, the document says so, and its title is read.
#[test]
fn a_yaml_alias_bomb_in_frontmatter_finishes() {
    let mut yaml = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        yaml.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            [prev.as_str(); 10].join(", ")
        ));
    }
    let doc = format!("---\ntitle: bomb\n{yaml}---\n\n# Bomb\n");
    within(Duration::from_secs(20), "an alias bomb", move || {
        let p = parse_document(&doc);
        assert_eq!(p.title.as_deref(), Some("bomb"));
        assert!(
            p.warnings.iter().any(|w| w.contains("aliases expand past")),
            "{:?}",
            p.warnings
        );
    });
}

/// Frontmatter nested 100,000 levels deep, and Markdown quotes and lists as deep.
#[test]
fn deeply_nested_frontmatter_and_markdown_finish() {
    let depth = 100_000;
    let shapes = [
        format!(
            "---\ntitle: {}x{}\n---\n# T\n",
            "[".repeat(depth),
            "]".repeat(depth)
        ),
        format!("---\ntitle: {}\n---\n# T\n", "{a: ".repeat(depth)),
        format!("# T\n\n{}deep\n", "> ".repeat(depth)),
        format!(
            "# T\n\n{}",
            (0..5_000)
                .map(|i| format!("{}- x\n", "  ".repeat(i)))
                .collect::<String>()
        ),
    ];
    within(Duration::from_secs(60), "deep nesting", move || {
        for s in &shapes {
            let _ = parse_document(s);
        }
    });
}
