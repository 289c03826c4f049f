//! The router over an in-memory host: files by path, rows in a list.

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::host::DecisionRow;
use scryer_plugin_sdk::testing::MemHost;
use scryer_plugin_sdk::{Ctx, ErrorKind, Host, Router, ToolError, ToolResult};
use serde_json::{Value, json};

use crate::Memory;

/// 2026-11-29T01:00:00Z.
const NOW: i64 = 1_795_914_000_000;

/// The SDK's in-memory host, its documents modified at 5 ms.
fn host() -> MemHost {
    MemHost {
        modified_ms: 5,
        ..MemHost::default()
    }
}

/// With these project files.
fn with(files: &[(&str, &str)]) -> MemHost {
    let h = host();
    for (p, t) in files {
        h.files.borrow_mut().insert(p.to_string(), t.to_string());
    }
    h
}

fn date_time(ms: i64) -> String {
    scryer_decisions::date::format_rfc3339(ms)
}

fn ctx() -> Ctx {
    Ctx {
        budget: Some(1000),
        project: Some("demo".into()),
        project_root: Some("/work/demo".into()),
        ..Ctx::default()
    }
}

fn call(host: &MemHost, tool: &str, args: Value, now: i64) -> ToolResult<Value> {
    let args = Args::from_value(args)?;
    let body = match tool {
        // The clock matters only to record_adr (the date it writes).
        "record_adr" => crate::record::record_adr(host, &args, &ctx(), now),
        other => Memory::call(host, other, &args, &ctx()),
    }?;
    Ok(serde_json::from_str(&body).unwrap())
}

fn ok(host: &MemHost, tool: &str, args: Value) -> Value {
    call(host, tool, args, NOW).unwrap_or_else(|e| panic!("{tool}: {}", e.message))
}

fn err(host: &MemHost, tool: &str, args: Value) -> ToolError {
    match call(host, tool, args, NOW) {
        Ok(v) => panic!("{tool} should fail, answered {v}"),
        Err(e) => e,
    }
}

fn numbers(v: &Value) -> Vec<u64> {
    v["items"]
        .as_array()
        .map(|a| a.iter().filter_map(|i| i["number"].as_u64()).collect())
        .unwrap_or_default()
}

const EXISTING: &str = "---\nnumber: 1\ntitle: Routers are sandboxed\nstatus: accepted\ndate: 2026-11-01\naffected_paths:\n  - host/runtime/**\n---\n\n# Routers are sandboxed\n\n## Decision\n\nDeny every import by default.\n";

#[test]
fn record_query_and_delete_round_trip() {
    let h = with(&[("docs/adr/0001-routers-are-sandboxed.md", EXISTING)]);
    let rec = ok(
        &h,
        "record_adr",
        json!({"title": "Rank decisions with BM25F", "decision": "Title counts three times.", "context": "Agents ask in words.", "affected_paths": "plugins/memory/**", "status": "accepted"}),
    );
    assert_eq!(rec["recorded"]["number"], 2);
    assert_eq!(
        rec["recorded"]["path"],
        "docs/adr/0002-rank-decisions-with-bm25f.md"
    );
    assert_eq!(rec["recorded"]["date"], "2026-11-29");
    assert_eq!(
        rec["recorded"]["affected_paths"],
        json!(["plugins/memory/**"])
    );
    let text = h.files.borrow()["docs/adr/0002-rank-decisions-with-bm25f.md"].clone();
    assert!(
        text.starts_with(
            "---\nnumber: 2\ntitle: \"Rank decisions with BM25F\"\nstatus: \"accepted\"\n"
        ),
        "{text}"
    );
    assert_eq!(h.decisions.borrow().len(), 1);
    assert_eq!(h.decisions.borrow()[0].text, text);

    let q = ok(&h, "query_adrs", json!({"query": "bm25f ranking"}));
    assert_eq!(numbers(&q), [2], "{q}");
    assert_eq!(q["items"][0]["match_reasons"][0], "title: bm25f");
    assert_eq!(q["items"][0]["excerpt"], "Title counts three times.");
    assert_eq!(q["complete"], true);

    let by_path = ok(
        &h,
        "query_adrs",
        json!({"path": "/work/demo/plugins/memory/src/lib.rs"}),
    );
    assert_eq!(numbers(&by_path), [2]);

    let all = ok(&h, "query_adrs", json!({}));
    assert_eq!(numbers(&all), [2, 1], "newest first");

    let del = ok(&h, "delete_adr", json!({"adr_number": "2"}));
    assert_eq!(del["deleted"]["rows_deleted"], 1);
    assert_eq!(del["deleted"]["file_deleted"], true);
    assert!(h.decisions.borrow().is_empty());
    assert!(
        !h.files
            .borrow()
            .contains_key("docs/adr/0002-rank-decisions-with-bm25f.md")
    );
    assert_eq!(numbers(&ok(&h, "query_adrs", json!({}))), [1]);
}

