//! The portfolio's logic over an in-memory host: three projects (one with uncommitted
//! work, one dormant, one without git) at a fixed "now".

use scryer_plugin_sdk::host::{
    CatalogProject, GitChange, GitCommit, RepoState, definition_problems,
};
use scryer_plugin_sdk::testing::MemHost;
use scryer_plugin_sdk::{ErrorKind, ToolError};
use serde_json::json;

use super::*;

const NOW: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;

fn project(id: i64, slug: &str) -> CatalogProject {
    CatalogProject {
        id,
        slug: slug.into(),
        root: format!("/src/{slug}"),
        state: "ready".into(),
        ..Default::default()
    }
}

fn commit(hash: &str, hours_ago: i64, subject: &str) -> GitCommit {
    GitCommit {
        hash: hash.into(),
        time_ms: NOW - hours_ago * HOUR,
        author: "Ada".into(),
        subject: subject.into(),
    }
}

fn change(path: &str, change: &str) -> GitChange {
    GitChange {
        path: path.into(),
        change: change.into(),
        staged: false,
    }
}

/// `busy`: 3 uncommitted files, last commit 5 days ago. `quiet`: clean, last commit 90
/// days ago. `loose`: not a git repository. `fresh`: clean, committed 2 hours ago.
fn fake() -> MemHost {
    let mut f = MemHost {
        catalog: vec![
            project(1, "busy"),
            project(2, "quiet"),
            project(3, "loose"),
            project(4, "fresh"),
        ],
        ..Default::default()
    };
    f.repos.insert(
        "busy".into(),
        Ok(Some(RepoState {
            branch: Some("feature/x".into()),
            head: Some("b1".into()),
            last_commit_ms: Some(NOW - 120 * HOUR),
            commits: vec![
                commit("b1aaaaaaaaaaaaaa", 120, "Half of the parser"),
                commit("b0", 200, "Start"),
            ],
            changes: vec![
                change("src/parse.rs", "modified"),
                change("src/lex.rs", "added"),
                change("notes.txt", "untracked"),
            ],
            changes_total: 3,
            untracked_total: 1,
        })),
    );
    f.repos.insert(
        "quiet".into(),
        Ok(Some(RepoState {
            branch: Some("main".into()),
            head: Some("q1".into()),
            last_commit_ms: Some(NOW - 90 * 24 * HOUR),
            commits: vec![commit("q1", 90 * 24, "Release 1.0")],
            ..Default::default()
        })),
    );
    f.repos.insert("loose".into(), Ok(None));
    f.repos.insert(
        "fresh".into(),
        Ok(Some(RepoState {
            branch: Some("main".into()),
            head: Some("f1".into()),
            last_commit_ms: Some(NOW - 2 * HOUR),
            commits: vec![commit("f1", 2, "Fix the flaky test")],
            ..Default::default()
        })),
    );
    f.catalog_files.insert(
        ("busy".into(), "README.md".into()),
        "[![ci](badge.svg)](ci)\n# Busy\n\nParses things quickly.\n\nSecond paragraph.\n".into(),
    );
    f.catalog_files.insert(
        ("busy".into(), "src/parse.rs".into()),
        "// TODO: finish\nfn parse() {}\n".into(),
    );
    f.catalog_files.insert(
        ("fresh".into(), "src/lib.rs".into()),
        "// todo: nothing\n".into(),
    );
    f
}

fn ask(host: &MemHost, tool: &str, args: serde_json::Value) -> ToolResult<String> {
    ask_ctx(host, tool, args, &Ctx::default())
}

fn ask_ctx(host: &MemHost, tool: &str, args: serde_json::Value, ctx: &Ctx) -> ToolResult<String> {
    let args = Args::from_value(args).unwrap();
    call_at(host, tool, &args, ctx, NOW)
}

fn json_of(host: &MemHost, tool: &str, args: serde_json::Value) -> Value {
    serde_json::from_str(&ask(host, tool, args).unwrap()).unwrap()
}

#[test]
fn definitions_are_portable_and_short() {
    assert!(
        definition_problems(&tools(), 1200).is_empty(),
        "{:?}",
        definition_problems(&tools(), 1200)
    );
    for t in tools() {
        assert!(
            t.name.starts_with("portfolio_"),
            "{} would clash with built-ins",
            t.name
        );
        assert!(!t.reads_index, "{} does not read the code index", t.name);
    }
}