#[test]
fn numbers_follow_the_highest_file_or_row_and_skip_a_number_taken_meanwhile() {
    let h = with(&[("docs/adr/0007-old.md", "# Old\n")]);
    // A row holds number 9; its file exists but is not listed (past the host's cap).
    h.files
        .borrow_mut()
        .insert("docs/adr/0009-recorded-elsewhere.md".into(), "# x\n".into());
    h.unlisted
        .borrow_mut()
        .insert("docs/adr/0009-recorded-elsewhere.md".into());
    h.decisions.borrow_mut().push(DecisionRow {
        number: 9,
        title: "Recorded elsewhere".into(),
        status: "proposed".into(),
        file_path: "docs/adr/0009-recorded-elsewhere.md".into(),
        text: "# Recorded elsewhere\n".into(),
        recorded_at: date_time(NOW - 10_000),
    });
    let rec = ok(&h, "record_adr", json!({"title": "Next", "decision": "d"}));
    assert_eq!(rec["recorded"]["number"], 10);
    assert_eq!(rec["recorded"]["status"], "proposed");
    // Another session takes 11 between our read and our insert: we take 12.
    h.before_next("insert_decision_row", |h| {
        h.decisions.borrow_mut().push(DecisionRow {
            number: 11,
            title: "someone else's".into(),
            status: "proposed".into(),
            file_path: "docs/adr/0011-someone-elses.md".into(),
            text: "# someone else's\n".into(),
            recorded_at: date_time(NOW),
        })
    });
    let rec = ok(&h, "record_adr", json!({"title": "Raced", "decision": "d"}));
    assert_eq!(rec["recorded"]["number"], 12);
    assert_eq!(rec["recorded"]["path"], "docs/adr/0012-raced.md");
    assert!(h.files.borrow().contains_key("docs/adr/0012-raced.md"));
}

#[test]
fn a_failed_file_write_takes_the_row_back_out() {
    let h = host();
    h.fail("create_decision_file", ToolError::internal("disk full"));
    let e = err(&h, "record_adr", json!({"title": "T", "decision": "d"}));
    assert!(
        e.message.contains("was not recorded") && e.message.contains("disk full"),
        "{}",
        e.message
    );
    assert!(e.message.contains("row was removed again"), "{}", e.message);
    assert!(h.decisions.borrow().is_empty());
    assert!(h.files.borrow().is_empty());
}

#[test]
fn hostile_titles_are_escaped_into_one_frontmatter_line() {
    let h = host();
    let rec = ok(
        &h,
        "record_adr",
        json!({"title": "Evil\"\n---\nstatus: accepted\n", "decision": "d", "affected_paths": ["a\"b/**"]}),
    );
    let path = rec["recorded"]["path"].as_str().unwrap().to_string();
    let text = h.files.borrow()[&path].clone();
    let fm: Vec<&str> = text.lines().skip(1).take_while(|l| *l != "---").collect();
    assert_eq!(
        fm,
        [
            "number: 1",
            r#"title: "Evil\" --- status: accepted""#,
            r#"status: "proposed""#,
            r#"date: "2026-11-29""#,
            "affected_paths:",
            r#"  - "a\"b/**""#
        ]
    );
    let q = ok(&h, "query_adrs", json!({"status": "proposed"}));
    assert_eq!(q["items"][0]["title"], "Evil\" --- status: accepted");
    assert_eq!(
        ok(&h, "query_adrs", json!({"status": "accepted"}))["total"],
        0
    );
}

#[test]
fn bad_record_arguments_name_what_is_accepted() {
    let h = host();
    let e = err(&h, "record_adr", json!({"decision": "d"}));
    assert!(e.message.contains("`title` is required"), "{}", e.message);
    let e = err(&h, "record_adr", json!({"title": "t"}));
    assert!(
        e.message.contains("`decision` is required"),
        "{}",
        e.message
    );
    let e = err(
        &h,
        "record_adr",
        json!({"title": "t", "decision": "d", "status": "done"}),
    );
    assert!(
        e.message
            .contains("proposed, accepted, deprecated, superseded"),
        "{}",
        e.message
    );
    let e = err(
        &h,
        "record_adr",
        json!({"title": "t", "decision": "d", "affected_paths": ["../x"]}),
    );
    assert!(
        e.message.contains("`..`") && e.message.contains("accepted:"),
        "{}",
        e.message
    );
    let e = err(
        &h,
        "record_adr",
        json!({"title": "t\u{0}", "decision": "d"}),
    );
    assert!(e.message.contains("U+0000"), "{}", e.message);
    assert!(h.decisions.borrow().is_empty());
}

#[test]
fn delete_needs_exactly_one_selector() {
    let h = with(&[("docs/adr/0001-a.md", EXISTING)]);
    for args in [json!({}), json!({"adr_number": 1, "title": "x"})] {
        let e = err(&h, "delete_adr", args);
        assert_eq!(e.kind, ErrorKind::InvalidArgument);
        assert!(
            e.message
                .contains("exactly one of adr_number, file_path or title"),
            "{}",
            e.message
        );
    }
    let e = err(&h, "delete_adr", json!({"adr_number": 0}));
    assert!(e.message.contains("from 1"), "{}", e.message);
    let e = err(&h, "delete_adr", json!({"adr_number": 4}));
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert!(e.message.contains("numbers present: 1"), "{}", e.message);
}

#[test]
fn delete_refuses_paths_outside_docs_adr() {
    let h = with(&[("docs/adr/0001-a.md", EXISTING), ("docs/CANARY.md", "keep")]);
    for p in [
        "../../CANARY.md",
        "docs/adr/../CANARY.md",
        "/etc/passwd.md",
        "/work/demo/docs/CANARY.md",
        "/work/demo/docs/adr/../CANARY.md",
        "docs/learnings/x.md",
        "docs\\adr\\0001-a.md",
    ] {
        let e = err(&h, "delete_adr", json!({"file_path": p}));
        assert_eq!(e.kind, ErrorKind::Denied, "{p}: {}", e.message);
        assert!(e.message.contains("docs/adr"), "{p}: {}", e.message);
    }
    let e = err(
        &h,
        "delete_adr",
        json!({"file_path": "docs/adr/0001-a.txt"}),
    );
    assert!(e.message.contains("not a .md file"), "{}", e.message);
    assert_eq!(h.files.borrow().len(), 2);
    // The accepted spellings all name the same file.
    for p in [
        "/work/demo/docs/adr/0001-a.md",
        "./docs/adr/0001-a.md",
        "0001-a.md",
    ] {
        assert_eq!(
            crate::delete::adr_file_name(p, Some("/work/demo")).unwrap(),
            "0001-a.md"
        );
    }
    let del = ok(&h, "delete_adr", json!({"file_path": "docs/adr/0001-a.md"}));
    assert_eq!(del["deleted"]["number"], 1);
    assert!(h.files.borrow().contains_key("docs/CANARY.md"));
}

#[test]
fn a_title_naming_several_numbers_asks_for_the_number() {
    let h = with(&[
        ("docs/adr/0001-same.md", "---\ntitle: Same\n---\n"),
        ("docs/adr/0002-same.md", "---\ntitle: same\n---\n"),
        ("docs/adr/0003-other.md", "---\ntitle: Other thing\n---\n"),
    ]);
    let e = err(&h, "delete_adr", json!({"title": "SAME"}));
    assert!(
        e.message.contains("pass adr_number") && e.message.contains("0002-same.md"),
        "{}",
        e.message
    );
    assert_eq!(h.files.borrow().len(), 3);
    let e = err(&h, "delete_adr", json!({"title": "other"}));
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert!(
        e.message.contains("similar: 3 \"Other thing\""),
        "{}",
        e.message
    );
    let del = ok(&h, "delete_adr", json!({"title": "other thing"}));
    assert_eq!(del["deleted"]["number"], 3);
}

#[test]
fn a_row_whose_file_was_deleted_is_purged_on_the_next_read() {
    let h = host();
    ok(
        &h,
        "record_adr",
        json!({"title": "Doomed", "decision": "d"}),
    );
    h.files.borrow_mut().clear();
    let q = ok(&h, "query_adrs", json!({}));
    assert!(h.decisions.borrow().is_empty());
    assert_eq!(q["total"], 0);
    let notes = q["notes"].to_string();
    assert!(
        notes.contains(
            "purged recorded decision 1 (Doomed): its file docs/adr/0001-doomed.md was deleted"
        ),
        "{notes}"
    );
    assert!(notes.contains("no .md files in docs/adr"), "{notes}");
}