#[test]
fn projects_are_classified_by_last_commit_age_and_uncommitted_work() {
    let f = fake();
    let v = json_of(&f, "portfolio_projects", json!({}));
    let order: Vec<(&str, &str)> = v["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["project"].as_str().unwrap(),
                p["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        order,
        [
            ("fresh", "active"),
            ("busy", "active"),
            ("quiet", "dormant"),
            ("loose", "no-git")
        ]
    );
    assert_eq!(v["projects"][1]["uncommitted"], 3);
    assert_eq!(v["projects"][1]["last_commit_age"], "5d ago");
    assert_eq!(v["complete"], true);

    let dormant = json_of(&f, "portfolio_projects", json!({"status": "dormant"}));
    assert_eq!(dormant["projects"].as_array().unwrap().len(), 1);
    assert_eq!(dormant["projects"][0]["project"], "quiet");

    let e = ask(&f, "portfolio_projects", json!({"status": "asleep"})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidArgument);
    assert!(e.message.contains("all, active, dormant"), "{}", e.message);
}

#[test]
fn an_empty_filter_or_registry_says_why() {
    let mut f = fake();
    f.repos.insert("quiet".into(), Ok(None));
    let v = json_of(&f, "portfolio_projects", json!({"status": "dormant"}));
    assert!(v.get("projects").is_none());
    assert!(
        v["notes"][0]
            .as_str()
            .unwrap()
            .contains("none of the 4 projects is dormant"),
        "{v}"
    );

    let empty = MemHost::default();
    for tool in ["portfolio_projects", "portfolio_next", "portfolio_pulse"] {
        let body = ask(&empty, tool, json!({})).unwrap();
        assert!(
            body.contains("no projects are registered"),
            "{tool}: {body}"
        );
    }
}

#[test]
fn git_errors_stay_with_their_project() {
    let mut f = fake();
    f.repos.insert(
        "quiet".into(),
        Err(ToolError::internal("git is not installed")),
    );
    let v = json_of(&f, "portfolio_projects", json!({}));
    let quiet = v["projects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["project"] == "quiet")
        .unwrap();
    assert_eq!(quiet["git_error"], "git is not installed");
    assert_eq!(quiet["status"], "no-git");
}

#[test]
fn next_puts_uncommitted_work_first_and_leaves_dormant_projects_out() {
    let f = fake();
    let v = json_of(&f, "portfolio_next", json!({}));
    let next = v["next"].as_array().unwrap();
    assert_eq!(next.len(), 2, "{v}");
    assert_eq!(next[0]["project"], "busy");
    let why = next[0]["why"].as_str().unwrap();
    assert!(
        why.contains("3 uncommitted file(s) (1 untracked) on feature/x"),
        "{why}"
    );
    assert!(
        why.contains("last commit 5d ago: Half of the parser"),
        "{why}"
    );
    assert_eq!(next[1]["project"], "fresh");
    assert_eq!(v["active_projects"], 2);

    let one = json_of(&f, "portfolio_next", json!({"limit": 1}));
    assert_eq!(one["next"].as_array().unwrap().len(), 1);

    let mut idle = fake();
    idle.catalog.retain(|p| p.slug == "quiet");
    let v = json_of(&idle, "portfolio_next", json!({}));
    assert!(v["notes"][0].as_str().unwrap().contains("dormant"), "{v}");
}

#[test]
fn context_shows_readme_commits_and_files_and_pages_the_files() {
    let f = fake();
    let v = json_of(&f, "portfolio_context", json!({"name": "busy"}));
    assert_eq!(v["branch"], "feature/x");
    let excerpt = v["readme"]["excerpt"].as_str().unwrap();
    assert!(
        excerpt.starts_with("# Busy") && !excerpt.contains("badge"),
        "{excerpt}"
    );
    assert_eq!(v["commits"][0]["subject"], "Half of the parser");
    assert_eq!(v["commits"][0]["hash"], "b1aaaaaaaaaa");
    assert_eq!(v["uncommitted"].as_array().unwrap().len(), 3);
    assert_eq!(v["untracked"], 1);

    // By id, and one commit.
    let v = json_of(&f, "portfolio_context", json!({"name": "1", "commits": 1}));
    assert_eq!(v["commits"].as_array().unwrap().len(), 1);

    // A small budget pages the files and says how to get the rest.
    let ctx = Ctx {
        budget: Some(120),
        ..Ctx::default()
    };
    let body = ask_ctx(&f, "portfolio_context", json!({"name": "busy"}), &ctx).unwrap();
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["complete"], false, "{v}");
    let next = v["next_offset"].as_u64().unwrap();
    assert!(v["see_also"].as_str().unwrap().contains(&format!(
        "portfolio_context(name: \"busy\", offset: {next})"
    )));

    let loose = json_of(&f, "portfolio_context", json!({"name": "loose"}));
    let notes = loose["notes"].to_string();
    assert!(
        notes.contains("no README") && notes.contains("not a git repository"),
        "{notes}"
    );

    let e = ask(&f, "portfolio_context", json!({"name": "nope"})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert!(
        e.message.contains("busy, quiet, loose, fresh"),
        "{}",
        e.message
    );
    let e = ask(&f, "portfolio_context", json!({})).unwrap_err();
    assert!(e.message.contains("`name` is required"), "{}", e.message);
    // The session's project stands in for `name`.
    let ctx = Ctx {
        project: Some("fresh".into()),
        ..Ctx::default()
    };
    let v: Value =
        serde_json::from_str(&ask_ctx(&f, "portfolio_context", json!({}), &ctx).unwrap()).unwrap();
    assert_eq!(v["project"], "fresh");
}

#[test]
fn search_spans_projects_caps_results_and_explains_misses() {
    let f = fake();
    let v = json_of(&f, "portfolio_search", json!({"query": "todo"}));
    let hits: Vec<(&str, &str, u64)> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["project"].as_str().unwrap(),
                m["path"].as_str().unwrap(),
                m["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        hits,
        [("busy", "src/parse.rs", 1), ("fresh", "src/lib.rs", 1)]
    );
    assert_eq!(v["complete"], true);

    let capped = json_of(
        &f,
        "portfolio_search",
        json!({"query": "todo", "max_results": 1}),
    );
    assert_eq!(capped["matches"].as_array().unwrap().len(), 1);
    assert_eq!(capped["complete"], false);

    let only = json_of(
        &f,
        "portfolio_search",
        json!({"query": "todo", "name": "fresh"}),
    );
    assert_eq!(only["matches"].as_array().unwrap().len(), 1);

    let none = json_of(&f, "portfolio_search", json!({"query": "zebra"}));
    assert!(
        none["notes"][0]
            .as_str()
            .unwrap()
            .contains("no line contains \"zebra\" in 4 project(s)")
    );

    let e = ask(&f, "portfolio_search", json!({})).unwrap_err();
    assert!(e.message.contains("`query` is required"));
    let e = ask(
        &f,
        "portfolio_search",
        json!({"query": "x", "max_results": 0}),
    )
    .unwrap_err();
    assert!(e.message.contains("from 1 to 200"), "{}", e.message);
}

#[test]
fn pulse_and_text_formats_are_short_and_headed() {
    let f = fake();
    let v = json_of(&f, "portfolio_pulse", json!({}));
    assert_eq!(
        (
            v["active"].as_u64(),
            v["dormant"].as_u64(),
            v["no_git"].as_u64()
        ),
        (Some(2), Some(1), Some(1))
    );
    let summary = v["summary"].as_str().unwrap();
    assert!(
        summary.contains("uncommitted work in 1: busy (3)"),
        "{summary}"
    );
    assert!(
        summary.contains("latest commit: fresh, 2h ago: Fix the flaky test"),
        "{summary}"
    );

    let text = Ctx {
        format: Format::Text,
        ..Ctx::default()
    };
    let body = ask_ctx(&f, "portfolio_projects", json!({}), &text).unwrap();
    let first = body.lines().next().unwrap();
    assert_eq!(
        first,
        "portfolio_projects all: 4 project(s) | 1-4 of 4 | complete"
    );
    assert!(
        body.lines()
            .any(|l| l.starts_with("quiet") && l.contains("dormant")),
        "{body}"
    );
    let body = ask_ctx(&f, "portfolio_pulse", json!({}), &text).unwrap();
    assert!(
        body.starts_with("portfolio_pulse: 4 project(s): 2 active"),
        "{body}"
    );
    let body = ask_ctx(&f, "portfolio_search", json!({"query": "todo"}), &text).unwrap();
    assert!(
        body.contains("\nbusy:src/parse.rs:1  // TODO: finish"),
        "{body}"
    );
}

#[test]
fn readme_excerpts_cut_at_paragraphs_and_times_render_in_utc() {
    let text = "# T\n\nFirst para.\n\nSecond para that is longer.\n";
    assert_eq!(
        readme_excerpt(text, 100),
        "# T\n\nFirst para.\n\nSecond para that is longer."
    );
    assert_eq!(readme_excerpt(text, 20), "# T\n\nFirst para. …");
    assert_eq!(readme_excerpt("one two three four", 9), "one two …");
    assert_eq!(utc(0), "1970-01-01T00:00Z");
    assert_eq!(utc(1_709_210_096_000), "2024-02-29T12:34Z");
    assert_eq!(age(NOW, NOW - 30 * 60_000), "30m ago");
    assert_eq!(age(NOW, NOW - 47 * HOUR), "47h ago");
    assert_eq!(age(NOW, NOW - 49 * HOUR), "2d ago");
}

#[test]
fn unknown_tools_are_named_with_the_choices() {
    let e = ask(&fake(), "portfolio_everything", json!({})).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert!(e.message.contains("portfolio_pulse"), "{}", e.message);
}