#[test]
fn a_row_purged_by_a_concurrent_read_mid_record_is_stored_again() {
    let h = host();
    // A concurrent query_adrs purges the rows while the file is being created.
    h.before_next("create_decision_file", |h| h.decisions.borrow_mut().clear());
    let rec = ok(
        &h,
        "record_adr",
        json!({"title": "Raced reader", "decision": "d"}),
    );
    assert_eq!(rec["recorded"]["number"], 1);
    let rows = h.decisions.borrow();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].file_path, "docs/adr/0001-raced-reader.md");
}

#[test]
fn a_row_whose_file_exists_but_was_not_listed_is_kept() {
    let h = host();
    ok(&h, "record_adr", json!({"title": "Kept", "decision": "d"}));
    // The listing leaves the file out (as past the host's count cap); it still exists.
    h.unlisted
        .borrow_mut()
        .insert("docs/adr/0001-kept.md".into());
    assert!(h.list_documents("docs/adr").unwrap().is_empty());
    let q = ok(&h, "query_adrs", json!({}));
    assert_eq!(numbers(&q), [1]);
    assert_eq!(q["items"][0]["stored_only"], true);
    assert_eq!(h.decisions.borrow().len(), 1);
}

#[test]
fn empty_answers_say_why() {
    let h = with(&[("docs/adr/0001-a.md", EXISTING)]);
    let q = ok(&h, "query_adrs", json!({"query": "kubernetes"}));
    assert_eq!(q["total"], 0);
    assert!(
        q["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("no document matches \"kubernetes\""),
        "{q}"
    );
    let q = ok(&h, "query_adrs", json!({"query": "the of"}));
    assert!(
        q["notes"][0]
            .as_str()
            .unwrap()
            .contains("no searchable words"),
        "{q}"
    );
    let q = ok(
        &h,
        "query_adrs",
        json!({"query": "sandboxed", "status": "deprecated"}),
    );
    assert!(
        q["notes"][0]
            .as_str()
            .unwrap()
            .contains("none with status `deprecated` (statuses among them: accepted 1)"),
        "{q}"
    );
    let q = ok(&h, "query_adrs", json!({"path": "web/app.ts"}));
    assert!(
        q["notes"][0]
            .as_str()
            .unwrap()
            .contains("no affected_paths glob covers web/app.ts"),
        "{q}"
    );
    let q = ok(&h, "query_adrs", json!({"offset": 5}));
    assert!(
        q["notes"][0]
            .as_str()
            .unwrap()
            .contains("offset 5 is past the last of 1"),
        "{q}"
    );
    let e = err(&h, "query_adrs", json!({"path": "/elsewhere/x.rs"}));
    assert!(
        e.message.contains("outside the project root /work/demo"),
        "{}",
        e.message
    );
}

#[test]
fn a_small_budget_pages_with_a_pointer_to_the_rest() {
    let h = host();
    for i in 0..8 {
        ok(
            &h,
            "record_adr",
            json!({"title": format!("Decision about caching layer {i}"), "decision": "Cache the thing. ".repeat(10)}),
        );
    }
    let args = Args::from_value(json!({"query": "caching"})).unwrap();
    let small = Ctx {
        budget: Some(250),
        ..ctx()
    };
    let body = crate::query::query_adrs(&h, &args, &small).unwrap();
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(h.count_tokens(&body) <= 250, "{body}");
    assert_eq!(v["complete"], false);
    let next = v["next_offset"].as_u64().unwrap();
    assert!((1..8).contains(&next), "{v}");
    assert_eq!(v["returned"].as_u64().unwrap(), next);
    assert_eq!(
        v["see_also"],
        format!("query_adrs(query: \"caching\", offset: {next}) for the rest")
    );
    let rest = call(
        &h,
        "query_adrs",
        json!({"query": "caching", "offset": next, "limit": 50}),
        NOW,
    )
    .unwrap();
    assert_eq!(rest["offset"], next);
}

#[test]
fn an_unknown_tool_names_the_ones_offered() {
    let h = host();
    let e = err(&h, "forget_everything", json!({}));
    assert!(
        e.message.contains("query_adrs, record_adr, delete_adr"),
        "{}",
        e.message
    );
}
